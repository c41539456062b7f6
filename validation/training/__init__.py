"""The papers' trained-network experiments (``python -m validation.training``), on data that ships offline.

Public surface: :func:`run`, :func:`main`, :class:`TrainingSettings`, :class:`TrainingResult`,
:data:`EXPERIMENTS` (name → :class:`Experiment`), :func:`load_dataset`.
"""

from .data import DATASETS, Dataset, load_dataset
from .experiment import Experiment
from .study import EXPERIMENTS, COMMAND, TrainingResult, TrainingSettings, listing, main, register, run
from .cohen import CohenScaling
from .cohen_conv import CohenConv
from .depth_transfer import DepthTransfer
from .marion import MarionFig8, MarionFig9
from .marion2024 import MarionFig1, MarionFig2
from .sander2022 import SanderLinear
from .ode_convergence import TrainedODEConvergence
from .pf_sgd import PFSGD

register(MarionFig8())
register(MarionFig9())
register(CohenScaling())
register(PFSGD())
register(DepthTransfer())
register(MarionFig1())
register(SanderLinear())
register(TrainedODEConvergence())
register(CohenConv())
register(MarionFig2())

__all__ = ["run", "main", "TrainingSettings", "TrainingResult", "EXPERIMENTS", "Experiment", "listing",
           "load_dataset", "Dataset", "DATASETS", "COMMAND"]
