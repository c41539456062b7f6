"""Initialisation figures of Peluchetti & Favaro (2020), Marion et al. (2022) and Chizat's lecture, as checks
(``python -m validation.figures``).

The study is :mod:`validation.figures.study`; this is its public surface.
"""

from .study import (
    COMMAND, FIGURES, SMOKE, FiguresSettings, FiguresResult, run, main, MODELS,
)

__all__ = ["COMMAND", "FIGURES", "SMOKE", "FiguresSettings", "FiguresResult", "run", "main", "MODELS"]
