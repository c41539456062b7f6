"""Verdicts with three values: one :class:`Check` type, the equivalence test of a rate, and how checks combine.

A statistic judged against theory with a margin is an **equivalence test** (docs/theory.md §6). With the
margin [low, high] (theory ± δ) and the statistic's confidence interval [a, b]:

* **PASS**: [a, b] ⊂ [low, high] — the statistic is within the margin, at the interval's confidence;
* **FAIL**: [a, b] ∩ [low, high] = ∅ — the statistic is off the margin, at the same confidence;
* **INCONCLUSIVE**: the interval straddles an edge of the margin — more samples would settle it.

For INCONCLUSIVE, :func:`samples_to_settle` estimates the sample counts that would settle it, from the
interval's half-width w at N samples, which shrinks as N^-1/2 (the standard error is w / z, z the interval's
normal quantile):

* **to PASS**, if the statistic's true value is the margin's centre θ (the theory) — the planning rule of an
  equivalence test (two one-sided tests) at 80% power: the interval lies within θ ± δ with probability ≥ 0.8
  once δ ≥ (z + z_0.9) · w/z · √(N/N'), i.e. N' = N · ((z + 1.2816) w / (z δ))²;
* **as estimated**, if the true value is the estimate r, at the same power: with the interval's distances
  a' = r − a and b' = b − r, the interval [r̂ − k a', r̂ + k b'] (k = √(N/N')) lies inside the margin once
  k ≤ m · z/(z + 1.2816) with m = min((r − low)/a', (high − r)/b') when r is inside it (PASS), or wholly
  outside once k ≤ m · z/(z + 1.2816) with m = (r − high)/a' (r above it) or (low − r)/b' (r below it) (FAIL):
  N' = N / k². The factor z/(z + 1.2816) is the planned power's: the new estimate r̂ scatters around r with
  standard error k a'/z, and the interval must clear the edge by that scatter too. So the two counts agree when
  r is the margin's centre, and the count grows monotonically as r nears an edge.

A check reports as ``samples_needed`` the larger of the two when both foresee a PASS, else the count to PASS.
They are estimates for planning, not promises: the estimate moves with the samples. Both assume the half-width
shrinks as N^-1/2; where the per-sample errors are heavy-tailed it shrinks slower, and a study that has the
per-sample values measures the exponent γ on parts of its samples (:func:`validation.core.rate_fit.interval_narrowing`)
and uses N' = N · ratio^(1/γ) instead of ratio² (and N / k^(1/γ)) — the detail says which.

A rate fitted through fewer than :data:`MIN_FIT_DEPTHS` depths (after the reference floor and the window
rule) never PASSes: two points are a slope, not a fit (no lack-of-fit test, no curvature). It is INCONCLUSIVE,
unless its interval lies wholly outside the margin, which is a FAIL on any number of depths.

A rate on fewer than :data:`MIN_VERDICT_SAMPLES` samples is INCONCLUSIVE whatever its interval: too few samples must
never look like a wrong rate, and a paired bootstrap of a handful of paths is too narrow (docs/theory.md §6: on
the main study, 2, 3 and 5 samples gave 16, 4 and 3 decided verdicts in 40 seeds, read off intervals that missed
the rate 20, 11 and 9 times; 10 to 30 samples decided none). :func:`with_enough_samples` applies the same minimum to
any other check read off a bootstrap of, or a test on, that many independent draws.

Several checks combine by :func:`combine`: FAIL if any check FAILs, else INCONCLUSIVE if any is
INCONCLUSIVE, else PASS. The command line's exit status is :data:`EXIT_STATUS` of the verdict.

A statement that is measured and printed but is not a test — one no planted alternative can FAIL, or one whose
criterion was chosen after the data were seen (docs/theory.md §6) — is a :data:`REPORTED` check
(:meth:`Check.reported`): it is shown with its numbers, and :func:`combine` leaves it out of the verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

__all__ = ["PASS", "FAIL", "INCONCLUSIVE", "VERDICTS", "REPORTED", "CHECK_STATUSES", "EXIT_STATUS", "MIN_FIT_DEPTHS", "MIN_VERDICT_SAMPLES", "with_enough_samples", "Check", "combine",
           "interval_check", "rate_check", "samples_to_settle", "Settling", "bound_check", "check_line", "PLANNED_POWER", "MIN_NARROWING"]

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
VERDICTS = (PASS, FAIL, INCONCLUSIVE)
#: a check's status when it is measured and shown but not judged (module docstring); never a run's verdict
REPORTED = "REPORTED"
#: what one check may say: a verdict, or REPORTED
CHECK_STATUSES = (*VERDICTS, REPORTED)
#: the command line's exit status of each verdict (2 bad input and 3 internal error are the runner's)
EXIT_STATUS = {PASS: 0, FAIL: 1, INCONCLUSIVE: 4}
#: the fewest fitted depths a rate verdict other than INCONCLUSIVE stands on
MIN_FIT_DEPTHS = 3
#: the fewest independent samples (paths, draws, networks) a verdict read off a bootstrap interval or a test of
#: them stands on; below, INCONCLUSIVE (module docstring; :func:`with_enough_samples`)
MIN_VERDICT_SAMPLES = 20
#: a sample count beyond this is reported as "more than" it
_MAX_REPORTED_SAMPLES = 10**9


@dataclass(frozen=True)
class Check:
    """One judged statement.

    Attributes:
        name: what is checked, in words (e.g. "rate [rms] within 0.5 ± 0.05").
        verdict: ``PASS``, ``FAIL`` or ``INCONCLUSIVE``; ``REPORTED`` for a statement shown but not judged.
        detail: the numbers behind it, in words.
        samples_needed: for INCONCLUSIVE, the sample count estimated to settle it (:attr:`Settling.needed`;
            None: more samples would not settle it — ``detail`` says what would).
    """

    name: str
    verdict: str
    detail: str = ""
    samples_needed: int | None = None

    def __post_init__(self) -> None:
        if self.verdict not in CHECK_STATUSES:
            raise ValueError(f"verdict {self.verdict!r} unknown (allowed: {', '.join(CHECK_STATUSES)})")

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.name, "verdict": self.verdict, "passed": self.passed, "detail": self.detail,
                "samples_needed": self.samples_needed}

    @classmethod
    def of(cls, name: str, passed: bool, detail: str = "") -> "Check":
        """A check with no margin: PASS or FAIL."""
        return cls(name, PASS if passed else FAIL, detail)

    @classmethod
    def reported(cls, name: str, detail: str = "") -> "Check":
        """A statement measured and shown, not judged (module docstring): left out of :func:`combine`."""
        return cls(name, REPORTED, detail)

    @classmethod
    def counted(cls, name: str, failed: int, uncounted: int, detail: str = "") -> "Check":
        """A check over cells, some of which are too thinly sampled to count: FAIL when a counted cell fails,
        otherwise INCONCLUSIVE when a cell outside its band was not counted (more samples would settle it), PASS."""
        return cls(name, FAIL if failed else INCONCLUSIVE if uncounted else PASS, detail)


def _verdict_of(check: Check | Mapping[str, Any] | str) -> str:
    if isinstance(check, Check):
        return check.verdict
    if isinstance(check, Mapping):  # a check's JSON form: {"check", "passed", "detail"[, "verdict"]}
        return check.get("verdict") or (PASS if check["passed"] else FAIL)
    return check


def combine(checks: Iterable[Check | Mapping[str, Any] | str | None]) -> str:
    """The verdict of several checks — :class:`Check` objects, their JSON form (a dict with ``verdict``, or
    ``passed`` for a check with no margin) or verdict texts; None entries and :data:`REPORTED` checks are skipped:
    FAIL if any FAILs, else INCONCLUSIVE if any is, else PASS. No judged check at all is FAIL (nothing was shown)."""
    verdicts = [_verdict_of(c) for c in checks if c is not None]
    for verdict in verdicts:
        if verdict not in CHECK_STATUSES:
            raise ValueError(f"verdict {verdict!r} unknown (allowed: {', '.join(CHECK_STATUSES)})")
    verdicts = [verdict for verdict in verdicts if verdict != REPORTED]
    if not verdicts or FAIL in verdicts:
        return FAIL
    return INCONCLUSIVE if INCONCLUSIVE in verdicts else PASS


#: a measured narrowing exponent below this is taken as "the interval does not narrow with more samples"
MIN_NARROWING = 0.05
#: the power the sample count to PASS is planned for, and its normal quantile z_0.9 (two one-sided tests)
PLANNED_POWER = 0.8
_Z_POWER = 1.2815515655446004


def check_line(check: Check | Mapping[str, Any]) -> str:
    """One line of a study's table for a check (a :class:`Check` or its JSON form): its verdict, name and detail."""
    if isinstance(check, Check):
        check = check.to_dict()
    return f"  {_verdict_of(check):12s}  {check['check']}: {check['detail']}"


