"""The backward–feature angle θ_ℓ at initialisation (Chizat & Netrapalli, NeurIPS 2024, "The feature speed formula").

A network of L layers f_ℓ = T_ℓ(f_{ℓ−1}, θ_ℓ) with a scalar output F and loss ℒ(F). One gradient step with the same
learning rate η on every layer moves the features, to first order, by

    δf_ℓ = −η K_ℓ b_ℓ,   K_ℓ = Σ_{k≤ℓ} (∂f_ℓ/∂θ_k)(∂f_ℓ/∂θ_k)ᵀ,   b_ℓ = ∂ℒ/∂f_ℓ,

K_ℓ the backward-to-feature kernel (the tangent kernel when ℓ = L): the weights θ_k with k ≤ ℓ reach ℒ only through
f_ℓ, so ∇_{θ_k}ℒ = (∂f_ℓ/∂θ_k)ᵀ b_ℓ and −η Σ_{k≤ℓ} (∂f_ℓ/∂θ_k) ∇_{θ_k}ℒ is exactly −η K_ℓ b_ℓ. The angle θ_ℓ between
the feature update and the backward pass,

    cos θ_ℓ = ⟨K_ℓ b_ℓ, b_ℓ⟩ / (‖K_ℓ b_ℓ‖ ‖b_ℓ‖),

gives the feature speed formula ‖δf_ℓ‖ = η ΔL_ℓ / (‖b_ℓ‖ cos θ_ℓ), ΔL_ℓ = ⟨K_ℓ b_ℓ, b_ℓ⟩ = Σ_{k≤ℓ} ‖∇_{θ_k}ℒ‖²
(the loss decrease owed to the layers up to ℓ). With a scalar output, b_ℓ = ℒ'(F) ∂F/∂f_ℓ, and the factor ℒ'(F)
cancels from cos θ_ℓ: the angle is a property of the network at its input, whatever the target.

Here (computed in one backward pass for every ∇_{θ_k} F and b_ℓ, then one forward tangent pass along −∇_θ F for every
δf_ℓ = −K_ℓ b_ℓ at once):

* ``mlp``, a ReLU perceptron at He initialisation: f_1 = W_1 x/√d, f_ℓ = √(2/d) W_ℓ ρ(f_{ℓ−1}), F = √(2/d) wᵀρ(f_L),
  W_ℓ, w with N(0, 1) entries, every W_ℓ trained. The paper (from the products of random matrices): cos θ_ℓ =
  Θ(1/√ℓ), the angle degenerates with depth.
* ``resnet``, Chizat's lecture ResNet with ReLU 2LP blocks (:mod:`limits.chizat`): h_ℓ = h_{ℓ−1} + α Σ_j v_j
  ρ(u_jᵀ h_{ℓ−1}), α = κ/√(ML), F = wᵀh_L/√d, every u_j, v_j trained. The paper: with a branch scale O(1/√L),
  cos θ_ℓ = Θ(1) — the layer-to-layer Jacobians stay well conditioned.

The forward tangent of each layer (δθ = −∇_θ F):

    mlp:    δf_ℓ = s_ℓ (δW_ℓ a_{ℓ−1} + W_ℓ δa_{ℓ−1}),   a = ρ(f) (a_0 = x), δa = ρ'(f) δf;
    resnet: δh_ℓ = δh_{ℓ−1} + α (δV_ℓ ρ(U_ℓ h) + V_ℓ (ρ'(U_ℓ h) ⊙ (δU_ℓ h + U_ℓ δh))),   h = h_{ℓ−1}.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

from .seeding import generator

__all__ = ["ARCHITECTURES", "feature_angles"]

#: the two networks of the paper's comparison
ARCHITECTURES = ("mlp", "resnet")


def _draw(architecture: str, depth: int, width: int, hidden: int, sigma_u: float, sigma_v: float, seed: int,
          label: tuple, start: int, stop: int, dtype: torch.dtype, device: torch.device
          ) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """Inputs x (n, d, 1) and readouts w (n, d, 1), the same for every architecture and depth (network i's stream
    ``(*label, "data", i)``), and the weights (network i's stream ``(*label, architecture, depth, i)``)."""
    xs, ws, weights = [], [], []
    for i in range(start, stop):
        gen = generator(seed, *label, "data", i, device=device)
        xs.append(torch.randn((width, 1), generator=gen, dtype=dtype, device=device))
        ws.append(torch.randn((width, 1), generator=gen, dtype=dtype, device=device))
        gen = generator(seed, *label, architecture, depth, i, device=device)
        if architecture == "mlp":
            weights.append([torch.randn((depth, width, width), generator=gen, dtype=dtype, device=device)])
        else:
            weights.append([torch.randn((depth, hidden, width), generator=gen, dtype=dtype, device=device) * sigma_u,
                            torch.randn((depth, width, hidden), generator=gen, dtype=dtype, device=device) * sigma_v])
    return torch.stack(xs), torch.stack(ws), [torch.stack(parts, 1) for parts in zip(*weights)]   # (L, n, ·, ·)


def _mlp(params: list[torch.Tensor], x: torch.Tensor, w: torch.Tensor, tangent: list[torch.Tensor] | None = None
         ) -> tuple[list[torch.Tensor], torch.Tensor | None]:
    """The perceptron's features f_1…f_L and output F; with ``tangent`` (δW), the features' tangents δf_ℓ instead
    (F None)."""
    (W,) = params
    d = x.shape[1]
    a, da, out = x, torch.zeros_like(x), []
    for ell, W_ell in enumerate(W.unbind(0)):     # unbind: indexing W[ell] makes the backward quadratic in L
        scale = math.sqrt((1.0 if ell == 0 else 2.0) / d)
        f = scale * torch.bmm(W_ell, a)
        if tangent is None:
            out.append(f)
        else:
            df = scale * (torch.bmm(tangent[0][ell], a) + torch.bmm(W_ell, da))
            out.append(df)
            da = (f > 0).to(f.dtype) * df
        a = torch.relu(f)
    if tangent is not None:
        return out, None
    return out, math.sqrt(2.0 / d) * (w * a).sum((1, 2))


def _resnet(params: list[torch.Tensor], x: torch.Tensor, w: torch.Tensor, alpha: float,
            tangent: list[torch.Tensor] | None = None) -> tuple[list[torch.Tensor], torch.Tensor | None]:
    """The lecture's ResNet: states h_1…h_L and output F; with ``tangent`` (δU, δV), the tangents δh_ℓ (F None)."""
    U, V = params
    h, dh, out = x, torch.zeros_like(x), []
    for ell, (U_ell, V_ell) in enumerate(zip(U.unbind(0), V.unbind(0))):
        pre = torch.bmm(U_ell, h)
        if tangent is not None:
            dpre = torch.bmm(tangent[0][ell], h) + torch.bmm(U_ell, dh)
            dh = dh + alpha * (torch.bmm(tangent[1][ell], torch.relu(pre))
                               + torch.bmm(V_ell, (pre > 0).to(pre.dtype) * dpre))
            out.append(dh)
        h = h + alpha * torch.bmm(V_ell, torch.relu(pre))
        if tangent is None:
            out.append(h)
    if tangent is not None:
        return out, None
    return out, (w * h).sum((1, 2)) / math.sqrt(x.shape[1])


def _forward(architecture: str, params: list[torch.Tensor], x: torch.Tensor, w: torch.Tensor, alpha: float,
             tangent: list[torch.Tensor] | None = None) -> tuple[list[torch.Tensor], torch.Tensor | None]:
    return _mlp(params, x, w, tangent) if architecture == "mlp" else _resnet(params, x, w, alpha, tangent)


def feature_angles(architecture: str, depth: int, width: int, networks: int, hidden: int = 1,
                   kappas: Sequence[float] = (1.0,),
                   sigma_u: float = 1.0, sigma_v: float = 1.0, seed: int = 0, label: tuple = ("feature-speed",),
                   dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu", chunk: int = 8
                   ) -> dict[str, torch.Tensor]:
    """cos θ_ℓ for ℓ = 1…L of ``networks`` independent networks at initialisation (module docstring), as float64
    tensors of shape (len(kappas), L, networks) — every κ on the same drawn networks:

    * ``cosine``: cos θ_ℓ = ⟨K_ℓ b_ℓ, b_ℓ⟩ / (‖K_ℓ b_ℓ‖ ‖b_ℓ‖);
    * ``speed``: ‖K_ℓ b_ℓ‖/‖f_ℓ‖, the relative feature speed per unit learning rate (the loss F itself);
    * ``identity_error``: |⟨K_ℓ b_ℓ, b_ℓ⟩ − Σ_{k≤ℓ} ‖∇_{θ_k}F‖²| / Σ_{k≤ℓ} ‖∇_{θ_k}F‖², the forward tangent against
      the gradient norms — zero up to rounding (the identity behind the feature speed formula).

    Where b_ℓ = 0 or K_ℓ b_ℓ = 0 (every ReLU unit off at some layer, likely only at a width of a few units) there is
    no angle: ``cosine`` is NaN there, for the caller to count, and ``identity_error`` is 0 (both sides are 0).
    ``architecture``: ``mlp`` (``hidden``, ``sigma_u``, ``sigma_v`` unused; give one κ, it is unused too) or ``resnet`` (α = κ/√(ML),
    u_j ~ N(0, σ_u² I_d), v_j ~ N(0, σ_v² I_d)). Network i's input x ~ N(0, I_d) and readout w ~ N(0, I_d) come from
    the stream ``(*label, "data", i)`` — the same at every depth and for both architectures — and its weights from
    ``(*label, architecture, depth, i)``. Memory: ``chunk`` networks' weights at a time."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture={architecture!r} unknown (allowed: {', '.join(ARCHITECTURES)})")
    for name, value in (("depth", depth), ("width", width), ("networks", networks), ("hidden", hidden),
                        ("chunk", chunk)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name}={value!r} is out of range (allowed: integer ≥ 1)")
    if not kappas:
        raise ValueError("kappas=() is empty (allowed: at least one finite κ > 0)")
    for name, value in (*(("kappa", k) for k in kappas), ("sigma_u", sigma_u), ("sigma_v", sigma_v)):
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name}={value!r} is out of range (allowed: finite, > 0)")
    device = torch.device(device)
    keys = ("cosine", "speed", "identity_error")
    out = {key: torch.empty((len(kappas), depth, networks), dtype=torch.float64) for key in keys}
    for start in range(0, networks, chunk):
        stop = min(networks, start + chunk)
        x, w, weights = _draw(architecture, depth, width, hidden, sigma_u, sigma_v, seed, label, start, stop, dtype,
                              device)
        for column, kappa in enumerate(kappas):                             # every κ on the same draw
            for key, value in _angles(architecture, weights, x, w, kappa / math.sqrt(hidden * depth)).items():
                out[key][column, :, start:stop] = value
    return out


def _angles(architecture: str, weights: list[torch.Tensor], x: torch.Tensor, w: torch.Tensor, alpha: float
            ) -> dict[str, torch.Tensor]:
    """:func:`feature_angles`'s three quantities, (L, n) float64 on the CPU, for one chunk of drawn networks."""
    with torch.enable_grad():
        params = [p.clone().requires_grad_(True) for p in weights]
        features, output = _forward(architecture, params, x, w, alpha)
        grads = torch.autograd.grad(output.sum(), params + features)       # networks are independent: summed
    param_grads, backward = grads[: len(params)], grads[len(params):]
    with torch.no_grad():
        moved, _ = _forward(architecture, weights, x, w, alpha, [-g for g in param_grads])   # δf_ℓ = −K_ℓ b_ℓ
        per_layer = sum(g.square().sum((2, 3)) for g in param_grads)         # (L, n): Σ over a layer's weights
        decrease = per_layer.cumsum(0)                                       # ΔL_ℓ = Σ_{k≤ℓ} ‖∇_{θ_k}F‖²
        kb = torch.stack([-m[..., 0] for m in moved])                        # K_ℓ b_ℓ, (L, n, d)
        b = torch.stack([g[..., 0] for g in backward])
        f = torch.stack([h[..., 0] for h in features]).detach()
        inner = (kb * b).sum(-1)
        kb_norm, b_norm = kb.norm(dim=-1), b.norm(dim=-1)
        moved_at_all = decrease > 0                # else nothing moves (every unit off): 0 = 0, no error, no angle
        error = (inner - decrease).abs() / torch.where(moved_at_all, decrease, torch.ones_like(decrease))
        return {"cosine": (inner / (kb_norm * b_norm)).double().cpu(),
                "speed": (kb_norm / f.norm(dim=-1)).double().cpu(),
                "identity_error": torch.where(moved_at_all | (inner != 0), error, 0.0).double().cpu()}
