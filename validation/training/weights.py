"""Statistics of trained weights as functions of the layer index k (per replicate).

For a weight tensor A of shape (L, …) (one replicate), with ‖·‖ the Frobenius norm:

* Cohen et al. (2021) Table 1: the **maximum norm** max_k ‖A_k‖, the **β-scaled norm of increments**
  L^β max_k ‖A_{k+1} − A_k‖, the **cumulative-sum norm** ‖Σ_k A_k‖ and the **root sum of squares**
  (Σ_k ‖A_k‖²)^{1/2};
* the **weight path** of a res-1 network, W_k = Σ_{j<k} α_L V_j (so that h_{k+1} = h_k + (W_{k+1} − W_k) σ(h_k),
  the discretisation of dH = dW σ(H)): its largest increment max_k ‖W_{k+1} − W_k‖ = α_L max_k ‖V_k‖ and
  its **quadratic variation** Σ_k ‖W_{k+1} − W_k‖². A Brownian path has increments of order L^{-1/2}
  and quadratic variation of order 1; a C¹ path increments of order L^{-1} and quadratic variation of
  order L^{-1};
* the **trend/noise split** (Cohen et al. eq. 6, A_k = L^{-β}Ā_{k/L} + W^A_{(k+1)/L} − W^A_{k/L}):
  - the trend Ā_k is the mean of A over a window of w = ⌈√L⌉ layers around k (the authors' denoising
    uses a moving window too; √L layers make both the window's share of the depth, w/L = L^{-1/2}, and
    the noise left in the mean, of order w^{-1/2}, vanish as L grows); the noise is A − Ā;
  - the **quadratic variation of the noise path**, Q(L) = ½ Σ_k ‖A_{k+1} − A_k‖². Differences remove a
    continuous trend (a ν-Hölder L^{-β}Ā contributes L^{1−2β−2ν} → 0 for β + ν > ½) and keep the noise:
    for increments of a path W^A, E‖A_{k+1} − A_k‖² = 2E‖ΔW^A_k‖², so Q(L) estimates Σ_k ‖ΔW^A_k‖², the
    quadratic variation of W^A (Rice's difference estimator of a noise variance). Hypothesis 1 (W^A = 0)
    predicts Q(L) → 0; Hypothesis 2 (W^A ≠ 0 with finite quadratic variation) predicts Q(L) → [W^A]_1 > 0.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

__all__ = ["table1", "path_statistics", "trend", "noise_quadratic_variation", "window"]


def _norms(x: torch.Tensor) -> torch.Tensor:
    """Frobenius norm of each x[k] (all axes after the first), float64."""
    return x.reshape(x.shape[0], -1).double().norm(dim=1)


def table1(A: torch.Tensor, norm: Callable[[torch.Tensor], torch.Tensor] = _norms) -> dict[str, float]:
    """Cohen et al.'s Table 1 quantities of one tensor A (L, …) (module docstring), with the unscaled largest
    increment max_k ‖A_{k+1} − A_k‖ (the β-scaled norm is L^β times it, once β is estimated). ``norm`` maps
    (n, …) to the n norms, float64: the Frobenius norm by default; for convolution kernels (their §3.2) the
    operator's spectral norm (:func:`validation.training.spectral.conv_operator_norms`) — every quantity is a norm of
    a linear combination of layers, so the same norm applies to increments and to the cumulative sum."""
    norms = norm(A)
    increments = norm(A[1:] - A[:-1]) if A.shape[0] > 1 else torch.zeros(1, dtype=torch.float64)
    return {"max_norm": float(norms.max()), "max_increment": float(increments.max()),
            "cumsum_norm": float(norm(A.double().sum(0, keepdim=True))[0]),
            "root_sum_squares": float(norms.pow(2).sum().sqrt())}


def path_statistics(V: torch.Tensor, scale: float) -> dict[str, float]:
    """The weight path W_k = Σ_{j<k} scale·V_j of one res-1 network: its largest increment, its quadratic
    variation and the largest layer-to-layer change of V itself (module docstring)."""
    norms = _norms(V) * scale
    changes = _norms(V[1:] - V[:-1]) if V.shape[0] > 1 else torch.zeros(1, dtype=torch.float64)
    return {"max_increment": float(norms.max()), "quadratic_variation": float(norms.pow(2).sum()),
            "max_weight_change": float(changes.max())}


def window(depth: int) -> int:
    """The trend's window, ⌈√L⌉ layers."""
    return max(1, math.ceil(math.sqrt(depth)))


def trend(A: torch.Tensor, width: int | None = None) -> torch.Tensor:
    """The moving mean of A (L, …) over ``width`` layers (default :func:`window`), centred, shrunk at the ends."""
    L = A.shape[0]
    w = window(L) if width is None else width
    flat = A.reshape(L, -1).double()
    cumsum = torch.cat([torch.zeros(1, flat.shape[1], dtype=flat.dtype), flat.cumsum(0)])
    k = torch.arange(L)
    low = (k - w // 2).clamp(min=0)
    high = (k - w // 2 + w).clamp(max=L)
    low = torch.minimum(low, (high - w).clamp(min=0))
    means = (cumsum[high] - cumsum[low]) / (high - low).unsqueeze(1)
    return means.reshape(A.shape).to(A.dtype)


def noise_quadratic_variation(A: torch.Tensor, norm: Callable[[torch.Tensor], torch.Tensor] = _norms) -> float:
    """Q(L) = ½ Σ_k ‖A_{k+1} − A_k‖², the quadratic variation of the noise path (module docstring); ``norm`` as
    for :func:`table1`."""
    if A.shape[0] < 2:
        return 0.0
    return float(0.5 * norm(A[1:] - A[:-1]).pow(2).sum())