class Settling(NamedTuple):
    """The sample counts that would settle an INCONCLUSIVE (:func:`samples_to_settle`).

    Attributes:
        if_theory: to PASS with :data:`PLANNED_POWER` if the true value is the margin's centre (the theory).
        if_estimate: to settle it if the true value is the estimate: the interval around it then lies wholly
            inside the margin (``outcome`` PASS) or wholly outside (FAIL).
        outcome: ``PASS`` or ``FAIL``: what ``if_estimate`` samples would show.
    """

    if_theory: int | None
    if_estimate: int | None
    outcome: str | None

    @property
    def needed(self) -> int | None:
        """The count a check reports: both counts' larger when both predict PASS, else the count to PASS if the
        theory holds."""
        if self.outcome == PASS and self.if_theory is not None and self.if_estimate is not None:
            return max(self.if_theory, self.if_estimate)
        return self.if_theory


def samples_to_settle(estimate: float, interval: tuple[float, float], margin: tuple[float, float],
                      samples: int, confidence: float = 0.95, narrowing: float = 0.5) -> Settling:
    """The sample counts of the module docstring (a :class:`Settling`). ``narrowing`` is γ of the half-width's
    N^-γ: 1/2 for light-tailed errors, measured by :func:`validation.core.rate_fit.interval_narrowing` where it is
    smaller; below :data:`MIN_NARROWING` the interval is taken not to narrow (no counts)."""
    none = Settling(None, None, None)
    low, high = margin
    a, b = estimate - interval[0], interval[1] - estimate
    if not all(map(math.isfinite, (estimate, a, b, low, high))) or a < 0 or b < 0 or a + b == 0 or high <= low:
        return none
    if not narrowing >= MIN_NARROWING:
        return none
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    half_width, delta = (a + b) / 2, (high - low) / 2
    if_theory = _count(samples * ((z + _Z_POWER) * half_width / (z * delta)) ** (1 / narrowing), samples)
    # the interval [r − k a, r + k b], k = (N / N')^γ, inside the margin (r inside it) or wholly outside (r outside)
    inside = [(estimate - low) / a if a > 0 else math.inf, (high - estimate) / b if b > 0 else math.inf]
    if low < estimate < high:
        k, outcome = min(inside), PASS
    elif estimate > high and a > 0:
        k, outcome = (estimate - high) / a, FAIL
    elif estimate < low and b > 0:
        k, outcome = (low - estimate) / b, FAIL
    else:
        return Settling(if_theory, None, None)
    if not (k > 0 and math.isfinite(k)):
        return Settling(if_theory, None, None)
    k *= z / (z + _Z_POWER)  # the same planned power as if_theory: the two agree when the estimate is the centre
    return Settling(if_theory, _count(samples * k ** (-1 / narrowing), samples), outcome)


