"""Initialisation figures of Peluchetti & Favaro (2020), Marion et al. (2022) and Chizat's lecture, as checks
(``python -m validation.figures``).

The study is :mod:`validation.figures.study`; each figure is one file of :mod:`validation.figures.catalogue`, a
:class:`Figure`; this is the public surface.
"""

from .figure import Figure
from .pf_models import MODELS
from .study import COMMAND, FIGURES, SMOKE, FiguresResult, FiguresSettings, main, run

__all__ = ["COMMAND", "FIGURES", "SMOKE", "Figure", "FiguresSettings", "FiguresResult", "run", "main", "MODELS"]
