"""Residual blocks that *are* higher-order Runge–Kutta steps of the res-2 neural ODE (docs/theory.md §2).

The field is exactly that of :class:`~limits.res_ode.Res2ODE`, on the same smooth weights (same seed →
the same 𝒱_t, W_t and h_0, so the same limit H bit for bit):

    F(t, h) = 𝒱_t σ(W_t h),        dH/dt = F(t, H),  H_0 = h_0.

res2-ode's block is the explicit Euler step h_{k+1} = h_k + (1/L) F(t_k, h_k) (rate 1). Here each block
is one step of a higher-order explicit Runge–Kutta scheme with Δ = 1/L, t_k = k/L, reading the weights at
its stage times — a block with two (four) residual branches:

* ``res2-midpoint`` (explicit midpoint, order 2; stages at t_k, t_k + Δ/2):

      h_{k+1} = h_k + Δ F(t_k + Δ/2, h_k + (Δ/2) F(t_k, h_k));

* ``res2-rk4`` (classical Runge–Kutta, order 4; stages at t_k, t_k + Δ/2, t_k + Δ/2, t_k + Δ):

      k₁ = F(t_k, h_k),                 k₂ = F(t_k + Δ/2, h_k + (Δ/2) k₁),
      k₃ = F(t_k + Δ/2, h_k + (Δ/2) k₂),  k₄ = F(t_k + Δ, h_k + Δ k₃),
      h_{k+1} = h_k + (Δ/6)(k₁ + 2k₂ + 2k₃ + k₄).

A p-th order one-step scheme on a C^p field has global error ‖H_1 − h_L‖ ≤ C(ω) L^-p (Hairer, Nørsett &
Wanner, *Solving ODEs I*, ch. II). The smooth GP weights are analytic in t and σ must be smooth too:
ReLU's kink makes F only Lipschitz and caps the order (measured: RK4 with ReLU converges at rate 2, not 4;
midpoint stays at 2, which no theorem here promises), so a non-smooth activation is refused (the check
is on ``Activation.smooth`` only; σ(0) = 0, which ``requires_smooth_activation`` also demands for the
Itô-corrected limits, plays no role here). The shipped smooth activations (tanh, swish,
shifted-softplus, identity) are analytic on all of ℝ.

The study engine hands ``network_step`` the weights at t_k only; the later stages read the weights at
t_k + Δ/2 and t_k + Δ themselves (:meth:`weights`, exact at any t, the same numbers whether read alone or
in a batch). The arithmetic follows torchdiffeq's fixed-grid ``midpoint`` and its classical
``rk4_step_func`` operation for operation, so on dyadic grids the networks equal them bit for bit
(tests/test_rk_resnets.py). torchdiffeq's ``method="rk4"`` is a different scheme, the 3/8 rule.

A res-1 variant (F = 𝒱_t σ(h)) would take three lines (``uses_inner_weights = False``) but is not
registered: the scheme, not the field, is what these pairs test, and res-1's field is smooth in the same
way, so it would measure the same orders again.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from .pairs import ModelConfig, PairError
from .res_ode import SmoothResNet

__all__ = ["Res2Midpoint", "Res2RK4"]


class _RungeKuttaResNet(SmoothResNet):
    """A smooth ResNet whose block is one explicit Runge–Kutta step of order ``order`` of its own limit."""

    order: ClassVar[int]
    scheme: ClassVar[str]
    theory_source = ("docs/theory.md §2 (the limit); the classical order of the explicit Runge–Kutta scheme "
                     "(Hairer, Nørsett & Wanner, Solving ODEs I, ch. II)")

    def __init__(self, config: ModelConfig, samples: int, seed: int = 0, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        super().__init__(config, samples, seed, dtype, device)
        if not self.activation.smooth:
            raise PairError(
                f"{self.name} is an order-{self.order} scheme only for a smooth field: the order-p error bound "
                f"needs F in C^p, so the activation must be smooth (tanh, swish, shifted-softplus, identity); got "
                f"{self.activation.name}, whose kink leaves F only Lipschitz (res2-rk4 with ReLU measures rate 2, "
                "not 4); use res2-ode or res3-ode for ReLU")

    @property
    def theory_rate(self) -> float:
        return float(self.order)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "scheme": self.scheme, "order": self.order}

    def _weights_at(self, t: float | torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The weights at one time t (any t in [0, 1]), each of shape (N, d, d) — what ``limit_field`` reads."""
        times = torch.as_tensor(t, dtype=self.dtype, device=self.device).reshape(1)
        return tuple(w[0] for w in self.weights(times))