def _count(needed: float, samples: int) -> int:
    """A sample count to type: more than ``samples``, rounded up to two significant figures, capped."""
    if not needed < _MAX_REPORTED_SAMPLES:
        return _MAX_REPORTED_SAMPLES
    return max(samples + 1, _round_up(needed))


def _round_up(n: float) -> int:
    """``n`` rounded up to two significant figures (a count to type, not a false precision)."""
    n = math.ceil(n * (1 - 1e-12))  # a count that is whole up to rounding stays whole
    scale = 10 ** max(0, len(str(n)) - 2)
    return int(math.ceil(n / scale) * scale)


def interval_check(name: str, estimate: float, interval: tuple[float, float], margin: tuple[float, float],
                   samples: int, *, what: str = "the interval", confidence: float = 0.95,
                   narrowing: float | None = None) -> Check:
    """The equivalence test of a statistic's interval against ``margin`` (module docstring); ``what`` names the
    interval in the detail (e.g. "the 95% interval"); ``narrowing``: the measured γ of its half-width's N^-γ
    (None: 1/2 assumed)."""
    a, b = interval
    low, high = margin
    shown = f"{what} [{a:.3f}, {b:.3f}]"
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(estimate)):
        return Check(name, FAIL, "no finite interval")
    if low <= a and b <= high:
        return Check(name, PASS, f"{shown} lies within [{low:.3f}, {high:.3f}]")
    if b < low or a > high:
        return Check(name, FAIL, f"{shown} lies wholly outside [{low:.3f}, {high:.3f}]")
    gamma = 0.5 if narrowing is None else narrowing
    settling = samples_to_settle(estimate, interval, margin, samples, confidence, gamma)
    centre = (low + high) / 2
    how = ("N^-1/2 assumed" if narrowing is None else
           f"N^-{gamma:.2f}, measured on parts of the samples{' (heavy-tailed errors)' if gamma < 0.4 else ''}")
    if settling.if_theory is None:
        more = (f"more samples would not settle it: the interval does not narrow measurably (half-width ∝ {how})"
                if gamma < MIN_NARROWING else "more samples would not settle it")
    else:
        more = (f"if the value is {centre:g}, about {settling.if_theory:,} samples would PASS with "
                f"{PLANNED_POWER:.0%} probability")
        if settling.if_estimate is not None:
            more += (f"; if it is {estimate:.3f} as estimated, about {settling.if_estimate:,} would "
                     f"{settling.outcome}")
        more += f" (now {samples:,}; the half-width narrows as {how})"
    return Check(name, INCONCLUSIVE, f"{shown} straddles an edge of [{low:.3f}, {high:.3f}]; {more}",
                 settling.needed)


