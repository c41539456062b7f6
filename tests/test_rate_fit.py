"""The corrected rate fit, the reference floor, the window rule and the stricter line (seconds in all).

Synthetic curves where the answer is known, the exact mean-square error of Euler–Maruyama on geometric
Brownian motion, and a deliberately wrong noise scale (×1.05) that must not pass for res-1's limit.
"""

import dataclasses
import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from scipy.optimize import least_squares

from validation import convergence
from validation.core.stats import local_slopes, slope
from validation.core.rate_fit import (
    CORRECTED, MAX_CORRECTION, POWER_LAW, RATE_MOVE_FRACTION, RateFit, contains_theory, corrected_fit, distance_line, fit_rate, lack_of_fit, shallow_move, theory_distance, verdict,
)

ROOT = Path(__file__).resolve().parents[1]
DEPTHS = [4, 8, 16, 32, 64, 128, 256]


def paired_samples(depths, curve, samples=400, noise=0.3, seed=0, exact=True):
    """Per-sample squared errors: a lognormal factor per path shared by every depth (the paths' errors are
    strongly correlated) times a smaller per-depth one. ``exact``: rescaled so that their RMS is ``curve``
    exactly (the bootstrap still sees the paths' spread); else the RMS follows it up to sampling noise."""
    rng = np.random.default_rng(seed)
    path = rng.lognormal(0.0, noise, size=(samples, 1))
    jitter = rng.lognormal(0.0, noise / 4, size=(samples, len(depths)))
    factor = path * jitter
    if exact:
        factor = factor / factor.mean(axis=0)
    return factor * np.asarray(curve, float) ** 2


@pytest.mark.parametrize("rate, c, q", [(0.5, -0.3, 1.0), (0.5, 0.4, 1.0), (1.0, 1.5, 1.0), (0.3, -0.25, 0.7),
                                        (2.0, -1.5, 1.0), (0.5, 0.6, 0.5)])
def test_the_corrected_fit_recovers_the_rate_where_a_straight_line_is_biased(rate, c, q):
    L = np.asarray(DEPTHS, float)
    curve = 2.0 * L**-rate * (1 + c * L**-q)
    sq = paired_samples(DEPTHS, curve)
    fit = fit_rate(DEPTHS, sq, correction_order=q, resamples=400)
    assert fit.model == CORRECTED and fit.fitted.all(), fit.rule
    assert fit.ci[0] <= rate <= fit.ci[1], fit
    assert fit.rate == pytest.approx(rate, abs=1e-6) and fit.correction == pytest.approx(c, rel=1e-4)
    line = fit_rate(DEPTHS, sq, resamples=400)
    assert line.model == POWER_LAW and not (line.ci[0] <= rate <= line.ci[1])  # the bias the correction removes


def test_the_corrected_fit_covers_the_rate_on_noisy_curves():
    """Sampling noise in the curve itself: over 30 independent samples of 300 paths the 95% interval
    contains the true rate at least 25 times (a binomial(30, 0.95) has ≤ 24 with probability 0.2%; over 100
    samples it was 96), and the rates scatter around it."""
    L = np.asarray(DEPTHS, float)
    curve = L**-0.5 * (1 - 0.25 / L)
    fits = [fit_rate(DEPTHS, paired_samples(DEPTHS, curve, samples=300, seed=seed, exact=False), correction_order=1.0,
                     resamples=300, seed=seed) for seed in range(30)]
    assert sum(f.ci[0] <= 0.5 <= f.ci[1] for f in fits) >= 25
    assert abs(np.mean([f.rate for f in fits]) - 0.5) < 0.01


