"""The multilevel study: the MLMC machinery on synthetic levels with known answers, and the study on res-1 — the
coupled levels against closed forms (res-1 with σ = id and φ = mean square), the rates, the consistency check, the
command line's refusals and the result file."""

from __future__ import annotations

import weakref

import json
import math

import numpy as np
import pytest

from limits import ModelConfig, get_pair
from limits.brownian import record_path
from limits.pairs import run_network
from limits.seeding import stream_seed
from limits.schemes import get_sde_scheme
from validation.multilevel import samplers
from validation.multilevel import study as multilevel
from validation.core.checks import FAIL, PASS
from validation.core.settings import SettingsError
from validation.multilevel.mlmc import (
    BatchSums, LevelBatch, complexity_samples, consistency, level_rate, mlmc_estimate,
)


def make_sampler(alpha: float, beta: float, mean: float = 1.0, shift: float = 0.0):
    """Levels with E[P_l] = mean + 2^{-alpha l} and Var[Y_l] = 2^{-beta l}: P_{l-1} on the same 'path' is P_l minus a
    Gaussian difference; ``shift`` breaks the coupling (the coarse solve's law is not the level below's)."""
    def sample(level: int, samples: int, batch: int) -> LevelBatch:
        rng = np.random.default_rng(stream_seed(0, "synthetic", level, batch))
        fine = mean + 2.0 ** (-alpha * level) + 0.5 * rng.standard_normal(samples)
        if level == 0:
            return LevelBatch(fine, None, float(samples), 0.0)
        difference = 2.0 ** (-alpha * level) - 2.0 ** (-alpha * (level - 1)) \
            + 2.0 ** (-beta * level / 2) * rng.standard_normal(samples)
        coarse = fine - difference + shift
        return LevelBatch(fine, coarse, float(samples * 1.5 * 2**level), 0.0)
    return sample


def test_level_rates_recover_alpha_and_beta_on_synthetic_levels():
    levels = complexity_samples(make_sampler(1.0, 2.0), 7, 20000, lambda level: 5000)
    ys = [s.differences for s in levels]
    alpha = level_rate("alpha", "mean", ys, 1, resamples=300)
    beta = level_rate("beta", "variance", ys, 1, resamples=300)
    assert alpha.judged and alpha.interval[0] <= 1.0 <= alpha.interval[1] and abs(alpha.rate - 1) < 0.05
    assert beta.judged and beta.interval[0] <= 2.0 <= beta.interval[1] and abs(beta.rate - 2) < 0.05
    # the extrapolated differences of a pure 2^-l bias are zero: never resolved, so never judged
    extrapolated = level_rate("tt", "extrapolated", ys, 1, resamples=100)
    assert not extrapolated.judged and "resolved" in extrapolated.why


def test_a_mean_lost_in_noise_is_not_judged():
    levels = complexity_samples(make_sampler(3.0, 1.0), 6, 500, lambda level: 500)
    rate = level_rate("alpha", "mean", [s.differences for s in levels], 1, resamples=100)
    assert not rate.judged and "more samples" in rate.why


def test_mlmc_estimator_reaches_its_accuracy_and_costs_less_than_plain_monte_carlo():
    accuracy = 2e-3
    estimate = mlmc_estimate(make_sampler(1.0, 2.0), accuracy, alpha=1.0, beta=2.0,
                             cost_per_sample=lambda level: 1.5 * 2**level if level else 1.0, max_levels=14)
    assert estimate.converged
    assert estimate.variance <= 0.75 * accuracy**2 * 1.01
    assert estimate.bias_estimate <= 0.5 * accuracy
    # the exact limit is 1.0; the estimate's RMS error is ε, so 4ε is a 4-sigma bound
    assert abs(estimate.value - 1.0) < 4 * accuracy
    assert estimate.levels >= 9  # the bias 2^-L must fall below √θ ε (2^-l ≤ 1e-3)


