"""The papers' trained-network experiments (``python -m validation.training``), on data that ships offline.

Public surface: :func:`run`, :func:`main`, :class:`TrainingSettings`, :class:`TrainingResult`,
:data:`EXPERIMENTS` (name → :class:`Experiment`), :func:`load_dataset`.
"""

from .data import DATASETS, Dataset, load_dataset
from .experiment import Experiment
from .study import COMMAND, EXPERIMENTS, TrainingResult, TrainingSettings, listing, main, run

__all__ = ["run", "main", "TrainingSettings", "TrainingResult", "EXPERIMENTS", "Experiment", "listing",
           "load_dataset", "Dataset", "DATASETS", "COMMAND"]