def test_variable_projection_is_the_nonlinear_least_squares_fit():
    rng = np.random.default_rng(3)
    L = np.asarray(DEPTHS, float)
    v = np.log(1.7 * L**-0.55 * (1 - 0.3 / L)) + rng.normal(0, 0.003, L.size)
    rate, kappa, rss = corrected_fit(np.log(L), v, 1.0)
    ref = least_squares(lambda p: p[0] - p[1] * np.log(L) + np.log1p(p[2] / L) - v, [0.0, 0.5, 0.0])
    assert float(rate) == pytest.approx(ref.x[1], abs=1e-7)
    assert float(kappa) * L[0] == pytest.approx(ref.x[2], abs=1e-6)
    assert float(rss) == pytest.approx(2 * ref.cost, rel=1e-6)
    batch = np.stack([v, v + 0.01 * np.log(L), v[::-1] * 0 + v])  # leading axes are fitted independently
    rates = corrected_fit(np.log(L), batch, 1.0)[0]
    assert rates[0] == pytest.approx(float(rate)) and rates[1] == pytest.approx(float(rate) - 0.01, abs=1e-6)


@pytest.mark.parametrize("a", [0.25, 0.5, 1.0])
def test_euler_maruyama_mean_square_error_has_next_order_one(a):
    """dX = s X dW, Euler–Maruyama on the same path: E|X_L − X_1|² = e^a − (1 + a/L)^L exactly (a = s²), a
    series in whole powers of 1/L. The corrected model with q = 1 finds r = 1/2 on L = 4…256; with q = 1/2
    it overshoots, the straight line undershoots (why Pair.next_order is 1 for SDE pairs)."""
    L = np.asarray(DEPTHS, float)
    v = 0.5 * np.log(np.exp(a) - (1 + a / L) ** L)
    assert float(corrected_fit(np.log(L), v, 1.0)[0]) == pytest.approx(0.5, abs=0.002)
    assert float(corrected_fit(np.log(L), v, 0.5)[0]) - 0.5 > 0.003
    assert 0.5 - float(-slope(np.log(L), v)) > 0.004


def test_the_floor_drops_floored_depths_and_every_deeper_one():
    L = np.asarray(DEPTHS, float)
    sq = paired_samples(DEPTHS, L**-1.0)
    floor = 1e-3 * 2  # errors: 0.25 … 0.0039; 10 × floor = 0.02: L = 64 (0.0156) and deeper are floored
    fit = fit_rate(DEPTHS, sq, correction_order=1.0, floor=floor, floor_factor=10, resamples=300)
    assert fit.fitted_depths == [4, 8, 16, 32]
    assert fit.exclusions[4] == "error below 10× the reference floor"
    assert fit.exclusions[5] == fit.exclusions[6] == "error below 10× the reference floor"
    assert fit.floor == floor and fit.floor_factor == 10
    # one depth dipping below the floor cuts the fit there, even if a deeper one looks fine again
    floor_per_depth = np.array([0, 0, 0.1, 0, 0, 0, 0])
    cut = fit_rate(DEPTHS, sq, correction_order=1.0, floor=floor_per_depth, floor_factor=1, resamples=300)
    assert cut.fitted_depths == [4, 8] and cut.exclusions[3] == "deeper than the reference floor"
    assert cut.model == POWER_LAW  # two depths left: a straight line
    gone = fit_rate(DEPTHS, sq, correction_order=1.0, floor=1.0, resamples=300)
    assert not gone.finite and "fewer than two depths" in gone.method and verdict(gone, 1.0, 0.05) == "INCONCLUSIVE"
    assert verdict(cut, 1.0, 0.05) == "INCONCLUSIVE"  # two fitted depths: a slope, not a fit
    with pytest.raises(ValueError, match="floor"):
        fit_rate(DEPTHS, sq, floor=-1.0)
    with pytest.raises(ValueError, match="correction_order"):
        fit_rate(DEPTHS, sq, correction_order=0.0)


def test_the_window_drops_a_shallow_depth_the_model_cannot_follow():
    """A curve that is an exact power law from L = 16 on but bends sharply before (an L^-3 bump, as ODE pairs
    show): the shallow depths move the rate by more than δ/4 and are dropped, and what is left is fitted."""
    L = np.asarray(DEPTHS, float)
    curve = L**-1.0 * (1 + 40 * L**-3)
    sq = paired_samples(DEPTHS, curve, noise=0.05)
    fit = fit_rate(DEPTHS, sq, correction_order=1.0, resamples=300)
    assert fit.fitted_depths[0] >= 16 and "pre-asymptotic" in fit.exclusions[0]
    assert abs(fit.rate - 1.0) < RATE_MOVE_FRACTION * 0.05  # what is kept biases the rate by less than δ/4
    # without the correction the old rule is untouched: a straight line through every depth ≥ fit_from
    old = fit_rate(DEPTHS, sq, fit_from=8, resamples=300)
    assert old.model == POWER_LAW and old.fitted_depths == DEPTHS[1:]
    assert old.rate == pytest.approx(-slope(np.log(L[1:]), np.log(np.sqrt(sq.mean(0)))[1:]), abs=1e-12)


