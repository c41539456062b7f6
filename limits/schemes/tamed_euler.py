"""Tamed Euler (Hutzenthaler, Jentzen & Kloeden 2012): Euler–Maruyama with the drift increment capped.

The variant implemented is the one of Hutzenthaler, Jentzen & Kloeden, *Strong convergence of an explicit
numerical method for SDEs with nonglobally Lipschitz continuous coefficients*, Ann. Appl. Probab. 22(4),
1611–1641 (2012), doi:10.1214/11-AAP803, with the Euclidean norm of the whole drift vector of each
sample:

    H_{k+1} = H_k + f(t_k, H_k) Δt / (1 + Δt ‖f(t_k, H_k)‖₂) + g(t_k, H_k) ΔB_k.

The drift increment has norm below min(Δt ‖f‖, 1): a step can never move H by more than 1 through the drift,
so a superlinear drift cannot make the scheme overshoot and diverge — the failure of Euler–Maruyama for such
drifts (its moments diverge: Hutzenthaler, Jentzen & Kloeden 2011, Proc. R. Soc. A 467). Where Δt ‖f‖ is
small the scheme is Euler–Maruyama: the two steps differ by Δt² ‖f‖² / (1 + Δt ‖f‖) ≤ Δt² ‖f‖².

Strong order 1/2, as Euler–Maruyama, for a one-sided Lipschitz drift of polynomial growth and a globally
Lipschitz diffusion (their Theorem 1.1). The Itô-corrected limits (cohen-sde, pf with φ''(0) ≠ 0) are outside
that class: their drift ½σ''(0)Q(H) grows like ‖H‖² in the same direction on every coordinate, so ⟨H, f(H)⟩
grows like ‖H‖³ and the limit itself can explode (docs/results/blowup.md). The taming bounds every path of
the scheme at finite Δt; it does not make an exploding solution finite — on such a path the scheme's H grows
without bound as Δt → 0.

Reads only ``f`` and ``g_prod`` of the SDE; one drift and one diffusion product per step.
"""

from __future__ import annotations

from typing import Any

import torch

from .base import PathIncrement, SDEScheme

__all__ = ["TamedEuler"]


class TamedEuler(SDEScheme):
    name = "tamed_euler"
    #: weak order 1: Euler's: the taming changes each step by O(dt²)
    weak_order = 1.0
    description = "tamed Euler (Ito; Hutzenthaler-Jentzen-Kloeden 2012): H + f dt/(1 + dt |f|) + g dB"
    sde_type = "ito"
    strong_orders = {"general": 0.5}
    #: run only when named: the blow-up question (docs/results/blowup.md), not the order comparison
    on_request = True

    def step(self, t: float, dt: float, h: torch.Tensor, increment: PathIncrement, state: Any
             ) -> tuple[torch.Tensor, Any]:
        if not dt > 0:
            raise ValueError(f"{self.name}: step dt={dt} must be > 0")
        drift = self.sde.f(t, h)
        tamed = drift * (dt / (1.0 + dt * torch.linalg.vector_norm(drift, dim=-1, keepdim=True)))
        return h + tamed + self.sde.g_prod(t, h, increment.W), state
