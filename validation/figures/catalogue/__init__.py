"""The figures of ``python -m validation.figures``: one file per figure, and this registry (the order of ``--list``).

Adding a figure is one new file here — a :class:`validation.figures.figure.Figure` subclass with its settings'
defaults, compute, checks, table and plot — and its line in :data:`FIGURES` (docs/design.md, "Adding a figure").
"""

from validation.core.catalogue import Catalogue
from validation.figures.figure import Figure

from .chizat_backward import ChizatBackward
from .chizat_feature_speed import ChizatFeatureSpeed
from .chizat_kernel import ChizatKernel
from .chizat_maximal import ChizatMaximal
from .chizat_phase import ChizatPhase
from .marion_fbm import MarionFBM
from .pf_2d import PF2D
from .pf_abc import PFABC
from .pf_correlation import PFCorrelation
from .pf_function_space import PFFunctionSpace
from .pf_qualitative import PFQualitative
from .pf_relu import PFReLU
from .pf_sizes import PFSizes

__all__ = ["FIGURES"]

#: every figure by name
FIGURES: Catalogue[Figure] = Catalogue("figure", (
    PFFunctionSpace(),
    PFCorrelation(),
    PFABC(),
    PF2D(),
    PFQualitative(),
    PFReLU(),
    PFSizes(),
    MarionFBM(),
    ChizatMaximal(),
    ChizatKernel(),
    ChizatPhase(),
    ChizatBackward(),
    ChizatFeatureSpeed(),
))
