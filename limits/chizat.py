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
           "chizat_frozen_backward_spread", "shallow_tangent_kernel", "chizat_kernel_errors", "chizat_training_changes"]


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
    moments: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """‖h^ℓ − x‖²/‖x‖² for ℓ = 0…L, shape (len(alphas), L + 1, networks).

    Network i (input x ~ N(0, I_d) and its weights) draws from the stream ``(*label, i)``; α values
    are columns sharing that network's weights.

    With ``moments=True`` it also returns the first two moments of the normalised displacement
    D^ℓ = (h^ℓ − x)/‖x‖ ∈ R^d over the networks — Σ_i D_i^ℓ, shape (len(alphas), L + 1, d), and Σ_i D_i^ℓ (D_i^ℓ)ᵀ,
    shape (len(alphas), L + 1, d, d) — accumulated chunk by chunk, for the test of Prop. 2.1's E h^ℓ = x
    (E D^ℓ = 0 given x, so also unconditionally). The spread is ‖D^ℓ‖², so the numbers it returns do not change.
    """
    device, cols, alpha, out = _prepare(alphas, width, hidden, layers, networks, sigma_u, sigma_v, dtype, device)
    if moments:
        first = torch.zeros((cols, layers + 1, width), dtype=torch.float64)
        second = torch.zeros((cols, layers + 1, width, width), dtype=torch.float64)
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
            if moments:
                d_norm = (delta / x_norm2.sqrt().unsqueeze(1)).to(torch.float64).cpu()     # (n, d, cols)
                first[:, ell + 1] += d_norm.sum(0).T
                second[:, ell + 1] += torch.einsum("nic,njc->cij", d_norm, d_norm)
        out[:, :, start:stop] = torch.stack(spread).permute(2, 0, 1).to(torch.float64).cpu()
    return (out, first, second) if moments else out


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


def _prepare(alphas: list[float], width: int, hidden: int, layers: int, networks: int, sigma_u: float, sigma_v: float,
             dtype: torch.dtype, device: torch.device | str) -> tuple[torch.device, int, torch.Tensor, torch.Tensor]:
    """The sizes checked; the device, the α columns (1, 1, C) and the float64 output (C, L + 1, networks)."""
    _check_sizes(alphas, width=width, hidden=hidden, layers=layers, networks=networks, sigma_u=sigma_u,
                 sigma_v=sigma_v)
    device = torch.device(device)
    cols = len(alphas)
    alpha = torch.tensor(alphas, dtype=dtype, device=device).reshape(1, 1, cols)
    return device, cols, alpha, torch.empty((cols, layers + 1, networks), dtype=torch.float64)


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
    device, cols, alpha, out = _prepare(alphas, width, hidden, layers, networks, sigma_u, sigma_v, dtype, device)
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


def shallow_tangent_kernel(U: torch.Tensor, V: torch.Tensor, X: torch.Tensor, alpha: float) -> torch.Tensor:
    """The lecture's §3.3 kernel, K(x, x') = α² Σ_j Σ_ℓ D₂φ(x, z^{j,ℓ}) D₂φ(x', z^{j,ℓ})ᵀ, for 2LP blocks
    φ(x, (u, v)) = v ρ(uᵀx): D₂φ D₂φᵀ = ρ(uᵀx) ρ(uᵀx') I_d + ρ'(uᵀx) ρ'(uᵀx') (xᵀx') v vᵀ.

    ``U`` (L, N, M, d), ``V`` (L, N, d, M), inputs ``X`` (N, d, n): returns (N, n·d, n·d), rows and columns indexed
    (input i, output coordinate c)."""
    n_in, d = X.shape[2], X.shape[1]
    pre = torch.einsum("lnja,nai->lnji", U, X)
    features, slopes = torch.relu(pre), (pre > 0).to(X.dtype)
    values = torch.einsum("lnji,lnjk->nik", features, features)                      # Σ ρ ρ'
    eye = torch.eye(d, dtype=X.dtype, device=X.device)
    gram = torch.einsum("nai,nak->nik", X, X)                                         # xᵀx'
    outer = torch.einsum("lnji,lnjk,lncj,lnej->nicke", slopes, slopes, V, V)         # Σ ρ' ρ' v vᵀ
    kernel = torch.einsum("nik,ce->nicke", values, eye) + outer * gram[:, :, None, :, None]
    return (alpha**2 * kernel).reshape(X.shape[0], n_in * d, n_in * d)


def _relative(squared_error: torch.Tensor, squared_norm: torch.Tensor) -> torch.Tensor:
    """√(error / norm) per network; where the prediction is 0 (every unit off at x), 0 if the error is 0 too, else
    inf — never a NaN."""
    safe = torch.where(squared_norm > 0, squared_norm, torch.ones_like(squared_norm))
    zero = torch.where(squared_error == 0, torch.zeros_like(safe), torch.full_like(safe, math.inf))
    return torch.where(squared_norm > 0, (squared_error / safe).sqrt(), zero).double().cpu()


