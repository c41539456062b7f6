"""Numerical schemes for the pairs' limits, run on the shared path (one scheme per module).

``SDE_SCHEMES`` is the static table of the SDE schemes by name; :func:`sde_schemes_for` lists those valid
for a noise structure. The ODE schemes are torchdiffeq's, by name (``validation.solvers``).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from .base import NOISE_TYPES, PathIncrement, SchemeError, SDEScheme
from .drift_implicit_euler import DriftImplicitEuler
from .euler_maruyama import EulerMaruyama
from .milstein_levy_area import MilsteinLevyArea
from .ode import ODE_ADAPTIVE_SCHEMES, ODE_FIXED_SCHEMES
from .tamed_euler import TamedEuler
from .torchsde_methods import SRK, EulerHeun, LogODEMidpoint, Midpoint, Milstein, ReversibleHeun, TorchsdeMethod
from .truncated_milstein import TruncatedMilstein

__all__ = [
    "NOISE_TYPES", "PathIncrement", "SchemeError", "SDEScheme", "TorchsdeMethod", "EulerMaruyama", "Midpoint",
    "EulerHeun", "ReversibleHeun", "LogODEMidpoint", "Milstein", "SRK", "MilsteinLevyArea", "TruncatedMilstein", "TamedEuler",
    "DriftImplicitEuler",
    "SDE_SCHEMES", "sde_schemes_for",
    "get_sde_scheme", "ODE_FIXED_SCHEMES", "ODE_ADAPTIVE_SCHEMES",
]

SDE_SCHEMES: Mapping[str, type[SDEScheme]] = MappingProxyType({
    cls.name: cls for cls in (EulerMaruyama, Midpoint, EulerHeun, ReversibleHeun, LogODEMidpoint, Milstein, SRK,
                              MilsteinLevyArea, TruncatedMilstein, TamedEuler, DriftImplicitEuler)
})


def sde_schemes_for(noise_type: str) -> list[str]:
    """The names of the SDE schemes valid for ``noise_type``, in table order."""
    return [name for name, cls in SDE_SCHEMES.items() if cls.supports(noise_type)]


def get_sde_scheme(name: str) -> type[SDEScheme]:
    """The scheme class called ``name``; the error lists the known names."""
    if name not in SDE_SCHEMES:
        raise SchemeError(f"unknown SDE scheme {name!r} (known: {', '.join(SDE_SCHEMES)})")
    return SDE_SCHEMES[name]
