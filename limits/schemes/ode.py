"""The ODE schemes the solver study compares on ODE pairs: torchdiffeq's methods, by name, with their classical
orders (the ODE counterpart of the SDE scheme table; adding one is a row here: docs/design.md, "Adding an ODE
scheme")."""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

__all__ = ["ODE_FIXED_SCHEMES", "ODE_ADAPTIVE_SCHEMES"]

#: torchdiffeq's fixed-grid schemes, with their classical orders (None: reported only — torchdiffeq's explicit_adams
#: starts with rk4 steps and raises its order up to 12 as history accumulates)
ODE_FIXED_SCHEMES: Mapping[str, float | None] = MappingProxyType({
    "euler": 1.0, "midpoint": 2.0, "heun3": 3.0, "rk4": 4.0, "explicit_adams": None})
#: torchdiffeq's adaptive schemes, run across tolerances
ODE_ADAPTIVE_SCHEMES: tuple[str, ...] = ("dopri5", "dopri8")
