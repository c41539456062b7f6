"""Chizat's ResNet with two-layer-perceptron (2LP) blocks at initialisation (lecture 12, Prop. 2.1).

    h^0 = x,   h^ℓ = h^{ℓ−1} + α Σ_{j=1}^{M} v_j^ℓ ρ((u_j^ℓ)ᵀ h^{ℓ−1}),   ℓ = 1…L,

with ρ = ReLU, u_j^ℓ ~ N(0, σ_u² I_d), v_j^ℓ ~ N(0, σ_v² I_d), all independent. With
φ(h, (u, v)) = v ρ(uᵀh): E[φ | h] = 0 and E[‖φ‖² | h] = d σ_v² · σ_u²‖h‖²/2 = c‖h‖², so

    E h^ℓ = x,     E‖h^ℓ − x‖² = ((1 + c α² M)^ℓ − 1)‖x‖²,     c = d σ_v² σ_u² / 2,

exactly, for every ℓ. As L → ∞ the spread at ℓ = L tends to exp(cML α²) − 1: non-trivial iff
α = Θ(1/√(ML)), the identity if α = o(1/√(ML)), an explosion if α ≫ 1/√(ML).

:func:`chizat_spread` returns the per-layer ‖h^ℓ − x‖²/‖x‖² for a batch of independent networks,
every α sharing one weight draw (the columns of a batched state, as in :mod:`limits.initialisation`).

**The backward pass (lecture §3.1).** For the loss ½‖h^L − y‖², b^ℓ = ∂loss/∂h^ℓ follows

    b^L = h^L − y,   b^{ℓ−1} = b^ℓ + α Σ_j ρ'((u_j^ℓ)ᵀ h^{ℓ−1}) ((v_j^ℓ)ᵀ b^ℓ) u_j^ℓ,

the forward recursion's form. :func:`chizat_backward_spread` computes it by autograd through the real forward
pass and returns S_b^ℓ = ‖b^ℓ − g‖²/‖g‖², g = ∇loss(y, x) = x − y (the backward of the identity map).
The lecture's simplified backward freezes the forward at h^ℓ = x (:func:`chizat_frozen_backward_spread`):
then b^{ℓ−1} = (I + A_ℓ) b^ℓ with A_ℓ = α Σ_j ρ'(u_jᵀx) u_j v_jᵀ, independent of b^ℓ (layers above) and of
mean zero (v_j is), so b is a backward martingale, and with E[ρ'(uᵀx)² ‖u‖²] = d σ_u²/2 (u ↦ −u),
E‖A_ℓ b‖² = α² M σ_v² (d σ_u²/2) ‖b‖² = c α² M ‖b‖²: the same c as the forward pass, and exactly

    E‖b^ℓ − g‖² = ((1 + c α² M)^{L−ℓ} − 1) ‖g‖²      (docs/theory.md, Chizat §3.1).
"""

from __future__ import annotations

import math

import torch

from .seeding import generator

__all__ = ["chizat_constant", "chizat_expected_spread", "chizat_spread", "chizat_backward_spread",
           "chizat_frozen_backward_spread"]


def chizat_constant(width: int, sigma_u: float, sigma_v: float) -> float:
    """c = d σ_v² σ_u² / 2 for ReLU 2LP blocks."""
    return width * sigma_v**2 * sigma_u**2 / 2.0


def chizat_expected_spread(alpha: float, hidden: int, layers: int, c: float) -> torch.Tensor:
    """((1 + cα²M)^ℓ − 1) for ℓ = 0…L, as a float64 tensor of length L + 1."""
    ell = torch.arange(layers + 1, dtype=torch.float64)
    return torch.expm1(ell * math.log1p(c * alpha**2 * hidden))