class Res2Midpoint(_RungeKuttaResNet):
    """res-2 with the explicit-midpoint block: h_{k+1} = h_k + Δ F(t_k + Δ/2, h_k + (Δ/2) F(t_k, h_k))."""

    name = "res2-midpoint"
    description = ("res-2 sigma(W h), smooth weights, midpoint block (2 branches, order 2)  <->  neural ODE "
                   "dH = V_t sigma(W_t H) dt")
    order = 2
    scheme = "explicit midpoint"
    evaluations_per_layer = 2
    #: recommended study size: the local slopes settle at 2.00 from L = 32 on (Δ ≤ ℓ/3; 3.3 and 2.3 before), so
    #: L = 8, 16 are shown but not fitted; at L = 256 the error (~3e-5) is still ~100× the two references' RMS
    #: gap at rtol = 1e-10 (~3e-7), so the second-reference column agrees too (docs/results/convergence.md)
    default_study: ClassVar[dict[str, Any]] = {
        "depths": (8, 16, 32, 64, 128, 256), "samples": 200, "width": 10,
    }

    def network_step(self, h, t, dt, weights):
        half = 0.5 * dt
        k1 = self.block(h, weights)
        return h + dt * self.block(h + k1 * half, self._weights_at(t + half))


class Res2RK4(_RungeKuttaResNet):
    """res-2 with the classical Runge–Kutta block (four branches at t_k, t_k + Δ/2, t_k + Δ/2, t_k + Δ)."""

    name = "res2-rk4"
    description = ("res-2 sigma(W h), smooth weights, classical RK4 block (4 branches, order 4)  <->  neural ODE "
                   "dH = V_t sigma(W_t H) dt")
    order = 4
    scheme = "classical Runge-Kutta (RK4)"
    evaluations_per_layer = 4
    #: recommended study size: the local slopes are 5.7 and 5.0 up to L = 64 and about 4.0 from L = 128 on (Δ ≤ ℓ/12;
    #: the onset moves with ℓ), while the errors fall 16× per doubling: 1e-6 at L = 64, 6e-8 at 128, 4e-9 at
    #: 256, 2.3e-10 at 512. No float64 adaptive solver reaches that far (dopri5 at rtol = 1e-13 leaves a gap of 9e-10
    #: to its 100×-looser second, dopri8 at 1e-13 stays 5e-9 from the converged network, measured), so the reference
    #: is fixed-step: torchdiffeq's rk4 (the 3/8 rule) with 8 steps per layer of L = 512, whose error is about
    #: 2.3e-10 / 8⁴ ≈ 6e-14 (second: 4 per layer). The fit starts at L = 128, the first depth with Δ ≤ ℓ/12 (ℓ = 0.1,
    #: the weights' length-scale): below it the bend is not the corrected model's c/L — the local slope's excess over
    #: 4 falls from 1.0 (32 → 64) to 0.02 (64 → 128), 40× in one doubling where c/L halves it — and the window rule,
    #: left alone, kept L = 64 (its move, −0.012 … −0.034, is not resolved at 200 samples), biased the rate to
    #: 3.97–3.99 and was INCONCLUSIVE on 6 seeds of 20 (benchmarks/results/calibration.json). On 128 … 512 a
    #: straight line: 4.004 [4.003, 4.005] at seed 0 (docs/results/convergence.md); L = 8 … 64 are shown, not fitted
    default_study: ClassVar[dict[str, Any]] = {
        "depths": (8, 16, 32, 64, 128, 256, 512), "samples": 200, "width": 10, "fit_from": 128,
    }
    reference_refinement = 8
    reference_method = "rk4"

    def network_step(self, h, t, dt, weights):
        half = dt * 0.5
        middle = self._weights_at(t + half)  # k₂ and k₃ share the stage time t_k + Δ/2
        k1 = self.block(h, weights)
        k2 = self.block(h + half * k1, middle)
        k3 = self.block(h + half * k2, middle)
        k4 = self.block(h + dt * k3, self._weights_at(t + dt))
        return h + (k1 + 2 * (k2 + k3) + k4) * dt * (1 / 6)
