"""Rates from per-sample errors: least-squares fit in log–log, paired bootstrap, local slopes, verdict.

For depths L_1 < … < L_D and per-sample squared errors X_{i,j} = ‖h^{(i)}_{L_j} − H^{(i)}_1‖², the
error of depth L_j is a statistic of the sample, e.g. the RMS e_j = (mean_i X_{i,j})^½, and the rate r
is minus the least-squares slope of log e_j on log L_j:

    r = −Σ_j (u_j − ū)(v_j − v̄) / Σ_j (u_j − ū)²,   u = log L, v = log e.

The errors of different depths come from the *same* paths, so they are strongly correlated; the
regression's own standard error ignores that and is far too small (THEORY §6). The interval is a
**paired bootstrap**: resample paths i with replacement, the same indices at every depth, recompute
r. ``scipy.stats.bootstrap(..., paired=True, method="BCa")`` does exactly that, with the
bias-corrected and accelerated interval (jackknife acceleration), which is second-order accurate; we
use it rather than hand-written resampling.

Verdict (an equivalence test): PASS when the whole interval lies inside [r_theory − δ, r_theory + δ].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np
from scipy import stats as _stats

__all__ = [
    "METRICS", "error_curve", "slope", "local_slopes", "RateFit", "fit_rate", "verdict", "depth_intervals",
]

Metric = Literal["rms", "mean", "sup"]

#: error statistics of a (…, N) array of squared errors, along ``axis``.
METRICS: dict[str, Callable[..., np.ndarray]] = {
    "rms": lambda sq, axis=-1: np.sqrt(np.mean(sq, axis=axis)),
    "mean": lambda sq, axis=-1: np.mean(np.sqrt(sq), axis=axis),
}
METRIC_HELP = {
    "rms": "(E||h_L - H_1||^2)^1/2",
    "mean": "E||h_L - H_1||",
    "sup": "(E max_k ||h_k - H_k/L||^2)^1/2",
}


def error_curve(sq: np.ndarray, metric: str = "rms") -> np.ndarray:
    """The error of each depth from squared errors of shape (N, D): RMS or mean norm (``sup`` squared
    errors use the RMS statistic)."""
    return METRICS["mean" if metric == "mean" else "rms"](sq, axis=0)


def slope(log_depths: np.ndarray, log_errors: np.ndarray) -> np.ndarray:
    """Least-squares slope of log_errors (…, D) on log_depths (D,), along the last axis."""
    u = log_depths - log_depths.mean()
    v = log_errors - log_errors.mean(axis=-1, keepdims=True)
    return (v * u).sum(axis=-1) / (u * u).sum()


def local_slopes(depths: list[int], errors: np.ndarray) -> np.ndarray:
    """−Δlog e / Δlog L between consecutive depths (D − 1 values)."""
    return -np.diff(np.log(errors)) / np.diff(np.log(np.asarray(depths, dtype=float)))


@dataclass
class RateFit:
    """A fitted rate with its bootstrap interval.

    Attributes:
        rate: −slope of log e on log L over the fitted depths.
        ci: (low, high) bootstrap interval of the rate.
        confidence: its level.
        errors: e(L) for every depth (fitted or not).
        fitted: mask of depths used in the fit.
        local: local slopes between consecutive depths.
        method: how the interval was obtained.
        finite: False when some error is NaN/inf (then no rate is fitted: rate and ci are NaN).
    """

    rate: float
    ci: tuple[float, float]
    confidence: float
    errors: np.ndarray
    fitted: np.ndarray
    local: np.ndarray
    method: str
    finite: bool = True

    @property
    def half_width(self) -> float:
        return (self.ci[1] - self.ci[0]) / 2


def fit_rate(
    depths: list[int],
    sq: np.ndarray,
    metric: str = "rms",
    fit_from: int | None = None,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> RateFit:
    """Fit the rate of the error curve of per-sample squared errors ``sq`` (N, D).

    Args:
        depths: the D depths.
        sq: per-sample squared errors (N ≥ 2 rows).
        metric: ``rms`` / ``sup`` (root-mean-square) or ``mean`` (mean norm).
        fit_from: fit only depths ≥ this (pre-asymptotic depths dropped explicitly); None: all.
        resamples: bootstrap resamples.
        confidence: interval level.
        seed: bootstrap seed (numpy Generator).
    """
    sq = np.asarray(sq, dtype=float)
    depths_arr = np.asarray(depths, dtype=float)
    errors = error_curve(sq, metric)
    local = local_slopes(depths, errors) if np.all(errors > 0) else np.full(len(depths) - 1, np.nan)
    fitted = depths_arr >= (fit_from or 0)
    nan = float("nan")
    if not np.all(np.isfinite(sq)) or np.any(errors[fitted] <= 0):
        return RateFit(nan, (nan, nan), confidence, errors, fitted, local, "not fitted: non-finite or zero errors",
                       finite=False)
    if fitted.sum() < 2:
        raise ValueError(f"fewer than two depths ≥ {fit_from} to fit a rate (depths {list(depths)})")
    log_depths = np.log(depths_arr[fitted])
    columns = [sq[:, j] for j in np.flatnonzero(fitted)]
    stat = METRICS["mean" if metric == "mean" else "rms"]

    def rate_of(*cols: np.ndarray, axis: int = -1) -> np.ndarray:
        curve = np.stack([stat(c, axis=axis) for c in cols], axis=-1)
        return -slope(log_depths, np.log(curve))

    rate = float(rate_of(*columns))
    method = "paired bootstrap (BCa)"
    rng = np.random.default_rng(seed)
    try:
        result = _stats.bootstrap(
            columns, rate_of, paired=True, vectorized=True, n_resamples=resamples,
            confidence_level=confidence, method="BCa", random_state=rng,
        )
        low, high = result.confidence_interval
        if not (np.isfinite(low) and np.isfinite(high)):
            raise ValueError("degenerate BCa interval")
    except (ValueError, FloatingPointError):
        method = "paired bootstrap (percentile)"
        result = _stats.bootstrap(
            columns, rate_of, paired=True, vectorized=True, n_resamples=resamples,
            confidence_level=confidence, method="percentile", random_state=np.random.default_rng(seed),
        )
        low, high = result.confidence_interval
    return RateFit(rate, (float(low), float(high)), confidence, errors, fitted, local, method)


def verdict(fit: RateFit, theory: float, tolerance: float, excluded: float | None = None) -> str:
    """``PASS`` when the whole interval lies within ±tolerance of ``theory``, else ``FAIL``.

    With ``excluded`` given (a deliberately wrong limit, which must *not* converge at that rate), PASS
    means the opposite claim: the whole interval lies below ``excluded − tolerance``.
    """
    if not fit.finite:
        return "FAIL"
    low, high = fit.ci
    if excluded is not None:
        return "PASS" if high < excluded - tolerance else "FAIL"
    return "PASS" if theory - tolerance <= low and high <= theory + tolerance else "FAIL"


def depth_intervals(
    sq: np.ndarray, metric: str = "rms", confidence: float = 0.95, resamples: int = 1000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of e(L) at each depth separately (for error bands in plots)."""
    sq = np.asarray(sq, dtype=float)
    n = sq.shape[0]
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples) / n  # (B, N)
    if metric == "mean":
        curves = weights @ np.sqrt(sq)
    else:
        curves = np.sqrt(weights @ sq)
    alpha = (1 - confidence) / 2
    return np.quantile(curves, alpha, axis=0), np.quantile(curves, 1 - alpha, axis=0)
