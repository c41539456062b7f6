"""The three-valued verdicts (validation.core.checks): the equivalence test, the sample counts that would settle an
INCONCLUSIVE, fits on too few depths, and how checks combine into a verdict and an exit status."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from validation.core.checks import (
    EXIT_STATUS, FAIL, INCONCLUSIVE, PASS, Check, combine, interval_check, rate_check, samples_to_settle,
)
from validation.core.rate_fit import fit_rate


@pytest.mark.parametrize("interval, expected", [
    ((0.46, 0.54), PASS),            # inside the margin
    ((0.45, 0.55), PASS),            # the edges belong to it
    ((0.56, 0.60), FAIL),            # wholly above
    ((0.30, 0.44), FAIL),            # wholly below
    ((0.40, 0.52), INCONCLUSIVE),    # straddles the lower edge
    ((0.52, 0.60), INCONCLUSIVE),    # straddles the upper edge
    ((0.30, 0.70), INCONCLUSIVE),    # wider than the margin
])
def test_the_equivalence_test_has_three_outcomes(interval, expected):
    check = interval_check("rate", sum(interval) / 2, interval, (0.45, 0.55), 500)
    assert check.verdict == expected, check
    assert (check.samples_needed is not None) == (expected == INCONCLUSIVE)


def test_the_sample_count_to_pass_follows_the_half_width_at_eighty_percent_power():
    # half-width w = 0.06 at N = 500, margin ±0.05, 95% interval (z = 1.96): N' = N ((z + 1.2816) w / (z δ))²
    settling = samples_to_settle(0.50, (0.44, 0.56), (0.45, 0.55), 500)
    exact = 500 * ((1.959964 + 1.281552) * 0.06 / (1.959964 * 0.05)) ** 2
    assert exact <= settling.if_theory <= exact * 1.1  # rounded up to two significant figures
    # centred on the theory, the count at the estimate is the count if the theory holds: the same planned power
    assert settling.outcome == PASS and settling.if_estimate == settling.if_theory == settling.needed
    # a narrower interval needs fewer samples
    assert samples_to_settle(0.50, (0.47, 0.53), (0.45, 0.55), 500).if_theory < settling.if_theory


def test_an_estimate_outside_the_margin_also_says_how_many_samples_would_fail_it():
    settling = samples_to_settle(0.58, (0.52, 0.64), (0.45, 0.55), 400)
    # the interval [0.58 − 0.06 k, …] leaves the margin with 80% power once 0.06 k (z + 1.2816)/z ≤ 0.03:
    # k = z/(2 (z + 1.2816)), N' = N / k² = 400 · 4 · (1.6539)² = 4376.9 → 4,400
    assert settling.outcome == FAIL and settling.if_estimate == 4400 and settling.if_theory > 400
    check = interval_check("rate", 0.58, (0.52, 0.64), (0.45, 0.55), 400)
    assert check.verdict == INCONCLUSIVE and "4,400 would FAIL" in check.detail
    assert check.samples_needed == settling.if_theory  # the count to PASS if the theory holds


def test_an_estimate_near_an_edge_asks_for_the_samples_that_would_pass_it_as_estimated():
    # the 32,000-path GBM network rate: 0.475 [0.450, 0.498] against 0.5 ± 0.05 — narrow enough for the theory's
    # value, but its estimate sits at the edge: the count must exceed N, not be N + 1
    check = interval_check("rate", 0.475, (0.4498, 0.498), (0.45, 0.55), 32_000)
    assert check.verdict == INCONCLUSIVE and check.samples_needed > 32_000 * 1.005


def test_the_count_at_the_estimate_grows_as_the_estimate_nears_an_edge():
    """Issue 41: GBM's midpoint asked 4,100 samples "if the rate is 1" and 3,700 at its estimate 0.984, nearer the
    edge. At one planned power the count at the estimate is the theory's at the centre and grows monotonically
    towards either edge."""
    margin, half = (0.95, 1.05), 0.06
    counts = [samples_to_settle(r, (r - half, r + half), margin, 2000) for r in (1.0, 0.99, 0.984, 0.97, 0.96)]
    assert counts[0].if_estimate == counts[0].if_theory
    assert all(c.if_theory == counts[0].if_theory for c in counts)
    estimates = [c.if_estimate for c in counts]
    assert estimates == sorted(estimates) and estimates[2] > counts[2].if_theory, estimates
    mirrored = [samples_to_settle(2 - r, (2 - r - half, 2 - r + half), margin, 2000).if_estimate for r in (0.99, 0.97)]
    assert mirrored == [estimates[1], estimates[3]]


def test_more_samples_cannot_settle_an_interval_with_no_width():
    assert samples_to_settle(0.5, (0.5, 0.5), (0.45, 0.55), 100).needed is None
    assert samples_to_settle(math.nan, (0.4, 0.6), (0.45, 0.55), 100).needed is None


def _fit(depths, rate=0.5, samples=400, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    squared = (np.asarray(depths, float) ** (-2 * rate))[None, :] * rng.lognormal(0, noise, (samples, len(depths)))
    return fit_rate(depths, squared, resamples=300, seed=seed)


def test_a_rate_on_two_depths_never_passes():
    two = _fit([64, 128], noise=0.01)
    assert two.finite and abs(two.rate - 0.5) < 0.02 and two.ci[1] - two.ci[0] < 0.05
    check = rate_check("rate", two, (0.45, 0.55), 400)
    assert check.verdict == INCONCLUSIVE and "2 depths" in check.detail and "add deeper depths" in check.detail
    # … but an interval wholly outside the margin FAILs on any number of depths (an exploding error)
    assert rate_check("rate", two, (0.9, 1.1), 400).verdict == FAIL
    three = _fit([32, 64, 128], noise=0.01)
    assert rate_check("rate", three, (0.45, 0.55), 400).verdict == PASS


def test_a_fit_with_no_rate_is_inconclusive_for_depths_and_fails_for_nan():
    depths = [8, 16, 32, 64]
    above_floor = fit_rate(depths, np.ones((50, 4)) * np.array([1.0, 0.5, 0.25, 0.125]), floor=0.9, floor_factor=1,
                           resamples=100)
    check = rate_check("rate", above_floor, (0.45, 0.55), 50)
    assert not above_floor.finite and check.verdict == INCONCLUSIVE and "reference floor" in check.detail
    nan = fit_rate(depths, np.full((50, 4), np.nan), resamples=100)
    assert rate_check("rate", nan, (0.45, 0.55), 50).verdict == FAIL


def test_checks_combine_fail_first_then_inconclusive():
    passed, failed, unsure = Check.of("a", True), Check.of("b", False), Check("c", INCONCLUSIVE, "", 900)
    assert combine([passed, passed]) == PASS
    assert combine([passed, unsure]) == INCONCLUSIVE
    assert combine([unsure, failed, passed]) == FAIL
    assert combine([None, "PASS"]) == PASS and combine([]) == FAIL
    assert EXIT_STATUS == {PASS: 0, FAIL: 1, INCONCLUSIVE: 4}
    with pytest.raises(ValueError, match="unknown"):
        Check("x", "MAYBE")
    assert unsure.to_dict() == {"check": "c", "verdict": INCONCLUSIVE, "passed": False, "detail": "",
                                "samples_needed": 900}


def test_a_reported_check_is_shown_and_left_out_of_the_verdict():
    """REPORTED: a statement measured, not judged. It never becomes a run's verdict, in either direction: beside a
    FAIL the run FAILs, beside a PASS it PASSes, alone nothing was judged (FAIL, as with no check)."""
    from validation.core.checks import REPORTED

    shown = Check.reported("the paper's percentages", "0.74 against < 0.724")
    assert shown.verdict == REPORTED and not shown.passed
    assert combine([Check.of("a", True), shown]) == PASS
    assert combine([Check.of("a", False), shown.to_dict()]) == FAIL
    assert combine([Check("c", INCONCLUSIVE), "REPORTED"]) == INCONCLUSIVE
    assert combine([shown]) == FAIL
    assert REPORTED not in EXIT_STATUS


def test_the_window_advice_names_a_fit_that_keeps_three_depths():
    fit = SimpleNamespace(finite=True, rate=2.0, ci=(1.999, 2.001), confidence=0.95, depths=(32, 64, 128, 256),
                          fitted=np.array([False, False, True, True]), fitted_depths=[128, 256],
                          exclusions=("pre-asymptotic: x", "pre-asymptotic: y", None, None))
    check = rate_check("rate", fit, (1.95, 2.05), 200)
    assert check.verdict == INCONCLUSIVE and "--fit-model power-law --fit-from 64" in check.detail


def _narrowing(kind: str, seed: int) -> float | None:
    from validation.core.rate_fit import interval_narrowing

    depths = np.array([8, 16, 32, 64, 128])
    rng = np.random.default_rng(seed)
    factor = rng.lognormal(0, 0.3, (2000, 5))
    if kind == "heavy":  # a per-path factor with infinite variance, as geometric Brownian motion's errors have
        factor = factor * (rng.pareto(1.3, (2000, 1)) + 1)
    squared = depths[None, :] ** -1.0 * factor
    return interval_narrowing(fit_rate(depths, squared, resamples=300, seed=seed), squared, resamples=300, seed=seed)


def test_the_narrowing_of_the_interval_is_measured_and_tells_heavy_tails_apart():
    light = [_narrowing("light", seed) for seed in range(3)]
    heavy = [_narrowing("heavy", seed) for seed in range(3)]
    assert all(0 <= g <= 0.5 for g in light + heavy)
    assert np.median(light) > 0.42 and np.median(heavy) < np.median(light) - 0.1, (light, heavy)
    # the sample count to PASS follows it: a slower narrowing asks for more samples
    interval, margin = (0.44, 0.56), (0.45, 0.55)
    slow = samples_to_settle(0.5, interval, margin, 500, narrowing=0.3)
    assert slow.if_theory > samples_to_settle(0.5, interval, margin, 500).if_theory
    assert samples_to_settle(0.5, interval, margin, 500, narrowing=0.01).needed is None
    check = interval_check("rate", 0.5, interval, margin, 500, narrowing=0.01)
    assert check.verdict == INCONCLUSIVE and "does not narrow measurably" in check.detail


@pytest.mark.parametrize("interval, at_most, expected", [
    ((0.1, 0.2), True, PASS), ((0.3, 0.4), True, FAIL), ((0.2, 0.3), True, INCONCLUSIVE),
    ((0.3, 0.4), False, PASS), ((0.1, 0.2), False, FAIL), ((0.2, 0.3), False, INCONCLUSIVE),
    ((math.nan, 0.2), True, FAIL),
])
def test_a_one_sided_bound_has_three_outcomes(interval, at_most, expected):
    from validation.core.checks import bound_check, check_line

    check = bound_check("gap", interval, 0.25, at_most=at_most, detail="x")
    assert check.verdict == expected, check
    assert check_line(check).split()[0] == expected and check_line(check.to_dict()) == check_line(check)
    # a check with no margin, in its JSON form, is judged by "passed"
    assert combine([{"check": "c", "passed": True, "detail": ""}, check.to_dict()]) == expected