def test_few_depths_fall_back_to_a_straight_line():
    sq = paired_samples([8, 16, 32], np.array([8, 16, 32.0]) ** -0.5)
    fit = fit_rate([8, 16, 32], sq, correction_order=1.0, resamples=300)
    assert fit.model == POWER_LAW and fit.fitted.all() and fit.correction is None
    assert "straight line below 4 depths" in fit.rule


def test_the_correction_is_bounded_where_the_model_would_be_invalid():
    L = np.asarray(DEPTHS, float)
    curve = L**-0.5 * (1 - 3.0 / L)  # at L = 4 the correction is 75% of the leading term
    fit = fit_rate(DEPTHS, paired_samples(DEPTHS, curve, noise=0.05), correction_order=1.0, resamples=300)
    assert fit.fitted_depths[0] > 4 and "bound" in fit.exclusions[0]
    assert abs(fit.correction) / fit.fitted_depths[0] <= MAX_CORRECTION + 1e-9


def test_the_window_keeps_every_depth_of_a_right_model_on_noisy_curves():
    """Under the model, the window rule drops nothing on at least 19 of 20 noisy synthetic curves (a move resolved
    beyond δ/4 is rare where the errors vary between paths), and the lack-of-fit test it reports is not small."""
    L = np.asarray(DEPTHS, float)
    kept = whole = 0
    for seed in range(20):
        sq = paired_samples(DEPTHS, L**-0.5 * (1 - 0.2 / L), samples=300, seed=seed, exact=False)
        kept += fit_rate(DEPTHS, sq, correction_order=1.0, resamples=200, seed=seed).fitted.all()
        whole += lack_of_fit(DEPTHS, sq, "rms", 1.0, resamples=200, seed=seed) < 0.05
    assert kept >= 19 and whole < 3, (kept, whole)


def near_deterministic(curve, samples=200, noise=1e-5, seed=0):
    """Per-sample squared errors whose RMS is ``curve`` exactly and whose paths differ by ``noise`` (relative):
    the ODE pairs' situation, where every order of the expansion is statistically resolved."""
    return paired_samples(DEPTHS, curve, samples=samples, noise=noise, seed=seed)


def test_a_resolved_bend_that_barely_moves_the_rate_is_kept():
    """Issue 41: on near-deterministic errors the next terms of the expansion are 'significant' at every depth,
    yet they move the rate by far less than δ. A curve L^-1 (1 + 0.3/L + 0.4/L²) with relative noise 1e-5 is off
    the corrected model at every shallow depth (lack of fit p ≈ 0), but keeping them moves the rate by less
    than δ/4: every depth is fitted, and the rate is 1 to within δ/4."""
    L = np.asarray(DEPTHS, float)
    sq = near_deterministic(L**-1.0 * (1 + 0.3 / L + 0.4 / L**2))
    fit = fit_rate(DEPTHS, sq, correction_order=1.0, resamples=300)
    assert fit.lack_of_fit_p is not None and fit.lack_of_fit_p < 1e-6  # the bend is resolved …
    assert fit.fitted.all(), fit.exclusions  # … but not dropped: it does not move the rate by δ/4
    assert abs(fit.shallow_move) < RATE_MOVE_FRACTION * 0.05 and abs(fit.rate - 1.0) < RATE_MOVE_FRACTION * 0.05


