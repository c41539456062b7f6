"""Smooth Gaussian-process weights, exact at any time t (the ODE-regime driver).

Marion et al. (§3.2, docs/theory.md §2) initialise each weight entry as an independent Gaussian process on
[0, 1] with the squared-exponential kernel

    k(s, t) = v · exp(−(s − t)² / (2ℓ²)),   ℓ = 0.1 by default, v = 1/d for d×d weights.

The network reads the process at the grid k/L and an adaptive ODE solver at arbitrary t, so both must
see *the same function*. :class:`SmoothGaussianProcess` draws each function from its Karhunen–Loève
expansion

    f(t) = Σ_{i<M} √λ_i ξ_i φ_i(t),   ξ_i ~ N(0, 1) i.i.d.,

where (λ_i, φ_i) are the eigenpairs of the kernel's integral operator on [0, 1], computed once by the
Nyström method on Q Gauss–Legendre nodes s_q with weights w_q:

    K̃ = W^½ K W^½ = U Λ Uᵀ,     φ_i(t) = λ_i^{-1} Σ_q k(t, s_q) w_q^½ U_{qi}.

The Nyström extension makes φ_i an explicit finite sum of Gaussians in t (smooth, closed form, cheap),
and M is the smallest number of terms whose neglected eigenvalue mass Σ_{i≥M} λ_i is below
``truncation`` (1e-12 of the total by default): for ℓ = 0.1 that is about 30 terms and the covariance
of the sampled functions matches k to ~1e-13 (tested).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .seeding import generator

__all__ = ["SmoothGaussianProcess", "kl_basis", "LENGTHSCALE_RANGE"]

#: the length-scales ℓ the basis is computed for: the Nyström grid has max(128, 16/ℓ) nodes and one eigen-
#: decomposition of that size (ℓ = 0.01: 1600 nodes, 10 s; 0.005: 66 s), and ℓ² must not overflow
LENGTHSCALE_RANGE = (0.01, 1000.0)


def kl_basis(lengthscale: float, truncation: float = 1e-12, nodes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Nyström Karhunen–Loève basis of the unit-variance RBF kernel on [0, 1].

    Returns ``(s, B)``: Q nodes ``s`` and a (Q, M) matrix ``B`` such that the scaled eigenfunctions are
    √λ_i φ_i(t) = Σ_q exp(−(t − s_q)²/(2ℓ²)) B_{qi}.
    """
    low, high = LENGTHSCALE_RANGE
    if not low <= lengthscale <= high:
        raise ValueError(f"lengthscale={lengthscale} is out of range (allowed: {low:g} ≤ ℓ ≤ {high:g})")
    q = nodes if nodes is not None else max(128, int(math.ceil(16.0 / lengthscale)))
    x, w = np.polynomial.legendre.leggauss(q)
    s, w = (x + 1.0) / 2.0, w / 2.0
    kernel = np.exp(-((s[:, None] - s[None, :]) ** 2) / (2.0 * lengthscale**2))
    sw = np.sqrt(w)
    lam, vec = np.linalg.eigh(sw[:, None] * kernel * sw[None, :])
    lam, vec = lam[::-1], vec[:, ::-1]
    lam = np.clip(lam, 0.0, None)
    tail = np.cumsum(lam[::-1])[::-1]  # tail[i] = Σ_{j ≥ i} λ_j
    m = int(np.argmax(tail < truncation * tail[0])) if np.any(tail < truncation * tail[0]) else len(lam)
    m = max(m, 1)
    basis = sw[:, None] * vec[:, :m] / np.sqrt(lam[:m])[None, :]
    return s, basis


class SmoothGaussianProcess:
    """N independent draws of a tensor-valued GP on [0, 1] with i.i.d. RBF-kernel entries.

    Args:
        samples: batch size N.
        shape: shape of one value, e.g. (d, d) for a weight matrix.
        variance: variance v of every entry (1/d for Marion et al.'s weights).
        lengthscale: kernel length-scale ℓ > 0.
        seed, stream: the coefficients ξ come from the generator of ``(seed, "smooth", stream)``; two
            processes with different ``stream`` labels are independent.
        dtype, device: of the values.

    Calling ``gp(t)`` with a float or 0-dim tensor returns the values at t, shape (N, *shape); with a
    1-D tensor of T times it returns shape (T, N, *shape). Memory: M·N·∏shape numbers, independent of
    how many times are read.
    """

    def __init__(
        self,
        samples: int,
        shape: tuple[int, ...],
        variance: float = 1.0,
        lengthscale: float = 0.1,
        seed: int = 0,
        stream: str = "0",
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
        truncation: float = 1e-12,
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples={samples} must be ≥ 1")
        if variance < 0:
            raise ValueError(f"variance={variance} must be ≥ 0")
        self.samples = int(samples)
        self.shape = tuple(int(n) for n in shape)
        self.variance = float(variance)
        self.lengthscale = float(lengthscale)
        nodes, basis = kl_basis(self.lengthscale, truncation)
        self.terms = basis.shape[1]
        self._nodes = torch.as_tensor(nodes, dtype=dtype, device=device)
        self._basis_t = torch.as_tensor(basis.T.copy(), dtype=dtype, device=device)  # (M, Q)
        self._inv_two_l2 = 1.0 / (2.0 * self.lengthscale**2)
        gen = generator(seed, "smooth", stream, device=device)
        width = self.samples * math.prod(self.shape)
        xi = torch.randn((self.terms, width), generator=gen, dtype=dtype, device=device)
        self._coeffs = xi.mul_(math.sqrt(self.variance))

    @property
    def dtype(self) -> torch.dtype:
        return self._coeffs.dtype

    def features(self, t: torch.Tensor) -> torch.Tensor:
        """√λ_i φ_i(t) for a 1-D tensor of times, shape (T, M).

        A product and a sum over the nodes rather than a matrix product: the sum runs over one contiguous
        axis in a fixed order, so a row does not depend on how many times are evaluated together (a BLAS
        product may change its summation order with the number of rows, and the basis has entries of
        size λ^-½, so that changed the features by up to 4e-13)."""
        diff = t[:, None] - self._nodes[None, :]
        kernel = torch.exp(-(diff * diff) * self._inv_two_l2)
        return (kernel[:, None, :] * self._basis_t[None, :, :]).sum(-1)

    def __call__(self, t: float | torch.Tensor) -> torch.Tensor:
        times = torch.as_tensor(t, dtype=self.dtype, device=self._coeffs.device)
        scalar = times.dim() == 0
        # One time at a time through the same (1, M) @ (M, ·) product: a batched product lets the BLAS pick
        # another kernel (and summation order) for another number of rows, so f(t) read in a batch could
        # differ from f(t) read alone in the last bit. This way t alone or in any batch gives the same
        # numbers bit for bit: one function of time, whoever reads it.
        features = self.features(times.reshape(-1))
        rows = [features[i:i + 1] @ self._coeffs for i in range(features.shape[0])]
        values = torch.cat(rows).reshape(-1, self.samples, *self.shape)
        return values[0] if scalar else values
