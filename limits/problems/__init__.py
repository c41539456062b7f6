"""Exactly solvable SDEs, one per module: the test problems of the anchors (DiffEqDevTools' SDEProblemLibrary,
sdeint's Kloeden–Platen and Rößler problems) and a non-commutative problem solved by the Lévy area.

``PROBLEMS`` is the static table by name; :func:`get_problem` returns an instance (the error lists the names).
``python -m validation.solvers --problem NAME`` compares every applicable scheme against the exact solution on the
same path; ``--list-problems`` lists them.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from .additive import Additive
from .additive_system import AdditiveSystem
from .base import Problem, ProblemLimit, ScalarProblem, path_time_integral, path_total
from .cubic import Cubic
from .gbm import GeometricBrownianMotion
from .gbm_diagonal import DiagonalGeometricBrownianMotion, DiagonalGeometricBrownianMotionStratonovich
from .gbm_stratonovich import GeometricBrownianMotionStratonovich
from .kp4446 import KP4446
from .kp4459 import KP4459
from .kps445 import KPS445
from .levy_area import LevyAreaProblem
from .r74 import R74
from .wave import Wave

__all__ = ["Problem", "ProblemLimit", "ScalarProblem", "PROBLEMS", "get_problem", "path_total", "path_time_integral",
           "ProblemError"]

PROBLEMS: Mapping[str, type[Problem]] = MappingProxyType({cls.name: cls for cls in (
    GeometricBrownianMotion, GeometricBrownianMotionStratonovich, DiagonalGeometricBrownianMotion,
    DiagonalGeometricBrownianMotionStratonovich, Cubic, Wave, Additive, AdditiveSystem, KP4446, KP4459, KPS445, R74,
    LevyAreaProblem)})


class ProblemError(ValueError):
    """An unknown problem name (the message lists the known ones)."""


def get_problem(name: str) -> Problem:
    """An instance of the problem called ``name``."""
    if name not in PROBLEMS:
        raise ProblemError(f"unknown problem {name!r} (known: {', '.join(PROBLEMS)})")
    return PROBLEMS[name]()
