"""The one-pass gradients (validation.gradient_pass): the linear limit's gradient is exact, the network's gradients
converge to the limit's at the forward rate — not to a wrong limit's — and bad arguments are refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from limits import make_pair
from validation.gradient_pass import gradient_errors
from validation.stats import fit_rate


def test_the_linear_limit_gradient_is_exact():
    """cohen-ode with a constant trend is linear: [H; 1](1) = exp(σ'(0) G)[h_0; 1], so ∂(½‖H‖²)/∂h_0 =
    exp(σ'(0)Ā)ᵀ H(1); dopri5 on the variational equation meets it to 1e-8."""
    pair = make_pair("cohen-ode", 4, seed=1, width=3)
    h0 = pair.initial_state()
    exact_h = pair.solve_limit(h0, torch.tensor([0.0, 1.0], dtype=torch.float64), rtol=1e-12, atol=1e-12)[-1]
    expo = torch.linalg.matrix_exp(pair.activation.d1 * pair.trend.a_const)
    exact = torch.einsum("nij,ni->nj", expo, exact_h).numpy()
    errors = gradient_errors(pair, [8, 16], seed=0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(errors.reference_input, exact, rtol=1e-8, atol=1e-9)


def test_gradient_rates_and_a_wrong_limit():
    """res2-ode's input gradient converges at rate 1, res-1's at ½ (the forward rates); cohen-sde-naive's network
    gradient does not converge to its (uncorrected) limit's — the error stays."""
    depths = [8, 16, 32, 64]
    ode = gradient_errors(make_pair("res2-ode", 20, seed=0, width=4), depths, seed=0)
    assert abs(fit_rate(depths, ode.squared["input"], resamples=300).rate - 1.0) < 0.15
    sde = gradient_errors(make_pair("res1", 150, seed=0, width=4), depths, seed=0, reference_steps=512)
    assert abs(fit_rate(depths, sde.squared["input"], resamples=300).rate - 0.5) < 0.12
    naive = gradient_errors(make_pair("cohen-sde-naive", 150, seed=0, width=4), depths, seed=0, reference_steps=512)
    assert fit_rate(depths, naive.squared["input"], resamples=300).rate < 0.2
    assert np.all(np.isfinite(naive.squared["input"]))


def test_bad_arguments():
    pair = make_pair("res1", 2, seed=0, width=2)
    with pytest.raises(ValueError, match="loss 'l1' unknown"):
        gradient_errors(pair, [4], reference_steps=8, seed=0, loss="l1")
    with pytest.raises(ValueError, match="backward time 0.3"):
        gradient_errors(pair, [4], reference_steps=8, seed=0, backward_times=(0.3,))
    with pytest.raises(ValueError, match="needs reference_steps"):
        gradient_errors(pair, [4], seed=0)
