"""The (H, β) phase diagram of Marion et al. Fig. 7, res-3 with fractional weights at initialisation
(``python -m validation.phase``).

The study is :mod:`validation.phase.study`; this is its public surface.
"""

from .study import (
    COMMAND, PhaseSettings, PhaseResult, run, main, phase_column,
)

__all__ = ["COMMAND", "PhaseSettings", "PhaseResult", "run", "main", "phase_column"]
