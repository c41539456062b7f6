"""Weak errors across depths: Talay–Tubaro extrapolation and multilevel Monte Carlo
(``python -m validation.multilevel``).

The study is :mod:`validation.multilevel.study`; this is its public surface.
"""

from .study import (
    COMMAND, MultilevelSettings, MultilevelResult, SchemeLevels, run, main, TEST_FUNCTIONS, LEVEL_SCHEMES, SOLVERS, level_sampler,
)

__all__ = ["COMMAND", "MultilevelSettings", "MultilevelResult", "SchemeLevels", "run", "main", "TEST_FUNCTIONS",
           "LEVEL_SCHEMES", "SOLVERS", "level_sampler"]
