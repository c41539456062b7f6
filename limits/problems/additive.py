"""``additive``: SDEProblemLibrary's ``prob_sde_additive`` (additive noise, time-dependent coefficients).

    dX = (β/√(1+t) − X/(2(1+t))) dt + αβ/√(1+t) dB,  α = 0.1, β = 0.05, X_0 = 1,
    X_t = X_0/√(1+t) + β (t + α W_t)/√(1+t)        (√(1+t) X_t = X_0 + β t + αβ W_t).

It is :mod:`~limits.problems.additive_system` in one coordinate, with β = 0.05.
"""

from __future__ import annotations

from .additive_system import AdditiveSystem

__all__ = ["Additive"]


class Additive(AdditiveSystem):
    name = "additive"
    description = "dX = (b/sqrt(1+t) - X/(2(1+t))) dt + a b/sqrt(1+t) dB, a = 0.1, b = 0.05, X0 = 1"
    source = "SDEProblemLibrary prob_sde_additive"
    dimension = channels = 1
    betas = (0.05,)
