"""Multilevel Monte Carlo (Giles 2008, 2015) on coupled depths: the level statistics, the rates α, β, γ with
intervals, Talay–Tubaro extrapolation, and the adaptive MLMC estimator.

Level ℓ = 0, 1, … has depth L_ℓ = L_0 2^ℓ. A *level sample* is P_ℓ = φ(h_{L_ℓ}) and, for ℓ ≥ 1, P_{ℓ−1} on the
**same** path (the coarse solve reads the fine path's merged steps), so Y_ℓ = P_ℓ − P_{ℓ−1} is small. With
Y_0 = P_0, the telescoping sum E[P_ℓmax] = Σ_ℓ E[Y_ℓ] is estimated by independent level means, N_ℓ samples
each. If |E[Y_ℓ]| ∝ 2^{−αℓ} (weak bias), Var[Y_ℓ] ∝ 2^{−βℓ} and the cost of a level sample C_ℓ ∝ 2^{γℓ},
then to reach a root-mean-square error ε (Giles 2015, Theorem 1):

    cost ∝ ε^-2 if β > γ,  ε^-2 (log ε)² if β = γ,  ε^{-2-(γ-β)/α} if β < γ;

plain Monte Carlo at the finest depth needed costs ε^{-2-γ/α}. Euler–Maruyama on non-commutative noise (res-1's
network) has strong order ½, so β = 1 = γ; Milstein with the path's Lévy areas has strong order 1, β = 2 > γ.

**Talay–Tubaro extrapolation** (Talay & Tubaro 1990): if the weak error has an expansion
e_L = E[φ(h_L)] − E[φ(H_1)] = a/L + b/L² + …, then 2E[φ(h_2L)] − E[φ(h_L)] has error −b/(2L²): order 2. No
reference is needed to measure either order: the successive differences e_{L_{ℓ−1}} − e_{L_ℓ} = −E[Y_ℓ] decay
as 2^{−αℓ}, and those of the extrapolated values, E[Y_ℓ] − 2E[Y_{ℓ+1}], as 2^{−2ℓ}.

This module knows nothing of networks: a level sampler is any ``sampler(level, samples, batch) -> LevelBatch``.
The adaptive estimator is Giles's algorithm (Acta Numerica 2015, §2.1; his ``mlmc.m``): MSE split
ε² = (1−θ)ε² variance + θε² squared bias, N_ℓ = ⌈√(V_ℓ/C_ℓ) Σ_k √(V_k C_k) / ((1−θ)ε²)⌉, and a level added while
the remaining bias estimate max(|E Y_L|, |E Y_{L−1}|/2^α, |E Y_{L−2}|/2^{2α}) / (2^α − 1) exceeds √θ ε. The cost
of plain Monte Carlo at the same ε is Giles's: Var[P_L] C^MC_L / ((1−θ)ε²) at the finest level L the estimator
used, where C^MC_L is the cost of one sample at that depth alone.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Callable, Sequence

import numpy as np

from validation.core.stats import slope as stats_slope
from validation.core.rate_fit import corrected_fit

__all__ = ["LevelBatch", "LevelSampler", "BatchDrawer", "serial", "BatchSums", "SumsDrawer", "serial_sums",
           "LevelSamples", "LevelRate", "MLMCEstimate", "complexity_samples",
           "telescoping_gaps",
           "level_rate", "mlmc_estimate", "consistency", "THETA"]

#: the share θ of the mean square error given to the squared bias (Giles's default)
THETA = 0.25


@dataclass(frozen=True)
class LevelBatch:
    """``samples`` level samples of one level: P_ℓ (``fine``) and P_{ℓ−1} on the same paths (``coarse``; None at
    level 0), the cost units they took (``cost``: the evaluations of the fine and the coarse solve) and the wall
    time (``seconds``). ``single``: where P_ℓ averages several fine solves (the antithetic estimator), the value of
    one of them (what plain Monte Carlo would draw); None where P_ℓ is one solve."""

    fine: np.ndarray
    coarse: np.ndarray | None
    cost: float
    seconds: float
    single: np.ndarray | None = None

    @property
    def differences(self) -> np.ndarray:
        """Y_ℓ = P_ℓ − P_{ℓ−1} (P_0 at level 0)."""
        return _differences(self.fine, self.coarse)


def _differences(fine: np.ndarray, coarse: np.ndarray | None) -> np.ndarray:
    return fine if coarse is None else fine - coarse


#: ``sampler(level, samples, batch)``: ``samples`` level samples of ``level`` from the streams of ``batch``
LevelSampler = Callable[[int, int, int], LevelBatch]
#: ``draw(calls)``: the level batches of ``calls`` — (level, samples, batch) each, as a sampler takes them — in their
#: order, computed here or shared out to workers (each batch reads its own streams, so the numbers are the same)
BatchDrawer = Callable[[Sequence[tuple[int, int, int]]], list[LevelBatch]]


def serial(sampler: LevelSampler) -> BatchDrawer:
    """The :data:`BatchDrawer` that calls ``sampler`` here, one call after the other."""
    return lambda calls: [sampler(*call) for call in calls]


@dataclass(frozen=True)
class BatchSums:
    """What the adaptive estimator keeps of a level batch: its sample count, Σ Y_ℓ, Σ Y_ℓ², cost and seconds — a
    few numbers however many samples it had (:func:`mlmc_estimate`'s memory does not grow with the samples)."""

    samples: int
    sum_y: float
    sum_y2: float
    cost: float
    seconds: float

    @classmethod
    def of(cls, batch: LevelBatch) -> "BatchSums":
        y = batch.differences
        return cls(len(y), float(np.sum(y)), float(np.sum(y * y)), batch.cost, batch.seconds)


#: ``draw(calls)``: the :class:`BatchSums` of the level batches of ``calls``, in their order (each batch reduced
#: where it was drawn, so that a round holds one batch's samples at a time per process)
SumsDrawer = Callable[[Sequence[tuple[int, int, int]]], list[BatchSums]]


def serial_sums(sampler: LevelSampler) -> SumsDrawer:
    """The :data:`SumsDrawer` that calls ``sampler`` here and reduces each batch before drawing the next."""
    return lambda calls: [BatchSums.of(sampler(*call)) for call in calls]


@dataclass
class LevelSamples:
    """Every sample of one level kept (the complexity test): P_ℓ, P_{ℓ−1} and Y_ℓ per sample, cost and time."""

    level: int
    fine: np.ndarray
    coarse: np.ndarray | None
    cost: float
    seconds: float
    single: np.ndarray | None = None

    @property
    def samples(self) -> int:
        return len(self.fine)

    @property
    def single_solve(self) -> np.ndarray:
        """One fine solve's value per sample: what plain Monte Carlo at this depth draws (``fine`` unless P_ℓ
        averages several solves)."""
        return self.fine if self.single is None else self.single

    @property
    def differences(self) -> np.ndarray:
        """Y_ℓ = P_ℓ − P_{ℓ−1} (P_0 at level 0)."""
        return _differences(self.fine, self.coarse)

    @property
    def cost_per_sample(self) -> float:
        return self.cost / self.samples

    @property
    def seconds_per_sample(self) -> float:
        return self.seconds / self.samples

    def kurtosis(self) -> float:
        """The kurtosis of Y_ℓ: a large value warns that Var[Y_ℓ] is poorly estimated from these samples (Giles)."""
        y = self.differences - self.differences.mean()
        variance = float(np.mean(y * y))
        return float(np.mean(y ** 4) / variance ** 2) if variance > 0 else math.nan


def complexity_samples(sampler: LevelSampler | None, levels: int, samples: int, batch: Callable[[int], int],
                       progress: Callable[[int], Any] | None = None, draw: BatchDrawer | None = None
                       ) -> list[LevelSamples]:
    """``samples`` level samples of each level 0 … ``levels`` − 1, drawn in batches of at most ``batch(level)``
    (batch b of level ℓ from the sampler's streams (ℓ, b)); ``progress(level)`` after each level. ``draw``: how a
    level's batches are computed (default: :func:`serial` on ``sampler``; ``sampler`` may be None when it is given)."""
    draw = draw or serial(sampler)
    out = []
    for level in range(levels):
        size = batch(level)
        parts = draw([(level, min(size, samples - start), index) for index, start in enumerate(range(0, samples, size))])
        coarse = None if parts[0].coarse is None else np.concatenate([p.coarse for p in parts])
        single = None if parts[0].single is None else np.concatenate([p.single for p in parts])
        out.append(LevelSamples(level, np.concatenate([p.fine for p in parts]), coarse,
                                sum(p.cost for p in parts), sum(p.seconds for p in parts), single))
        if progress is not None:
            progress(level)
    return out


# ------------------------------------------------------------------------------------------------ rates
@dataclass(frozen=True)
class LevelRate:
    """A rate r of a statistic s_ℓ ∝ 2^{−rℓ}, fitted by least squares of log2 s_ℓ on ℓ over ``levels``, with a
    bootstrap interval (each level's samples resampled independently). ``values``: s_ℓ at every level,
    ``standard_errors``: their standard errors, ``resolved``: which levels the statistic
    is resolved at (for a mean, |s_ℓ| ≥ 2 standard errors), ``why``: why the rate is not to be judged (too few
    levels, or a mean not resolved above Monte Carlo noise at enough of them), None when it is."""

    name: str
    rate: float
    interval: tuple[float, float]
    levels: tuple[int, ...]
    values: tuple[float, ...]
    standard_errors: tuple[float, ...]
    resolved: tuple[bool, ...]
    why: str | None = None

    @property
    def finite(self) -> bool:
        return math.isfinite(self.rate)

    @property
    def judged(self) -> bool:
        """Whether the rate stands on enough resolved levels to be checked against a theory value."""
        return self.why is None and self.finite and all(map(math.isfinite, self.interval))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rate": self.rate, "interval": list(self.interval), "levels": list(self.levels),
                "values": list(self.values),
                "standard_errors": list(self.standard_errors),
                "resolved": list(self.resolved), "why": self.why}


