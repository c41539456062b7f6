"""The rate of an error curve: least-squares rates in log–log (a power law, or corrected by the next order of the
error's expansion), the window rule that chooses the depths, the reference floor, and the verdicts against theory.
Every interval is the paired bootstrap of :mod:`validation.core.stats`. (One module of about 670 lines, a tenth of
them this docstring: the fit, its window rule and the verdict read one model of the error curve.)

**The corrected model** (``correction_order=q``). A straight line through pre-asymptotic depths is
biased: res1 at width 40 has local slopes 0.43 → 0.50 over L = 4 … 256, and the line over L ≥ 8 gives
[0.483, 0.494]. The error has an expansion e(L) = C·L^-r·(1 + c·L^-q + …) whose next order q is known
from the scheme (``Pair.next_order``). :func:`fit_rate` then fits the three parameters (a = log C, r, c)
by nonlinear least squares in log space,

    min over (a, r, c) of Σ_j (v_j − a + r·u_j − log(1 + c·L_j^-q))²,   u = log L, v = log e,

by variable projection (:func:`corrected_fit`): for fixed c it is linear in (a, r), so only the profile
in c is searched, on a grid and then by golden section, vectorised over bootstrap resamples (2000
resamples and the BCa jackknife of 500 paths × 7 depths: about 0.2 s). c is bounded by the model's own
validity: the correction's share at the shallowest fitted depth L_1, κ = c·L_1^-q, must satisfy
|κ| ≤ :data:`MAX_CORRECTION` = 1/2 (beyond it the neglected O(κ²) term is as large as the correction).

**The window rule** (fixed before any verdict; :func:`_adaptive_window`). Start from every depth ≥
``fit_from`` (default: all) above the reference floor. While more than three depths are left, drop the shallowest
one when the corrected model's correction sits on its bound |κ| = :data:`MAX_CORRECTION` (the model is
stretched past its validity, and its rate is the clamp's), or when keeping it moves the fitted rate by more than
:data:`RATE_MOVE_FRACTION` × δ (δ the verdict's tolerance, ``tolerance``) *and* that move is resolved:
|Δ| − δ/4 > :data:`WINDOW_T` standard errors of Δ (a one-sided t test at level :data:`WINDOW_LEVEL` on the batch
means of :data:`WINDOW_PARTS` parts of the samples), where Δ = r(window) − r(window without its shallowest depth)
(:func:`shallow_move`). The window's model is the corrected power law on ≥ :data:`MIN_CORRECTED_DEPTHS` = 4
depths (three parameters and a degree of freedom), else the straight line. The rule judges the rate, not the
curve: on nearly deterministic errors (ODE pairs, relative noise ~1e-5) the next terms of the expansion are
statistically significant at every depth, yet they move the rate by far less than the tolerance, and such a
depth is kept; on noisy curves (SDE pairs) a move is rarely resolved, and every depth is fitted. With fewer than
WINDOW_PARTS × :data:`WINDOW_PART_SAMPLES` = 80 samples the move cannot be tested: one above δ/4 leaves the fit
*unsettled* (it cannot PASS), as does a move that is still resolved when three depths are left. An
ill-determined c (little curvature over a short depth range) is not decided away: every bootstrap resample
refits c (on the window chosen from the full sample), so its uncertainty widens the rate's interval.
``RateFit.model``, ``rule``, ``exclusions``, ``shallow_move`` and ``lack_of_fit_p`` (a χ² test of the
residuals against their bootstrap covariance, :func:`lack_of_fit`: reported, not used) record what was done.

**The reference floor** (``floor``). An error measured against a reference cannot be told apart from the
reference's own error. Depths whose error is below ``floor_factor × floor`` are not fitted, nor is any
deeper depth (never fit through the floor). The factor depends on what ``floor`` estimates and how the
reference's error enters the measured one; the caller states it (default :data:`DEFAULT_FLOOR_FACTOR` =
10 for a floor that estimates the reference's own error). An error e measured against a reference with
error f is (e² ± f²)^½ in quadrature (independent or nested errors) or e ± f at worst (aligned ones):
at e ≥ 10 f its local slope moves by ≤ r/100 in quadrature, ≤ r/10 at worst.

Verdicts (:func:`verdict`, :mod:`validation.core.checks`): for a convergent pair an equivalence test — PASS when
the whole interval lies inside [r_theory − δ, r_theory + δ], FAIL when it lies wholly outside, INCONCLUSIVE
when it straddles an edge; for a deliberately wrong limit (an ablation) the same test on [−δ, r_excluded − δ]:
the error neither decays at the excluded rate nor grows (a limit whose error explodes is not "bounded away from
zero", it is broken). Beside it, :func:`theory_distance`: how far the rate lies from the theory value, as a
fraction of δ, and whether the interval resolves that distance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from validation.core.checks import INCONCLUSIVE, MIN_FIT_DEPTHS, Check, rate_check
from validation.core.stats import (error_curve, leave_one_out_curves, local_slopes, metric_statistic,
                                   paired_bootstrap, slope)

__all__ = [
    "RateFit", "fit_rate", "verdict", "verdict_rule", "contains_theory", "interval_narrowing", "POWER_LAW", "CORRECTED", "DEFAULT_FLOOR_FACTOR", "MAX_CORRECTION", "MIN_CORRECTED_DEPTHS", "DEFAULT_TOLERANCE", "RATE_MOVE_FRACTION", "WINDOW_LEVEL", "measured_rate_check", "corrected_fit", "lack_of_fit", "shallow_move", "theory_distance", "distance_line",
]

#: the models of a rate fit: log e = a − r log L, or log e = a − r log L + log(1 + c L^-q)
POWER_LAW = "power law"


CORRECTED = "corrected power law"


#: depths whose error is below this multiple of the reference floor are not fitted (module docstring)
DEFAULT_FLOOR_FACTOR = 10.0


#: the bound on the correction at the shallowest fitted depth, |c| L_1^-q (module docstring)
MAX_CORRECTION = 0.5


#: the fewest depths the corrected model is fitted to (3 parameters + 1 degree of freedom)
MIN_CORRECTED_DEPTHS = 4


#: the window rule never leaves fewer depths than this (a rate on two is a slope, not a fit)
MIN_WINDOW_DEPTHS = 3


#: the verdict's default tolerance δ (a rate PASSes when its interval lies within theory ± δ)
DEFAULT_TOLERANCE = 0.05


#: the window rule's practical threshold, as a fraction of δ: the shallowest depth is dropped only when keeping
#: it moves the fitted rate by more than RATE_MOVE_FRACTION × δ (:func:`shallow_move`). A quarter: the shallowest
#: kept depth then moves the rate by at most δ/4 (where the move is resolved), which leaves 3δ/4 of the margin to the
#: interval, and a depth whose local slope lies within δ/4 of the rate is never dropped (a line's slope is a weighted
#: mean of its local slopes); docs/theory.md §6
RATE_MOVE_FRACTION = 0.25


#: the window rule's level: the move must exceed the threshold at this one-sided level, by a t test on the batch
#: means of WINDOW_PARTS parts of the samples (:func:`shallow_move`), of at least WINDOW_PART_SAMPLES samples each
WINDOW_LEVEL = 0.01


WINDOW_PARTS = 8


WINDOW_PART_SAMPLES = 10


WINDOW_T = 2.997951566868529  # the 0.99 quantile of Student's t with WINDOW_PARTS − 1 = 7 degrees of freedom


#: bootstrap resamples of the lack-of-fit test
LACK_OF_FIT_RESAMPLES = 400


#: profile search: grid points over [−MAX_CORRECTION, MAX_CORRECTION], then golden-section steps
_GRID = 81


_GOLDEN_STEPS = 40


def corrected_fit(log_depths: np.ndarray, log_errors: np.ndarray, order: float,
                  bound: float = MAX_CORRECTION) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of log e = a − r log L + log(1 + κ (L/L_1)^-q) over |κ| ≤ ``bound``, along the last axis.

    Variable projection: for fixed κ, (a, r) is the straight-line fit of log e − log(1 + κ (L/L_1)^-q) on
    log L, so only the residual sum of squares' profile in κ is searched: on a grid of :data:`_GRID` points,
    then by golden section inside the best grid cell (:data:`_GOLDEN_STEPS` steps: a bracket of 1e-10).
    Every leading axis of ``log_errors`` (bootstrap resamples) is fitted at once.

    Args:
        log_depths: log L_j, increasing, shape (D,), D ≥ 3; L_1 is the first.
        log_errors: log e_j, shape (..., D).
        order: q > 0, the next-order exponent.
        bound: the largest |κ|, κ being the correction's share at L_1 (c = κ L_1^q).

    Returns:
        (r, κ, rss), each of shape ``log_errors.shape[:-1]``.
    """
    u = np.asarray(log_depths, dtype=float)
    x = np.exp(-order * (u - u[0]))  # (L/L_1)^-q: 1 at the shallowest depth
    uc = u - u.mean()
    suu = (uc * uc).sum()
    v = np.asarray(log_errors, dtype=float)

    def profile(kappa: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(slope, rss) of values − log(1 + κ x) on u; ``kappa`` broadcasts against values[..., 0]."""
        y = values - np.log1p(kappa[..., None] * x)
        y = y - y.mean(axis=-1, keepdims=True)
        b = (y * uc).sum(axis=-1) / suu
        resid = y - b[..., None] * uc
        return b, (resid * resid).sum(axis=-1)

    grid = np.linspace(-bound, bound, _GRID)
    _, rss_grid = profile(grid, v[..., None, :])  # (..., G)
    best = np.argmin(rss_grid, axis=-1)
    step = grid[1] - grid[0]
    low = np.maximum(grid[best] - step, -bound)
    high = np.minimum(grid[best] + step, bound)
    ratio = (np.sqrt(5.0) - 1) / 2
    c, d = high - ratio * (high - low), low + ratio * (high - low)
    fc, fd = profile(c, v)[1], profile(d, v)[1]
    for _ in range(_GOLDEN_STEPS):
        left = fc <= fd  # the minimum lies in [low, d]: d becomes the upper end, c the new inner point d
        low, high = np.where(left, low, c), np.where(left, d, high)
        point = np.where(left, high - ratio * (high - low), low + ratio * (high - low))
        value = profile(point, v)[1]
        c, d = np.where(left, point, d), np.where(left, c, point)
        fc, fd = np.where(left, value, fd), np.where(left, fc, value)
    kappa = (low + high) / 2
    slope_k, rss = profile(kappa, v)
    return -slope_k, kappa, rss


def _residuals(log_depths: np.ndarray, log_errors: np.ndarray, order: float | None) -> np.ndarray:
    """Residuals (shape of ``log_errors``) of the straight line (``order`` None) or of :func:`corrected_fit`."""
    u = np.asarray(log_depths, dtype=float)
    if order is None:
        y = log_errors + slope(u, log_errors)[..., None] * -u
    else:
        rate, kappa, _ = corrected_fit(u, log_errors, order)
        y = log_errors - np.log1p(kappa[..., None] * np.exp(-order * (u - u[0]))) + rate[..., None] * u
    return y - y.mean(axis=-1, keepdims=True)


def lack_of_fit(depths: Sequence[float], values: np.ndarray, metric: str, order: float | None, *,
                resamples: int = LACK_OF_FIT_RESAMPLES, seed: int = 0) -> float:
    """p-value of the lack of fit of a rate model to the error curve of ``values`` (N, D).

    The model is the straight line log e = a − r log L (``order`` None, k = 2 parameters, D ≥ 3) or the
    corrected power law of :func:`corrected_fit` (k = 3, D ≥ 4). The residual vector ρ of the fit (D
    values, in log e) lies in a (D − k)-dimensional space. Its sampling covariance Σ comes from a paired
    bootstrap (resample paths, refit, take the residuals); if the model describes the curve,
    χ² = ρᵀ Σ⁺ ρ (Σ⁺ the pseudo-inverse on Σ's D − k leading directions) is χ²-distributed with D − k
    degrees of freedom. A small p-value says the curve bends in a way the model cannot follow — typically
    at a shallow depth where higher-order terms still matter. NaN when the bootstrap is degenerate.
    """
    values = np.asarray(values, dtype=float)
    n, count = values.shape
    parameters = 2 if order is None else 3
    if count <= parameters:
        raise ValueError(f"the lack-of-fit test needs ≥ {parameters + 1} depths for this model; got {count}")
    stat = metric_statistic(metric)
    u = np.log(np.asarray(depths, dtype=float))
    residual = _residuals(u, np.log(stat(values, axis=0)), order)
    rng = np.random.default_rng(seed)
    batch = max(1, min(resamples, (1 << 23) // max(1, n * count)))
    boot = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, resamples, batch):
            index = rng.integers(0, n, (min(batch, resamples - start), n))
            boot.append(_residuals(u, np.log(stat(values[index], axis=1)), order))
    boot = np.concatenate(boot)
    boot = boot[np.all(np.isfinite(boot), axis=1)]
    if len(boot) < 10:
        return float("nan")
    eigenvalues, vectors = np.linalg.eigh(np.cov(boot.T))
    rank = count - parameters
    eigenvalues, vectors = eigenvalues[-rank:], vectors[:, -rank:]
    if not np.all(eigenvalues > 0):
        return float("nan")
    z = (vectors.T @ residual) / np.sqrt(eigenvalues)
    from scipy.special import chdtrc  # the χ² survival function (what scipy.stats.chi2.sf evaluates)

    return float(chdtrc(rank, float(z @ z)))


def _window_rates(log_depths: np.ndarray, log_errors: np.ndarray, order: float | None) -> np.ndarray:
    """The rate the fit reports on one window, along the last axis: the corrected power law of order ``order``
    on ≥ :data:`MIN_CORRECTED_DEPTHS` depths, else (or with ``order`` None) the straight line."""
    u = np.asarray(log_depths, dtype=float)
    if order is not None and len(u) >= MIN_CORRECTED_DEPTHS:
        return corrected_fit(u, log_errors, order)[0]
    return -slope(u, log_errors)


def shallow_move(depths: Sequence[float], values: np.ndarray, metric: str, order: float | None, *,
                 parts: int = WINDOW_PARTS) -> tuple[float, float]:
    """How far the shallowest depth moves the fitted rate: (Δ, its standard error) for ``values`` (N, D), D ≥ 3.

    Δ = r(depths 1…D) − r(depths 2…D), each window fitted with the model the fit would use on it (the corrected
    power law of order ``order`` on ≥ :data:`MIN_CORRECTED_DEPTHS` depths, else the straight line). Δ is what
    keeping the depth does to the reported rate — the quantity the verdict judges — however significant the
    curve's bend there is (docs/theory.md §6). Its standard error is that of batch means: Δ is refitted on each of
    ``parts`` consecutive parts of the samples, and se = sd(Δ_k)/√parts, to be compared with a t quantile on
    parts − 1 degrees of freedom. Unlike a bootstrap of all N samples, whose spread a few extreme paths of a
    heavy-tailed error (geometric Brownian motion) can understate, independent parts carry those paths' effect
    into the spread. se is NaN with fewer than :data:`WINDOW_PART_SAMPLES` samples per part.
    """
    values = np.asarray(values, dtype=float)
    if values.shape[1] < 3:
        raise ValueError(f"the shallow-depth move needs ≥ 3 depths; got {values.shape[1]}")
    u = np.log(np.asarray(depths, dtype=float))
    stat = metric_statistic(metric)

    def move_of(rows: np.ndarray) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.log(stat(rows, axis=0))
        return float(_window_rates(u, v, order) - _window_rates(u[1:], v[1:], order))

    move = move_of(values)
    size = len(values) // parts
    if size < WINDOW_PART_SAMPLES:
        return move, float("nan")
    moves = np.array([move_of(values[k * size:(k + 1) * size]) for k in range(parts)])
    if not np.all(np.isfinite(moves)):
        return move, float("nan")
    return move, float(np.std(moves, ddof=1) / math.sqrt(parts))


def _on_bound(depths: np.ndarray, errors: np.ndarray, order: float) -> bool:
    """Whether the corrected fit's correction sits on its bound |κ| = :data:`MAX_CORRECTION`: the model is
    stretched past its validity (the neglected O(κ²) term is as large as the correction), so its rate is the
    clamp's, not the curve's."""
    kappa = float(corrected_fit(np.log(depths), np.log(errors), order)[1])
    return abs(kappa) >= MAX_CORRECTION * (1 - 1e-6)


def _adaptive_window(depths: np.ndarray, values: np.ndarray, errors: np.ndarray, metric: str, order: float,
                     fitted: np.ndarray, reasons: list[str | None], seed: int,
                     tolerance: float) -> tuple[str, float | None, float | None, str | None, str]:
    """The corrected fit's window rule (module docstring), applied in place to ``fitted``/``reasons``.

    While more than three depths are left, drop the shallowest one when the corrected model's correction sits on its
    bound (:func:`_on_bound`), or when keeping it moves the fitted rate by more
    than :data:`RATE_MOVE_FRACTION` × ``tolerance`` and that move is resolved (:func:`shallow_move`: |Δ| exceeds
    the threshold by more than :data:`WINDOW_T` batch-means standard errors). The window's model is the
    corrected power law with ≥ :data:`MIN_CORRECTED_DEPTHS` depths, else the straight line. The rule never leaves
    fewer than :data:`MIN_WINDOW_DEPTHS` depths: where the shallowest of three still moves the rate by a resolved
    amount above the threshold, the fit is *unsettled* — the verdict cannot PASS, and FAILs only if the interval
    widened by that move lies wholly outside the margin (:func:`validation.core.checks.rate_check`).
    Returns (model, the final window's lack-of-fit p-value or None, its shallowest depth's move Δ or None, why the
    window is unsettled or None, rule).
    """
    threshold = RATE_MOVE_FRACTION * tolerance
    dropped, move, unsettled = 0, None, None
    while True:
        index = np.flatnonzero(fitted)
        if len(index) <= 2:
            move = None
            break
        if len(index) > MIN_WINDOW_DEPTHS and _on_bound(depths[index], errors[index], order):
            fitted[index[0]] = False  # no move to measure: the window's model is the clamp's
            reasons[index[0]] = f"pre-asymptotic: the correction reaches its bound |c| L^-q = {MAX_CORRECTION:g}"
            dropped += 1
            continue
        move, sd = shallow_move(depths[index], values[:, index], metric, order)
        excess = abs(move) - threshold
        if excess > 0 and not math.isfinite(sd):  # a move above the threshold that cannot be tested: not settled
            needed = WINDOW_PARTS * WINDOW_PART_SAMPLES
            why = (f"its batch means need ≥ {WINDOW_PARTS} parts of {WINDOW_PART_SAMPLES} samples ({needed}; these are "
                   f"{len(values)})" if len(values) < needed else "the move is not finite on every part of the samples")
            unsettled = (f"keeping the shallowest fitted depth, L = {int(depths[index[0]])}, moves the rate by "
                         f"{move:+.3g} (more than δ/{1 / RATE_MOVE_FRACTION:g} = {threshold:g}), and the window rule "
                         f"cannot test whether that is noise: {why}")
            break
        resolved = excess > 0 and (sd == 0 or excess > WINDOW_T * sd)
        moved = (f"keeping it moves the rate by {move:+.3g} (more than δ/{1 / RATE_MOVE_FRACTION:g} = {threshold:g}, by "
                 f"{excess / sd if sd > 0 else math.inf:.1f} standard errors)")
        if len(index) == MIN_WINDOW_DEPTHS:  # never below three depths: a window that still moves is unsettled
            if resolved:
                unsettled = (f"the shallowest of the {MIN_WINDOW_DEPTHS} depths left, L = {int(depths[index[0]])}, is "
                             f"still pre-asymptotic: {moved}")
            break
        if not resolved:
            break
        fitted[index[0]] = False
        reasons[index[0]] = f"pre-asymptotic: {moved}"
        dropped += 1
    index = np.flatnonzero(fitted)
    model = CORRECTED if len(index) >= MIN_CORRECTED_DEPTHS else POWER_LAW
    p_fit = None
    if len(index) > (3 if model == CORRECTED else 2):
        p_fit = lack_of_fit(depths[index], values[:, index], metric, order if model == CORRECTED else None, seed=seed)
        p_fit = p_fit if np.isfinite(p_fit) else None
    rule = (f"C L^-r (1 + c L^-{order:g}) with |c| L_1^-{order:g} ≤ {MAX_CORRECTION:g}, a straight line below "
            f"{MIN_CORRECTED_DEPTHS} depths; the shallowest depth dropped while c is on its bound or keeping the depth "
            f"moves the rate by more than δ/{1 / RATE_MOVE_FRACTION:g} = {threshold:g}, resolved (one-sided level "
            f"{WINDOW_LEVEL:g}), down to {MIN_WINDOW_DEPTHS} depths")
    outcome = f"{dropped} dropped; fitted: {model}"
    if move is not None:
        outcome += f"; the shallowest fitted depth moves the rate by {move:+.2g} ({_percent(abs(move) / tolerance)} of δ)"
    if p_fit is not None:
        outcome += f"; lack-of-fit p = {p_fit:.2g}"
    elif len(index) == 2:
        outcome += " through two depths"
    if unsettled:
        outcome += f"; unsettled: {unsettled}"
    return model, p_fit, move, unsettled, f"{rule} [{outcome}]"


@dataclass
class RateFit:
    """A fitted rate with its bootstrap interval.

    Attributes:
        rate: the fitted r in e ≍ L^-r over the fitted depths: minus the least-squares slope of log e on
            log L (``model`` = power law), or the r of e = C L^-r (1 + c L^-q) (corrected power law).
        ci: (low, high) bootstrap interval of the rate.
        confidence: its level.
        errors: e(L) for every depth (fitted or not).
        fitted: mask of depths used in the fit.
        local: local slopes between consecutive depths.
        method: how the interval was obtained.
        finite: False when no rate could be fitted — some value NaN/inf, an error zero, or fewer than two
            depths above the reference floor (``method`` says which): then rate and ci are NaN.
        depths: the depths L.
        model: :data:`POWER_LAW` or :data:`CORRECTED`.
        correction_order: q of the corrected model (None for a power law).
        correction: c of the corrected model, e = C L^-r (1 + c L^-q) (None for a power law).
        floor: the reference floor the depths were checked against (None: not checked).
        floor_factor: depths with error < floor_factor × floor are not fitted.
        exclusions: per depth, why it is not fitted (None where it is).
        rule: the fitting rule applied, in words (with any fallback taken).
        lack_of_fit_p: the corrected model's lack-of-fit p-value on the fitted depths (None for a power law).
        shallow_move: how far the shallowest fitted depth moves the rate, r(fitted) − r(fitted without it) (the
            window rule's Δ; None for a power law or two fitted depths).
        unsettled: why the window rule could not settle (the shallowest of the last three depths still moves the
            rate by a resolved amount above its threshold, or the shallowest fitted depth moves it by more than the
            threshold and too few samples cannot test that move), or None: such a rate cannot PASS.
        samples: N, the paths the interval resamples (None: not recorded). Fewer than
            :data:`validation.core.checks.MIN_VERDICT_SAMPLES` give no verdict but INCONCLUSIVE.
    """

    rate: float
    ci: tuple[float, float]
    confidence: float
    errors: np.ndarray
    fitted: np.ndarray
    local: np.ndarray
    method: str
    finite: bool = True
    depths: tuple[int, ...] = ()
    model: str = POWER_LAW
    correction_order: float | None = None
    correction: float | None = None
    floor: float | None = None
    floor_factor: float | None = None
    exclusions: tuple[str | None, ...] = ()
    rule: str = ""
    lack_of_fit_p: float | None = None
    shallow_move: float | None = None
    unsettled: str | None = None
    samples: int | None = None

    @property
    def half_width(self) -> float:
        return (self.ci[1] - self.ci[0]) / 2

    @property
    def fitted_depths(self) -> list[int]:
        return [int(L) for L, f in zip(self.depths, self.fitted) if f]

    def to_dict(self) -> dict[str, Any]:
        """The one JSON form of a rate fit, used by every study (see the shipped JSON Schema)."""
        return {
            "rate": self.rate if self.finite else None, "ci": list(self.ci) if self.finite else [None, None],
            "confidence": self.confidence, "method": self.method, "depths": list(self.depths),
            "errors": self.errors, "local_slopes": self.local, "fitted": self.fitted, "finite": bool(self.finite),
            "model": self.model, "correction_order": self.correction_order,
            "correction": self.correction if self.finite else None, "floor": self.floor,
            "floor_factor": self.floor_factor, "exclusions": list(self.exclusions), "rule": self.rule,
            "lack_of_fit_p": self.lack_of_fit_p, "shallow_move": self.shallow_move, "unsettled": self.unsettled,
        }


def _selection(depths: np.ndarray, errors: np.ndarray, fit_from: int | None, floor: np.ndarray | None,
               factor: float) -> tuple[np.ndarray, list[str | None]]:
    """The depths to fit and why each other one is not: below ``fit_from``, or at/after the first depth
    whose error is below factor × floor (every deeper depth goes too: never fit through the floor)."""
    reasons: list[str | None] = [None] * len(depths)
    for j, L in enumerate(depths):
        if fit_from is not None and L < fit_from:
            reasons[j] = f"below fit_from {fit_from}"
    if floor is not None:
        below = np.flatnonzero(errors < factor * floor)
        if below.size:
            for j in range(below[0], len(depths)):
                if reasons[j] is None:
                    reasons[j] = (f"error below {factor:g}× the reference floor" if j == below[0] or
                                  errors[j] < factor * floor[j] else "deeper than the reference floor")
    return np.array([r is None for r in reasons]), reasons


def fit_rate(
    depths: Sequence[int],
    values: np.ndarray,
    metric: str = "rms",
    fit_from: int | None = None,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    method: str = "BCa",
    correction_order: float | None = None,
    floor: np.ndarray | float | None = None,
    floor_factor: float = DEFAULT_FLOOR_FACTOR,
    tolerance: float = DEFAULT_TOLERANCE,
) -> RateFit:
    """Fit the rate of the error curve of per-sample values ``values`` (N, D).

    Rule, fixed before any verdict (module docstring): take the depths ≥ ``fit_from`` up to the first one
    whose error is below ``floor_factor × floor``. With ``correction_order=None`` fit the straight line
    log e = a − r log L to all of them (the package's rule before the corrected model, unchanged). With
    ``correction_order=q`` fit e = C L^-r (1 + c L^-q), |c| L_1^-q ≤ :data:`MAX_CORRECTION`, dropping the
    shallowest depth while keeping it moves the rate by a resolved amount above :data:`RATE_MOVE_FRACTION` ×
    ``tolerance``, the straight line once fewer than :data:`MIN_CORRECTED_DEPTHS` depths are left. The interval is the paired bootstrap of the same fit on the same depths (every resample refits
    every parameter).

    Args:
        depths: the D depths, increasing.
        values: per-sample values (N ≥ 2 rows): squared errors for ``rms``/``sup``/``mean``, signed
            differences for ``abs-mean``.
        metric: ``rms`` / ``sup`` (root mean square), ``mean`` (mean norm) or ``abs-mean`` (|mean|).
        fit_from: fit only depths ≥ this (pre-asymptotic depths dropped explicitly); None: all.
        resamples, confidence, seed, method: of the paired bootstrap (:func:`paired_bootstrap`).
        correction_order: q > 0, the next-order exponent of the corrected model (``Pair.next_order``: 1 for
            the RMS error of Euler on an ODE and of Euler–Maruyama, docs/theory.md §6); None: the straight
            line (power law).
        floor: the reference's error level (e.g. the RMS gap between two references), a number or one per
            depth; None: no depth is checked against a floor.
        floor_factor: the multiple of ``floor`` below which a depth is not fitted (module docstring).
        tolerance: δ of the verdict the rate is judged by (the window rule's threshold is a fraction of it).

    Returns:
        A :class:`RateFit`; ``finite`` is False (rate NaN, verdict FAIL) when a value is NaN/inf, an error
        is zero, or fewer than two depths are left above the floor.

    Raises:
        ValueError: fewer than two depths ≥ ``fit_from``; a bad ``correction_order``, ``floor`` or
            ``floor_factor``; a depth count that does not match ``values``.
    """
    values = np.asarray(values, dtype=float)
    depths_arr = np.asarray(depths, dtype=float)
    if values.ndim != 2 or values.shape[1] != len(depths_arr):
        raise ValueError(f"values must have shape (samples, {len(depths_arr)}) for {len(depths_arr)} depths; "
                         f"got {values.shape}")
    if correction_order is not None and not (np.isfinite(correction_order) and correction_order > 0):
        raise ValueError(f"correction_order={correction_order!r} is out of range (allowed: a finite number > 0, or "
                         "None for a power law)")
    if not (np.isfinite(floor_factor) and floor_factor > 0):
        raise ValueError(f"floor_factor={floor_factor!r} is out of range (allowed: a finite number > 0)")
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance={tolerance!r} is out of range (allowed: a finite number > 0)")
    floor_arr = None
    if floor is not None:
        floor_arr = np.broadcast_to(np.asarray(floor, dtype=float), depths_arr.shape).copy()
        if np.any(floor_arr < 0) or np.any(np.isnan(floor_arr)):
            raise ValueError(f"floor={floor!r} is out of range (allowed: numbers ≥ 0, one or one per depth)")
    errors = error_curve(values, metric)
    with np.errstate(divide="ignore", invalid="ignore"):
        local = local_slopes(depths, errors) if np.all(errors > 0) else np.full(len(depths) - 1, np.nan)
    if sum(fit_from is None or L >= fit_from for L in depths_arr) < 2:
        raise ValueError(f"fewer than two depths ≥ {fit_from} to fit a rate (depths {list(depths)})")
    fitted, reasons = _selection(depths_arr, errors, fit_from, floor_arr, floor_factor)
    nan = float("nan")
    common = dict(depths=tuple(int(d) for d in depths), correction_order=correction_order, samples=values.shape[0],
                  floor=None if floor_arr is None else float(np.max(floor_arr)),
                  floor_factor=None if floor_arr is None else float(floor_factor))

    def not_fitted(why: str, mask: np.ndarray, why_depths: list[str | None]) -> RateFit:
        return RateFit(nan, (nan, nan), confidence, errors, mask, local, f"not fitted: {why}", finite=False,
                       exclusions=tuple(why_depths), rule=f"not fitted: {why}",
                       model=POWER_LAW if correction_order is None else CORRECTED, **common)

    if not np.all(np.isfinite(values)) or np.any(errors[fitted] <= 0):
        return not_fitted("non-finite or zero errors", fitted, reasons)
    if fitted.sum() < 2:
        return not_fitted(f"fewer than two depths above {floor_factor:g}× the reference floor", fitted, reasons)

    stat = metric_statistic(metric)
    model, rule, p_fit, move, unsettled = POWER_LAW, "power law (straight line in log–log)", None, None, None
    if correction_order is not None:
        model, p_fit, move, unsettled, rule = _adaptive_window(depths_arr, values, errors, metric, correction_order,
                                                               fitted, reasons, seed, tolerance)
    if floor_arr is not None:
        rule += f"; depths below {floor_factor:g}× the reference floor not fitted"
    if fit_from is not None:
        rule += f"; depths ≥ {fit_from} only"
    index = np.flatnonzero(fitted)
    log_depths = np.log(depths_arr[index])
    columns = [values[:, j] for j in index]

    def rate_of(*cols: np.ndarray, axis: int = -1) -> np.ndarray:
        return rate_of_curve(np.stack([stat(c, axis=axis) for c in cols], axis=-1))

    def rate_of_curve(curve: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            log_curve = np.log(curve)
            if model == POWER_LAW:
                return -slope(log_depths, log_curve)
            rate_values = corrected_fit(log_depths, np.where(np.isfinite(log_curve), log_curve, 0.0),
                                        correction_order)[0]
            return np.where(np.all(np.isfinite(log_curve), axis=-1), rate_values, np.nan)

    correction = None
    if model == CORRECTED:
        rate_arr, kappa_arr, _ = corrected_fit(log_depths, np.log(errors[index]), correction_order)
        rate = float(rate_arr)
        correction = float(kappa_arr) * float(depths_arr[index[0]]) ** correction_order
    else:
        rate = float(rate_of(*columns))
    low, high, how = paired_bootstrap(columns, rate_of, resamples=resamples, confidence=confidence, seed=seed,
                                      method=method,
                                      leave_one_out=lambda data: rate_of_curve(leave_one_out_curves(data, metric)))
    return RateFit(rate, (low, high), confidence, errors, fitted, local, how, model=model, correction=correction,
                   exclusions=tuple(reasons), rule=rule, lack_of_fit_p=p_fit, shallow_move=move, unsettled=unsettled,
                   **common)


#: :func:`interval_narrowing` splits the samples into this many parts of at least ``MIN_PART_SAMPLES`` each (fewer
#: samples: not measured, 1/2 is assumed). Measured on synthetic errors (8 seeds, N = 2000): light-tailed
#: (lognormal) γ = 0.44–0.57, heavy-tailed (Pareto 1.3 factor) 0.00–0.39; one split in halves gave 0.33–0.72 and
#: −0.09–0.57, too noisy to use
NARROWING_PARTS = 8


MIN_PART_SAMPLES = 50


def interval_narrowing(fit: RateFit, values: np.ndarray, metric: str = "rms", *, resamples: int = 2000,
                       confidence: float = 0.95, seed: int = 0) -> float | None:
    """The measured exponent γ of a rate interval's half-width w(N) ∝ N^-γ (1/2 for light-tailed errors; less
    when the per-sample errors are heavy-tailed, e.g. geometric Brownian motion's): the fit's rate model is
    refitted on its fitted depths alone, on all N samples and on each of :data:`NARROWING_PARTS` consecutive
    parts, and γ = log(w̄(N/P) / w(N)) / log P with w̄ the parts' mean half-width, clipped to [0, 1/2] (a
    bootstrap costs ∝ N, so the P parts cost about one more fit). None when it cannot be measured: parts of
    fewer than :data:`MIN_PART_SAMPLES`, or fewer than three quarters of the refits with a finite interval on
    every depth. The sample counts of :func:`validation.core.checks.samples_to_settle` use it in place of 1/2."""
    values = np.asarray(values, dtype=float)
    n, parts = values.shape[0], NARROWING_PARTS
    index = np.flatnonzero(fit.fitted)
    if not fit.finite or n < parts * MIN_PART_SAMPLES or len(index) < 2:
        return None
    depths = [fit.depths[j] for j in index]
    order = fit.correction_order if fit.model == CORRECTED else None

    def half_width(rows: slice) -> float:
        refit = fit_rate(depths, values[rows][:, index], metric, resamples=resamples, confidence=confidence,
                         seed=seed, correction_order=order)
        return refit.half_width if refit.finite and refit.fitted.all() and refit.half_width > 0 else math.nan

    whole = half_width(slice(None))
    size = n // parts
    pieces = np.array([half_width(slice(k * size, (k + 1) * size)) for k in range(parts)])
    pieces = pieces[np.isfinite(pieces)]
    if not (math.isfinite(whole) and 4 * len(pieces) >= 3 * parts):
        return None
    return float(min(0.5, max(0.0, math.log(float(np.mean(pieces)) / whole) / math.log(parts))))


def measured_rate_check(name: str, fit: Any, margin: tuple[float, float], values: Any, metric: str = "rms", *,
                        resamples: int = 2000, seed: int = 0, what: str = "the interval") -> Check:
    """:func:`validation.core.checks.rate_check` from the per-sample ``values`` the fit was made on: when it is INCONCLUSIVE on enough
    depths, the half-width's narrowing exponent is measured on parts of the samples
    (:func:`interval_narrowing`) and the sample counts use it (about two more fits, only then)."""
    check = rate_check(name, fit, margin, len(values), what=what)
    if check.verdict != INCONCLUSIVE or not fit.finite or len(fit.fitted_depths) < MIN_FIT_DEPTHS:
        return check
    gamma = interval_narrowing(fit, values, metric, resamples=resamples, confidence=fit.confidence, seed=seed)
    return check if gamma is None else rate_check(name, fit, margin, len(values), what=what, narrowing=gamma)


def verdict(fit: RateFit, theory: float, tolerance: float, excluded: float | None = None, samples: int = 0) -> str:
    """``PASS``, ``FAIL`` or ``INCONCLUSIVE`` of the rate against the margin :func:`verdict_rule` — the verdict of
    :func:`validation.core.checks.rate_check` (which also says how many samples would settle an INCONCLUSIVE)."""
    return rate_check("rate", fit, verdict_rule(theory, tolerance, excluded), samples).verdict


def verdict_rule(theory: float, tolerance: float, excluded: float | None = None) -> tuple[float, float]:
    """The interval [low, high] the whole rate interval must lie in for PASS: [theory − δ, theory + δ] for
    a convergent pair; [−δ, excluded − δ] for a deliberately wrong limit (its error must stay bounded away
    from zero — not decay at the excluded rate — and must not grow either)."""
    if excluded is not None:
        return -tolerance, excluded - tolerance
    return theory - tolerance, theory + tolerance


def contains_theory(fit: RateFit, theory: float) -> bool:
    """Whether the whole interval contains the theory value itself (False when no rate was fitted): the
    "resolved" of :func:`theory_distance`."""
    low, high = fit.ci
    return bool(fit.finite and np.isfinite(low) and np.isfinite(high) and low <= theory <= high)


def theory_distance(fit: RateFit, theory: float, tolerance: float) -> dict[str, Any] | None:
    """The fit's distance to the theory value, reported beside the verdict (not part of it): d = r − θ with its
    interval [a − θ, b − θ], d as a fraction of δ, and whether the interval resolves d (excludes 0). On nearly
    deterministic curves a d of 1e-4 δ is resolved: it is the bias of the fitted model at the next orders, not a
    wrong rate — which is why the verdict judges d against δ, and this says how big it is. None: no rate."""
    low, high = fit.ci
    if not (fit.finite and np.isfinite(low) and np.isfinite(high)):
        return None
    return {"distance": fit.rate - theory, "interval": [low - theory, high - theory],
            "fraction_of_tolerance": abs(fit.rate - theory) / tolerance, "resolved": not contains_theory(fit, theory)}


def distance_line(fit: RateFit, theory: float, tolerance: float) -> str:
    """:func:`theory_distance` in words, with the digits that show where a narrow interval lies against θ (an ODE
    interval such as [0.99993, 0.99995] reads [1.000, 1.000] at three)."""
    distance = theory_distance(fit, theory, tolerance)
    if distance is None:
        return "distance to theory: no rate fitted"
    low, high = fit.ci
    digits = 3
    gap = min(abs(low - theory), abs(high - theory), high - low)
    if distance["resolved"] and gap > 0:
        digits = min(12, max(3, math.ceil(-math.log10(gap)) + 1))
    level = f"{round(100 * fit.confidence):g}%"
    shown = f"the {level} interval [{low:.{digits}f}, {high:.{digits}f}]"
    how = (f"resolved ({shown} excludes {theory:g})" if distance["resolved"] else
           f"not resolved ({shown} contains {theory:g})")
    return (f"distance to theory: r − {theory:g} = {distance['distance']:+.2g} "
            f"({_percent(distance['fraction_of_tolerance'])} of δ = {tolerance:g}); {how}; reported, not part of the verdict")


def _percent(fraction: float) -> str:
    """A share in per cent with two significant figures below 10% (0.12%, 3.3%), whole above (23%, 150%)."""
    value = 100 * fraction
    return f"{value:.0f}%" if value >= 10 else f"{value:.2g}%"