def test_a_depth_whose_local_slope_is_near_the_rate_is_never_dropped():
    """No depth whose local slope lies within δ/4 of the fitted rate is dropped (the issue's check, on curves with a
    bend of either sign at the shallow end)."""
    L = np.asarray(DEPTHS, float)
    for bend in (2.0, -1.5, 8.0, 30.0):
        sq = near_deterministic(L**-0.5 * (1 + bend * L**-2.0))
        fit = fit_rate(DEPTHS, sq, correction_order=1.0, resamples=300)
        local = local_slopes(DEPTHS, fit.errors)
        for j, why in enumerate(fit.exclusions):
            if why is not None and j + 1 < len(DEPTHS):
                assert abs(local[j] - fit.rate) > RATE_MOVE_FRACTION * 0.05, (bend, DEPTHS[j], local[j], fit.rate)


def test_a_depth_that_moves_the_rate_by_more_than_a_quarter_of_the_tolerance_is_dropped():
    """The planted error the rule exists for: a bump 40 L^-3 at the shallow end moves the rate by ≫ δ/4. Every depth
    dropped moved the rate by more than δ/4 when it was the shallowest; the shallowest kept moves it by less."""
    L = np.asarray(DEPTHS, float)
    sq = near_deterministic(L**-1.0 * (1 + 40 * L**-3))
    fit = fit_rate(DEPTHS, sq, correction_order=1.0, resamples=300)
    dropped = [j for j, why in enumerate(fit.exclusions) if why is not None]
    assert dropped and dropped == list(range(len(dropped)))
    for j in dropped:
        if "bound" not in fit.exclusions[j]:
            move, _ = shallow_move(DEPTHS[j:], sq[:, j:], "rms", 1.0)
            assert abs(move) > RATE_MOVE_FRACTION * 0.05
    assert abs(fit.shallow_move) <= RATE_MOVE_FRACTION * 0.05 and abs(fit.rate - 1.0) < 0.01
    # a tolerance ten times tighter drops more: the threshold is a fraction of the tolerance the rate is judged by
    tight = fit_rate(DEPTHS, sq, correction_order=1.0, resamples=300, tolerance=0.005)
    assert tight.fitted.sum() <= fit.fitted.sum()


def test_the_move_of_the_shallowest_depth_is_the_difference_of_two_fits():
    L = np.asarray(DEPTHS, float)
    sq = near_deterministic(L**-1.0 * (1 + 0.3 / L + 3 / L**2))
    move, sd = shallow_move(DEPTHS, sq, "rms", 1.0)
    full = fit_rate(DEPTHS, sq, correction_order=1.0, resamples=100, fit_from=4, tolerance=1e9)  # nothing dropped
    deeper = fit_rate(DEPTHS[1:], sq[:, 1:], correction_order=1.0, resamples=100, tolerance=1e9)
    assert full.fitted.all() and deeper.fitted.all()
    assert move == pytest.approx(full.rate - deeper.rate, abs=1e-9) and sd > 0


def test_the_distance_to_theory_says_how_far_and_whether_it_is_resolved():
    def fit(low, high, finite=True):
        return RateFit((low + high) / 2, (low, high), 0.95, np.ones(3), np.ones(3, bool), np.zeros(2), "x",
                       finite=finite, depths=(4, 8, 16))

    assert contains_theory(fit(0.49, 0.52), 0.5) and verdict(fit(0.49, 0.52), 0.5, 0.05) == "PASS"
    assert not contains_theory(fit(0.506, 0.529), 0.5) and verdict(fit(0.506, 0.529), 0.5, 0.05) == "PASS"
    assert not contains_theory(fit(0.3, 0.7), 0.5 + 0.3) and not contains_theory(fit(0.4, 0.6, finite=False), 0.5)
    near = theory_distance(fit(0.999933, 0.999947), 1.0, 0.05)
    assert near["resolved"] and near["distance"] == pytest.approx(-6e-5) and near["fraction_of_tolerance"] == \
        pytest.approx(1.2e-3)
    assert not theory_distance(fit(0.49, 0.52), 0.5, 0.05)["resolved"]
    assert theory_distance(fit(0.4, 0.6, finite=False), 0.5, 0.05) is None