#: a statistic of one level's Y samples (``mean`` or ``variance``), or of two consecutive levels (``extrapolated``)
STATISTICS = ("mean", "variance", "extrapolated")

#: levels a rate stands on, at least (as the strong rates' depths)
MIN_LEVELS = 3


def _statistic(kind: str, ys: Sequence[np.ndarray], level: int) -> float:
    """The level statistic's size, |s_ℓ| (:func:`_signed`)."""
    return abs(_signed(kind, ys, level))


def _standard_error(kind: str, ys: Sequence[np.ndarray], level: int) -> float:
    """The standard error of the level statistic: σ/√N for a mean, √((m₄ − σ⁴)/N) for a variance."""
    if kind == "variance":
        y = ys[level] - np.mean(ys[level])
        return math.sqrt(max(float(np.mean(y**4)) - float(np.mean(y * y)) ** 2, 0.0) / len(y))
    if kind == "mean":
        return float(np.std(ys[level]) / math.sqrt(len(ys[level])))
    if kind == "extrapolated":
        return math.sqrt(float(np.var(ys[level])) / len(ys[level]) + 4.0 * float(np.var(ys[level + 1])) / len(ys[level + 1]))
    return None


def level_rate(name: str, kind: str, ys: Sequence[np.ndarray], first: int, *, corrected: bool = True,
               resamples: int = 2000, confidence: float = 0.95, seed: int = 0) -> LevelRate:
    """The rate of ``kind`` (:data:`STATISTICS`) of the level differences ``ys`` (ys[ℓ] = the Y_ℓ samples), fitted on
    every level ≥ ``first``.

The statistic s_ℓ — ``variance`` Var Y_ℓ, ``mean`` E Y_ℓ, ``extrapolated`` E Y_ℓ − 2 E Y_{ℓ+1}, the means signed — is
    fitted by weighted least squares, each level weighted by its inverse squared standard error, on s_ℓ = c 2^{−rℓ};
    a variance with ``corrected`` on s_ℓ = c 2^{−rℓ} (1 + c' 2^{−ℓ}), the next term of its expansion in 1/L
    (docs/theory.md §6 fits strong errors the same way: the variance of Euler's level differences is pre-asymptotic
    at the coarse levels). A mean is known too roughly to support the second coefficient (measured: the corrected
    fit's α interval on res-1 spans [−0.5, 1.7] where the plain one spans [0.66, 1.04]). A level whose mean is lost in Monte Carlo noise counts for little
    instead of being dropped (dropping levels by their observed size would bias the slope). A mean's rate stands
    only when it is resolved (|value| ≥ 2 standard errors) at :data:`MIN_LEVELS` levels or more; otherwise it is
    reported with ``why``, and judged by no one.

    The interval is the percentile interval over ``resamples`` parametric bootstrap draws: each level's statistic
    redrawn from the normal law of its estimate (its value and standard error; the levels are independent), and the
    model refitted with the same weights.
    """
    count = len(ys) - (1 if kind == "extrapolated" else 0)
    values = tuple(_statistic(kind, ys, level) for level in range(count))
    errors = [_standard_error(kind, ys, level) for level in range(count)]
    standard_errors = tuple(errors)
    resolved = tuple(bool(v > 0 and (kind == "variance" or v >= 2.0 * e)) for v, e in zip(values, errors))
    fitted = tuple(range(first, count))
    why = None
    if len(fitted) < MIN_LEVELS:
        why = f"{len(fitted)} level(s) from level {first}: fewer than {MIN_LEVELS}"
    elif sum(resolved[level] for level in fitted) < MIN_LEVELS:
        why = (f"resolved above 2 standard errors at {sum(resolved[level] for level in fitted)} of levels "
               f"{fitted[0]}…{fitted[-1]} (fewer than {MIN_LEVELS}): more samples would resolve it")
    if len(fitted) < 2:
        return LevelRate(name, math.nan, (math.nan, math.nan), fitted, values, standard_errors, resolved, why)
    x = np.asarray(fitted, float)
    signed = np.array([_signed(kind, ys, level) for level in fitted])
    deviations = np.array([errors[level] for level in fitted])
    rng = np.random.default_rng(seed)
    # the parametric bootstrap: each level's statistic redrawn from the normal law of its estimate (value, standard
    # error; the levels are independent); the extrapolated differences of consecutive levels share a level, so they
    # are formed from redrawn level means
    if kind == "extrapolated":
        means = np.array([float(np.mean(y)) for y in ys])
        mean_errors = np.array([float(np.std(y)) / math.sqrt(len(y)) for y in ys])
        drawn = means + mean_errors * rng.standard_normal((resamples, len(ys)))
        statistics = drawn[:, list(fitted)] - 2.0 * drawn[:, [level + 1 for level in fitted]]
    else:
        statistics = signed + deviations * rng.standard_normal((resamples, len(fitted)))
    if kind == "variance":
        log_levels = x * math.log(2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_values = np.log(np.vstack([signed, statistics]))
        if corrected and len(fitted) >= 4:
            fits = corrected_fit(log_levels, log_values, 1.0)[0]
        else:
            fits = -stats_slope(log_levels, log_values)
        rate, draws = float(fits[0]), fits[1:]
    else:
        weights = 1.0 / np.maximum(deviations, 1e-300) ** 2
        rate = _weighted_rate(x, signed, weights)
        bounds = (max(RATE_RANGE[0], rate - 3.0), min(RATE_RANGE[1], rate + 3.0))
        draws = np.array([_weighted_rate(x, row, weights, bounds) for row in statistics])
    tail = 100 * (1 - confidence) / 2
    draws = draws[np.isfinite(draws)]  # a variance drawn below zero (a handful of samples) has no logarithm
    low, high = np.percentile(draws, [tail, 100 - tail]) if len(draws) else (math.nan, math.nan)
    return LevelRate(name, rate, (float(low), float(high)), fitted, values, standard_errors, resolved, why)


def _signed(kind: str, ys: Sequence[np.ndarray], level: int) -> float:
    """The level statistic, signed: Var Y_ℓ, E Y_ℓ, or E Y_ℓ − 2 E Y_{ℓ+1} (:data:`STATISTICS`)."""
    if kind == "variance":
        return float(np.var(ys[level]))
    if kind == "mean":
        return float(np.mean(ys[level]))
    return float(np.mean(ys[level])) - 2.0 * float(np.mean(ys[level + 1]))


#: the search range of a weighted fit's rate
RATE_RANGE = (-2.0, 8.0)


def _weighted_rate(x: np.ndarray, values: np.ndarray, weights: np.ndarray,
                   bounds: tuple[float, float] | None = None) -> float:
    """r of the weighted least-squares fit values ≈ c 2^{−r x}: for each r the best c is linear,
    c(r) = Σ w v u / Σ w u² with u = 2^{−r x}, so r minimises the profile Σ w (v − c(r) u)² (a grid over
    :data:`RATE_RANGE` finds the basin, a bounded scalar search the minimum; with ``bounds``, the search alone)."""
    from scipy.optimize import minimize_scalar

    shifted = x - x[0]

    def loss(r: float) -> float:
        u = 2.0 ** (-r * shifted)
        c = float(np.sum(weights * values * u) / np.sum(weights * u * u))
        return float(np.sum(weights * (values - c * u) ** 2))

    if bounds is None:
        grid = np.linspace(*RATE_RANGE, 101)
        best = grid[int(np.argmin([loss(r) for r in grid]))]
        step = grid[1] - grid[0]
        bounds = (max(RATE_RANGE[0], best - step), min(RATE_RANGE[1], best + step))
    return float(minimize_scalar(loss, bounds=bounds, method="bounded", options={"xatol": 1e-5}).x)


def _level_gaps(levels: Sequence[LevelSamples]) -> list[tuple[float, float]]:
    """Per level ℓ ≥ 1: E P_{ℓ−1} from level ℓ−1's own fine solves minus E P_{ℓ−1} from level ℓ's coarse solves, and
    the standard error of that difference of two independent means."""
    out = []
    for below, level in zip(levels, levels[1:]):
        a, b = below.fine, level.coarse
        out.append((float(np.mean(a)) - float(np.mean(b)),
                    math.sqrt(float(np.var(a)) / len(a) + float(np.var(b)) / len(b))))
    return out


def consistency(levels: Sequence[LevelSamples]) -> list[float]:
    """Giles's consistency statistic per level ℓ ≥ 1: |E P_{ℓ−1} (level ℓ−1's own samples) − E P_{ℓ−1} (the coarse
    solves of level ℓ)| over 3 × the standard error of that difference. Both estimate the same expectation if the
    coarse solve of level ℓ has the law of the fine solve of level ℓ − 1 (the telescoping sum is then exact); a
    value above 1 is a difference beyond 3 standard errors."""
    return [abs(gap) / (3.0 * error) if error > 0 else (0.0 if gap == 0 else math.inf)
            for gap, error in _level_gaps(levels)]


def telescoping_gaps(levels: Sequence[LevelSamples], confidence: float = 0.95) -> list[tuple[float, float, float]]:
    """The bias of the telescoping sum at each level ℓ ≥ 1, with its interval: E P_{ℓ−1} from level ℓ−1's own fine
    solves minus E P_{ℓ−1} from level ℓ's coarse solves, (gap, low, high) at ``confidence`` (independent samples:
    a normal interval of the difference of two means). Zero when the coarse solve of level ℓ has the law of the
    fine solve of level ℓ − 1; Giles's :func:`consistency` is |gap| / (3 s.e.)."""
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    return [(gap, gap - z * error, gap + z * error) for gap, error in _level_gaps(levels)]


# ------------------------------------------------------------------------------------------------ the estimator
@dataclass
class MLMCEstimate:
    """The adaptive MLMC estimator at one accuracy ε.

    Attributes:
        accuracy: ε, the target root-mean-square error.
        value: the estimate of E[φ(H_1)], Σ_ℓ mean(Y_ℓ).
        samples: N_ℓ per level used.
        means, variances: the level means and variances of Y_ℓ (after Giles's fix-ups for tiny values).
        cost: the cost units spent (every level sample's evaluations), ``seconds`` its wall time.
        variance: the estimator's variance Σ V_ℓ / N_ℓ; ``bias_estimate``: the remaining bias estimate.
        converged: whether the bias estimate reached √θ ε before the deepest level allowed.
        mc_cost: the cost of plain Monte Carlo at the same ε: Var[P_L] C^MC_L / ((1−θ) ε²), L the finest level.
    """

    accuracy: float
    value: float
    samples: list[int]
    means: list[float]
    variances: list[float]
    cost: float
    seconds: float
    variance: float
    bias_estimate: float
    converged: bool
    mc_cost: float = math.nan

    @property
    def levels(self) -> int:
        return len(self.samples)

    @property
    def cost_ratio(self) -> float:
        """Plain Monte Carlo's cost over MLMC's, at the same ε."""
        return self.mc_cost / self.cost if self.cost > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "levels": self.levels, "cost_ratio": self.cost_ratio}