def test_the_estimator_holds_one_batch_at_a_time_whatever_the_samples():
    """Issue 47: a round's batches are reduced to their sums as they are drawn (BatchSums), so the estimator's memory
    does not grow with the samples — the 100 000-sample res-1 run reached 3.6 GB while each round's batches were all
    kept until summed. Counted here by the level batches alive when each is drawn: one (fails with every batch kept)."""
    sampler, drawn_so_far, most = make_sampler(1.0, 2.0), [], [0]

    def counted(level, samples, batch):
        most[0] = max(most[0], sum(ref() is not None for ref in drawn_so_far))
        drawn = sampler(level, samples, batch)
        drawn_so_far.append(weakref.ref(drawn))
        return drawn

    estimate = mlmc_estimate(counted, 2e-3, alpha=1.0, beta=2.0, batch=lambda level: 500,
                             cost_per_sample=lambda level: 1.5 * 2**level if level else 1.0, max_levels=14)
    assert sum(estimate.samples) > 100 * 500 and most[0] == 0  # hundreds of batches, none alive at the next draw
    kept = mlmc_estimate(None, 2e-3, alpha=1.0, beta=2.0, batch=lambda level: 500, max_levels=14,
                         cost_per_sample=lambda level: 1.5 * 2**level if level else 1.0,
                         draw=lambda calls: [BatchSums.of(sampler(*call)) for call in calls])
    assert kept.value == estimate.value and kept.samples == estimate.samples  # the same sums in the same order


def test_consistency_flags_a_broken_coupling():
    good = complexity_samples(make_sampler(1.0, 2.0), 4, 20000, lambda level: 20000)
    bad = complexity_samples(make_sampler(1.0, 2.0, shift=0.05), 4, 20000, lambda level: 20000)
    assert max(consistency(good)) <= 1.0
    assert max(consistency(bad)) > 1.0


# ------------------------------------------------------------------------------------------------ the study
def level_and_its_draws(solver: str, level: int, samples: int = 64):
    """One level batch of ``solver`` on res-1 at width 2 (depth 2^level, seed 7, phase "test", batch 0), and the
    pair and path its streams draw, for recomputing it by hand."""
    pair = get_pair("res1")(ModelConfig(width=2), 10, seed=0)
    batch = multilevel.level_sampler(pair, solver, "sqnorm", 1, 7, "test")(level, samples, 0)
    stream = stream_seed(7, "multilevel", "test", level, 0)
    return batch, get_pair("res1")(ModelConfig(width=2), samples, seed=stream), record_path(samples, 4, 2**level, stream)


def test_level_sample_is_the_network_at_depth_l_and_l_over_2_on_one_path():
    batch, drawn, path = level_and_its_draws("network", 3)
    h0 = drawn.initial_state()
    fine = (run_network(drawn, 8, path, h0) ** 2).sum(-1).numpy()
    coarse = (run_network(drawn, 4, path, h0) ** 2).sum(-1).numpy()
    np.testing.assert_array_equal(batch.fine, fine)
    np.testing.assert_array_equal(batch.coarse, coarse)
    assert batch.cost == 64 * (8 + 4)