def rate_check(name: str, fit: Any, margin: tuple[float, float], samples: int, *, what: str = "the interval",
               narrowing: float | None = None) -> Check:
    """The verdict of a rate fit (:class:`validation.core.rate_fit.RateFit`) against ``margin`` (``narrowing``: as for
    :func:`interval_check`): FAIL on non-finite or zero errors; otherwise :func:`interval_check` of its interval, except that a rate fitted on fewer than
    :data:`MIN_FIT_DEPTHS` depths cannot PASS (INCONCLUSIVE, saying which depths to add) — it can still FAIL,
    when even its interval lies wholly outside the margin (an exploding error, say). An *unsettled* fit (the window
    rule's last three depths still move the rate, ``fit.unsettled``) cannot PASS either; it FAILs only when its
    interval widened by that move on both sides lies wholly outside the margin. A finite rate on fewer than
    :data:`MIN_VERDICT_SAMPLES` samples (``fit.samples``, else ``samples``; 0: not known) is INCONCLUSIVE
    (:func:`with_enough_samples`)."""
    if not fit.finite:
        why = fit.method.removeprefix("not fitted: ")
        if "fewer than two depths" in why:
            return Check(name, INCONCLUSIVE, f"no rate: {why}; {_depth_advice(fit)}")
        return Check(name, FAIL, f"no rate: {why}")
    count = getattr(fit, "samples", None) or samples  # 0: not known
    check = _finite_rate_check(name, fit, margin, samples, what=what, narrowing=narrowing)
    return with_enough_samples(check, count) if count else check


def _finite_rate_check(name: str, fit: Any, margin: tuple[float, float], samples: int, *, what: str,
                       narrowing: float | None) -> Check:
    """:func:`rate_check` of a fit with a finite rate, before the sample minimum."""
    unsettled = getattr(fit, "unsettled", None)
    if unsettled:  # the fit's own bias is about its shallowest depth's move: widen by it; it can FAIL, never PASS
        move = abs(fit.shallow_move or 0.0)
        low, high = fit.ci[0] - move, fit.ci[1] + move
        if high < margin[0] or low > margin[1]:
            return Check(name, FAIL, f"the interval [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}], widened by the unsettled fit's "
                                     f"move {move:.3f} to [{low:.3f}, {high:.3f}], lies wholly outside "
                                     f"[{margin[0]:.3f}, {margin[1]:.3f}]")
        return Check(name, INCONCLUSIVE, f"the rate {fit.rate:.3f} [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}] is unsettled: "
                                         f"{unsettled}; deeper depths (or more samples, if the move is noise) would "
                                         "settle it")
    check = interval_check(name, fit.rate, fit.ci, margin, samples, what=what, confidence=fit.confidence,
                           narrowing=narrowing)
    fitted = fit.fitted_depths
    if len(fitted) < MIN_FIT_DEPTHS and check.verdict != FAIL:
        return Check(name, INCONCLUSIVE, f"the rate {fit.rate:.3f} [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}] stands on "
                                         f"{len(fitted)} depths ({', '.join(map(str, fitted))}): a slope, not a fit; "
                                         f"{_depth_advice(fit)}")
    return check


