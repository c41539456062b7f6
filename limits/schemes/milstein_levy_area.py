"""Milstein for general noise: the Itô–Taylor step to order 1, with the path's Lévy areas.

    H_{k+1} = H_k + f Δt + Σ_j g_j ΔW^j + Σ_{j1, j2} (L^{j1} g_{j2}) I_{j1 j2},     L^{j} = Σ_l g_{lj} ∂_l,

with the Itô iterated integrals of the step

    I_{j1 j2} = ∫ (B^{j1}_s − B^{j1}_t) dB^{j2}_s = ½ ΔW^{j1} ΔW^{j2} − ½ Δt δ_{j1 j2} + A_{j1 j2},

A the step's Lévy area (:class:`~limits.schemes.base.PathIncrement`). Without A (or with E[A | W] = 0) the step is
capped at strong order 1/2 on non-commutative noise (Clark & Cameron 1980); with the path's own areas — a
:class:`~limits.brownian.DyadicPath` recorded by :func:`~limits.brownian.record_path` with ``areas="levy"``,
whose coarse areas are the fine ones merged by Chen's relation — it is order 1 for any noise (Kloeden & Platen
1992, Thm 10.3.5).

The last term is Σ_{j2} (∂g_{·j2}) v_{·j2} with v = g I (N, d, m), the limit's
:meth:`~limits.ito.ItoLimit.diffusion_derivative`: d directional derivatives of g by automatic differentiation, or a
closed form where the limit has one (res-1). Cost per step and sample: one drift, one diffusion-matrix evaluation
and its derivative (d more evaluations, differentiated, without a closed form), and the m² entries of I (N d m² for
v) — it is for small m.
"""

from __future__ import annotations

from typing import Any

import torch

from .base import NOISE_TYPES, PathIncrement, SDEScheme

__all__ = ["MilsteinLevyArea"]


class MilsteinLevyArea(SDEScheme):
    name = "milstein_levy_area"
    #: weak order 1: Kloeden & Platen (1992), Thm 14.5.2: the Milstein scheme's weak order is 1
    weak_order = 1.0
    description = "Milstein (Ito) with the path's full Levy areas, any noise"
    sde_type = "ito"
    strong_orders = {kind: 1.0 for kind in NOISE_TYPES}
    needs_levy_area = True
    drift_evaluations = 1
    #: g itself and its derivative (in fact d + 1 evaluations of g, one per coordinate's derivative: the solver study
    #: counts the calls it sees)
    diffusion_evaluations = 2

    def step(self, t: float, dt: float, h: torch.Tensor, increment: PathIncrement, state: Any
             ) -> tuple[torch.Tensor, Any]:
        w, area = increment.W, increment.A
        g = self.limit.diffusion_matrix(t, h)                                  # (N, d, m), whatever the noise type
        m = w.shape[-1]
        iterated = 0.5 * w.unsqueeze(-1) * w.unsqueeze(-2) + area            # (N, m, m): I = ½ W Wᵀ − ½ Δt I_m + A
        iterated = iterated - (0.5 * dt) * torch.eye(m, dtype=w.dtype, device=w.device)
        v = g @ iterated                                                       # v_{l j2} = Σ_{j1} g_{l j1} I_{j1 j2}
        correction = self.limit.diffusion_derivative(t, h, v)                  # Σ_{j2} (∂g_{·j2}) v_{·j2}
        return h + self.sde.f(t, h) * dt + (g @ w.unsqueeze(-1)).squeeze(-1) + correction, state