def test_identity_levels_match_the_closed_form():
    """res-1 with σ = id: E‖h_L‖² = E‖h_0‖² (1 + s²/L)^L exactly (Euler of d‖H‖² = s²‖H‖² dt + martingale), with
    E‖h_0‖² = d = 2, so E[Y_l] = 2 ((1 + s²/L)^L − (1 + 2s²/L)^{L/2}), and the limit is 2 e^{s²}."""
    s2 = 0.5
    result = multilevel.run("res1", activation="identity", weight_var=s2, function="sqnorm", schemes=("network",),
                            samples=40000, depths=(1, 2, 4, 8, 16), accuracies=(1e-2,), resamples=200)
    solver = result.solvers[0]
    for samples, depth in zip(solver.levels[1:], solver.depths[1:]):
        exact = 2 * ((1 + s2 / depth) ** depth - (1 + 2 * s2 / depth) ** (depth // 2))
        y = samples.differences
        assert abs(y.mean() - exact) < 4 * y.std() / math.sqrt(len(y)), (depth, y.mean(), exact)
    estimate = solver.estimates[0]
    assert abs(estimate.value - 2 * math.exp(s2)) < 4 * 1e-2


def test_default_solvers_rates_and_result_file(tmp_path):
    result = multilevel.run("res1", samples=4000, depths=(1, 2, 4, 8, 16, 32), accuracies=(1e-2,), resamples=200)
    network, milstein = result.solvers
    assert network.solver == "network" and milstein.solver == "milstein_levy_area"
    # Euler on non-commutative noise: β ≈ 1; Milstein with the path's Lévy areas: β ≈ 2 (pre-asymptotic at L = 2)
    assert 0.75 < network.rates["beta"].rate < 1.1
    assert 1.7 < milstein.rates["beta"].rate < 2.2
    assert network.gamma == pytest.approx(1.0) and milstein.gamma == pytest.approx(1.0)
    assert all(check.verdict != FAIL for check in result.checks)
    consistency_checks = [c for c in result.checks if c.name.startswith("consistency")]
    assert [c.verdict for c in consistency_checks] == [PASS, PASS]
    for estimate in network.estimates + milstein.estimates:
        assert estimate.cost > 0 and estimate.mc_cost > 0
    path = tmp_path / "ml.json"
    result.save(path)
    data = json.loads(path.read_text())
    assert data["study"] == "multilevel" and data["result"]["verdict"] == result.verdict
    assert data["run"]["seed"] == 0


def test_same_seed_same_numbers():
    a = multilevel.run("res1", samples=500, depths=(1, 2, 4, 8), schemes=("network",), accuracies=(5e-2,),
                       resamples=100)
    b = multilevel.run("res1", samples=500, depths=(1, 2, 4, 8), schemes=("network",), accuracies=(5e-2,),
                       resamples=100)
    assert a.solvers[0].estimates[0].value == b.solvers[0].estimates[0].value
    np.testing.assert_array_equal(a.solvers[0].levels[2].fine, b.solvers[0].levels[2].fine)


@pytest.mark.parametrize("argv, flag", [
    (["--reference-steps", "64"], "--reference-steps"),   # not a flag of this study
    (["--model", "res2-ode"], "--model"),
    (["--depths", "1,4,8,16"], "--depths"),
    (["--schemes", "srk"], "--schemes"),
    (["--accuracies", "0"], "--accuracies"),
    (["--max-levels", "1"], "--max-levels"),
])
def test_bad_input_exits_2_naming_the_flag(argv, flag, capsys):
    assert multilevel.main(argv) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err


def test_a_reference_given_to_run_is_refused():
    with pytest.raises(SettingsError, match="reference_steps"):
        multilevel.run("res1", reference_steps=64)


# ------------------------------------------------------------------------------------------------ antithetic MLMC
def truncated_milstein_mean_square(s2: float, d: int, steps: int) -> float:
    """E‖h_L‖² / E‖h_0‖² of truncated Milstein on res-1 with σ = id: each step is h ↦ M h with
    M = I + (s/√d) ΔB + ½ (s²/d)(ΔB² − Δt I), and E[MᵀM] = c I with c = 1 + s²Δt + s⁴Δt²(d² + 1)/(4d²)
    (Gaussian moments: E GᵀG = d I, E G² = I, E (G²)ᵀG² = (d² + 2) I for a d×d standard Gaussian G)."""
    dt = 1.0 / steps
    return (1 + s2 * dt + s2 * s2 * dt * dt * (d * d + 1) / (4 * d * d)) ** steps


def test_antithetic_levels_match_the_closed_form_and_telescope_exactly():
    """res-1 with σ = id, φ = ‖x‖², h_0 ~ N(0, I_2): the antithetic level ℓ has E[Y_ℓ] = 2 (c(L) − c(L/2)) with c the
    truncated Milstein mean square (the twin has the path's law, the coarse solve the level below's), to 4 standard
    errors at every level; the telescoping gaps are consistent with zero; β is about 2."""
    s2, d = 0.5, 2
    result = multilevel.run("res1", activation="identity", weight_var=s2, function="sqnorm",
                            schemes=("antithetic_milstein",), samples=40000, depths=(1, 2, 4, 8, 16, 32),
                            accuracies=(1e-2,), resamples=200)
    solver = result.solvers[0]
    p0 = solver.levels[0].fine
    assert abs(p0.mean() - d * truncated_milstein_mean_square(s2, d, 1)) < 4 * p0.std() / math.sqrt(len(p0))
    for samples, depth in zip(solver.levels[1:], solver.depths[1:]):
        exact = d * (truncated_milstein_mean_square(s2, d, depth) - truncated_milstein_mean_square(s2, d, depth // 2))
        y = samples.differences
        assert abs(y.mean() - exact) < 4 * y.std() / math.sqrt(len(y)), (depth, y.mean(), exact)
    assert all(low <= 0 <= high for _, low, high in solver.telescoping[:4])
    assert 1.8 < solver.rates["beta"].rate < 2.2
    assert abs(solver.estimates[0].value - d * math.exp(s2)) < 4 * 1e-2


def test_the_antithetic_twin_swaps_each_coarse_steps_halves():
    batch, drawn, path = level_and_its_draws("antithetic_milstein", 2)
    twin = samplers.swapped_halves(path)
    np.testing.assert_array_equal(twin.increments[0], path.increments[1])
    np.testing.assert_array_equal(twin.increments[3], path.increments[2])
    torch = pytest.importorskip("torch")
    assert torch.equal(twin(0.0, 0.5), path(0.0, 0.5))  # the coarse steps are the path's
    scheme = get_sde_scheme("milstein_truncated")(drawn.limit_sde(), drawn.noise_type)
    h0 = drawn.initial_state()
    fine, again = ((scheme.integrate(h0, p, 4) ** 2).sum(-1).numpy() for p in (path, twin))
    np.testing.assert_allclose(batch.fine, 0.5 * (fine + again), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(batch.single, fine)
    np.testing.assert_array_equal(batch.coarse, (scheme.integrate(h0, path, 2) ** 2).sum(-1).numpy())
    assert batch.cost == 64 * (2 * 4 + 2) * scheme.evaluations


def test_without_the_swap_the_antithetic_beta_falls_to_one(monkeypatch):
    """The planted error: a 'twin' that is the path itself makes the estimator truncated Milstein's plain levels,
    whose variance decays at β = 1 on res-1's non-commutative noise — the β check FAILs."""
    monkeypatch.setattr(samplers, "swapped_halves", lambda path: path)
    result = multilevel.run("res1", schemes=("antithetic_milstein",), samples=4000, depths=(1, 2, 4, 8, 16, 32),
                            accuracies=(1e-2,), resamples=200)
    beta = result.solvers[0].rates["beta"]
    assert beta.rate < 1.3
    assert [c.verdict for c in result.checks if c.name.startswith("β")] == [FAIL]


def test_truncated_milstein_is_milstein_with_zero_areas():
    from limits.brownian import DyadicPath
    from limits.schemes import MilsteinLevyArea, TruncatedMilstein

    pair = get_pair("res1")(ModelConfig(width=3), 50, seed=1)
    path = record_path(50, 9, 8, 3)
    torch = pytest.importorskip("torch")
    zero = DyadicPath(path.increments, torch.zeros_like(path.increments), levy_areas=path.increments.new_zeros(8, 50, 36))
    h0 = pair.initial_state()
    truncated = TruncatedMilstein(pair.limit_sde(), pair.noise_type).integrate(h0, path, 8)
    with_zero_areas = MilsteinLevyArea(pair.limit_sde(), pair.noise_type).integrate(h0, zero, 8)
    torch.testing.assert_close(truncated, with_zero_areas, rtol=0, atol=1e-14)


def test_help_states_the_defaults_the_run_uses(capsys):
    """--help's defaults of --depths and --samples are the study's own (1:128, 100000), not the pair studies'."""
    from validation.multilevel import study as study

    assert study.main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {study.DEFAULT_DEPTHS[0]}:{study.DEFAULT_DEPTHS[-1]})" in text
    assert f"(default: {study.DEFAULT_SAMPLES})" in text
    assert "SDE 4:256" not in text and "SDE 500" not in text


def test_a_width_whose_single_path_does_not_fit_is_refused_before_it_starts(capsys):
    """The memory estimate counts one sample's path when even that exceeds the path budget (d = 10⁶: m = d² + d noise
    dimensions per step): the run is refused (exit 2), not left to fail allocating terabytes (issue 46)."""
    from validation.multilevel import study as study

    assert study.main(["--depths", "2,4,8,16", "--width", "1000000", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: this run needs about") and "MiB" in err
    assert study.estimate_mb("res1", study.MultilevelSettings()) < 1000   # the default run: the path budget


def test_the_batches_shared_out_to_workers_give_the_numbers_of_one_process(monkeypatch):
    """--workers (issue 47): the complexity test's batches and each MLMC round's are computed by two forked workers
    and summed in call order — every number of the result is the one process's (times aside). Small batches (a
    path budget of 8192 numbers: up to 24 batches a level), so that a worker drawing the wrong batch's streams
    shows."""
    monkeypatch.setattr(samplers, "PATH_BUDGET", 1 << 13)
    def numbers(workers: int) -> str:
        result = multilevel.run("res1", samples=3000, depths=(1, 2, 4, 8, 16), schemes=("network", "antithetic_milstein"),
                                accuracies=(5e-2,), resamples=200, workers=workers).to_dict()

        def strip(value):
            if isinstance(value, dict):
                return {k: strip(v) for k, v in value.items()
                        if k not in ("settings", "run") and "second" not in k and "time" not in k}
            return [strip(v) for v in value] if isinstance(value, list) else value

        return json.dumps(strip(result), sort_keys=True)

    assert numbers(2) == numbers(1)


def test_a_pair_instance_is_not_shared_out():
    pair = get_pair("res1")(ModelConfig(width=2), 100, seed=0)
    with pytest.raises(SettingsError, match="workers"):
        multilevel.run(pair, samples=1000, workers=2)


def test_the_pair_check_fails_a_limit_with_a_wrong_noise_scale_and_passes_the_right_one():
    """β and consistency hold for any SDE a solver solves, so they PASSed res-1 against a noise 1.3× too large
    (tests/wrong_noise_scale.py) on 4 seeds of 5. The pair check compares the network's MLMC estimate of E φ(H_1)
    with the limit's: the planted pair's differ by about 0.037 and it FAILs; the right pair's agree and it PASSes."""
    from pathlib import Path

    small = dict(samples=4000, depths=(1, 2, 4, 8, 16, 32), accuracies=(2e-3,), resamples=200)
    right = multilevel.run("res1", **small)
    wrong = multilevel.run(str(Path(__file__).parent / "wrong_noise_scale.py") + ":NoiseScale130", **small)
    [right_check], [wrong_check] = right.pair_checks(), wrong.pair_checks()
    assert right_check.verdict == PASS, right_check.detail
    assert wrong_check.verdict == FAIL and wrong.verdict == FAIL, wrong_check.detail
    assert wrong_check in wrong.deciding_checks
    assert multilevel.run("res1", schemes=("network",), **small).pair_checks() == []


def test_the_time_estimate_grows_with_the_requested_accuracy_and_the_command_warns_first():
    """Issue 65: ``--accuracies 1e-8`` was estimated like the default (168 s) and started without a word; an MLMC
    estimate costs about ε⁻² (log 1/ε)², so the estimate must grow by that much and the command line warn."""
    from validation.core import cli

    default = cli.estimate(multilevel.COMMAND, ["--model", "res1"])[1]
    finer = cli.estimate(multilevel.COMMAND, ["--model", "res1", "--accuracies", "1e-4"])[1]
    finest = cli.estimate(multilevel.COMMAND, ["--model", "res1", "--accuracies", "1e-8"])[1]
    assert 50 * default < finer < 500 * default        # ≈ 72×: the MLMC half scaled by about 140
    assert finest > 1e9 * default
    assert cli.LONG_RUN_SECONDS < finer
