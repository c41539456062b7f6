"""The backsolve adjoint (validation.gradients.backsolve): its exact gradient is autograd's, its backward recursion is
the one written out by hand, it is exact for a linear network whose reconstruction error is known in closed form,
and its error decays at rate 1 on smooth weights (res2-ode) but not on i.i.d. weights (res1, an SDE pair)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from limits import make_pair
from limits.brownian import BrownianGrid
from limits.pairs import run_network
from validation.gradients.backsolve import backsolve_errors, backsolve_gradient, exact_gradient


def _autograd(pair, depth, path, h0, loss):
    x = h0.clone().requires_grad_(True)
    h = run_network(pair, depth, path, x)
    value = 0.5 * h.square().sum() if loss == "half-square" else h.sum()
    (grad,) = torch.autograd.grad(value, x)
    return grad, h.detach()


def _slope(depths, values):
    """Minus the least-squares slope of log RMS on log L."""
    return -np.polyfit(np.log(depths), np.log(np.sqrt(values.mean(0))), 1)[0]


# ------------------------------------------------------------------------------------------------ a. exact gradient
@pytest.mark.parametrize("loss", ["half-square", "sum"])
@pytest.mark.parametrize("model", ["res1", "res2-ode", "cohen-sde"])
def test_exact_gradient_is_autograd_through_run_network(model, loss):
    """Backpropagation by torch.func.vjp through the stored states equals torch.autograd through run_network."""
    pair = make_pair(model, 5, seed=2, width=4)
    path = BrownianGrid(5, pair.noise_dim, 64, seed=3) if pair.kind == "sde" else None
    h0 = pair.initial_state()
    grad, h_last = exact_gradient(pair, 16, path, h0, loss)
    expected, expected_last = _autograd(pair, 16, path, h0, loss)
    torch.testing.assert_close(grad, expected, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(h_last, expected_last, rtol=0, atol=0)


def test_the_public_function_reads_the_seeded_path_and_reference_steps():
    """backsolve_errors's ‖g_L‖² is autograd's on BrownianGrid(N, m, steps, seed): steps = the deepest depth by
    default, reference_steps when given (another path: the numbers change)."""
    pair = make_pair("res1", 6, seed=1, width=3)
    h0 = pair.initial_state()
    for steps, given in [(8, None), (32, 32)]:
        out = backsolve_errors(pair, [4, 8], seed=5, reference_steps=given)
        path = BrownianGrid(6, pair.noise_dim, steps, seed=5)
        for j, depth in enumerate([4, 8]):
            grad, _ = _autograd(pair, depth, path, h0, "half-square")
            np.testing.assert_allclose(out.gradient_scale[:, j], grad.square().sum(1).numpy(), rtol=1e-10)
    assert not np.allclose(backsolve_errors(pair, [8], seed=5).gradient_scale,
                           backsolve_errors(pair, [8], seed=5, reference_steps=32).gradient_scale)


# --------------------------------------------------------------------------------------- b. the backward recursion
@pytest.mark.parametrize("depth", [1, 4])
def test_backsolve_is_the_recursion_written_by_hand(depth):
    """res1 (tanh), layer k: h ↦ h + M_k tanh(h), M_k = (s/√d) ΔB_k. By hand: h̃_k = h̃_{k+1} − M_k tanh(h̃_{k+1}),
    p̃_k = p̃_{k+1} + diag(1 − tanh²(h̃_k)) M_kᵀ p̃_{k+1}. At depth 1 the one-step inversion is wrong (not an
    identity): the gradient and the state both differ from the exact ones on every sample."""
    pair = make_pair("res1", 7, seed=0, width=4)
    path = BrownianGrid(7, pair.noise_dim, 8, seed=1)
    h0 = pair.initial_state()
    dt = 1.0 / depth
    mats = [pair.scale * path(k * dt, (k + 1) * dt).view(7, 4, 4) for k in range(depth)]
    h = h0
    for m in mats:
        h = h + torch.einsum("nij,nj->ni", m, torch.tanh(h))
    rebuilt, p = h, h.clone()                            # half-square loss: p_L = h_L
    for m in reversed(mats):
        rebuilt = rebuilt - torch.einsum("nij,nj->ni", m, torch.tanh(rebuilt))
        p = p + (1 - torch.tanh(rebuilt) ** 2) * torch.einsum("nij,ni->nj", m, p)
    exact, h_last = exact_gradient(pair, depth, path, h0)
    torch.testing.assert_close(h_last, h, rtol=1e-13, atol=1e-13)
    adjoint, h0_rebuilt = backsolve_gradient(pair, depth, path, h_last)
    torch.testing.assert_close(h0_rebuilt, rebuilt, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(adjoint, p, rtol=1e-12, atol=1e-12)
    assert (adjoint - exact).norm(dim=1).min() > 1e-4
    assert (h0_rebuilt - h0).norm(dim=1).min() > 1e-4


def test_a_zero_branch_is_inverted_exactly():
    """weight_var = 0: every layer is the identity, the inversion is exact and so is the adjoint (errors 0)."""
    out = backsolve_errors(make_pair("res1", 5, seed=0, width=3, weight_var=0.0), [1, 2, 8], seed=0)
    assert np.all(out.gradient_sq == 0) and np.all(out.reconstruction_sq == 0)
    assert np.all(out.gradient_scale > 0)


def test_a_linear_network_has_the_exact_adjoint_and_a_closed_form_reconstruction_error():
    """cohen-ode, identity σ, β = 0, constant trend: layer h ↦ h + (Ā h + b̄)/L, i.e. z ↦ (I + G/L) z on z = [h; 1],
    G = [[Ā, b̄], [0, 0]]. The Jacobian I + Ā/L does not depend on h, so g̃_L = g_L exactly; the rebuilt input is
    (I − G/L)^L (I + G/L)^L z_0 = (I − G²/L²)^L z_0, so h̃_0 − h_0 = −G² z_0 / L + O(L⁻²) (O(L⁻²) per layer):
    rate 1, measured 0.973 over L = 8 … 128 (6 samples, a_bar = 2); the gradient error is exactly 0."""
    n, d = 6, 4
    pair = make_pair("cohen-ode", n, seed=0, width=d, activation="identity", beta=0.0, options={"a_bar": 2.0})
    depths = [8, 16, 32, 64, 128]
    out = backsolve_errors(pair, depths, seed=0)
    assert np.all(out.gradient_sq <= 1e-24 * out.gradient_scale)
    gen = torch.zeros((n, d + 1, d + 1), dtype=torch.float64)
    gen[:, :d, :d], gen[:, :d, d] = pair.trend.a_const, pair.trend.b_const
    z0 = torch.cat([pair.initial_state(), torch.ones(n, 1, dtype=torch.float64)], dim=1)
    eye = torch.eye(d + 1, dtype=torch.float64)
    for j, depth in enumerate(depths):
        round_trip = torch.linalg.matrix_power(eye - gen @ gen / depth**2, depth)
        expected = torch.einsum("nij,nj->ni", round_trip - eye, z0)[:, :d].square().sum(1).numpy()
        np.testing.assert_allclose(out.reconstruction_sq[:, j], expected, rtol=1e-8)
    assert abs(_slope(depths, out.reconstruction_sq) - 1.0) < 0.05
    leading = torch.einsum("nij,nj->ni", gen @ gen, z0)[:, :d].square().sum(1).numpy()
    np.testing.assert_allclose(out.reconstruction_sq[:, -1] * depths[-1] ** 2, leading, rtol=0.1)


# ------------------------------------------------------------------------------------------------------ c. the rates
def test_smooth_weights_converge_at_rate_one():
    """res2-ode (width 4, 20 samples): the RMS gradient error decays like 1/L. Measured slopes over L = 8 … 128:
    1.094 / 1.061 / 1.068 for seeds 0 / 1 / 2 (reconstruction error: 1.003 / 1.005 / 1.035)."""
    depths = [8, 16, 32, 64, 128]
    out = backsolve_errors(make_pair("res2-ode", 20, seed=0, width=4), depths, seed=0)
    assert 0.8 <= _slope(depths, out.gradient_sq) <= 1.2
    assert 0.8 <= _slope(depths, out.reconstruction_sq) <= 1.2
    assert np.sqrt(out.gradient_sq[:, -1].mean() / out.gradient_scale[:, -1].mean()) < 1e-3


def test_iid_weights_do_not_converge():
    """res1 (i.i.d. weights, width 3, 50 samples): the per-layer inversion defect −Δ'Δ is O(1/L) with a non-zero mean
    ((s²/d) σ'σ Δt), so its sum over L layers stays O(1): the error has a plateau. Its zero-mean part decays like
    L^-1/2 and dominates until L ≈ d² (at width 10 the slope over 8 … 256 is still 0.43), so the plateau is fitted
    over L = 128 … 1024. Measured slopes of the RMS gradient error, seeds 0 … 5: 0.029, 0.044, 0.128, −0.018, −0.026,
    0.058 (reconstruction: 0.040, 0.022, 0.032, 0.015, −0.002, 0.011); relative gradient error at L = 1024:
    2.2–3.0 %. At width 4 the gradient slopes were 0.046–0.121."""
    depths = [128, 256, 512, 1024]
    out = backsolve_errors(make_pair("res1", 50, seed=0, width=3), depths, seed=0)
    assert -0.15 <= _slope(depths, out.gradient_sq) <= 0.15
    assert -0.15 <= _slope(depths, out.reconstruction_sq) <= 0.15
    relative = np.sqrt(out.gradient_sq.mean(0) / out.gradient_scale.mean(0))
    assert np.all(relative > 0.01)


def test_the_reconstruction_error_scales_with_the_weight_variance():
    """The inversion defect Δ'Δ is quadratic in the weights' scale s, so on the same path and inputs the reconstruction
    error is ∝ s² = weight_var at leading order, and the gradient error falls faster (≈ weight_var^1.7). Measured
    RMS ratios, weight_var 0.1 vs 1, width 4, 40 samples, L = 16 / 64, seeds 0 / 1 / 2: reconstruction 0.098 / 0.109,
    0.095 / 0.101, 0.091 / 0.094; gradient 0.024 / 0.024, 0.017 / 0.019, 0.025 / 0.025 (width 10, 200 samples,
    L = 4096: 0.104 and 0.021)."""
    depths = [16, 64]
    big = backsolve_errors(make_pair("res1", 40, seed=0, width=4, weight_var=1.0), depths, seed=0)
    small = backsolve_errors(make_pair("res1", 40, seed=0, width=4, weight_var=0.1), depths, seed=0)
    rec = np.sqrt(small.reconstruction_sq.mean(0) / big.reconstruction_sq.mean(0))
    grad = np.sqrt(small.gradient_sq.mean(0) / big.gradient_sq.mean(0))
    assert np.all((rec > 0.08) & (rec < 0.12))
    assert np.all(grad < 0.05)


# ------------------------------------------------------------------------------------------------------ d. bad input
@pytest.mark.parametrize("depths, kwargs, message", [
    ([0, 4], {}, r"depth L=0 is out of range \(allowed: an integer ≥ 1\)"),
    ([-2], {}, r"depth L=-2 is out of range"),
    ([2.5], {}, r"depth L=2.5 is out of range"),
    ([], {}, r"depths is empty"),
    ([4], {"loss": "l1"}, r"loss 'l1' unknown \(allowed: half-square, sum\)"),
    ([3], {}, r"depth L=3 is not a power of two"),
    ([4], {"reference_steps": 12}, r"reference_steps=12 is out of range \(allowed: a power of two"),
    ([8], {"reference_steps": 4}, r"depth L=8 does not divide the path's 4 steps"),
])
def test_bad_input_names_the_value_and_what_is_allowed(depths, kwargs, message):
    with pytest.raises(ValueError, match=message):
        backsolve_errors(make_pair("res1", 2, seed=0, width=2), depths, seed=0, **kwargs)


def test_bad_input_for_an_ode_pair():
    pair = make_pair("res2-ode", 2, seed=0, width=2)
    with pytest.raises(ValueError, match=r"depth L=0 is out of range"):
        backsolve_errors(pair, [0], seed=0)
    with pytest.raises(ValueError, match=r"loss 'mse' unknown \(allowed: half-square, sum\)"):
        backsolve_errors(pair, [4], seed=0, loss="mse")
    with pytest.raises(ValueError, match=r"reference_steps=64 applies to SDE pairs only"):
        backsolve_errors(pair, [4], seed=0, reference_steps=64)
    backsolve_errors(pair, [3, 5], seed=0)           # any depth ≥ 1 on smooth weights
