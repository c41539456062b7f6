"""Smooth weights with α = 1/L ↔ the neural ODE dH/dt = 𝒱_t g(H, Θ_t) (docs/theory.md §2; Marion et al. Prop. 11).

Discrete network, depth L, layer k+1 covering [t_k, t_{k+1}] = [k/L, (k+1)/L]:

    h_{k+1} = h_k + (1/L) V_{k+1} g(h_k, θ_{k+1}),   V_{k+1} = 𝒱(t_k),  θ_{k+1} = Θ(t_k),

with 𝒱, Θ independent d×d matrices of smooth Gaussian processes (RBF kernel, length-scale ℓ, entries
of variance 1/d; :class:`~limits.smooth.SmoothGaussianProcess`). Models (paper Table 1):

    res-1: g(h) = σ(h);   res-2: g(h, W) = σ(W h);   res-3: g(h, W) = ReLU(W h).

Each layer reads the weight function at the left end of its interval, which makes the network exactly
the explicit Euler scheme of the ODE (the bit-for-bit test against torchdiffeq's ``euler``). Marion et
al. read 𝒱 at the right end, t_{k+1}; that shifts the weight sequence by one layer, an O(1/L) change
for Lipschitz 𝒱 that leaves the rate unchanged. Error bound ‖H_{k/L} − h_k‖ ≤ c/L: rate 1.
"""

from __future__ import annotations

import torch

from .pairs import ODEPair, PairError
from .smooth import SmoothGaussianProcess

__all__ = ["Res1ODE", "Res2ODE", "Res3ODE"]


class SmoothResNet(ODEPair):
    """Shared machinery of res-1/2/3 with smooth weights. Uses ``width``, ``activation``,
    ``lengthscale`` (ℓ, default 0.1), ``weight_var`` (s²: entries have variance s²/d, default 1) and
    ``input_dim``."""

    theory_source = "docs/theory.md §2; Marion et al. 2022, Prop. 11"
    config_fields = frozenset({"activation", "weight_var", "lengthscale", "input_dim"})
    config_hints = {"beta": "its scaling is 1/L"}
    uses_inner_weights = True

    def __init__(self, config, samples, seed=0, dtype=torch.float64, device="cpu") -> None:
        super().__init__(config, samples, seed, dtype, device)
        d = self.width
        options = dict(
            samples=self.samples, shape=(d, d), variance=self.weight_var / d,
            lengthscale=self.lengthscale, seed=self.seed, dtype=dtype, device=self.device,
        )
        self.outer = SmoothGaussianProcess(stream="V", **options)
        self.inner = SmoothGaussianProcess(stream="W", **options) if self.uses_inner_weights else None

    @property
    def theory_rate(self) -> float:
        return 1.0

    def describe(self) -> dict:
        return {**super().describe(), "lengthscale": self.lengthscale, "kl_terms": self.outer.terms}

    def weights(self, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.inner is None:
            return (self.outer(t),)
        return (self.outer(t), self.inner(t))

    def block(self, h: torch.Tensor, weights: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """V g(h, W) for a batch: h (N, d), weights[0] = V (N, d, d), weights[1] = W (N, d, d)."""
        if self.inner is None:
            pre = self.activation(h)
        else:
            pre = self.activation(torch.bmm(weights[1], h.unsqueeze(-1)).squeeze(-1))
        return torch.bmm(weights[0], pre.unsqueeze(-1)).squeeze(-1)

    def network_step(self, h, t, dt, weights):
        return h + dt * self.block(h, weights)

    def limit_field(self, t, h):
        t = torch.as_tensor(t, dtype=self.dtype, device=self.device).reshape(1)
        return self.block(h, tuple(w[0] for w in self.weights(t)))


class Res1ODE(SmoothResNet):
    name = "res1-ode"
    description = "res-1 g(h) = sigma(h), smooth weights, 1/L scaling  <->  neural ODE dH = V_t sigma(H) dt"
    uses_inner_weights = False


class Res2ODE(SmoothResNet):
    name = "res2-ode"
    description = "res-2 g(h, W) = sigma(W h), smooth weights, 1/L  <->  neural ODE dH = V_t sigma(W_t H) dt"


class Res3ODE(SmoothResNet):
    name = "res3-ode"
    description = "res-3 g(h, W) = ReLU(W h), smooth weights, 1/L  <->  neural ODE dH = V_t ReLU(W_t H) dt"
    default_activation = "relu"

    def __init__(self, config, samples, seed=0, dtype=torch.float64, device="cpu") -> None:
        if config.activation not in (None, "relu"):
            raise PairError(f"res3-ode uses ReLU by definition; got --activation {config.activation!r} (use res2-ode)")
        super().__init__(config, samples, seed, dtype, device)
