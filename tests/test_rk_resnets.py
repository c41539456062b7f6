"""The Runge–Kutta ResNets (limits/rk_resnets.py): their blocks are exactly the midpoint / classical RK4 steps
of res2-ode's neural ODE on the same weights, the study engine steps them exactly as the plain network does,
and their rates are 2 and 4."""

from itertools import pairwise

import numpy as np
import pytest
import torch
from torchdiffeq import odeint

from limits import ModelConfig, PairError, get_pair, make_pair, pair_names, run_network
from validation.core.one_pass import ode_errors
from validation.core.rate_fit import fit_rate, verdict

MODELS = ["res2-midpoint", "res2-rk4"]
SPAN = torch.tensor([0.0, 1.0], dtype=torch.float64)


def _pair(model, samples=5, width=4, **kw):
    return get_pair(model)(ModelConfig(width=width, **kw), samples=samples, seed=1)


def _classical_rk4(field, h, depth):
    """Classical Runge–Kutta with Δ = 1/L, written out from the textbook tableau."""
    dt = 1.0 / depth
    for k in range(depth):
        t = k * dt
        k1 = field(t, h)
        k2 = field(t + dt / 2, h + dt / 2 * k1)
        k3 = field(t + dt / 2, h + dt / 2 * k2)
        k4 = field(t + dt, h + dt * k3)
        h = h + (k1 + 2 * (k2 + k3) + k4) * dt * (1 / 6)
    return h


def test_registered_with_their_orders():
    assert set(MODELS) <= set(pair_names())
    for model, order in zip(MODELS, (2, 4)):
        pair = _pair(model)
        assert pair.theory_rate == order and pair.kind == "ode"
        assert pair.describe()["order"] == order


@pytest.mark.parametrize("activation", ["tanh", "swish", "identity"])
def test_midpoint_network_is_torchdiffeq_midpoint_bit_for_bit(activation):
    pair = _pair("res2-midpoint", activation=activation)
    h0 = pair.initial_state()
    for depth in (1, 8, 64):
        midpoint = odeint(pair.limit_field, h0, SPAN, method="midpoint", options={"step_size": 1.0 / depth})[-1]
        assert torch.equal(run_network(pair, depth, h0=h0), midpoint)


@pytest.mark.parametrize("activation", ["tanh", "shifted-softplus"])
def test_rk4_network_is_classical_rk4_bit_for_bit(activation):
    pair = _pair("res2-rk4", activation=activation)
    h0 = pair.initial_state()
    rk_common = pytest.importorskip("torchdiffeq._impl.rk_common")
    for depth in (1, 8, 64):
        net = run_network(pair, depth, h0=h0)
        assert torch.equal(net, _classical_rk4(pair.limit_field, h0, depth))
        # torchdiffeq's own classical step (not reachable through odeint: its method "rk4" is the 3/8 rule)
        grid = torch.arange(depth + 1, dtype=torch.float64) / depth
        h = h0
        for t0, t1 in pairwise(grid):
            h = h + rk_common.rk4_step_func(lambda t, y, perturb=None: pair.limit_field(t, y), t0, t1 - t0, t1, h)
        assert torch.equal(net, h)


def test_torchdiffeq_rk4_is_the_three_eighths_rule_not_classical():
    pair = _pair("res2-rk4")
    h0 = pair.initial_state()
    three_eighths = odeint(pair.limit_field, h0, SPAN, method="rk4", options={"step_size": 1.0 / 64})[-1]
    net = run_network(pair, 64, h0=h0)
    assert not torch.equal(net, three_eighths)  # another scheme …
    assert (net - three_eighths).abs().max() < 1e-5  # … of the same order: both O(L^-4) from the limit


def test_same_weights_and_limit_as_res2_ode_bit_for_bit():
    base = _pair("res2-ode")
    h0 = base.initial_state()
    ts = torch.tensor([0.0, 1 / 7, 0.3, 1.0], dtype=torch.float64)
    limit = base.solve_limit(h0, ts, rtol=1e-8, atol=1e-8)
    for model in MODELS:
        pair = _pair(model)
        assert torch.equal(pair.initial_state(), h0)
        for ours, theirs in zip(pair.weights(ts), base.weights(ts)):
            assert torch.equal(ours, theirs)
        assert torch.equal(pair.solve_limit(h0, ts, rtol=1e-8, atol=1e-8), limit)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("chunk_budget", [1, 1 << 22])  # 1: every layer spans several chunks (weights at t_k only)
def test_engine_equals_standalone_networks(model, chunk_budget):
    pair = _pair(model, samples=4, width=3)
    depths = [2, 4, 8, 16]
    captured = {}
    solve = pair.solve_limit

    def capturing(h0, times, rtol, atol, method="dopri5", options=None):
        ys = solve(h0, times, rtol, atol, method, options)
        calls = captured["calls"] = captured.get("calls", 0) + 1
        if calls % 2:  # each chunk solves the primary reference, then the second
            captured["H"] = ys[-1]
        return ys

    pair.solve_limit = capturing
    errors = ode_errors(pair, depths, chunk_budget=chunk_budget)
    nets = [run_network(pair, L) for L in depths]
    for j, h in enumerate(nets):
        np.testing.assert_array_equal(errors.final_sq[:, j], ((h - captured["H"]) ** 2).sum(-1).numpy())
    for j, (a, b) in enumerate(pairwise(nets)):
        np.testing.assert_array_equal(errors.successive_sq[:, j], ((a - b) ** 2).sum(-1).numpy())


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("activation", ["relu", "prelu:0.1"])
def test_non_smooth_activations_are_refused(model, activation):
    with pytest.raises(PairError, match=rf"{model} is an order-\d scheme only for a smooth field.*got {activation}"):
        _pair(model, activation=activation)


