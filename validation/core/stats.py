"""Rates from per-sample values: the one paired bootstrap, least-squares rates in log–log, local slopes,
and the verdicts.

For depths L_1 < … < L_D and per-sample values X_{i,j} (for a strong error the squared error
‖h^{(i)}_{L_j} − H^{(i)}_1‖², for a weak error the difference f(h^{(i)}_{L_j}) − f(H^{(i)}_1)), the
error of depth L_j is a statistic of the sample — the RMS e_j = (mean_i X_{i,j})^½, the mean norm
mean_i X_{i,j}^½, or the absolute mean |mean_i X_{i,j}| — and the rate r is minus the least-squares slope
of log e_j on log L_j:

    r = −Σ_j (u_j − ū)(v_j − v̄) / Σ_j (u_j − ū)²,   u = log L, v = log e.

The errors of different depths come from the *same* paths, so they are strongly correlated; the
regression's own standard error ignores that and is far too small (docs/theory.md §6). Every interval in
the package therefore comes from one **paired bootstrap** (:func:`paired_bootstrap`): resample paths i
with replacement, the same indices at every depth, and recompute the statistic. It is
``scipy.stats.bootstrap(..., paired=True)``'s algorithm with its numbers (written out, so that a study's process
need not import ``scipy.stats``), vectorised, with the bias-corrected and accelerated (BCa) interval where it is
affordable and the percentile interval where BCa's jackknife (O(N²) work) is not — the weak errors, with 10⁴–10⁵
paths, and the medians of the regime studies.

The rate fit built on it — the corrected model, the window rule, the reference floor and the verdicts — is
:mod:`validation.core.rate_fit`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np


__all__ = [
    "STATISTICS", "MEAN_FORMS", "METRIC_HELP", "leave_one_out_curves", "error_curve", "slope", "local_slopes", "paired_bootstrap", "depth_intervals", "percentile_interval", "resampled_interval", "resampled_interval_batched", "resampled_rows", "SlopeFit", "slope_fit", "load_fit_libraries",
]


def load_fit_libraries() -> None:
    """Import what the fits use and this module imports only at the first fit (``scipy.special``, 0.2 s): a
    process waiting on its workers calls it meanwhile (:func:`validation.core.workers.run_tasks`)."""
    import scipy.special  # noqa: F401


#: the error statistics of an array of per-sample values: ``rms`` (values are squared errors), ``mean`` (mean norm;
#: values are squared errors), ``abs-mean`` (|mean|; values are signed differences, e.g. of a weak error). Each
#: statistic is outer(mean(inner(x))), given here as (inner, outer): the one definition of a metric, from which
#: :data:`STATISTICS` evaluates it and :func:`leave_one_out_curves` gives its N leave-one-out values in O(N),
#: mean_(i) = (Σ_k inner(x_k) − inner(x_i)) / (N − 1)
MEAN_FORMS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]] = {
    "rms": (lambda x: x, np.sqrt),
    "mean": (np.sqrt, lambda m: m),
    "abs-mean": (lambda x: x, np.abs),
}


def _mean_form_statistic(inner: Callable[[np.ndarray], np.ndarray],
                         outer: Callable[[np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    return lambda x, axis=-1: outer(np.mean(inner(x), axis=axis))


#: each metric's statistic along ``axis``
STATISTICS: dict[str, Callable[..., np.ndarray]] = {name: _mean_form_statistic(inner, outer)
                                                   for name, (inner, outer) in MEAN_FORMS.items()}
#: what each error metric of the strong studies measures (``sup`` squared errors use the RMS statistic)
METRIC_HELP = {
    "rms": "(E||h_L - H_1||^2)^1/2",
    "mean": "E||h_L - H_1||",
    "sup": "(E max_k ||h_k - H_k/L||^2)^1/2",
}


def metric_statistic(metric: str) -> Callable[..., np.ndarray]:
    """The statistic of a metric (``sup`` is the RMS of the sup-over-grid squared errors)."""
    name = "rms" if metric == "sup" else metric
    if name not in STATISTICS:
        raise ValueError(f"metric {metric!r} unknown (allowed: rms, mean, sup, abs-mean)")
    return STATISTICS[name]


def leave_one_out_curves(data: np.ndarray, metric: str = "rms") -> np.ndarray:
    """The error curves of the N leave-one-out samples, (N, D), from per-sample values ``data`` (D, N): row i is
    the metric's statistic of every column without its value i, in O(N D) through the statistic's mean form
    (:data:`MEAN_FORMS`), where leaving each row out in turn costs O(N² D). The two agree to rounding (a few
    units in the last place; tests/test_bootstrap.py)."""
    inner, outer = MEAN_FORMS["rms" if metric == "sup" else metric]
    transformed = inner(np.asarray(data, dtype=float))
    n = transformed.shape[-1]
    return outer((transformed.sum(axis=-1, keepdims=True) - transformed) / (n - 1)).T


def error_curve(values: np.ndarray, metric: str = "rms") -> np.ndarray:
    """The error of each depth from per-sample values of shape (N, D)."""
    return metric_statistic(metric)(np.asarray(values, dtype=float), axis=0)


def slope(log_depths: np.ndarray, log_errors: np.ndarray) -> np.ndarray:
    """Least-squares slope of log_errors (…, D) on log_depths (D,), along the last axis."""
    u = log_depths - log_depths.mean()
    v = log_errors - log_errors.mean(axis=-1, keepdims=True)
    return (v * u).sum(axis=-1) / (u * u).sum()


def local_slopes(depths: Sequence[int], errors: np.ndarray) -> np.ndarray:
    """−Δlog e / Δlog L between consecutive depths (D − 1 values)."""
    return -np.diff(np.log(errors)) / np.diff(np.log(np.asarray(depths, dtype=float)))


def paired_bootstrap(
    columns: Sequence[np.ndarray],
    statistic: Callable[..., np.ndarray],
    *,
    resamples: int,
    confidence: float,
    seed: int,
    method: str = "BCa",
    leave_one_out: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[float, float, str]:
    """The package's one bootstrap: an interval for ``statistic(*columns)`` resampling rows (paths).

    ``scipy.stats.bootstrap(columns, statistic, paired=True, vectorized=True, …)``'s algorithm, written out here
    with its draws and arithmetic (SciPy 1.17), so that the intervals are the numbers SciPy gave, without importing
    ``scipy.stats`` (half a second of every study's process; ``scipy.special`` gives the normal quantiles):

    * resample b draws N row indices uniformly with replacement (``default_rng(seed).integers(0, N, (batch, N))``,
      batch by batch) and evaluates θ*_b = statistic(the columns at those rows);
    * **percentile**: the (1 − c)/2 and (1 + c)/2 quantiles of the θ*_b (Hyndman–Fan type 7, linear);
    * **BCa** (Efron & Tibshirani 1993, §14.3 and eq. 15.36): the quantiles Φ(ẑ₀ + (ẑ₀ + z_α)/(1 − â(ẑ₀ + z_α)))
      with the bias ẑ₀ = Φ⁻¹(#{θ*_b < θ̂} + #{θ*_b ≤ θ̂})/(2B)) and the acceleration â = Σ U_i³ / (6 (Σ U_i²)^{3/2}),
      U_i = (N − 1)(θ̄_(·) − θ_(i)) from the N leave-one-out values θ_(i) (the jackknife, O(N²) work).
      tests/test_bootstrap.py compares both with ``scipy.stats.bootstrap``.

    Args:
        columns: D arrays of N values each, one per depth; row i of every column belongs to path i, and
            a resample draws the same paths for every column.
        statistic: ``statistic(*columns, axis=-1)``, vectorised: each column may carry leading batch axes.
        resamples: bootstrap resamples (≥ 1).
        confidence: interval level in (0, 1).
        seed: seed of the resampling (numpy ``default_rng``).
        method: ``"BCa"`` (falls back to percentile when the BCa interval is degenerate) or
            ``"percentile"``.
        leave_one_out: the N jackknife values θ_(i) from the data (D, N) in one call, for a statistic whose
            leave-one-out values have a closed form (a function of column means: :func:`leave_one_out_curves`,
            O(N D)); None evaluates ``statistic`` on each leave-one-out sample (O(N² D): SciPy's way, 20 of the
            35 s of ``python -m validation.solvers --problem gbm`` at 8000 paths).

    Returns:
        (low, high, description of the method used); (nan, nan, …) when the bootstrap distribution has
        non-finite values.
    """
    if method not in ("BCa", "percentile"):
        raise ValueError(f"bootstrap method {method!r} unknown (allowed: BCa, percentile)")
    data = np.stack([np.asarray(column, dtype=float) for column in columns])  # (D, N): a row index picks a path
    n = data.shape[1]
    if n < 2:
        raise ValueError(f"the bootstrap needs at least 2 paired rows; got {n}")
    # keep the resampled data near 2^23 numbers at a time
    batch = max(1, min(resamples, (1 << 23) // max(1, n * len(columns))))
    rng = np.random.default_rng(seed)
    replicates = np.concatenate([
        np.reshape(statistic(*data[:, rng.integers(0, n, (min(batch, resamples - start), n))], axis=-1), -1)
        for start in range(0, resamples, batch)])
    alpha = (1 - confidence) / 2
    if method == "BCa":
        try:
            low, high = _type7_quantiles(replicates, _bca_levels(data, statistic, replicates, alpha, batch,
                                                                 leave_one_out))
            if np.isfinite(low) and np.isfinite(high):
                return float(low), float(high), "paired bootstrap (BCa)"
        except (ValueError, FloatingPointError):
            pass
    if not np.all(np.isfinite(replicates)):
        return float("nan"), float("nan"), "paired bootstrap (percentile; non-finite resamples)"
    low, high = _type7_quantiles(replicates, np.array([alpha, 1 - alpha]))
    return float(low), float(high), "paired bootstrap (percentile)"


def _bca_levels(data: np.ndarray, statistic: Callable[..., np.ndarray], replicates: np.ndarray, alpha: float,
                batch: int, leave_one_out: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """The two BCa levels Φ(ẑ₀ + (ẑ₀ ± z)/(1 − â(ẑ₀ ± z))) of :func:`paired_bootstrap` (SciPy's ``_bca_interval``,
    its expressions in its order)."""
    from scipy.special import ndtr, ndtri

    n = data.shape[1]
    theta_hat = statistic(*data, axis=-1)
    below = np.count_nonzero(replicates < theta_hat) + np.count_nonzero(replicates <= theta_hat)
    z0_hat = ndtri(np.float64(below) / (2 * len(replicates)))
    if leave_one_out is not None:
        jackknife = np.reshape(leave_one_out(data), -1)
    else:
        rows = np.arange(n - 1)
        jackknife = np.concatenate([
            np.reshape(statistic(*data[:, rows + (rows >= left[:, None])], axis=-1), -1)  # row `left` left out
            for left in (np.arange(start, min(start + batch, n)) for start in range(0, n, batch))])
    size = float(n)
    spread = (size - 1) * (np.mean(jackknife, axis=-1, keepdims=True) - jackknife)
    a_hat = 1 / 6 * (0 + np.sum(spread**3, axis=-1) / size**3) / (0 + np.sum(spread**2, axis=-1) / size**2)**(3 / 2)
    z_alpha = float(ndtri(alpha))
    levels = []
    for z in (z_alpha, -z_alpha):
        shifted = z0_hat + z
        levels.append(ndtr(z0_hat + shifted / (1 - a_hat * shifted)))
    return np.array(levels)


def _type7_quantiles(values: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The quantiles at ``levels`` of ``values`` (1-D), Hyndman–Fan type 7 (linear interpolation between order
    statistics), in the arithmetic of ``scipy.stats.quantile``; NaN where a level is outside [0, 1] or NaN, or where
    a value is NaN."""
    y = np.sort(values)
    levels = np.asarray(levels, dtype=float)
    invalid = (levels > 1) | (levels < 0) | np.isnan(levels)
    p = np.where(invalid, 0.5, levels)
    size = float(len(y))
    position = p * size + (1 - p)
    upper = position // 1
    lower = upper - 1
    weight = np.where(lower < 0, 0.0, position % 1)
    lower, upper = np.clip(lower, 0.0, size - 1), np.clip(upper, 0.0, size - 1)
    result = (1 - weight) * y[lower.astype(np.int64)] + weight * y[upper.astype(np.int64)]
    return np.where(invalid | np.any(np.isnan(y)), np.nan, result)


@dataclass(frozen=True)
class SlopeFit:
    """The least-squares slope of y_j = per_x(samples at x_j) on x_j, with its bootstrap interval
    (:func:`slope_fit`). ``low``, ``high``: the interval (nan when the bootstrap had non-finite resamples);
    ``method``: how it was made; ``values``: the y_j of the full samples. The independent bootstrap also gives
    ``intervals`` (each y_j's own percentile interval) and ``finite`` (the fraction of resamples whose slope is
    finite); the paired one leaves them None."""

    slope: float
    low: float
    high: float
    method: str
    values: tuple[float, ...]
    intervals: tuple[tuple[float, float], ...] | None = None
    finite: float | None = None


def resampled_rows(statistic: Callable[[np.ndarray], np.ndarray], rows: np.ndarray, resamples: int,
                   rng: np.random.Generator, *, cells: bool = False) -> np.ndarray:
    """``statistic`` of ``resamples`` resamples of the rows of ``rows`` (N, …) drawn with replacement from ``rng``,
    evaluated in batches of about 2^22 numbers: ``statistic`` maps (batch, N, …) to (batch,); returns (resamples,).

    ``cells``: ``rows`` is (N, G) and each of its G columns is resampled on its own (its N rows are independent of
    the other columns' — e.g. networks trained at G different learning rates), one (N, G) index array per resample.
    """
    n = len(rows)
    step = max(1, (1 << 22) // max(1, rows.size))
    if not cells:
        return np.concatenate([statistic(rows[rng.integers(0, n, (min(step, resamples - i), n))])
                               for i in range(0, resamples, step)])
    return np.concatenate([statistic(np.take_along_axis(rows[None], rng.integers(0, n, (min(step, resamples - i),
                                                                                         *rows.shape)), axis=1))
                           for i in range(0, resamples, step)])


def slope_fit(x: np.ndarray, samples: Sequence[np.ndarray], per_x: Callable[..., np.ndarray], *, resamples: int,
              confidence: float, seed: int = 0, method: str = "BCa", rng: np.random.Generator | None = None,
              nonfinite_slope: float | None = None, cells: bool = False) -> SlopeFit:
    """The package's one slope fit with a bootstrap interval: y_j = ``per_x``(samples at x_j), and the least-squares
    slope of y on x (:func:`slope`; x is usually log L or log κ, and y a log of a mean, a median or a mean of logs).

    Two ways to resample, after how the samples were drawn:

    * **paired** (``rng`` None): the samples at every x share their rows (row i is network i, path i or replicate i
      at every x), and a resample draws the same rows at every x — :func:`paired_bootstrap` with ``seed`` and
      ``method``; ``per_x(column, axis=-1)`` maps a column of N values (with leading batch axes) to y;
    * **independent** (``rng`` given): the x_j are independent samples, each resampled on its own from ``rng`` in
      the order of x (:func:`resampled_rows`), and the interval is the percentile one; ``per_x(rows)`` maps
      (batch, N, …) to (batch,) and a plain (N, …) array to a scalar; with ``cells`` each column of a sample
      (N, G) is resampled on its own (:func:`resampled_rows`).

    ``nonfinite_slope``: the slope when some y is not finite (e.g. +inf for a median that overflowed), in the point
    estimate and in every resample; None leaves the arithmetic's own nan or inf.
    """
    x = np.asarray(x, dtype=float)

    def line(ys: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            slopes = slope(x, ys)
        if nonfinite_slope is None:
            return slopes
        return np.where(np.all(np.isfinite(ys), axis=-1), slopes, nonfinite_slope)

    if rng is None:
        columns = list(samples)

        def statistic(*cols: np.ndarray, axis: int = -1) -> np.ndarray:
            with np.errstate(divide="ignore", invalid="ignore"):
                return line(np.stack([per_x(c, axis=axis) for c in cols], axis=-1))

        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.array([float(per_x(c, axis=-1)) for c in columns])
        low, high, how = paired_bootstrap(columns, statistic, resamples=resamples, confidence=confidence, seed=seed,
                                          method=method)
        return SlopeFit(float(statistic(*columns)), low, high, how, tuple(values.tolist()))
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.array([float(per_x(rows)) for rows in samples])
        replicates = np.stack([resampled_rows(per_x, rows, resamples, rng, cells=cells) for rows in samples], axis=-1)
        slopes = line(replicates)
    low, high = percentile_interval(slopes, confidence)
    intervals = tuple(tuple(percentile_interval(replicates[:, j], confidence)) for j in range(replicates.shape[1]))
    return SlopeFit(float(line(values)), low, high, "independent bootstrap (percentile)", tuple(values.tolist()),
                    intervals, float(np.mean(np.isfinite(slopes))))


def percentile_interval(replicates: np.ndarray, confidence: float = 0.95) -> list[float]:
    """The percentile interval [q_(1−c)/2, q_(1+c)/2] of bootstrap replicates, non-finite ones ignored
    ([nan, nan] when none is finite)."""
    values = np.asarray(replicates, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return [math.nan, math.nan]
    # rounded: (1 − 0.95)/2 is 0.025000000000000022 in floating point, and the quantile would move in its last bits
    low, high = round((1 - confidence) / 2, 12), round((1 + confidence) / 2, 12)
    return [float(np.quantile(values, low)), float(np.quantile(values, high))]


def resampled_interval(statistic: Callable[[np.ndarray], float], n: int, resamples: int, rng: np.random.Generator,
                       confidence: float = 0.95) -> list[float]:
    """The percentile bootstrap of a statistic of resampled rows, for statistics that :func:`paired_bootstrap`'s
    vectorised form does not suit (a principal-component share, a tail probability): ``statistic(rows)`` of an
    index array of n rows drawn with replacement from ``rng``, ``resamples`` times; :func:`percentile_interval`."""
    return percentile_interval(np.array([statistic(rng.integers(0, n, n)) for _ in range(resamples)]), confidence)


def resampled_interval_batched(statistic: Callable[[Any], Any], x: np.ndarray, resamples: int,
                               rng: np.random.Generator, confidence: float = 0.95) -> list[float]:
    """:func:`resampled_interval` for a statistic batched in torch: ``statistic`` maps (R, n, K) resampled rows
    of ``x`` (n, K) to (R,) values; the resamples are evaluated in chunks of about 2^23 numbers."""
    import torch

    data = torch.as_tensor(x, dtype=torch.float64)
    n, k = data.shape
    index = torch.as_tensor(rng.integers(0, n, (resamples, n)))
    step = max(1, (1 << 23) // (n * k))
    values = torch.cat([statistic(data[index[i:i + step]]) for i in range(0, resamples, step)])
    return percentile_interval(values.numpy(), confidence)


def depth_intervals(
    values: np.ndarray, metric: str = "rms", confidence: float = 0.95, resamples: int = 1000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A percentile interval of e(L) at each depth (the shaded bands of the plots), from the same paired
    bootstrap: the same seed draws the same resampled paths for every depth."""
    values = np.asarray(values, dtype=float)
    stat = metric_statistic(metric)
    bounds = [paired_bootstrap([values[:, j]], stat, resamples=resamples, confidence=confidence, seed=seed,
                               method="percentile")[:2] for j in range(values.shape[1])]
    low, high = np.array(bounds, dtype=float).reshape(-1, 2).T
    return low, high
