"""The scaled weight gradients of an ODE pair's network against the limit's functional gradient in its weights.

An ODE pair whose layer is h_{k+1} = h_k + (1/L) F(h_k, w_k) with weights w_k = w(t_k) read from smooth functions,
and whose limit is dH/dt = F(H, w(t)) (the pairs with a ``block(h, weights)`` method: res-1/2/3 with smooth weights),
has a weight gradient with a limit (docs/theory.md §7b):

    L · ∂ℓ/∂w_{0,k} = (∂_{w_0} F(h_k, w_k))ᵀ p_{k+1}   →   δℓ/δw_0(s) = (∂_{w_0} F(H_s, w(s)))ᵀ a(s),

the functional derivative of ℓ(H_1) in the first weight function w_0 (the outer matrix 𝒱 of res-1/2/3: for F = 𝒱 g,
δℓ/δ𝒱(s) = a(s) g(H_s, W_s)ᵀ), at the layer k = sL that starts at s. Both sides are computed directly:

* the network's: the first sL layers without a graph, then layer sL's weights as a leaf and the remaining (1 − s)L
  layers under autograd (memory (1 − s)L·N·d), the gradient scaled by L;
* the limit's: H_s from dopri5 on [0, s], then a(s) = ∂ℓ(H_1)/∂H_s by autograd through dopri5 on [s, 1] (the
  discretise-then-optimise gradient at tolerance ``rtol``), then the vector–Jacobian product with ∂_{w_0}F; the second
  reference does the same at 100× looser tolerances, which gives the floor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torchdiffeq import odeint

from limits.pairs import ODEPair
from validation.gradients.tangents import loss_gradient

__all__ = ["has_weight_gradient", "weight_key", "WeightGradients", "weight_gradients", "add_weight_gradients"]


def has_weight_gradient(pair: Any) -> bool:
    """Whether the pair's layer is h + dt·F(h, weights) with ``F = pair.block`` (an ODE pair that declares it)."""
    return isinstance(pair, ODEPair) and callable(getattr(pair, "block", None))


def weight_key(s: float) -> str:
    return f"weights@{s:g}"


@dataclass
class WeightGradients:
    """Per-sample values of the scaled weight gradient at time s.

    Attributes:
        network: L·∂ℓ/∂w_{0,sL} per depth, each (N, P) (P: the weight's entries, flattened).
        reference, second: δℓ/δw_0(s) from the reference and the second reference, (N, P).
    """

    network: list[torch.Tensor]
    reference: torch.Tensor
    second: torch.Tensor


def _weights_at(pair: Any, t: float) -> tuple[torch.Tensor, ...]:
    return tuple(w[0] for w in pair.weights(torch.tensor([t], dtype=pair.dtype, device=pair.device)))


def _vjp_weight(pair: Any, h: torch.Tensor, weights: tuple[torch.Tensor, ...], cotangent: torch.Tensor) -> torch.Tensor:
    """(∂_{w_0} F(h, w))ᵀ cotangent per sample, flattened to (N, P)."""
    with torch.enable_grad():
        first = weights[0].detach().clone().requires_grad_(True)
        value = pair.block(h.detach(), (first, *weights[1:]))
        (grad,) = torch.autograd.grad(value, first, grad_outputs=cotangent)
    return grad.reshape(grad.shape[0], -1)


def _layer_weights(pair: Any, depth: int, chunk: int = 64):
    """(k, layer k's weights) for k = 0 … depth − 1, the weight functions evaluated a chunk of grid times at once."""
    for first in range(0, depth, chunk):
        times = torch.arange(first, min(first + chunk, depth), dtype=pair.dtype, device=pair.device) / depth
        values = pair.weights(times)
        for i in range(len(times)):
            yield first + i, tuple(w[i] for w in values)


def _network(pair: Any, depth: int, s: float, h0: torch.Tensor, loss: str) -> torch.Tensor:
    dt, start = 1.0 / depth, int(round(s * depth))
    h = h0
    with torch.enable_grad():
        for k, weights in _layer_weights(pair, depth):
            if k == start:                       # layer sL's weights a leaf; the graph covers layers sL … L − 1
                first = weights[0].detach().clone().requires_grad_(True)
                h, weights = h.detach(), (first, *weights[1:])
            h = pair.network_step(h, k * dt, dt, weights)
        (grad,) = torch.autograd.grad(h, first, grad_outputs=loss_gradient(loss, h.detach()))
    return depth * grad.reshape(grad.shape[0], -1)


def _limit(pair: Any, s: float, h0: torch.Tensor, loss: str, rtol: float, atol: float) -> torch.Tensor:
    def field(t, h):
        return pair.limit_field(t, h)

    times = torch.tensor([0.0, s], dtype=pair.dtype, device=pair.device)
    h_s = odeint(field, h0, times, rtol=rtol, atol=atol, method="dopri5")[-1] if s > 0 else h0
    with torch.enable_grad():
        start = h_s.detach().clone().requires_grad_(True)
        rest = torch.tensor([s, 1.0], dtype=pair.dtype, device=pair.device)
        h1 = odeint(field, start, rest, rtol=rtol, atol=atol, method="dopri5")[-1]
        (adjoint,) = torch.autograd.grad(h1, start, grad_outputs=loss_gradient(loss, h1.detach()))
    return _vjp_weight(pair, h_s, _weights_at(pair, s), adjoint)


def weight_gradients(pair: Any, depths: list[int], s: float, *, loss: str = "half-square", rtol: float = 1e-10,
                     atol: float = 1e-10) -> WeightGradients:
    """The scaled weight gradient at time s (module docstring) of every depth, and the limit's (two references)."""
    if not has_weight_gradient(pair):
        raise ValueError(f"{pair.name} has no weight gradient with a limit (an ODE pair with a block(h, weights))")
    if not 0 <= s < 1 or any(s * L != int(s * L) for L in depths):
        raise ValueError(f"weight time {s:g} must lie in [0, 1) on the grid of every depth {list(depths)}")
    h0 = pair.initial_state()
    return WeightGradients(network=[_network(pair, int(L), s, h0, loss) for L in depths],
                           reference=_limit(pair, s, h0, loss, rtol, atol),
                           second=_limit(pair, s, h0, loss, 100 * rtol, 100 * atol))


def add_weight_gradients(errors: Any, pair: Any, times: tuple[float, ...], *, loss: str, rtol: float,
                         atol: float) -> None:
    """Adds ``weights@s`` for each s in ``times`` to a :class:`~validation.gradients.tangents.GradientErrors` of the same
    pair (its squared errors against both references, successive differences, reference gap, scale)."""
    def sq(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
        return (a - b).square().sum(1).detach().double().cpu().numpy()

    for s in times:
        values = weight_gradients(pair, list(errors.depths), s, loss=loss, rtol=rtol, atol=atol)
        key = weight_key(s)
        errors.keys.append(key)
        errors.squared[key] = np.stack([sq(v, values.reference) for v in values.network], axis=1)
        errors.squared_second[key] = np.stack([sq(v, values.second) for v in values.network], axis=1)
        errors.successive[key] = (np.stack([sq(a, b) for a, b in zip(values.network, values.network[1:])], axis=1)
                                  if len(values.network) > 1 else np.zeros((pair.samples, 0)))
        errors.reference_gap[key] = sq(values.reference, values.second)
        errors.scale[key] = values.reference.square().sum(1).detach().double().cpu().numpy()
        errors.nonfinite_network[key] = [int((~torch.isfinite(v)).any(-1).sum()) for v in values.network]
        errors.nonfinite_reference[key] = int((~torch.isfinite(values.reference)).any(-1).sum())
