"""A pair of your own: res-1 with a leak, and its neural SDE.

The network (depth L, i.i.d. weights V_{k+1} with entries N(0, s²/d), leak λ ≥ 0):

    h_{k+1} = h_k − (λ/L) h_k + L^{-1/2} V_{k+1} σ(h_k)

and, coupled on one d×d Brownian path B by V_{k+1} = √L (s/√d) ΔB_k, its limit

    dH = −λ H dt + (s/√d) dB σ(H).

The block is the Euler–Maruyama step of the SDE with dt = 1/L, and the noise is non-commutative, so the
strong rate is 1/2. Run it:

    python -m validation.convergence --model docs.examples.leaky_res1:LeakyRes1 --set leak=2
    python -c "from validation import convergence; print(convergence.run('docs/examples/leaky_res1.py:LeakyRes1').verdict)"
"""

import math

import torch

from limits import ItoLimit, OptionSpec, SDEPair, matrix_noise_product, number_option


class LeakyLimit(ItoLimit):
    """dH = −λ H dt + (s/√d) dB σ(H), for torchsde: the drift f and the product g·dB only."""

    def __init__(self, pair: "LeakyRes1") -> None:
        super().__init__()
        self.pair = pair

    def f(self, t, y: torch.Tensor) -> torch.Tensor:
        return -self.pair.leak * y

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return matrix_noise_product(v, self.pair.activation(y), self.pair.scale)


class LeakyRes1(SDEPair):
    """res-1 with a leak λ (the setting ``leak``) ↔ dH = −λ H dt + (s/√d) dB σ(H)."""

    name = "leaky-res1"
    description = "res-1 with a leak: h - (lambda/L) h + L^-1/2 V sigma(h)  <->  dH = -lambda H dt + (s/sqrt d) dB sigma(H)"
    theory_source = "Euler-Maruyama with non-commutative noise, docs/theory.md §1"
    theory_rate = 0.5
    config_fields = frozenset({"activation", "weight_var", "input_dim"})   # what this pair reads besides width
    option_specs = {"leak": OptionSpec(1.0, "the leak rate λ ≥ 0", number_option("leak", minimum=0.0))}

    @property
    def noise_dim(self) -> int:
        return self.width * self.width          # one Brownian motion per weight entry

    @property
    def leak(self) -> float:
        return self.option("leak")

    @property
    def scale(self) -> float:
        return math.sqrt(self.weight_var / self.width)   # s/√d

    def network_step(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor) -> torch.Tensor:
        return h - dt * self.leak * h + matrix_noise_product(dW, self.activation(h), self.scale)

    def limit_sde(self) -> LeakyLimit:
        return LeakyLimit(self)
