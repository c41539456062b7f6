"""The spectral norm of a convolutional layer's linear operator, from the 2-D FFT of its kernel.

Sedghi, Gupta & Long (ICLR 2019, Theorem 6): a multi-channel 2-D convolution with kernel K ∈ R^{c_out × c_in × k × k},
applied with circular (periodic) padding to n × n inputs, is block-diagonalised by the 2-D DFT. Its singular values
are the union, over the n² frequencies (u, v), of the singular values of the c_out × c_in matrices

    K̂(u, v) = Σ_{a, b} K[:, :, a, b] ω^{ua + vb},   ω = e^{−2πi/n}

(the kernel zero-padded to n × n, then ``fft2``), so the operator's spectral norm is max_{u,v} σ_max(K̂(u, v)). The
cross-correlation of deep-learning libraries (``conv2d``) is the convolution with the flipped kernel, whose K̂ is
K̂(−u, −v) up to a unit phase per frequency: the same singular values. The cost is one FFT of c_out·c_in planes and
n² small SVDs, against the SVD of a (c_out n²) × (c_in n²) matrix for the dense operator.

A kernel larger than the input (k > n: the last stages of a network on small images) wraps around the n × n torus: the
circular operator is that of the kernel folded modulo n, K'[a mod n, b mod n] = Σ K[a, b] (the zero-padded FFT of
``fft2(s=(n, n))`` would instead crop the kernel). Folding is done first, so every n ≥ 1 is exact.

With zero padding instead of circular, the operator is a corner of the circular one on a larger grid; Cohen et al.
(2021, §3.2) cite Sedghi et al.'s method, which is exact for circular padding, and that is what is computed here.
"""

from __future__ import annotations

import torch

__all__ = ["conv_operator_norms", "conv_singular_values"]


def _check(kernels: torch.Tensor, size: int) -> None:
    if kernels.ndim < 4:
        raise ValueError(f"kernels of shape {tuple(kernels.shape)}: expected (…, c_out, c_in, k, k)")
    if isinstance(size, bool) or int(size) != size or size < 1:
        raise ValueError(f"size={size!r} is out of range (allowed: an integer ≥ 1)")


def _fold(kernels: torch.Tensor, size: int) -> torch.Tensor:
    """The kernel folded modulo ``size`` along both spatial axes (module docstring); unchanged when k ≤ size."""
    for axis in (-2, -1):
        k = kernels.shape[axis]
        if k > size:
            wraps = -(-k // size)
            padded = torch.nn.functional.pad(kernels.movedim(axis, -1), (0, wraps * size - k))
            kernels = padded.reshape(*padded.shape[:-1], wraps, size).sum(-2).movedim(-1, axis)
    return kernels


def conv_singular_values(kernels: torch.Tensor, size: int) -> torch.Tensor:
    """Every singular value of the circular convolution on ``size`` × ``size`` inputs, per kernel: kernels
    (…, c_out, c_in, k, k) → (…, size, size, min(c_out, c_in)), float64 (module docstring)."""
    _check(kernels, size)
    spectrum = torch.fft.fft2(_fold(kernels.double(), int(size)), s=(int(size), int(size)))               # (…, c_out, c_in, n, n)
    return torch.linalg.svdvals(spectrum.movedim(-2, -4).movedim(-1, -3))      # (…, n, n, c_out, c_in) → σ


def conv_operator_norms(kernels: torch.Tensor, size: int) -> torch.Tensor:
    """The spectral norm of each kernel's operator (module docstring): kernels (L, c_out, c_in, k, k) → (L,)
    float64 — the norm :func:`validation.training.weights.table1` takes for convolutional layers."""
    return conv_singular_values(kernels, size).flatten(-3).amax(-1)