@dataclass
class _Sums:
    samples: int = 0
    sum_y: float = 0.0
    sum_y2: float = 0.0
    cost: float = 0.0
    seconds: float = 0.0

    def add(self, batch: BatchSums) -> None:
        self.samples += batch.samples
        self.sum_y += batch.sum_y
        self.sum_y2 += batch.sum_y2
        self.cost += batch.cost
        self.seconds += batch.seconds


def mlmc_estimate(sampler: LevelSampler | None, accuracy: float, *, alpha: float, beta: float,
                  cost_per_sample: Callable[[int], float], initial_samples: int = 1000, min_levels: int = 3,
                  max_levels: int = 12, batch: Callable[[int], int] = lambda level: 65536,
                  theta: float = THETA, draw: SumsDrawer | None = None) -> MLMCEstimate:
    """Giles's adaptive MLMC estimator to root-mean-square error ``accuracy`` (module docstring).

    ``alpha``, ``beta``: the rates used to extrapolate the bias and the variance of a level not yet sampled (the
    complexity test's measured ones); ``cost_per_sample(level)``: the cost units of one level sample (used to
    choose N_ℓ before a level is sampled); ``batch(level)``: samples per sampler call. Samples are
    added in calls to ``sampler(level, n, index)`` with ``index`` counting that level's calls, so a run is
    reproducible. Stops adding levels at ``max_levels`` (then ``converged`` is False). ``draw``: how the calls of
    one round are computed and reduced (default: :func:`serial_sums` on ``sampler``, which may be None when it is
    given); their :class:`BatchSums` are added in call order, so the memory held does not grow with the samples.
    """
    draw = draw or serial_sums(sampler)
    alpha, beta = max(alpha, 0.5), max(beta, 0.5)
    sums = [_Sums() for _ in range(min_levels)]
    calls = [0] * min_levels
    extra = [initial_samples] * min_levels
    converged = True
    while sum(extra) > 0:
        round_calls = []
        for level, count in enumerate(extra):
            while count > 0:
                size = min(count, batch(level))
                round_calls.append((level, size, calls[level]))
                calls[level] += 1
                count -= size
        for (level, _, _), drawn in zip(round_calls, draw(round_calls)):
            sums[level].add(drawn)
        means, variances, costs = _level_estimates(sums, alpha, beta, cost_per_sample)
        extra = _extra_samples(sums, variances, costs, accuracy, theta)
        if all(e <= 0.01 * s.samples for e, s in zip(extra, sums)):
            if _remaining_bias(means, alpha) > math.sqrt(theta) * accuracy:
                if len(sums) == max_levels:
                    converged = False
                    break
                variances.append(variances[-1] / 2**beta)
                costs.append(cost_per_sample(len(sums)))
                sums.append(_Sums())
                calls.append(0)
                extra = _extra_samples(sums, variances, costs, accuracy, theta)
                extra[-1] = max(extra[-1], 1)
    signed = [s.sum_y / s.samples for s in sums]
    return MLMCEstimate(
        accuracy=accuracy, value=float(sum(signed)), samples=[s.samples for s in sums], means=signed,
        variances=variances, cost=float(sum(s.cost for s in sums)), seconds=float(sum(s.seconds for s in sums)),
        variance=float(sum(v / s.samples for v, s in zip(variances, sums))),
        bias_estimate=_remaining_bias(means, alpha), converged=converged)


