"""The input gradient by forward-mode tangents (validation.gradient_pass): it is autograd's, the linear limit's is
exact, and the network's gradient converges to the limit's at the forward rate — not to a wrong limit's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from limits import make_pair
from limits.brownian import BrownianGrid
from limits.pairs import run_network
from validation.gradient_pass import _limit_gradient, _network_gradient, input_gradient_errors
from validation.stats import fit_rate


@pytest.mark.parametrize("model", ["res1", "res2-ode", "cohen-sde"])
def test_tangents_are_autograd(model):
    """J_Lᵀ ∇ℓ carried forward equals reverse-mode autograd through the same layers, to rounding."""
    pair = make_pair(model, 5, seed=2, width=4)
    path = BrownianGrid(5, pair.noise_dim, 64, seed=3) if hasattr(pair, "noise_dim") and model != "res2-ode" else None
    h0 = pair.initial_state()
    forward = _network_gradient(pair, 16, path, h0, "half-square")
    x = h0.clone().requires_grad_(True)
    h = run_network(pair, 16, path, x)
    (backward,) = torch.autograd.grad(0.5 * h.square().sum(), x)
    torch.testing.assert_close(forward, backward, rtol=1e-10, atol=1e-12)


def test_the_linear_limit_gradient_is_exact():
    """cohen-ode with a constant trend is linear: [H; 1](1) = exp(σ'(0) G)[h_0; 1], so ∂(½‖H‖²)/∂h_0 =
    exp(σ'(0)Ā)ᵀ H(1); the Runge–Kutta reference meets it to 1e-9."""
    pair = make_pair("cohen-ode", 4, seed=1, width=3)
    h0 = pair.initial_state()
    d1 = pair.activation.d1
    exact_h = pair.solve_limit(h0, torch.tensor([0.0, 1.0], dtype=torch.float64), rtol=1e-12, atol=1e-12)[-1]
    expo = torch.linalg.matrix_exp(d1 * pair.trend.a_const)
    exact = torch.einsum("nij,ni->nj", expo, exact_h)
    torch.testing.assert_close(_limit_gradient(pair, 256, None, h0, "half-square"), exact, rtol=1e-9, atol=1e-9)


def test_gradient_rates_and_a_wrong_limit():
    """res2-ode's input gradient converges at rate 1, res-1's at ½ (the forward rates); cohen-sde-naive's network
    gradient does not converge to its (uncorrected) limit's — the error stays."""
    depths = [8, 16, 32, 64]
    ode = input_gradient_errors(make_pair("res2-ode", 20, seed=0, width=4), depths, reference_steps=256, seed=0)
    assert abs(fit_rate(depths, ode.squared, resamples=300).rate - 1.0) < 0.15
    sde = input_gradient_errors(make_pair("res1", 150, seed=0, width=4), depths, reference_steps=512, seed=0)
    assert abs(fit_rate(depths, sde.squared, resamples=300).rate - 0.5) < 0.12
    naive = input_gradient_errors(make_pair("cohen-sde-naive", 150, seed=0, width=4), depths, reference_steps=512,
                                  seed=0)
    assert fit_rate(depths, naive.squared, resamples=300).rate < 0.2
    assert np.all(np.isfinite(naive.squared))


def test_bad_arguments():
    pair = make_pair("res1", 2, seed=0, width=2)
    with pytest.raises(ValueError, match="loss 'l1' unknown"):
        input_gradient_errors(pair, [4], reference_steps=8, seed=0, loss="l1")
    with pytest.raises(ValueError, match="depth L=3 must divide"):
        input_gradient_errors(pair, [3], reference_steps=8, seed=0)
