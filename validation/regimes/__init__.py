"""Scaling regimes at initialisation, Marion et al. Fig. 1–5 and Chizat Prop. 2.1
(``python -m validation.regimes``).

The study is :mod:`validation.regimes.study`; each kind of preset is one module (a :class:`Preset`), and every
preset one line of :data:`PRESETS` (:mod:`validation.regimes.catalogue`); this is the public surface.
"""

from .preset import Preset
from .study import COMMAND, PRESETS, RegimesResult, RegimesSettings, main, predicted_critical_beta, run

__all__ = ["COMMAND", "PRESETS", "Preset", "RegimesSettings", "RegimesResult", "run", "main", "predicted_critical_beta"]