def _extra_samples(sums: Sequence[_Sums], variances: Sequence[float], costs: Sequence[float], accuracy: float,
                   theta: float) -> list[int]:
    """The samples each level lacks: Giles's N_ℓ = ⌈√(V_ℓ/C_ℓ) Σ_k √(V_k C_k) / ((1−θ)ε²)⌉ less those it has."""
    total = sum(math.sqrt(v * c) for v, c in zip(variances, costs))
    wanted = [math.ceil(math.sqrt(v / c) * total / ((1 - theta) * accuracy**2)) for v, c in zip(variances, costs)]
    return [max(0, w - s.samples) for w, s in zip(wanted, sums)]


def _level_estimates(sums: Sequence[_Sums], alpha: float, beta: float, cost_per_sample: Callable[[int], float]
                     ) -> tuple[list[float], list[float], list[float]]:
    """|E Y_ℓ|, Var Y_ℓ and the cost per sample, with Giles's fix-up for a level whose mean or variance is estimated
    as (nearly) zero from few samples: at least half the value its predecessor's rate predicts."""
    means = [abs(s.sum_y / s.samples) for s in sums]
    variances = [max(0.0, s.sum_y2 / s.samples - (s.sum_y / s.samples) ** 2) for s in sums]
    for level in range(2, len(sums)):
        means[level] = max(means[level], 0.5 * means[level - 1] / 2**alpha)
        variances[level] = max(variances[level], 0.5 * variances[level - 1] / 2**beta)
    costs = [s.cost / s.samples if s.samples else cost_per_sample(level) for level, s in enumerate(sums)]
    return means, variances, costs


def _remaining_bias(means: Sequence[float], alpha: float) -> float:
    """Giles's estimate of the bias left at the finest level: max(|E Y_L|, |E Y_{L−1}|/2^α, |E Y_{L−2}|/2^{2α}) / (2^α − 1)
    (levels ≥ 1 only: Y_0 = P_0 is not a difference)."""
    tail = [means[level] / 2 ** (alpha * (len(means) - 1 - level)) for level in range(max(1, len(means) - 3), len(means))]
    return max(tail) / (2**alpha - 1)
