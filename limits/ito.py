"""The Itô pieces shared by every SDE pair: the noise product, the quadratic variation, the correction.

Every SDE pair reads one Brownian path per sample whose first d² channels are a d×d matrix B^W (row-major)
and, for pairs with a bias, whose last d channels are a vector B^b. Over one layer of length Δt the
fluctuation of the pre-activation is

    M = ΔW y + Δb,     ΔW = (s_w/√d) ΔB^W,     Δb = s_b ΔB^b

(:func:`affine_noise`; :func:`matrix_noise_product` is the ΔW y part alone). Given y, every coordinate
of M has the variance rate

    Q_i(y) = d⟨(W y + b)_i⟩/dt = (s_w²/d) ‖y‖² + s_b²

(:func:`iid_quadratic_variation`). A block x ↦ x + σ(M) with σ ∈ C³, σ(0) = 0 expands as
σ(M) = σ'(0) M + ½ σ''(0) M² + O(|M|³), and E[M_i² | y] = Q_i(y) Δt: the square of the Brownian
increment does not average out, it leaves the drift ½ σ''(0) Q(y) (:func:`ito_correction`) — the Itô
correction of Cohen et al. (Thm 4.4) and Peluchetti & Favaro (Thm 3.1), docs/theory.md §3–4.

The network (reading the increments on its grid) and the limit (torchsde's ``g_prod`` and ``f``) call
these same functions, so the two readers cannot disagree about the noise.
"""

from __future__ import annotations

import torch
import torchsde

__all__ = ["matrix_noise_product", "affine_noise", "iid_quadratic_variation", "ito_correction", "ItoLimit"]


def matrix_noise_product(dW: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    """``scale · ΔB y`` for a batch: the first d² channels of ``dW`` (N, ≥ d²) read row-major as
    (N, d, d), times y (N, d); returns (N, d). Component i is scale · Σ_j ΔB_ij y_j."""
    n, d = y.shape
    matrix = dW.view(n, d, d) if dW.shape[1] == d * d else dW[:, : d * d].reshape(n, d, d)
    return scale * torch.bmm(matrix, y.unsqueeze(-1)).squeeze(-1)


def affine_noise(dW: torch.Tensor, y: torch.Tensor, weight_scale: float, bias_scale: float) -> torch.Tensor:
    """ΔW y + Δb = weight_scale · ΔB^W y + bias_scale · ΔB^b for ``dW`` of shape (N, d² + d)."""
    d = y.shape[1]
    return matrix_noise_product(dW, y, weight_scale) + bias_scale * dW[:, d * d:]


def iid_quadratic_variation(y: torch.Tensor, coefficient: float, offset: float) -> torch.Tensor:
    """Q(y) = coefficient · ‖y‖² + offset on every coordinate, shape (N, d).

    With i.i.d. Brownian weights W = (s_w/√d) B^W and b = s_b B^b the coefficient is s_w²/d and the offset
    s_b²: Q_i = Σ_{j,k} y_j y_k Σ^W_{ijik} + Σ^b_{ii} with Σ^W_{ijik} = (s_w²/d) δ_jk.
    """
    q = coefficient * (y * y).sum(-1, keepdim=True) + offset
    return q.expand_as(y)


def ito_correction(second_derivative: float, quadratic_variation: torch.Tensor) -> torch.Tensor:
    """The Itô drift ½ σ''(0) Q, from σ''(0) and Q (any shape)."""
    return (0.5 * second_derivative) * quadratic_variation


class ItoLimit(torchsde.SDEIto):
    """Base of the limits handed to ``torchsde.sdeint``: an Itô SDE with general noise, given by its
    drift ``f(t, y)`` and the diffusion–vector product ``g_prod(t, y, v)`` only.

    Never materialising g (a d × d² matrix per sample for res-1) keeps a step at O(N d²) work and memory
    (docs/design.md). Subclasses implement :meth:`f` and :meth:`g_prod`.
    """

    def __init__(self) -> None:
        super().__init__(noise_type="general")

    def f(self, t, y: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def f_and_g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.f(t, y), self.g_prod(t, y, v)