def chizat_kernel_errors(alphas: list[float], width: int, hidden: int, layers: int, networks: int, inputs: int,
                         sigma_u: float, sigma_v: float, seed: int = 0, label: tuple = ("chizat-kernel",),
                         dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu", chunk: int = 32
                         ) -> dict[str, torch.Tensor]:
    """The lecture's §3.2 and §3.3 at initialisation, per α and network (each (len(alphas), networks)):

    * ``kernel``: ‖K − K_shallow‖_F / ‖K_shallow‖_F, K the ResNet's empirical tangent kernel of h^L on ``inputs``
      inputs x ~ N(0, I_d) (every block weight, by autograd), K_shallow :func:`shallow_tangent_kernel` — the kernel
      of a shallow network of M × L units with the first output corrected to x;
    * ``gradient_u``, ``gradient_v``, ``gradient``: the relative Frobenius error of the first-step gradient of
      ½‖h^L(x_1) − y‖² (y ~ N(0, I_d), by autograd) against eq. (5), α D₂φ(x, z^{j,ℓ})ᵀ ∇loss(y, x): over the
      u_j, over the v_j, over all block weights.

    Network i draws x_1…x_n, y and its weights from the stream ``(*label, i)``; every α reads the same draw."""
    _check_sizes(alphas, width=width, hidden=hidden, layers=layers, networks=networks, sigma_u=sigma_u,
                 sigma_v=sigma_v)
    if int(inputs) != inputs or inputs < 1:
        raise ValueError(f"inputs={inputs!r} is out of range (allowed: integer ≥ 1)")
    device = torch.device(device)
    keys = ("kernel", "gradient_u", "gradient_v", "gradient")
    out = {key: torch.empty((len(alphas), networks), dtype=torch.float64) for key in keys}
    for start in range(0, networks, chunk):
        stop = min(networks, start + chunk)
        xs, ys, us, vs = [], [], [], []
        for i in range(start, stop):
            gen = generator(seed, *label, i, device=device)
            xs.append(torch.randn((width, inputs), generator=gen, dtype=dtype, device=device))
            ys.append(torch.randn((width, 1), generator=gen, dtype=dtype, device=device))
            us.append(torch.randn((layers, hidden, width), generator=gen, dtype=dtype, device=device) * sigma_u)
            vs.append(torch.randn((layers, width, hidden), generator=gen, dtype=dtype, device=device) * sigma_v)
        X, y, U0, V0 = torch.stack(xs), torch.stack(ys), torch.stack(us, 1), torch.stack(vs, 1)
        n = stop - start
        g = X[:, :, :1] - y                                                           # ∇loss(y, x_1)
        pre = torch.einsum("lnja,na->lnj", U0, X[:, :, 0])
        back = torch.einsum("lncj,nc->lnj", V0, g[:, :, 0])                           # v_jᵀ ∇loss
        for col, alpha in enumerate(alphas):
            with torch.enable_grad():
                U, V = U0.clone().requires_grad_(True), V0.clone().requires_grad_(True)
                us, vs = U.unbind(0), V.unbind(0)      # once: O(L) gradients, not O(L²) (chizat_training_changes)
                h = X
                for ell in range(layers):
                    h = h + alpha * torch.bmm(vs[ell], torch.relu(torch.bmm(us[ell], h)))
                rows = []
                for i in range(inputs):                                               # the Jacobian, row by row
                    for c in range(width):
                        gu, gv = torch.autograd.grad(h[:, c, i].sum(), (U, V), retain_graph=True)
                        rows.append(torch.cat([gu.permute(1, 0, 2, 3).reshape(n, -1),
                                               gv.permute(1, 0, 2, 3).reshape(n, -1)], 1))
                loss = 0.5 * (h[:, :, :1] - y).square().sum()
                grad_u, grad_v = torch.autograd.grad(loss, (U, V))
            jac = torch.stack(rows, 1)
            kernel = jac @ jac.transpose(1, 2)
            shallow = shallow_tangent_kernel(U0, V0, X, alpha)
            out["kernel"][col, start:stop] = ((kernel - shallow).flatten(1).norm(dim=1)
                                              / shallow.flatten(1).norm(dim=1)).double().cpu()
            pred_u = alpha * ((pre > 0).to(dtype) * back)[..., None] * X[None, :, None, :, 0]   # (L, n, M, d)
            pred_v = alpha * g[None, :, :, 0, None] * torch.relu(pre)[:, :, None, :]              # (L, n, d, M)
            err_u, err_v = (grad_u - pred_u).square().sum((0, 2, 3)), (grad_v - pred_v).square().sum((0, 2, 3))
            norm_u, norm_v = pred_u.square().sum((0, 2, 3)), pred_v.square().sum((0, 2, 3))
            out["gradient_u"][col, start:stop] = _relative(err_u, norm_u)
            out["gradient_v"][col, start:stop] = _relative(err_v, norm_v)
            out["gradient"][col, start:stop] = _relative(err_u + err_v, norm_u + norm_v)
    return out


