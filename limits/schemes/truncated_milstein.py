"""Truncated Milstein: the Itô–Taylor step to order 1 without the Lévy areas (Giles & Szpruch 2014).

    H_{k+1} = H_k + f Δt + Σ_j g_j ΔW^j + ½ Σ_{j1, j2} (L^{j1} g_{j2}) (ΔW^{j1} ΔW^{j2} − Δt δ_{j1 j2}),

L^{j} = Σ_l g_{lj} ∂_l: :class:`~limits.schemes.milstein_levy_area.MilsteinLevyArea` with the Lévy area A set to
zero. On commutative noise A's term cancels (L^{j1} g_{j2} is symmetric in j1, j2), and the step is order 1; on
non-commutative noise it is capped at strong order ½ (Clark & Cameron 1980), but its strong error at depth L is, to
leading order, Σ_k of the Lévy areas it leaves out — an antisymmetric term that changes sign when the two halves of a
step swap their increments. That makes it the fine solver of Giles & Szpruch's antithetic multilevel estimator
(``validation.multilevel``, ``antithetic_milstein``): the average of the fine solves on a path and on its
increment-swapped twin is within O(Δt) of the coarse solve, so Var Y_ℓ decays at β = 2 with no area drawn, and the
coarse solve reads only Brownian increments, whose merged law is exact at every level (Giles & Szpruch, Ann. Appl.
Probab. 24 (2014), Thm 4.10, for smooth payoffs).

The term Σ_{j2} (∂g_{·j2}) v_{·j2} with v = ½ (g ΔW) ΔWᵀ − ½ Δt g (N, d, m) is the limit's
:meth:`~limits.ito.ItoLimit.diffusion_derivative` (closed form for res-1); v needs no m × m matrix, so the step costs
N d m per evaluation, not N m².
"""

from __future__ import annotations

from typing import Any

import torch

from .base import PathIncrement, SDEScheme

__all__ = ["TruncatedMilstein"]


class TruncatedMilstein(SDEScheme):
    name = "milstein_truncated"
    #: weak order 1: the Lévy areas dropped change no first moment (Giles & Szpruch 2014)
    weak_order = 1.0
    description = "Milstein (Ito) without Levy areas, any noise (order 1 on commutative noise, 1/2 otherwise)"
    sde_type = "ito"
    strong_orders = {"general": 0.5, "commutative": 1.0, "additive": 1.0}
    #: run only when named: the antithetic multilevel estimator's fine solver; on its own, Milstein's order-1 row is already shown on commutative noise
    on_request = True
    drift_evaluations = 1
    #: g itself and its derivative (as for Milstein with areas)
    diffusion_evaluations = 2

    def step(self, t: float, dt: float, h: torch.Tensor, increment: PathIncrement, state: Any
             ) -> tuple[torch.Tensor, Any]:
        w = increment.W
        g = self.limit.diffusion_matrix(t, h)                                  # (N, d, m)
        gw = (g @ w.unsqueeze(-1)).squeeze(-1)                                 # (N, d)
        v = 0.5 * gw.unsqueeze(-1) * w.unsqueeze(-2) - (0.5 * dt) * g          # v = g (½ W Wᵀ − ½ Δt I)
        return h + self.sde.f(t, h) * dt + gw + self.limit.diffusion_derivative(t, h, v), state