def with_enough_samples(check: Check, samples: int, unit: str = "samples") -> Check:
    """``check``, or INCONCLUSIVE (its detail kept, and why) when it stands on fewer than :data:`MIN_VERDICT_SAMPLES`
    independent ``unit``: a bootstrap interval of so few is too narrow, and a test on so few has no power, so neither a
    FAIL nor a PASS is read off it."""
    if check.verdict == INCONCLUSIVE or samples >= MIN_VERDICT_SAMPLES:
        return check
    return Check(check.name, INCONCLUSIVE, f"{check.detail}; not counted: {samples} {unit}, fewer than "
                                           f"{MIN_VERDICT_SAMPLES}, decide nothing (docs/theory.md §6)")


def bound_check(name: str, interval: tuple[float, float], bound: float, *, at_most: bool, detail: str) -> Check:
    """A one-sided claim on a statistic with a confidence interval [a, b]: ``value ≤ bound`` (``at_most``) or
    ``value ≥ bound``. PASS when the whole interval is on the claimed side, FAIL when it is wholly on the other,
    INCONCLUSIVE when it contains the bound (more draws would settle it); a non-finite interval FAILs.
    ``detail`` describes the numbers; the rule is appended."""
    a, b = interval
    if not (math.isfinite(a) and math.isfinite(b)):
        return Check(name, FAIL, f"{detail}; no finite interval")
    sign = "≤" if at_most else "≥"
    inside, outside = (b <= bound, a > bound) if at_most else (a >= bound, b < bound)
    if inside:
        return Check(name, PASS, f"{detail}; the interval lies {sign} {bound:g}")
    if outside:
        return Check(name, FAIL, f"{detail}; the interval lies wholly on the other side of {bound:g}")
    return Check(name, INCONCLUSIVE, f"{detail}; the interval contains {bound:g}: more draws would settle it")


def _depth_advice(fit: Any) -> str:
    """What would give a fit of at least :data:`MIN_FIT_DEPTHS` depths, from why depths were left out."""
    depths: Sequence[int] = list(fit.depths)
    reasons = list(fit.exclusions) or [None] * len(depths)
    floored = [L for L, why in zip(depths, reasons) if why is not None and "floor" in why]
    windowed = [L for L, why in zip(depths, reasons) if why is not None and "pre-asymptotic" in why]
    advice = []
    if windowed:
        advice.append(f"the window rule dropped depths {', '.join(map(str, windowed))} as off the corrected model "
                      "(its lack-of-fit test is strict when the errors vary little between samples, and deeper depths "
                      "move the window with them); a straight line on fixed depths, --fit-model power-law --fit-from "
                      f"{windowed[-1]}, fits three or more")
    below = [L for L, why in zip(depths, reasons) if why is not None and "fit_from" in why]
    if below and not windowed:
        advice.append(f"depths {', '.join(map(str, below))} lie below the fit's start (--fit-from, or the pair's "
                      f"recommended one); a straight line from one depth lower, --fit-model power-law --fit-from "
                      f"{below[-1]}, fits three or more")
    if floored:
        advice.append(f"depths {', '.join(map(str, floored))} lie under the reference floor: a finer reference "
                      "(--reference-steps for an SDE pair, --rtol for an ODE pair) would add them")
    if advice:
        return "; ".join(advice)
    deeper = [depths[-1] * 2, depths[-1] * 4] if depths else []
    return f"add deeper depths (e.g. {', '.join(map(str, deeper))}) for at least {MIN_FIT_DEPTHS} fitted depths"