def test_rate_fit_json_follows_the_schema():
    schema = json.loads((ROOT / "validation/core/schemas/result.schema.json").read_text())
    L = np.asarray(DEPTHS, float)
    sq = paired_samples(DEPTHS, L**-0.5)
    for fit in (fit_rate(DEPTHS, sq, resamples=200), fit_rate(DEPTHS, sq, correction_order=1.0, floor=1e-3,
                                                              resamples=200)):
        data = json.loads(json.dumps(fit.to_dict(), default=lambda x: x.tolist()))
        jsonschema.validate(data, {**schema["$defs"]["rate_fit"], "$defs": schema["$defs"]})


SMALL = dict(width=4, samples=200, depths=(8, 16, 32, 64, 128), reference_steps=2048, bootstrap=500)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_noise_scale_five_percent_too_large_is_told_apart(seed):
    """res-1's network against its limit with the noise scale ×1.05 (tests/wrong_noise_scale.py): its whole
    interval lies below 1/2 − 0.05, so it FAILs for being slow, not for being vague; the right limit on the
    same paths has an interval that contains 1/2 (at this small size it is too wide to PASS ±0.05)."""
    wrong = convergence.run(str(ROOT / "tests/wrong_noise_scale.py") + ":NoiseScale105", seed=seed, **SMALL)
    right = convergence.run("res1", seed=seed, **SMALL)
    assert wrong.verdict == "FAIL" and wrong.rate_ci[1] < 0.45, wrong.table()  # the negative control still FAILs
    assert right.contains_theory, right.table()
    assert right.verdict in ("PASS", "INCONCLUSIVE"), right.table()  # too few samples never look like a wrong rate
    # the network is res-1's: its successive differences are the right pair's, number for number (their rate's
    # interval over 8…64 at 200 paths of width 4 is ±0.06 to ±0.14 wide and misses 1/2 on some seeds)
    assert np.array_equal(wrong.errors.successive_sq, right.errors.successive_sq)


def test_the_distance_line_prints_the_digits_that_show_the_exclusion():
    """A narrow ODE interval just below the theory value is printed with enough digits to see why it excludes it
    (at three digits [0.99993, 0.99995] would read [1.000, 1.000]), with the distance as a share of δ — not a
    boolean that reads as a contradiction of a PASS."""
    def fit(low, high):
        return RateFit((low + high) / 2, (low, high), 0.95, np.ones(3), np.ones(3, bool), np.zeros(2), "x",
                       depths=(4, 8, 16))

    line = distance_line(fit(0.999933, 0.999947), 1.0, 0.05)
    assert "[0.999933, 0.999947] excludes 1" in line and "(0.12% of δ = 0.05)" in line and "r − 1 = -6e-05" in line
    assert "[0.500, 0.524] contains 0.5" in distance_line(fit(0.4996, 0.524), 0.5, 0.05)


@pytest.mark.parametrize("spec, small", [
    ("NoiseScale130", SMALL),
    ("DriftMissing", dict(samples=50, depths=(8, 16, 32, 64, 128, 256))),
])
def test_deliberately_wrong_pairs_still_fail_under_the_window_rule(spec, small):
    """Issue 41: the window rule that keeps depths whose bend barely moves the rate must not rescue a wrong limit:
    res-1 against a noise scale ×1.3, and the damped ODE example against its limit without the damping drift, both
    as a user's own pairs, FAIL with their whole interval far below the theory rate."""
    result = convergence.run(str(ROOT / "tests/wrong_noise_scale.py") + f":{spec}", **small)
    assert result.verdict == "FAIL" and result.rate_ci[1] < result.theory_rate / 2, result.table()


