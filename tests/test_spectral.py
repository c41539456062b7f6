"""validation.training.spectral: a convolution's spectral norm from the FFT of its kernel (Sedghi, Gupta & Long 2019)
against the dense operator's largest singular value, and Table 1's quantities on operator norms."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from validation.training.spectral import conv_operator_norms, conv_singular_values
from validation.training.weights import noise_quadratic_variation, table1


def _dense_operator(kernel: torch.Tensor, size: int) -> torch.Tensor:
    """The (c_out n²) × (c_in n²) matrix of conv2d with circular padding, column by column (a basis image each)."""
    c_in, k = kernel.shape[1], kernel.shape[-1]
    before, after = (k - 1) // 2, k // 2
    basis = torch.eye(c_in * size * size, dtype=kernel.dtype).reshape(-1, c_in, size, size)
    images = F.conv2d(F.pad(basis, (before, after, before, after), mode="circular"), kernel)
    return images.reshape(basis.shape[0], -1).T


@pytest.mark.parametrize("c_out, c_in, k, size", [(3, 2, 3, 5), (2, 4, 3, 6), (1, 1, 1, 4), (4, 3, 2, 7)])
def test_fft_norms_are_the_dense_operators_largest_singular_values(c_out, c_in, k, size):
    generator = torch.Generator().manual_seed(c_out * 100 + size)
    kernels = torch.randn(5, c_out, c_in, k, k, generator=generator, dtype=torch.float64)
    dense = torch.stack([torch.linalg.matrix_norm(_dense_operator(K, size), ord=2) for K in kernels])
    torch.testing.assert_close(conv_operator_norms(kernels, size), dense, rtol=1e-12, atol=0)
    # every singular value, not only the largest
    singular = conv_singular_values(kernels[0], size).flatten().sort().values
    dense_all = torch.linalg.svdvals(_dense_operator(kernels[0], size)).sort().values
    torch.testing.assert_close(singular, dense_all[-singular.numel():], rtol=1e-10, atol=1e-12)


def _wrapped_operator(kernel: torch.Tensor, size: int) -> torch.Tensor:
    """The circular convolution on size × size inputs entry by entry, for any kernel size (taps wrap around):
    out[o, i, j] = Σ_{c, a, b} K[o, c, a, b] x[c, (i + a − p) mod n, (j + b − p) mod n]."""
    c_out, c_in, k, _ = kernel.shape
    p = (k - 1) // 2
    operator = torch.zeros(c_out, size, size, c_in, size, size, dtype=kernel.dtype)
    for i in range(size):
        for j in range(size):
            for a in range(k):
                for b in range(k):
                    operator[:, i, j, :, (i + a - p) % size, (j + b - p) % size] += kernel[:, :, a, b]
    return operator.reshape(c_out * size * size, c_in * size * size)


@pytest.mark.parametrize("k, size", [(3, 2), (3, 1), (5, 2), (3, 4)])
def test_kernels_larger_than_the_input_wrap_around(k, size):
    """The last stages of a network on small images (8×8 digits: 2×2 and 1×1 maps under 3×3 kernels)."""
    generator = torch.Generator().manual_seed(10 * k + size)
    kernels = torch.randn(3, 2, 3, k, k, generator=generator, dtype=torch.float64)
    dense = torch.stack([torch.linalg.matrix_norm(_wrapped_operator(K, size), ord=2) for K in kernels])
    torch.testing.assert_close(conv_operator_norms(kernels, size), dense, rtol=1e-12, atol=1e-14)
    if size == 1:  # a 1×1 map: the sum of the taps
        torch.testing.assert_close(conv_operator_norms(kernels, 1),
                                   torch.linalg.matrix_norm(kernels.sum((-2, -1)), ord=2), rtol=1e-12, atol=0)


def test_a_one_by_one_kernel_is_its_channel_matrix_and_bad_sizes_are_refused():
    kernels = torch.randn(3, 4, 2, 1, 1, dtype=torch.float64)
    expected = torch.linalg.matrix_norm(kernels[..., 0, 0], ord=2)
    torch.testing.assert_close(conv_operator_norms(kernels, 8), expected, rtol=1e-13, atol=0)
    for size in (0, 2.5, -1):
        with pytest.raises(ValueError, match=f"size={size}"):
            conv_operator_norms(torch.randn(2, 1, 1, 3, 3), size)
    with pytest.raises(ValueError, match="expected"):
        conv_operator_norms(torch.randn(3, 3, 3), 4)


def test_table1_on_operator_norms():
    kernels = torch.randn(6, 2, 2, 3, 3, dtype=torch.float64)
    norms = conv_operator_norms(kernels, 5)
    quantities = table1(kernels, norm=lambda x: conv_operator_norms(x, 5))
    assert quantities["max_norm"] == pytest.approx(float(norms.max()), rel=1e-14)
    assert quantities["root_sum_squares"] == pytest.approx(float(norms.square().sum().sqrt()), rel=1e-14)
    assert quantities["cumsum_norm"] == pytest.approx(float(conv_operator_norms(kernels.sum(0, keepdim=True), 5)[0]),
                                                      rel=1e-14)
    increments = conv_operator_norms(kernels[1:] - kernels[:-1], 5)
    assert quantities["max_increment"] == pytest.approx(float(increments.max()), rel=1e-14)
    assert noise_quadratic_variation(kernels, norm=lambda x: conv_operator_norms(x, 5)) == pytest.approx(
        float(0.5 * increments.square().sum()), rel=1e-14)
    # ‖K̂(u, v)‖₂ ≤ Σ_ab ‖K[:, :, a, b]‖_F ≤ k ‖K‖_F (Cauchy–Schwarz over the k² taps): at most 3× the Frobenius norm
    assert quantities["max_norm"] <= 3 * table1(kernels)["max_norm"] + 1e-12