def chizat_spread(
    alphas: list[float],
    width: int,
    hidden: int,
    layers: int,
    networks: int,
    sigma_u: float,
    sigma_v: float,
    seed: int = 0,
    label: tuple = ("chizat",),
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
    chunk: int = 64,
) -> torch.Tensor:
    """‖h^ℓ − x‖²/‖x‖² for ℓ = 0…L, shape (len(alphas), L + 1, networks).

    Network i (input x ~ N(0, I_d) and its weights) draws from the stream ``(*label, i)``; α values
    are columns sharing that network's weights.
    """
    for name, value in (("width", width), ("hidden", hidden), ("layers", layers), ("networks", networks)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name}={value!r} is out of range (allowed: integer ≥ 1)")
    for name, value in (("sigma_u", sigma_u), ("sigma_v", sigma_v)):
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name}={value!r} is out of range (allowed: > 0)")
    if not alphas or any(not (a >= 0 and math.isfinite(a)) for a in alphas):
        raise ValueError(f"α values {alphas!r} out of range (allowed: finite α ≥ 0, at least one)")
    device = torch.device(device)
    cols = len(alphas)
    alpha = torch.tensor(alphas, dtype=dtype, device=device).reshape(1, 1, cols)
    out = torch.empty((cols, layers + 1, networks), dtype=torch.float64)
    for start in range(0, networks, chunk):
        stop = min(networks, start + chunk)
        us, vs, xs = [], [], []
        for i in range(start, stop):
            gen = generator(seed, *label, i, device=device)
            xs.append(torch.randn((width, 1), generator=gen, dtype=dtype, device=device))
            us.append(torch.randn((layers, hidden, width), generator=gen, dtype=dtype, device=device) * sigma_u)
            vs.append(torch.randn((layers, width, hidden), generator=gen, dtype=dtype, device=device) * sigma_v)
        x = torch.stack(xs).expand(-1, -1, cols)
        U, Vm = torch.stack(us, 1), torch.stack(vs, 1)
        x_norm2 = x.square().sum(1)
        delta = torch.zeros_like(x)
        spread = [torch.zeros_like(x_norm2)]
        for ell in range(layers):
            pre = torch.bmm(U[ell], x + delta)
            delta.add_(torch.bmm(Vm[ell], torch.relu(pre)).mul_(alpha))
            spread.append(delta.square().sum(1) / x_norm2)
        out[:, :, start:stop] = torch.stack(spread).permute(2, 0, 1).to(torch.float64).cpu()
    return out