def test_command_line_refuses_relu_in_one_line(capsys):
    from validation.convergence import main

    assert main(["--model", "res2-rk4", "--activation", "relu", "--quiet"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "smooth field" in lines[0] and "relu" in lines[0]


def test_midpoint_rate_is_two():
    pair = make_pair("res2-midpoint", samples=20, width=6, seed=0)
    depths = [32, 64, 128, 256]  # L ≥ 32: asymptotic (Δ ≤ ℓ/3); errors ≥ 1e-5, far above the reference
    errors = ode_errors(pair, depths)
    fit = fit_rate(depths, errors.final_sq, resamples=300)
    assert abs(fit.rate - 2.0) < 0.05, fit
    assert verdict(fit, 2.0, 0.1) == "PASS"


def test_rk4_rate_is_four():
    pair = make_pair("res2-rk4", samples=20, width=6, seed=0)
    depths = [64, 128, 256]  # L ≥ 64: asymptotic; errors down to ~4e-9 need the tight reference (floor ~1e-11)
    errors = ode_errors(pair, depths, rtol=1e-13, atol=1e-13)
    fit = fit_rate(depths, errors.final_sq, resamples=300)
    assert abs(fit.rate - 4.0) < 0.05, fit
    assert verdict(fit, 4.0, 0.1) == "PASS"


def test_the_same_measurement_fails_kuttas_order_three_block_claimed_at_four():
    """The planted alternative of the calibration (tests/wrong_noise_scale.py): blocks that are Kutta's order-3 step,
    claimed at res2-rk4's rate 4, measure 3 and FAIL on the depths and reference where RK4's blocks PASS."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("plants", Path(__file__).with_name("wrong_noise_scale.py"))
    plants = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plants)
    pair = plants.Kutta3ClaimedAsRK4(ModelConfig(width=6), samples=20, seed=0)
    depths = [64, 128, 256]
    errors = ode_errors(pair, depths, rtol=1e-13, atol=1e-13)
    fit = fit_rate(depths, errors.final_sq, resamples=300)
    assert abs(fit.rate - 3.0) < 0.05, fit
    assert pair.theory_rate == 4.0 and verdict(fit, pair.theory_rate, 0.1) == "FAIL"


def test_stage_times_read_alone_equal_the_engines_batch():
    """A stage time read alone (inside the block) or in the engine's batch gives the same weights."""
    pair = _pair("res2-rk4")
    ts = torch.arange(9, dtype=torch.float64) / 8
    batch = pair.weights(ts)
    for i, t in enumerate(ts):
        alone = pair.weights(t.reshape(1))
        for a, b in zip(alone, batch):
            assert torch.equal(a[0], b[i])


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_default_study_passes_on_three_or_more_depths(model, tmp_path):
    """The documented default run of each Runge–Kutta pair PASSes on at least three fitted depths (issue 41's window
    rule: before it, the rule left two depths, 128 and 256, and the run was INCONCLUSIVE)."""
    import json

    from validation.convergence import main

    out = tmp_path / "r.json"
    assert main(["--model", model, "--quiet", "--json", str(out)]) == 0
    result = json.loads(out.read_text())["result"]
    assert result["verdict"] == "PASS" and sum(result["fits"]["rms"]["fitted"]) >= 3


def test_rk4_declares_a_fixed_step_reference_finer_than_its_errors():
    """res2-rk4 measures against rk4 with 8 steps per layer of the deepest depth (second: 4): an adaptive float64
    reference cannot get below its errors at L = 512. The two references' gap stays far below the deepest error."""
    from validation.core.one_pass import FLOOR_FACTORS, reference_kind, reference_text

    pair = make_pair("res2-rk4", samples=4, width=4, seed=0)
    assert reference_kind(pair) == "fixed-halved" and FLOOR_FACTORS["fixed-halved"] == 10.0
    errors = ode_errors(pair, [32, 64])
    assert (errors.reference["steps"], errors.reference["second_steps"]) == (512, 256)
    assert reference_text(errors.reference) == "rk4 with 512 fixed steps (second: 256)"
    gap = float(np.sqrt(errors.reference_gap_sq.mean()))
    deepest = float(np.sqrt(errors.final_sq[:, -1].mean()))
    assert gap * FLOOR_FACTORS["fixed-halved"] < deepest, (gap, deepest)
    assert reference_kind(make_pair("res2-ode", samples=1, seed=0)) == "adaptive-loosened"


@pytest.mark.parametrize("refinement, method, words", [(3, "rk4", "even integer"), (0, "rk4", "even integer"),
                                                       (8, "dopri5", "fixed-step")])
def test_a_bad_declared_reference_is_refused_when_the_class_is_defined(refinement, method, words):
    from limits.rk_resnets import Res2RK4

    with pytest.raises(TypeError, match=words):
        type("Bad", (Res2RK4,), {"reference_refinement": refinement, "reference_method": method})


@pytest.mark.parametrize("flag", ["--rtol", "--atol"])
def test_tolerances_are_refused_for_a_fixed_step_reference(flag, capsys):
    from validation.convergence import main

    assert main(["--model", "res2-rk4", flag, "1e-12", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "fixed-step reference" in err and flag in err and "Traceback" not in err