def test_a_window_that_never_settles_cannot_pass():
    """The window rule never leaves fewer than three depths. A curve whose local slopes still move at its deepest
    depths (L^-1 (1 + 5 e^{-L/100}), near-deterministic: local slopes 1.35, 1.60, 1.79 from 32 → 64 on) is unsettled:
    its shallowest remaining depth moves the rate by more than δ/4, so the verdict is INCONCLUSIVE, never a PASS on a biased slope; the same curve
    scaled to a rate far from the theory still FAILs (its interval, widened by that move, lies outside the margin)."""
    from validation.core.checks import rate_check

    L = np.asarray(DEPTHS, float)
    fit = fit_rate(DEPTHS, near_deterministic(L**-1.0 * (1 + 5 * np.exp(-L / 100))), correction_order=1.0,
                   resamples=200)
    assert len(fit.fitted_depths) == 3 and fit.unsettled and abs(fit.shallow_move) > RATE_MOVE_FRACTION * 0.05
    assert rate_check("rate", fit, (fit.rate - 0.05, fit.rate + 0.05), 200).verdict == "INCONCLUSIVE"
    assert rate_check("rate", fit, (1.95, 2.05), 200).verdict == "FAIL"


def test_a_shallow_move_the_window_cannot_test_leaves_the_fit_unsettled():
    """The window rule tests a shallow depth's move by batch means of 8 parts of ≥ 10 samples. With 40 samples it
    cannot, and the bump 40 L^-3 at L = 8 stays in the fit: the rate 0.983 (the truth is 1), with an interval a
    millionth wide. Judged by 1 ± 0.015 that would be a FAIL of a right curve; the fit is unsettled instead, so the
    verdict is INCONCLUSIVE (planted: the same fit without its ``unsettled`` FAILs). With 80 samples the rule drops
    the depth and the same curve PASSes."""
    from validation.core.checks import rate_check

    L = np.asarray(DEPTHS, float)
    curve, margin = L**-1.0 * (1 + 40 * L**-3), (0.985, 1.015)
    few = fit_rate(DEPTHS, near_deterministic(curve, samples=40), correction_order=1.0, resamples=300,
                   tolerance=0.015)
    assert few.fitted_depths[0] == 8 and abs(few.rate - 1.0) > 0.015 and few.ci[1] < margin[0]
    assert "cannot test" in few.unsettled and "these are 40" in few.unsettled
    assert rate_check("rate", few, margin, 40).verdict == "INCONCLUSIVE"
    assert rate_check("rate", dataclasses.replace(few, unsettled=None), margin, 40).verdict == "FAIL"
    enough = fit_rate(DEPTHS, near_deterministic(curve, samples=80), correction_order=1.0, resamples=300,
                      tolerance=0.015)
    assert enough.fitted_depths[0] == 16 and enough.unsettled is None
    assert rate_check("rate", enough, margin, 80).verdict == "PASS"


def test_too_few_samples_never_look_like_a_wrong_rate(monkeypatch):
    """The main study on 3 samples: for some seeds its bootstrap interval lies wholly outside 0.5 ± 0.05, a FAIL of a
    right pair (on 500 samples: 0.511 [0.500, 0.524]). Below MIN_VERDICT_SAMPLES a rate is INCONCLUSIVE, and says why
    (planted: with the minimum at 2 such a run FAILs). At the minimum a wrong rate still FAILs.

    The seed is found, not fixed: 3-sample intervals move with the processor's floating-point kernels (seed 1014 gave
    [0.555, 0.769] on an Intel Xeon and [0.529, 0.769] on an AMD EPYC, where seed 1011 gives [0.653, 0.758])."""
    from validation.core import checks

    monkeypatch.setattr(checks, "MIN_VERDICT_SAMPLES", 2)
    seed = next((seed for seed in range(1000, 1040) if convergence.run("res1", samples=3, seed=seed).verdict == "FAIL"),
                None)
    assert seed is not None, "no seed of 40 FAILs a right pair on 3 samples with the minimum planted at 2"
    monkeypatch.undo()
    result = convergence.run("res1", samples=3, seed=seed)
    assert not checks.MIN_VERDICT_SAMPLES <= 3 and result.verdict == "INCONCLUSIVE"
    assert f"fewer than {checks.MIN_VERDICT_SAMPLES}" in result.check.detail
    L = np.asarray(DEPTHS, float)
    fit = fit_rate(DEPTHS, paired_samples(DEPTHS, L**-0.3, samples=checks.MIN_VERDICT_SAMPLES), resamples=300)
    assert fit.samples == checks.MIN_VERDICT_SAMPLES and checks.rate_check("rate", fit, (0.45, 0.55), 0).verdict == "FAIL"
