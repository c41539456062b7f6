"""Which scheme reaches a given error at the least cost, on the same weights (``python -m validation.solvers``).

The study is :mod:`validation.solvers.study` (its settings :mod:`~validation.solvers.settings`, its runs
:mod:`~validation.solvers.runs`); this is its public surface.
"""

from limits.schemes import ODE_ADAPTIVE_SCHEMES, ODE_FIXED_SCHEMES

from .runs import SchemeRun, steps_to_reach, timed
from .settings import SolversSettings
from .study import COMMAND, SolversResult, list_problems, main, run

__all__ = ["COMMAND", "SolversSettings", "SolversResult", "SchemeRun", "ODE_FIXED_SCHEMES", "ODE_ADAPTIVE_SCHEMES", "run",
           "main", "steps_to_reach", "timed", "list_problems"]
