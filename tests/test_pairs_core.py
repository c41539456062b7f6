"""The discrete ResNets against their limits' numerical schemes, and the one-pass engine against them."""

import numpy as np
import pytest
import torch
import torchsde
from torchdiffeq import odeint

from limits.brownian import BrownianGrid
from limits import ModelConfig, PairError, get_pair, pair_names, run_network
from validation.core import one_pass
from validation.core.one_pass import ode_errors, sde_errors


def _res1(samples=6, width=4, **kw):
    return get_pair("res1")(ModelConfig(width=width, **kw), samples=samples, seed=3)


@pytest.mark.parametrize("activation", ["tanh", "relu", "identity"])
@pytest.mark.parametrize("depth", [1, 4, 32])
def test_res1_is_torchsde_euler_bit_for_bit(activation, depth):
    pair = _res1(activation=activation, weight_var=2.0)
    path = BrownianGrid(pair.samples, pair.noise_dim, 64, seed=5, block_steps=8)
    h0 = pair.initial_state()
    net = run_network(pair, depth, path, h0)
    ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
    euler = torchsde.sdeint(pair.limit_sde(), h0, ts, bm=path, method="euler", dt=1.0 / depth)[-1]
    assert torch.equal(net, euler)


def test_res1_weights_have_the_stated_law():
    pair = _res1(samples=2000, width=5, weight_var=2.0)
    path = BrownianGrid(pair.samples, pair.noise_dim, 16, seed=0)
    v = pair.layer_weights(1 / 16, path(0.0, 1 / 16))
    assert abs(v.var().item() - 2.0 / 5) < 0.01


@pytest.mark.parametrize("model", ["res1-ode", "res2-ode", "res3-ode"])
def test_ode_networks_are_torchdiffeq_euler_bit_for_bit(model):
    pair = get_pair(model)(ModelConfig(width=4), samples=5, seed=1)
    h0 = pair.initial_state()
    for depth in (1, 8, 64):
        net = run_network(pair, depth, h0=h0)
        ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
        euler = odeint(pair.limit_field, h0, ts, method="euler", options={"step_size": 1.0 / depth})[-1]
        assert torch.equal(net, euler)


@pytest.mark.parametrize("block, chunk", [(4, 4), (16, 2), (32, 8)])
def test_engine_equals_standalone_networks_and_reference(block, chunk, monkeypatch):
    """Several blocks, the carry stack used; a block read in chunks smaller than itself (the pass's unit, kept in
    the cache) gives every depth and the reference the same increments, to the last bit."""
    monkeypatch.setattr(one_pass, "CHUNK_BUDGET", chunk * 7 * 16)
    pair = _res1(samples=7)
    depths = [2, 4, 8, 16]
    errors = sde_errors(pair, depths, 64, seed=9, block_budget=block * 7 * 16)
    path = BrownianGrid(7, 16, 64, seed=9, block_steps=errors.reference["block_steps"])
    h0 = pair.initial_state()
    ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
    reference = torchsde.sdeint(pair.limit_sde(), h0, ts, bm=path, method="euler", dt=1 / 64)[-1]
    for j, depth in enumerate(depths):
        expected = ((run_network(pair, depth, path, h0) - reference) ** 2).sum(-1).numpy()
        np.testing.assert_array_equal(errors.final_sq[:, j], expected)
    assert errors.reference["block_steps"] == block and chunk < 64 // depths[0]  # the carry stack is used


def test_engine_sup_error_is_max_over_grid():
    pair = _res1(samples=3)
    errors = sde_errors(pair, [4, 8], 32, seed=2)
    path = BrownianGrid(3, 16, 32, seed=2, block_steps=errors.reference["block_steps"])
    h = pair.initial_state()
    ts = torch.linspace(0, 1, 5, dtype=torch.float64)
    ref = torchsde.sdeint(pair.limit_sde(), h, ts, bm=path, method="euler", dt=1 / 32)
    sup = torch.zeros(3, dtype=torch.float64)
    for k in range(4):
        h = pair.network_step(h, k / 4, 1 / 4, path(k / 4, (k + 1) / 4))
        sup = torch.maximum(sup, ((h - ref[k + 1]) ** 2).sum(-1))
    np.testing.assert_allclose(errors.sup_sq[:, 0], sup.numpy(), rtol=0, atol=1e-15)
    assert np.all(errors.sup_sq[:, 0] >= errors.final_sq[:, 0])


def test_ode_engine_chunking_does_not_change_results():
    pair = get_pair("res2-ode")(ModelConfig(width=3), samples=4, seed=0)
    a = ode_errors(pair, [2, 4, 8, 16], chunk_budget=1)
    b = ode_errors(pair, [2, 4, 8, 16])
    assert a.reference["chunk"] == 1 and b.reference["chunk"] == 16
    np.testing.assert_allclose(a.final_sq, b.final_sq, rtol=1e-6)
    np.testing.assert_allclose(a.sup_sq, b.sup_sq, rtol=1e-6)


def test_same_seed_same_numbers_different_seed_different():
    run = lambda seed: sde_errors(get_pair("res1")(ModelConfig(width=3), 5, seed=seed), [2, 4], 16, seed=seed)
    a, b, c = run(1), run(1), run(2)
    np.testing.assert_array_equal(a.final_sq, b.final_sq)
    assert not np.allclose(a.final_sq, c.final_sq)


def test_identity_res1_second_moment_closed_form():
    """Lemma 14 (identity σ): E‖h_L‖² = (1 + s²/L)^L ‖x‖², not the limit's e^{s²}‖x‖²."""
    samples, width, depth, s2 = 20000, 4, 4, 1.5
    pair = get_pair("res1")(ModelConfig(width=width, activation="identity", weight_var=s2), samples, seed=0)
    x = torch.tensor([1.0, -0.5, 2.0, 0.25], dtype=torch.float64)
    path = BrownianGrid(samples, pair.noise_dim, depth, seed=4)
    h = run_network(pair, depth, path, x.expand(samples, width).clone())
    sq = (h**2).sum(-1)
    mean, se = sq.mean().item(), sq.std().item() / samples**0.5
    exact = (1 + s2 / depth) ** depth * (x**2).sum().item()
    assert abs(mean - exact) < 4 * se
    assert abs(mean - np.exp(s2) * (x**2).sum().item()) > 4 * se  # the discrete law, not the limit's


def test_registry_errors_and_input_layer():
    assert {"res1", "res1-ode", "res2-ode", "res3-ode"} <= set(pair_names())
    with pytest.raises(PairError, match="known models"):
        get_pair("res9")
    with pytest.raises(PairError, match="ReLU"):
        get_pair("res3-ode")(ModelConfig(activation="tanh"), 2)
    with pytest.raises(PairError, match="no setting"):
        get_pair("res1")(ModelConfig(options={"nonsense": "1"}), 2)
    pair = get_pair("res1")(ModelConfig(width=6, input_dim=3), 1000, seed=0)
    h0 = pair.initial_state()
    assert h0.shape == (1000, 6)
    assert abs(h0.var().item() - 1.0) < 0.1  # A x with A ~ N(0, 1/n_in): unit variance entries
