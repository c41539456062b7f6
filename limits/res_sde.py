"""res-1 with i.i.d. Gaussian weights ↔ the neural SDE dH = (s/√d) dB σ(H) (docs/theory.md §1; Marion et al. Prop. 10).

Discrete network, depth L:

    h_{k+1} = h_k + L^{-1/2} V_{k+1} σ(h_k),   V_{k+1} entries i.i.d. N(0, s²/d).

Coupling on one d×d Brownian path B: V_{k+1} = √L (s/√d) (B_{(k+1)/L} − B_{k/L}), so that

    h_{k+1} = h_k + (s/√d) ΔB_k σ(h_k),          (component i: h_i += (s/√d) Σ_j ΔB_ij σ(h_j))

which is, step for step, the Euler–Maruyama scheme of the Itô SDE

    dH_t = (s/√d) dB_t σ(H_t),   H_0 = h_0,   t ∈ [0, 1].

Both readers evaluate the block through :func:`limits.ito.matrix_noise_product`, so the network equals
``sdeint(method="euler", dt=1/L)`` on the same path bit for bit; the continuous H is the same scheme on
a grid much finer than the deepest network. The noise is non-commutative, so the strong rate of Euler,
and hence of the network, is 1/2.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .activations import Activation
from .ito import (
    ItoLimit, matrix_noise_correction, matrix_noise_derivative, matrix_noise_diffusion, matrix_noise_product,
    matrix_noise_tangent,
)
from .pairs import SDEPair

__all__ = ["Res1SDE", "Res1Limit"]


class Res1Limit(ItoLimit):
    """The Itô SDE dH = (s/√d) dB σ(H) for torchsde, with ``g_prod`` only (no d×d² diffusion matrix)."""

    drift_free = True

    def __init__(self, activation: Activation, scale: float, width: int | None = None) -> None:
        super().__init__()
        self.activation = activation
        self.scale = scale
        self.noise_channels = 0 if width is None else width * width

    def f(self, t, y: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(y)

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return matrix_noise_product(v, self.activation(y), self.scale)

    def f_tangent(self, t, y: torch.Tensor, tangents: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(tangents)

    def g_prod_tangent(self, t, y: torch.Tensor, v: torch.Tensor, tangents: torch.Tensor) -> torch.Tensor:
        """∂_y((s/√d) V σ(y)) · T = (s/√d) V (σ'(y) ⊙ T)."""
        return matrix_noise_tangent(v, self.activation.derivative(y).unsqueeze(-1) * tangents, self.scale)

    def diffusion_matrix(self, t, y: torch.Tensor) -> torch.Tensor:
        return matrix_noise_diffusion(self.activation(y), self.scale)

    def diffusion_derivative(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Σ_l Σ_j (∂_l g_{·j}) v_{lj} in closed form (:func:`limits.ito.matrix_noise_derivative`)."""
        return matrix_noise_derivative(self.activation.derivative(y), v, self.scale)

    def stratonovich_correction(self, t, y: torch.Tensor) -> torch.Tensor:
        """½ (s²/d) σ'(y) σ(y): the Stratonovich form is dH = −½ (s²/d) σ'(H) σ(H) dt + (s/√d) dB ∘ σ(H)."""
        return matrix_noise_correction(self.activation.derivative(y), self.activation(y), self.scale**2)

    def exact_solution(self, h0: torch.Tensor, path: Any, t1: float = 1.0) -> torch.Tensor | None:
        """H_{t1} in closed form where there is one, else None.

        At width 1 with σ = id the limit dH = s H dB is geometric Brownian motion: H_t = H_0 exp(s W_t − s² t / 2),
        a function of the path's increment W_t (``path(0, t1)``). At width d ≥ 2, dH = (s/√d) dB H is a linear SDE
        whose d² noise matrices E_ij do not commute, and its solution is no function of the increments alone; for
        another σ the SDE is nonlinear. The solver study uses the closed form as its reference when there is one.
        """
        if self.noise_channels != 1 or self.activation.name != "identity":
            return None
        return h0 * torch.exp(self.scale * path(0.0, t1) - 0.5 * self.scale**2 * t1)


class Res1SDE(SDEPair):
    """res-1, i.i.d. N(0, s²/d) weights, scaling L^{-1/2}; limit dH = (s/√d) dB σ(H). Uses ``width``,
    ``activation`` (default tanh), ``weight_var`` (s², default 1; 2 is He initialisation as in the paper)
    and ``input_dim``."""

    name = "res1"
    description = "res-1, i.i.d. weights, L^-1/2 scaling  <->  neural SDE dH = (s/sqrt d) dB sigma(H)"
    theory_source = "docs/theory.md §1; Marion et al. 2022, Prop. 10"
    default_activation = "tanh"
    config_fields = frozenset({"activation", "weight_var", "input_dim"})
    config_hints = {"lengthscale": "its weights are i.i.d., not smooth", "beta": "its scaling is L^-1/2"}

    @property
    def theory_rate(self) -> float:
        return 0.5

    @property
    def noise_dim(self) -> int:
        return self.width * self.width

    @property
    def scale(self) -> float:
        """s/√d."""
        return math.sqrt(self.weight_var / self.width)

    def network_step(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor) -> torch.Tensor:
        return h + matrix_noise_product(dW, self.activation(h), self.scale)

    def network_tangent(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor, tangents: torch.Tensor
                        ) -> torch.Tensor:
        """(s/√d) ΔB_k (σ'(h) ⊙ T): the layer's Jacobian I + (s/√d) ΔB_k diag σ'(h), less I, on every column of T."""
        return matrix_noise_tangent(dW, self.activation.derivative(h).unsqueeze(-1) * tangents, self.scale)

    def layer_weights(self, dt: float, dW: torch.Tensor) -> torch.Tensor:
        """The layer's weight matrix V_{k+1} = √L (s/√d) ΔB_k (entries N(0, s²/d)), shape (N, d, d)."""
        return (self.scale / math.sqrt(dt)) * dW.view(-1, self.width, self.width)

    @property
    def noise_type(self) -> str:
        """``scalar`` at width 1 (one channel: commutative noise, where Milstein is order 1), else general."""
        return "scalar" if self.width == 1 else "general"

    def limit_sde(self) -> Res1Limit:
        return Res1Limit(self.activation, self.scale, self.width)
