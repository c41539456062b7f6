import math

import numpy as np
import pytest
import torch

from limits.smooth import SmoothGaussianProcess, kl_basis


@pytest.mark.parametrize("lengthscale", [0.05, 0.1, 0.3])
def test_kl_basis_reproduces_the_rbf_kernel(lengthscale):
    nodes, basis = kl_basis(lengthscale)
    t = np.linspace(0, 1, 301)
    feats = np.exp(-((t[:, None] - nodes[None, :]) ** 2) / (2 * lengthscale**2)) @ basis
    cov = feats @ feats.T
    exact = np.exp(-((t[:, None] - t[None, :]) ** 2) / (2 * lengthscale**2))
    assert np.abs(cov - exact).max() < 1e-6


def test_values_have_the_kernel_covariance_empirically():
    gp = SmoothGaussianProcess(samples=20000, shape=(1,), variance=0.25, lengthscale=0.1, seed=2)
    v = gp(torch.tensor([0.3, 0.35, 0.6]))[:, :, 0]  # (3, N)
    emp = torch.cov(v).numpy()
    k = lambda s, t: 0.25 * math.exp(-((s - t) ** 2) / (2 * 0.01))
    assert abs(emp[0, 0] - 0.25) < 0.01
    assert abs(emp[0, 1] - k(0.3, 0.35)) < 0.01
    assert abs(emp[0, 2] - k(0.3, 0.6)) < 0.01


def test_scalar_and_batched_evaluation_agree_and_are_smooth():
    gp = SmoothGaussianProcess(samples=3, shape=(2, 2), seed=0)
    ts = torch.linspace(0, 1, 11)
    batched = gp(ts)
    for i, t in enumerate(ts):
        torch.testing.assert_close(gp(t), batched[i], rtol=0, atol=1e-14)
    h = 1e-4
    second = (gp(0.5 + h) - 2 * gp(0.5) + gp(0.5 - h)) / h**2
    assert torch.isfinite(second).all() and second.abs().max() < 1e3


def test_streams_and_seeds():
    a = SmoothGaussianProcess(2, (3,), seed=1, stream="V")(0.4)
    assert torch.equal(a, SmoothGaussianProcess(2, (3,), seed=1, stream="V")(0.4))
    assert not torch.allclose(a, SmoothGaussianProcess(2, (3,), seed=1, stream="W")(0.4))
    assert not torch.allclose(a, SmoothGaussianProcess(2, (3,), seed=2, stream="V")(0.4))
