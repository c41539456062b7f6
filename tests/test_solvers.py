"""The solver study and its pieces: the Stratonovich forms, the recorded path, the schemes on the shared path."""

from __future__ import annotations

import math
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from limits import make_pair
from limits.brownian import BrownianGrid, DyadicPath, merge_space_time_areas
from limits.ito import ItoLimit
from limits.pairs import run_network
from limits.schemes import SDE_SCHEMES, SchemeError, get_sde_scheme, sde_schemes_for
from validation.solvers import study as solvers
from validation.core.one_pass import sde_pass
from validation.core.plots import overlapping_tick_labels
from validation.core.results import validate


@pytest.mark.parametrize("model, options", [
    ("res1", {}), ("cohen-sde", {}), ("pf", {"psi": "tanh"}),
    ("pf", {"psi": "tanh", "cov_out": "ar1:0.5", "cov_in": "equi:0.3"}),
])
def test_stratonovich_correction_closed_form_matches_autograd(model, options):
    """c = ½ Σ_j (∂g_j) g_j: each pair's closed form against automatic differentiation of its g_prod."""
    pair = make_pair(model, samples=5, width=3, options=options)
    limit = pair.limit_sde()
    y = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    closed = limit.stratonovich_correction(0.0, y)
    generic = ItoLimit.stratonovich_correction(limit, 0.0, y)
    assert closed.abs().max() > 1e-3
    torch.testing.assert_close(closed, generic, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(limit.diffusion_matrix(0.0, y), ItoLimit.diffusion_matrix(limit, 0.0, y))


def test_dyadic_path_reads_the_grid_bit_for_bit():
    grid = BrownianGrid(3, 4, 64, seed=5, block_steps=8)
    passed = sde_pass(make_pair("res1", samples=3, width=2), [4, 8], 64, seed=5, record_steps=16, block_budget=8 * 12)
    path = DyadicPath(passed.recorded)
    grid = BrownianGrid(3, 4, 64, seed=5, block_steps=passed.info["block_steps"])
    for steps in (1, 2, 4, 8, 16):
        for k in range(steps):
            assert torch.equal(path(k / steps, (k + 1) / steps), grid(k / steps, (k + 1) / steps))
    with pytest.raises(ValueError, match="aligned dyadic"):
        path(0.0, 3 / 16)


def test_space_time_area_of_a_piecewise_linear_path():
    """H over [0, 1] of the path linear between 8 fine points, merged pairwise, equals the integral."""
    gen = torch.Generator().manual_seed(0)
    fine = torch.randn(8, 1, 2, dtype=torch.float64, generator=gen) / 8**0.5
    w, h = fine, torch.zeros_like(fine)
    while w.shape[0] > 1:
        w, h = merge_space_time_areas(w, h)
    # H = ∫_0^1 (B_s − s W) ds for B piecewise linear: trapezoid rule is exact on each linear piece
    knots = torch.cat([torch.zeros(1, 1, 2, dtype=torch.float64), fine.cumsum(0)])
    s = torch.linspace(0, 1, 9, dtype=torch.float64).view(-1, 1, 1)
    values = knots - s * knots[-1]
    integral = ((values[1:] + values[:-1]) / 2).sum(0) / 8
    torch.testing.assert_close(h[0], integral)


def test_scheme_abilities_are_checked_once():
    limit = make_pair("res1", samples=2, width=3).limit_sde()
    with pytest.raises(SchemeError, match="milstein.*general"):
        get_sde_scheme("milstein")(limit, "general")
    assert "milstein" in sde_schemes_for("scalar") and "milstein" not in sde_schemes_for("general")
    assert get_sde_scheme("midpoint")(limit).strong_order == 0.5
    assert get_sde_scheme("srk")(make_pair("res1", samples=2, width=1).limit_sde(), "scalar").strong_order == 1.5


def test_euler_scheme_is_the_res1_network_bit_for_bit():
    pair = make_pair("res1", samples=6, width=3)
    passed = sde_pass(pair, [4, 8, 16], 64, seed=2, record_steps=16)
    path = DyadicPath(passed.recorded)
    euler = SDE_SCHEMES["euler"](pair.limit_sde())
    for L, network in zip([4, 8, 16], passed.states["network"]):
        assert torch.equal(euler.integrate(pair.initial_state(), path, L), network)
        assert torch.equal(run_network(pair, L, path), network)


def test_commutative_noise_schemes_reach_order_one():
    """res1 at width 1 (scalar noise): the Stratonovich schemes, on the Stratonovich form, and Milstein converge at
    order ≈ 1; without the drift correction the midpoint scheme would converge to another process."""
    result = solvers.run("res1", width=1, samples=400, depths=(4, 8, 16, 32, 64), reference_steps=1024,
                         schemes=("euler", "midpoint", "milstein"), bootstrap=200, fit_from=8, fit_model="power-law")
    rates = result.rates
    assert 0.35 < rates["euler"] < 0.65
    assert rates["midpoint"] > 0.85 and rates["milstein"] > 0.85
    assert result.reference["scheme"] == "srk"


def test_general_noise_schemes_are_order_one_half_and_share_the_path():
    result = solvers.run("res1", samples=100, width=4, depths=(4, 8, 16, 32), reference_steps=512, bootstrap=200,
                         fit_from=4)
    assert [run.name for run in result.runs] == ["network", "euler", "midpoint", "euler_heun", "reversible_heun"]
    np.testing.assert_array_equal(result.run_named("network").squared_errors, result.run_named("euler").squared_errors)
    for name in ("midpoint", "euler_heun", "reversible_heun"):
        assert 0.3 < result.rates[name] < 0.7
        # the constant-factor gain of the Stratonovich schemes on the same path
        assert result.run_named(name).errors[-1] < result.run_named("euler").errors[-1]


def test_ode_schemes_and_json(tmp_path):
    result = solvers.run("res1-ode", samples=20, width=4, depths=(8, 16, 32, 64), schemes=("euler", "midpoint",
                                                                                            "dopri5"),
                         tolerances=(1e-4, 1e-6), bootstrap=200, fit_from=8)
    np.testing.assert_array_equal(result.run_named("network").squared_errors,
                                  result.run_named("euler").squared_errors)
    assert 1.8 < result.rates["midpoint"] < 2.3
    assert result.run_named("dopri5").evaluations[1] > result.run_named("dopri5").evaluations[0]
    data = result.to_dict()
    validate(data)
    assert data["study"] == "solvers" and "steps_to_reach" in data["result"]
    assert [run.name for run in result.runs] == ["network", "euler", "midpoint"]
    assert result.reference["scheme"] == "rk4"
    assert result.reference["rms_gap"] < 1e-3 * result.run_named("midpoint").errors[-1]  # far below the schemes
    assert overlapping_tick_labels(result.plot()) == [] and "dopri5" in result.table()


@pytest.mark.parametrize("model, stages, order", [("res2-midpoint", 2, 2.0), ("res2-rk4", 4, 4.0)])
def test_runge_kutta_networks_are_charged_for_every_stage(model, stages, order):
    """The work–precision table counts residual-branch evaluations: a midpoint (RK4) block makes 2 (4) per
    layer, so the network sits on the same cost axis as torchdiffeq's midpoint (rk4) — and matches it."""
    result = solvers.run(model, samples=10, width=4, depths=(8, 16, 32), schemes=("midpoint", "rk4"),
                         bootstrap=100, fit_model="power-law")
    network = result.run_named("network")
    assert network.evaluations == [stages * L for L in (8, 16, 32)]
    same = result.run_named("midpoint" if stages == 2 else "rk4")
    assert same.evaluations == network.evaluations
    if stages == 2:  # torchdiffeq's rk4 is the 3/8 rule, not the classical RK4 block: same cost, other errors
        np.testing.assert_allclose(network.squared_errors, same.squared_errors, rtol=1e-9, atol=1e-30)
    assert network.theory_order == order


def test_steps_to_reach_interpolates_and_extrapolates():
    run = solvers.SchemeRun("x", "", 1.0, [4, 8, 16], np.array([[1e-2, 2.5e-3 / 4 * 4, 1e-3]]) ** 2 * np.ones((2, 1)),
                            [4, 8, 16], [0, 0, 0])
    assert solvers.steps_to_reach(run, 1e-1) == 4.0
    assert 4 < solvers.steps_to_reach(run, 5e-3) < 8
    # log-log interpolation: 5e-3 is halfway (in log) from 1e-2 to 2.5e-3, so L = 4 · √2
    assert solvers.steps_to_reach(run, 5e-3) == pytest.approx(4 * math.sqrt(2), rel=1e-12)

    # Beyond the deepest depth: extrapolated from the fitted rate, e(L) = e(16) (16 / L)^rate.
    # steps_to_reach reads only fit.finite and fit.rate.
    errors = np.array([[1e-2, 5e-3, 2.5e-3]])
    deep = solvers.SchemeRun("y", "", 1.0, [4, 8, 16], errors ** 2 * np.ones((2, 1)), [4, 8, 16], [0, 0, 0])
    assert solvers.steps_to_reach(deep, 1e-4) is None  # no fit: cannot extrapolate
    deep.fit = SimpleNamespace(finite=True, rate=1.0)
    assert solvers.steps_to_reach(deep, 1e-4) == pytest.approx(16 * 2.5e-3 / 1e-4, rel=1e-12)  # 400
    deep.fit = SimpleNamespace(finite=True, rate=0.5)
    assert solvers.steps_to_reach(deep, 1e-4) == pytest.approx(16 * (2.5e-3 / 1e-4) ** 2, rel=1e-12)  # 10000
    assert solvers.steps_to_reach(deep, 5e-3) == pytest.approx(8.0, rel=1e-12)  # still interpolated, not fitted
    deep.fit = SimpleNamespace(finite=False, rate=float("nan"))
    assert solvers.steps_to_reach(deep, 1e-4) is None  # a non-finite fit does not extrapolate
    deep.fit = SimpleNamespace(finite=True, rate=0.0)
    assert solvers.steps_to_reach(deep, 1e-4) is None  # nor does a rate that never reaches the target


@pytest.mark.parametrize("argv, message", [
    (["--schemes", "milstein"], "general noise"),
    (["--schemes", "nosuch"], "unknown scheme"),
    (["--model", "res2-ode", "--schemes", "midpoint,milstein"], "not an ODE scheme"),
    (["--tolerances", "0"], "tolerances"),
])
def test_cli_bad_input(argv, message):
    proc = subprocess.run([sys.executable, "-m", "validation.solvers", *argv], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_timed_reports_the_median_of_repeats_after_a_warm_up(monkeypatch):
    """On a fake clock that each solve advances by its planned duration: no wall time is measured, so a busy
    machine cannot make the test flake."""
    from types import SimpleNamespace

    from validation.solvers import runs as solver_runs
    from validation.solvers import timed

    now = [0.0]
    monkeypatch.setattr(solver_runs, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    calls, durations = [], iter([0.05, 0.001, 0.03, 0.002])   # the warm-up 50 ms; then 1, 30, 2 ms

    def solve():
        calls.append(1)
        now[0] += next(durations)
        return len(calls)

    counted = []
    result, seconds = timed(solve, 3, lambda: counted.append(len(calls)))
    assert result == 1 and counted == [1] and len(calls) == 4          # the warm-up's result; counters read after it
    assert 0.0015 < seconds < 0.02                                     # the median (2 ms), not the warm-up or the mean
    calls.clear()
    now[0] = 0.0  # a fresh clock: 0.01 read off a clock at 0.083 is 0.00999…
    durations = iter([0.01])
    assert timed(solve, 0)[1] >= 0.01 and len(calls) == 1              # 0 repeats: the warm-up itself, timed
    calls.clear()
    durations = iter([0.3, 0.01, 0.01, 0.01])
    timed(solve, 3)
    assert len(calls) == 3                       # a 0.3 s warm-up leaves room for two timed runs in the 0.5 s budget
    calls.clear()
    now[0] = 0.0
    durations = iter([0.7, 0.01])
    assert timed(solve, 3)[1] >= 0.7 and len(calls) == 1   # a warm-up as long as the budget is its own timing


def test_the_timing_protocol_is_recorded():
    result = solvers.run("res1", samples=20, width=2, depths=(4, 8, 16), reference_steps=64, schemes=("euler",),
                         timing_repeats=2)
    assert result.summary()["timing"] == {"warm_up_runs": 1, "timed_runs": 2,
                                          "timed_runs_within_s": solvers.TIMING_BUDGET_S,
                                          "statistic": "median of the timed runs; a warm-up of 0.5 s or longer is its "
                                                       "own timing"}
    assert all(s > 0 for run in result.runs for s in run.seconds)
