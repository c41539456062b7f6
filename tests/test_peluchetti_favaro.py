"""Peluchetti–Favaro pair: the block's noise covariance and Itô drift, φ'(0)/φ''(0), the Gram reduction,
the strong rate, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from limits.activations import get_activation
from limits import ModelConfig, PairError, get_pair
from limits.peluchetti_favaro import PFBlock, PFPair, covariance_matrix, parse_covariance, simulate_gram
from validation.core.one_pass import study_errors
from validation.core.rate_fit import fit_rate, verdict

STRUCTURED = {"cov_out": "diag:0.5:2", "cov_in": "ar1:0.5", "cov_b": "equi:0.3"}


def _pair(samples=4, width=4, activation=None, **options):
    return PFPair(ModelConfig(width=width, activation=activation, options=options), samples, seed=0)


def test_registered_and_defaults():
    assert get_pair("pf") is PFPair
    pair = _pair()
    assert pair.activation.name == "swish" and pair.psi.name == "identity" and pair.block.iid
    assert pair.theory_rate == 0.5 and pair.noise_dim == 4 * 4 + 4


def test_noise_covariance_is_the_matrix_normal_one():
    """Cov(ΔW y + Δb) = dt (Σ^{W_O} yᵀΣ^{W_I}y + Σ^b) with Σ^{W_O} = σ_w²/D R_O, Σ^{W_I} = R_I, Σ^b = σ_b² R_b."""
    d, n, dt = 4, 200_000, 0.01
    pair = _pair(samples=n, width=d, sigma_w="1.3", sigma_b="0.7", **STRUCTURED)
    y = torch.tensor([0.5, -1.0, 2.0, 0.3], dtype=torch.float64)
    gen = torch.Generator().manual_seed(5)
    dW = torch.randn((n, pair.noise_dim), generator=gen, dtype=torch.float64) * math.sqrt(dt)
    noise = pair.block.noise(dW, y.expand(n, d))
    r_o = covariance_matrix("diag:0.5:2", d)
    r_i = covariance_matrix("ar1:0.5", d)
    r_b = covariance_matrix("equi:0.3", d)
    expected = dt * (1.3**2 / d * r_o * float(y @ r_i @ y) + 0.7**2 * r_b)
    empirical = torch.cov(noise.T)
    assert torch.allclose(empirical, expected, rtol=0, atol=0.02 * float(expected.diagonal().max()))
    assert torch.allclose(pair.block.quadratic_variation(y[None])[0], expected.diagonal() / dt)


@pytest.mark.parametrize("phi,options", [("swish", {}), ("swish", STRUCTURED), ("shifted-softplus", STRUCTURED),
                                         ("tanh", {})])
def test_ito_drift_matches_monte_carlo_over_one_step(phi, options):
    """E[φ(ΔWψ + Δb)] over one step = dt [φ'(0)(μ^W ψ + μ^b) + ½φ''(0) diag(…)] + O(dt²): the limit's drift."""
    d, n, dt = 4, 200_000, 1e-3
    pair = _pair(samples=n, width=d, activation=phi, psi="tanh", mu_w="0.4", mu_b="-0.3", **options)
    x = torch.tensor([0.8, -0.5, 1.4, 0.1], dtype=torch.float64).expand(n, d)
    gen = torch.Generator().manual_seed(11)
    dW = torch.randn((n, pair.noise_dim), generator=gen, dtype=torch.float64) * math.sqrt(dt)
    increment = pair.network_step(x, 0.0, dt, dW) - x
    y = pair.psi(x)
    pre = dt * pair.block.mean_drift(y) + pair.block.noise(dW, y)
    # control variate: φ'(0)·(noise), whose mean is exactly 0
    residual = (increment - pair.activation.d1 * pair.block.noise(dW, y)).mean(0) / dt
    drift = pair.limit_sde().f(0.0, x[:1])[0]
    assert torch.allclose(increment, pair.activation(pre))
    se = (increment - pair.activation.d1 * pair.block.noise(dW, y)).std(0) / math.sqrt(n) / dt
    assert torch.all((residual - drift).abs() < 4 * se + 0.01 * drift.abs().max()), (residual, drift)


def test_phi_derivatives_scale_the_limit():
    x = torch.tensor([[0.3, -0.2, 1.0]], dtype=torch.float64)
    v = torch.randn(1, 12, dtype=torch.float64)
    for name in ["swish", "tanh", "shifted-softplus"]:
        pair = _pair(samples=1, width=3, activation=name)
        phi = get_activation(name)
        sde = pair.limit_sde()
        assert torch.allclose(sde.g_prod(0.0, x, v), phi.d1 * pair.block.noise(v, x))
        q = 1.0 / 3 * float((x**2).sum()) + 1.0
        assert torch.allclose(sde.f(0.0, x), torch.full_like(x, 0.5 * phi.d2 * q))
    swish = _pair(samples=1, width=3, phi="swish")
    assert swish.activation.d1 == 0.5 and swish.describe()["phi_d2"] == 0.5


def test_gram_reduction_is_exact_in_law():
    """The reduced simulation (2D numbers per step) against the plain network with full D×D weights, and
    the reduced SDE against Euler with the pair's own g_prod and full noise: same joint law of
    (x_1(z=0), x_1(z=1)) — KS per input and matching correlation, 20 000 draws each."""
    phi = get_activation("swish")
    d, steps, n = 3, 4, 20_000
    reduced = simulate_gram(phi, [0.0, 1.0], d, steps, n, mode="network", seed=1, dtype=torch.float64, chunk=5000)
    reduced_sde = simulate_gram(phi, [0.0, 1.0], d, steps, n, mode="sde", seed=1, dtype=torch.float64, chunk=5000)
    gen = torch.Generator().manual_seed(2)
    block = PFBlock(phi, get_activation("identity"), d)
    x = torch.stack([torch.zeros(n, d), torch.ones(n, d)]).double()  # (2, N, D): same weights for both inputs
    xs = x.clone()
    dt = 1.0 / steps
    for _ in range(steps):
        dW = torch.randn((n, d * d + d), generator=gen, dtype=torch.float64) * math.sqrt(dt)
        x = torch.stack([block.network_step(x[k], dt, dW) for k in range(2)])
        dW = torch.randn((n, d * d + d), generator=gen, dtype=torch.float64) * math.sqrt(dt)
        xs = torch.stack([xs[k] + block.drift(xs[k]) * dt + block.diffusion_prod(xs[k], dW) for k in range(2)])
    for full, red in ((x, reduced), (xs, reduced_sde)):
        for k in range(2):
            p = stats.ks_2samp(full[k, :, 0].numpy(), red[:, 0, k].numpy()).pvalue
            assert p > 1e-3, (k, p)
        c_full = np.corrcoef(full[0, :, 0].numpy(), full[1, :, 0].numpy())[0, 1]
        c_red = np.corrcoef(red[:, 0, 0].numpy(), red[:, 0, 1].numpy())[0, 1]
        assert abs(c_full - c_red) < 0.03
        assert abs(full[1, :, 0].var().item() / red[:, 0, 1].var().item() - 1) < 0.05


def test_gram_reduction_catches_a_wrong_covariance():
    """Sanity of the test above: dropping the 1/D of σ_w²/D changes the law visibly at the same size."""
    phi = get_activation("tanh")
    right = simulate_gram(phi, [1.0], 3, 4, 20_000, seed=1, dtype=torch.float64, chunk=5000)
    wrong = simulate_gram(phi, [1.0], 3, 4, 20_000, seed=1, sigma_w=math.sqrt(3), dtype=torch.float64, chunk=5000)
    assert stats.ks_2samp(right[:, 0, 0].numpy(), wrong[:, 0, 0].numpy()).pvalue < 1e-6


def test_strong_rate_at_small_size():
    depths = [16, 32, 64, 128, 256]
    pair = PFPair(ModelConfig(width=4, options=STRUCTURED | {"mu_w": "0.3", "psi": "tanh"}), 300, seed=0)
    errors = study_errors(pair, depths, reference_steps=2048, seed=0)
    fit = fit_rate(depths, errors.final_sq, fit_from=32, resamples=500)
    assert verdict(fit, 0.5, 0.1) == "PASS", fit


def test_copied_input():
    pair = _pair(samples=3, width=5, x0="1.5")
    assert torch.equal(pair.initial_state(), torch.full((3, 5), 1.5, dtype=torch.float64))


@pytest.mark.parametrize("options,match", [
    ({"cov_out": "ar1:1.5"}, r"not positive definite.*\|ρ\| < 1"),
    ({"cov_in": "equi:-0.5"}, "not positive definite"),
    ({"cov_b": "diag:-1:1"}, "not positive definite"),
    ({"cov_out": "ar1"}, "unknown"),
    ({"cov_in": "toeplitz:0.1"}, "unknown"),
    ({"sigma_w": "-1"}, "sigma_w=-1.0 is out of range"),
    ({"sigma_b": -2.0}, "sigma_b=-2.0 is out of range"),
    ({"mu_b": "inf"}, "finite"),
    ({"psi": "sigmoid"}, "unknown activation"),
    ({"x0": "abc"}, "x0="),
    ({"phi": "relu"}, "C³"),
])
def test_bad_settings_are_clear_errors(options, match):
    with pytest.raises(PairError, match=match):
        _pair(width=6, **options)


def test_covariance_families():
    assert parse_covariance("AR1:0.5") == ("ar1", 0.5)
    mat = covariance_matrix("ar1:-0.5", 3).numpy()
    assert np.allclose(mat, [[1, -0.5, 0.25], [-0.5, 1, -0.5], [0.25, -0.5, 1]])
    assert np.allclose(covariance_matrix("diag:1:3", 3).numpy(), np.diag([1, 2, 3]))
    with pytest.raises(PairError, match="D = 6"):
        covariance_matrix("equi:-0.3", 6)
    with pytest.raises(PairError):
        _pair(activation="tanh", phi="swish")


def test_integration_time_is_a_time_change_of_the_scales():
    """P&F §3.4, role of integration time: the network and the limit on [0, T] equal, on the same path, the T = 1
    ones with σ_w, σ_b × √T and μ_w, μ_b × T — to rounding; so T = 1 loses nothing."""
    from limits.brownian import BrownianGrid
    from limits.pairs import run_network

    T, samples, width, depth = 2.5, 6, 4, 32
    base = {"sigma_w": 0.8, "sigma_b": 0.6, "mu_w": 0.3, "mu_b": -0.2, "psi": "tanh"}
    timed = _pair(samples, width, "tanh", **base, T=str(T))
    scaled = _pair(samples, width, "tanh", sigma_w=str(0.8 * math.sqrt(T)), sigma_b=str(0.6 * math.sqrt(T)),
                   mu_w=str(0.3 * T), mu_b=str(-0.2 * T), psi="tanh")
    path = BrownianGrid(samples=samples, size=timed.noise_dim, steps=depth, seed=4)
    h0 = timed.initial_state()
    torch.testing.assert_close(run_network(timed, depth, path, h0), run_network(scaled, depth, path, h0),
                               rtol=1e-12, atol=1e-12)
    y, v = torch.randn(samples, width, dtype=torch.float64), torch.randn(samples, timed.noise_dim, dtype=torch.float64)
    for name in ("f", "stratonovich_correction"):
        torch.testing.assert_close(getattr(timed.limit_sde(), name)(0.0, y), getattr(scaled.limit_sde(), name)(0.0, y))
    torch.testing.assert_close(timed.limit_sde().g_prod(0.0, y, v), scaled.limit_sde().g_prod(0.0, y, v))
    plain = _pair(samples, width, "tanh", **base)
    assert not torch.allclose(run_network(plain, depth, path, h0), run_network(timed, depth, path, h0))
    with pytest.raises(PairError, match="T=0 is out of range"):
        _pair(T="0")
