"""The trained networks, each a batch of R independent replicates trained side by side.

Every parameter has a leading replicate axis R: replicate r is its own network, with its own
initialisation (drawn from streams labelled by r, so replicate r is the same network whatever R is),
data order and learning rate, and the forward pass runs all R as batched products (``torch.bmm``): one
Python loop over the layers serves every replicate. Nothing is shared between replicates, so gradients,
optimiser states and results are those of R separate runs (tested).

* :class:`Res1Net` — Marion et al.'s res-1 (Table 1), the model of their Figs. 8–9:
  h_0 = x W_in, h_{k+1} = h_k + L^{-β} σ(h_k) V_kᵀ, logits h_L W_out, with V_k from a weight regime of
  :mod:`limits.initialisation` (i.i.d., smooth or fractional; entries of variance 1/d).
* :class:`CohenNet` — Cohen et al. (2021) eq. (1): h_{k+1} = h_k + δ_k σ(h_k A_k + b_k), the output h_L
  itself; δ shared (|δ|, initialised at 1/L) or one per layer (δ_k ~ N(0, 1/L²)), as in the authors'
  code; A_k, b_k i.i.d. normal with standard deviations s/d and s/√d (``xavier``) or s/(L d) and
  s/(L √d) (``xavier-depth``).
* :class:`PFNet` — Peluchetti & Favaro (2020) §4.3: x_0 = W_I z, x_{t+1} = x_t + tanh(ΔW_t x_t + Δb_t),
  ŷ = W_O x_T with ΔW_t = σ_w √(Δt/D) ε^W_t, Δb_t = σ_b √Δt ε^b_t (their eqs. 15–16), W_I, W_O fixed
  N(0, 1). ``reparametrised=True`` trains ε (their eq. 16), False trains ΔW, Δb themselves (eq. 15);
  both start from the same draws, so the initial networks are identical. ``init`` (standard gradients
  only) replaces the paper's ΔW_t ~ N(0, σ_w² Δt/D) by a commonly used initialisation of a D × D layer
  (:func:`pf_init_weights`: Glorot and Bengio 2010, He et al. 2015), with Δb_t = 0 as those papers do;
  W_I, W_O stay the paper's fixed N(0, 1).
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from limits.activations import get_activation
from limits.initialisation import FractionalRegime, IIDRegime, Regime, SmoothRegime
from limits.seeding import generator

__all__ = ["layers", "Network", "Res1Net", "CohenNet", "PFNet", "weight_regime", "PF_STANDARD_INITS", "pf_init_weights"]


def weight_regime(init: str, *, hurst: float | None = None, lengthscale: float = 0.1) -> Regime:
    """``iid`` (normal entries), ``smooth`` (RBF GP of length-scale ℓ) or ``fbm`` (fGn of Hurst index H)."""
    if init == "iid":
        return IIDRegime("normal")
    if init == "smooth":
        return SmoothRegime(lengthscale)
    if init == "fbm":
        return FractionalRegime(0.5 if hurst is None else hurst)
    raise ValueError(f"initialisation {init!r} unknown (allowed: iid, smooth, fbm)")


#: the commonly used initialisations PFNet's standard arm can start from (besides the paper's, ``"pf"``)
PF_STANDARD_INITS = ("glorot", "glorot-uniform", "he")


def pf_init_weights(init: str, eps: torch.Tensor, fan_in: int, fan_out: int) -> torch.Tensor:
    """Weights of a commonly used initialisation, made from standard-normal draws ``eps`` (so that replicate r
    starts from the same draws as the paper's initialisation, rescaled):

    * ``glorot``: N(0, 2/(fan_in + fan_out)) (Glorot and Bengio 2010, the normal form);
    * ``glorot-uniform``: U(±√(6/(fan_in + fan_out))), variance 2/(fan_in + fan_out) (their eq. 16), as
      a·erf(ε/√2) with a the bound: Φ(ε) is uniform on (0, 1);
    * ``he``: N(0, 2/fan_in) (He et al. 2015).
    """
    if init == "glorot":
        return eps * math.sqrt(2.0 / (fan_in + fan_out))
    if init == "glorot-uniform":
        return torch.erf(eps / math.sqrt(2.0)) * math.sqrt(6.0 / (fan_in + fan_out))
    if init == "he":
        return eps * math.sqrt(2.0 / fan_in)
    raise ValueError(f"initialisation {init!r} unknown (allowed: {', '.join(PF_STANDARD_INITS)})")


def layers(weights: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The per-layer slices of ``weights`` (R, L, …) along the layer axis, taken at once by ``unbind``.

    Indexing ``weights[:, k]`` inside the layer loop costs O(L) in the backward pass *per layer*: autograd's
    backward of an index allocates a zero gradient of the whole (R, L, …) tensor and writes the slice into it, so
    a depth-L network's backward moved O(L²) numbers — 20 s instead of 0.2 s for one forward and backward at L =
    1024. ``unbind``'s backward stacks the L slice gradients once. Each slice receives exactly one gradient either
    way, so the gradients are the same numbers.
    """
    return weights.unbind(1)


class Network:
    """Parameters (a dict of leaf tensors with leading replicate axis R) and a batched forward pass.

    Attributes:
        params: the trained parameters.
        fixed: parameters that are not trained (e.g. random input layers).
        replicates: R.
    """

    params: dict[str, torch.Tensor]
    fixed: dict[str, torch.Tensor]
    replicates: int

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs (R, B, n_out) for inputs (R, B, n_in)."""
        raise NotImplementedError

    def _leaf(self) -> None:
        for tensor in self.params.values():
            tensor.requires_grad_(True)

    def snapshot(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in self.params.items()}


def _normal(shape: tuple[int, ...], std: float, seed: int, *labels: object, dtype: torch.dtype,
            device: torch.device) -> torch.Tensor:
    """N(0, std²) entries of shape (R, …): replicate r drawn from its own stream ``(seed, *labels, r)``, so
    replicate r is the same network whatever R is."""
    replicates, rest = shape[0], shape[1:]
    return torch.stack([torch.randn(rest, generator=generator(seed, *labels, r, device=device), dtype=dtype,
                                    device=device) for r in range(replicates)]) * std


class Res1Net(Network):
    """Marion et al.'s res-1 (module docstring): ``V`` is (R, L, d, d), ``W_in`` (R, n_in, d), ``W_out`` (R, d, n_out)."""

    def __init__(self, *, replicates: int, depth: int, width: int, n_in: int, n_out: int, beta: float,
                 regime: Regime, activation: str, seed: int, label: tuple, dtype: torch.dtype,
                 device: torch.device) -> None:
        self.replicates, self.depth, self.scale = replicates, depth, depth ** (-beta)
        self.sigma: Callable[[torch.Tensor], torch.Tensor] = get_activation(activation)
        V = torch.stack([regime.network_weights(seed, (*label, "replicate", r), depth, width, dtype, device)[0]
                         for r in range(replicates)])
        self.params = {
            "W_in": _normal((replicates, n_in, width), 1 / math.sqrt(n_in), seed, *label, "W_in", dtype=dtype,
                            device=device),
            "V": V,
            "W_out": _normal((replicates, width, n_out), 1 / math.sqrt(width), seed, *label, "W_out", dtype=dtype,
                             device=device),
        }
        self.fixed = {}
        self._leaf()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.bmm(x, self.params["W_in"])
        for V_k in layers(self.params["V"]):
            h = h + self.scale * torch.bmm(self.sigma(h), V_k.transpose(1, 2))
        return torch.bmm(h, self.params["W_out"])


class CohenNet(Network):
    """Cohen et al.'s ResNet (module docstring): ``A`` (R, L, d, d), ``b`` (R, L, d), ``delta`` (R, 1) or (R, L)."""

    def __init__(self, *, replicates: int, depth: int, width: int, activation: str, delta: str, init: str,
                 init_scale: float, seed: int, label: tuple, dtype: torch.dtype, device: torch.device) -> None:
        if delta not in ("shared", "multi"):
            raise ValueError(f"delta {delta!r} unknown (allowed: shared, multi)")
        self.replicates, self.depth, self.delta_type = replicates, depth, delta
        self.sigma = get_activation(activation)
        shrink = depth if init == "xavier-depth" else 1
        common = dict(dtype=dtype, device=device)
        self.params = {
            "A": _normal((replicates, depth, width, width), init_scale / (shrink * width), seed, *label, "A", **common),
            "b": _normal((replicates, depth, width), init_scale / (shrink * math.sqrt(width)), seed, *label, "b",
                         **common),
            "delta": (torch.full((replicates, 1), 1.0 / depth, **common) if delta == "shared"
                      else _normal((replicates, depth), 1.0 / depth, seed, *label, "delta", **common)),
        }
        self.fixed = {}
        self._leaf()

    def deltas(self, params: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        """δ_k for every layer, (R, L): |δ| repeated when shared."""
        delta = (params or self.params)["delta"]
        return delta.abs().expand(-1, self.depth) if self.delta_type == "shared" else delta

    def forward(self, x: torch.Tensor, params: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        p = params or self.params
        h = x
        for A_k, b_k, delta_k in zip(layers(p["A"]), layers(p["b"]), layers(self.deltas(p))):
            h = h + delta_k[:, None, None] * self.sigma(torch.baddbmm(b_k[:, None, :], h, A_k))
        return h


class PFNet(Network):
    """Peluchetti & Favaro's ResNet of §4.3 (module docstring), reparametrised or standard."""

    def __init__(self, *, replicates: int, depth: int, width: int, n_in: int, n_out: int, reparametrised: bool,
                 sigma_w: float, sigma_b: float, seed: int, label: tuple, dtype: torch.dtype,
                 device: torch.device, init: str = "pf") -> None:
        if init != "pf" and reparametrised:
            raise ValueError(f"initialisation {init!r} is for standard gradients only (the reparametrisation is "
                             "the paper's N(0, σ_w² Δt/D))")
        self.replicates, self.depth, self.reparametrised, self.init = replicates, depth, reparametrised, init
        dt = 1.0 / depth
        self.c_w, self.c_b = sigma_w * math.sqrt(dt / width), sigma_b * math.sqrt(dt)
        common = dict(dtype=dtype, device=device)
        eps_w = _normal((replicates, depth, width, width), 1.0, seed, *label, "eps_W", **common)
        eps_b = _normal((replicates, depth, width), 1.0, seed, *label, "eps_b", **common)
        self.fixed = {"W_I": _normal((replicates, n_in, width), 1.0, seed, *label, "W_I", **common),
                      "W_O": _normal((replicates, width, n_out), 1.0, seed, *label, "W_O", **common)}
        if reparametrised:
            self.params = {"eps_W": eps_w, "eps_b": eps_b}
        elif init != "pf":  # ΔW_t: a D × D layer's fan_in = fan_out = D; biases 0
            self.params = {"dW": pf_init_weights(init, eps_w, width, width), "db": torch.zeros_like(eps_b)}
        else:
            self.params = {"dW": eps_w * self.c_w, "db": eps_b * self.c_b}
        self._leaf()

    def increments(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(ΔW, Δb) as used by the forward pass."""
        if self.reparametrised:
            return self.params["eps_W"] * self.c_w, self.params["eps_b"] * self.c_b
        return self.params["dW"], self.params["db"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dW, db = self.increments()
        h = torch.bmm(x, self.fixed["W_I"])
        for dW_k, db_k in zip(layers(dW), layers(db)):
            h = h + torch.tanh(torch.baddbmm(db_k[:, None, :], h, dW_k.transpose(1, 2)))
        return torch.bmm(h, self.fixed["W_O"])