def chizat_training_changes(beta: float, gamma: float, depth: int, eta0: float, width: int, hidden: int,
                            networks: int, samples: int, steps: int, sigma_u: float, sigma_v: float, seed: int = 0,
                            label: tuple = ("chizat-phase",), dtype: torch.dtype = torch.float64,
                            device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """A few full-batch gradient steps of the lecture's ResNet and how its predictor and features moved (§3,
    Figure 1): block multiplier α = L^{-β}/√M, learning rate η = η₀ L^γ on every block weight, loss
    (1/n) Σ_i ½‖h^L(x_i) − y_i‖² over ``samples`` pairs x_i, y_i ~ N(0, I_d), ``steps`` steps from the
    initialisation θ_0 to θ_K. Per network (each a tensor of length ``networks``):

    * ``predictor``: the mean over samples of ‖h^L(x_i; θ_K) − h^L(x_i; θ_0)‖;
    * ``local``, ``below``: Σ_ℓ Σ_i ‖f^ℓ(h_0^{ℓ−1}; z_K) − f^ℓ(h_0^{ℓ−1}; z_0)‖² and Σ_ℓ Σ_i ‖f^ℓ(h_K^{ℓ−1}; z_K) −
      f^ℓ(h_0^{ℓ−1}; z_K)‖², f^ℓ(h; z) = α Σ_j φ(h, z_j^ℓ) the block's output: the change of each layer's feature
      due to its own weights' update (its input held) and due to the layers below (its input moving);
    * ``share``: local / (local + below), the lecture's "contribution of the local weight to the evolution of the
      feature" — of order 1 in local feature learning, vanishing in the lazy ODE regime.

    Network i draws its samples and weights from the stream ``(*label, i)`` (the same for every β, γ)."""
    _check_sizes([1.0], width=width, hidden=hidden, layers=depth, networks=networks, sigma_u=sigma_u,
                 sigma_v=sigma_v)
    for name, value in (("samples", samples), ("steps", steps)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name}={value!r} is out of range (allowed: integer ≥ 1)")
    device = torch.device(device)
    alpha, eta = depth ** (-beta) / math.sqrt(hidden), eta0 * depth**gamma
    xs, ys, us, vs = [], [], [], []
    for i in range(networks):
        gen = generator(seed, *label, i, device=device)
        xs.append(torch.randn((width, samples), generator=gen, dtype=dtype, device=device))
        ys.append(torch.randn((width, samples), generator=gen, dtype=dtype, device=device))
    for i in range(networks):  # the weights after every network's data: a network's data do not depend on L
        gen = generator(seed, *label, "weights", depth, i, device=device)
        us.append(torch.randn((depth, hidden, width), generator=gen, dtype=dtype, device=device) * sigma_u)
        vs.append(torch.randn((depth, width, hidden), generator=gen, dtype=dtype, device=device) * sigma_v)
    X, Y, U0, V0 = torch.stack(xs), torch.stack(ys), torch.stack(us, 1), torch.stack(vs, 1)

    def block(u: torch.Tensor, v: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """f^ℓ(h; z) = α v ρ(u h), the block of one layer's weights u (n, M, d), v (n, d, M)."""
        return alpha * torch.bmm(v, torch.relu(torch.bmm(u, h)))

    def states(U: torch.Tensor, V: torch.Tensor) -> list[torch.Tensor]:
        # the layers' weights unbound once: autograd then stacks their L gradients, where indexing U[ℓ] in the loop
        # made it fill a whole (L, n, M, d) tensor of zeros per layer and add them up (O(L²): at L = 512, 4·10⁹
        # numbers a step); the sums are the same, so are the numbers
        us, vs = U.unbind(0), V.unbind(0)
        out = [X]
        for ell in range(depth):
            out.append(out[-1] + block(us[ell], vs[ell], out[-1]))
        return out

    U, V = U0, V0
    for _ in range(steps):
        with torch.enable_grad():
            Ur, Vr = U.clone().requires_grad_(True), V.clone().requires_grad_(True)
            loss = 0.5 * (states(Ur, Vr)[-1] - Y).square().sum() / samples   # summed over networks: independent
            grad_u, grad_v = torch.autograd.grad(loss, (Ur, Vr))
        U, V = U - eta * grad_u, V - eta * grad_v
    with torch.no_grad():
        before, after = states(U0, V0), states(U, V)
        predictor = (after[-1] - before[-1]).square().sum(1).sqrt().mean(1)
        local = torch.zeros(networks, dtype=dtype, device=device)
        below = torch.zeros_like(local)
        for ell in range(depth):
            start = block(U0[ell], V0[ell], before[ell])
            own = block(U[ell], V[ell], before[ell])
            moved = block(U[ell], V[ell], after[ell])
            local += (own - start).square().sum((1, 2))
            below += (moved - own).square().sum((1, 2))
    share = local / (local + below)
    return {key: value.double().cpu() for key, value in
            (("predictor", predictor), ("local", local), ("below", below), ("share", share))}