def _draw_block_weights(seed: int, label: tuple, start: int, stop: int, width: int, hidden: int, layers: int,
                        sigma_u: float, sigma_v: float, dtype: torch.dtype, device: torch.device
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Inputs x, targets y (N(0, I_d) each) and block weights U (L, n, M, d), V (L, n, d, M) of networks
    start…stop−1, network i from the stream ``(*label, i)``."""
    us, vs, xs, ys = [], [], [], []
    for i in range(start, stop):
        gen = generator(seed, *label, i, device=device)
        xs.append(torch.randn((width, 1), generator=gen, dtype=dtype, device=device))
        ys.append(torch.randn((width, 1), generator=gen, dtype=dtype, device=device))
        us.append(torch.randn((layers, hidden, width), generator=gen, dtype=dtype, device=device) * sigma_u)
        vs.append(torch.randn((layers, width, hidden), generator=gen, dtype=dtype, device=device) * sigma_v)
    return torch.stack(xs), torch.stack(ys), torch.stack(us, 1), torch.stack(vs, 1)


def _check_sizes(alphas: list[float], **sizes: float) -> None:
    for name in ("width", "hidden", "layers", "networks"):
        value = sizes[name]
        if int(value) != value or value < 1:
            raise ValueError(f"{name}={value!r} is out of range (allowed: integer ≥ 1)")
    for name in ("sigma_u", "sigma_v"):
        if not (sizes[name] > 0 and math.isfinite(sizes[name])):
            raise ValueError(f"{name}={sizes[name]!r} is out of range (allowed: > 0)")
    if not alphas or any(not (a >= 0 and math.isfinite(a)) for a in alphas):
        raise ValueError(f"α values {alphas!r} out of range (allowed: finite α ≥ 0, at least one)")


def _backward_spreads(alphas: list[float], width: int, hidden: int, layers: int, networks: int, sigma_u: float,
                      sigma_v: float, seed: int, label: tuple, dtype: torch.dtype, device: torch.device | str,
                      chunk: int, frozen: bool) -> torch.Tensor:
    _check_sizes(alphas, width=width, hidden=hidden, layers=layers, networks=networks, sigma_u=sigma_u,
                 sigma_v=sigma_v)
    device = torch.device(device)
    cols = len(alphas)
    alpha = torch.tensor(alphas, dtype=dtype, device=device).reshape(1, 1, cols)
    out = torch.empty((cols, layers + 1, networks), dtype=torch.float64)
    for start in range(0, networks, chunk):
        stop = min(networks, start + chunk)
        x1, y1, U, Vm = _draw_block_weights(seed, label, start, stop, width, hidden, layers, sigma_u, sigma_v,
                                            dtype, device)
        x, y = x1.expand(-1, -1, cols), y1.expand(-1, -1, cols)
        g = x - y                                                   # ∇loss(y, x) for ½‖h − y‖²
        if frozen:                                                  # the simplified backward: h^ℓ = x throughout
            b, backward = g, [g]
            for ell in reversed(range(layers)):
                slope = (torch.bmm(U[ell], x) > 0).to(dtype)        # ρ'(u_jᵀ x)
                b = b + alpha * torch.bmm(U[ell].transpose(1, 2), slope * torch.bmm(Vm[ell].transpose(1, 2), b))
                backward.append(b)
            backward.reverse()                                      # b^0 … b^L
        else:                                                       # autograd through the real forward pass
            with torch.enable_grad():
                h = x.detach().clone().requires_grad_(True)
                states = [h]
                for ell in range(layers):
                    h = h + alpha * torch.bmm(Vm[ell], torch.relu(torch.bmm(U[ell], h)))
                    states.append(h)
                loss = 0.5 * (h - y).square().sum()
                backward = list(torch.autograd.grad(loss, states))
        g_norm2 = g.square().sum(1)
        spread = torch.stack([(b - g).square().sum(1) / g_norm2 for b in backward])  # (L + 1, n, cols)
        out[:, :, start:stop] = spread.permute(2, 0, 1).detach().to(torch.float64).cpu()
    return out


def chizat_backward_spread(alphas: list[float], width: int, hidden: int, layers: int, networks: int, sigma_u: float,
                           sigma_v: float, seed: int = 0, label: tuple = ("chizat-backward",),
                           dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
                           chunk: int = 64) -> torch.Tensor:
    """S_b^ℓ = ‖b^ℓ − ∇loss(y, x)‖²/‖∇loss(y, x)‖² for ℓ = 0…L, shape (len(alphas), L + 1, networks): b^ℓ =
    ∂loss/∂h^ℓ by autograd through the real forward pass, loss = ½‖h^L − y‖² (module docstring). Network i
    (input x, target y ~ N(0, I_d), and its weights) draws from the stream ``(*label, i)``; α values are columns
    sharing that network's draw."""
    return _backward_spreads(alphas, width, hidden, layers, networks, sigma_u, sigma_v, seed, label, dtype, device,
                             chunk, frozen=False)


def chizat_frozen_backward_spread(alphas: list[float], width: int, hidden: int, layers: int, networks: int,
                                  sigma_u: float, sigma_v: float, seed: int = 0, label: tuple = ("chizat-backward",),
                                  dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
                                  chunk: int = 64) -> torch.Tensor:
    """:func:`chizat_backward_spread` for the lecture's simplified backward, the forward frozen at h^ℓ = x (the
    same draws): E S_b^ℓ = (1 + cα²M)^{L−ℓ} − 1 exactly (module docstring)."""
    return _backward_spreads(alphas, width, hidden, layers, networks, sigma_u, sigma_v, seed, label, dtype, device,
                             chunk, frozen=True)
