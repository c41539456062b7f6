"""Scaling regimes at initialisation, Marion et al. Fig. 1–5 and Chizat Prop. 2.1
(``python -m validation.regimes``).

The study is :mod:`validation.regimes.study`; this is its public surface.
"""

from .study import (
    COMMAND, PRESETS, RegimesSettings, RegimesResult, run, main, predicted_critical_beta,
)

__all__ = ["COMMAND", "PRESETS", "RegimesSettings", "RegimesResult", "run", "main", "predicted_critical_beta"]
