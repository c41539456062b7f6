"""The experiments of ``python -m validation.training``: one module each (an :class:`Experiment`), and this
registry (the order of ``--list``)."""

from ..core.catalogue import Catalogue
from .chaintron2026 import ChaintronBudget, ChaintronLinear, ChaintronNonlinear
from .chaintron2026_grid import ChaintronGrid
from .chizat2025 import ChizatAlpha
from .cohen import CohenScaling
from .cohen_conv import CohenConv
from .depth_transfer import DepthTransfer
from .experiment import Experiment
from .marion import MarionFig8, MarionFig9
from .marion2024 import MarionFig1, MarionFig2
from .ode_convergence import TrainedODEConvergence
from .pf_sgd import PFSGD
from .sander2022 import SanderLinear

__all__ = ["EXPERIMENTS"]

#: every experiment by name
EXPERIMENTS: Catalogue[Experiment] = Catalogue("experiment", (
    MarionFig8(),
    MarionFig9(),
    CohenScaling(),
    PFSGD(),
    DepthTransfer(),
    MarionFig1(),
    SanderLinear(),
    TrainedODEConvergence(),
    CohenConv(),
    MarionFig2(),
    ChaintronLinear(),
    ChaintronNonlinear(),
    ChaintronBudget(),
    ChaintronGrid(),
    ChizatAlpha(),
))
