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
``scipy.stats.bootstrap(..., paired=True)``, well tested and vectorised, with the bias-corrected and
accelerated (BCa) interval where it is affordable and the percentile interval where BCa's jackknife
(O(N²) work) is not — the weak errors, with 10⁴–10⁵ paths, and the medians of the regime studies.

Verdicts (:func:`verdict`): for a convergent pair an equivalence test — PASS when the whole interval lies
inside [r_theory − δ, r_theory + δ]; for a deliberately wrong limit (an ablation) PASS when every error is
finite and the interval lies inside [−δ, r_excluded − δ]: the error neither decays at the excluded rate
nor grows (a limit whose error explodes is not "bounded away from zero", it is broken).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from scipy import stats as _stats

__all__ = [
    "STATISTICS", "METRIC_HELP", "error_curve", "slope", "local_slopes", "paired_bootstrap", "RateFit", "fit_rate",
    "verdict", "verdict_rule", "depth_intervals",
]

#: error statistics of an array of per-sample values, along ``axis``:
#: ``rms`` (values are squared errors), ``mean`` (mean norm; values are squared errors), ``abs-mean``
#: (|mean|; values are signed differences, e.g. of a weak error)
STATISTICS: dict[str, Callable[..., np.ndarray]] = {
    "rms": lambda x, axis=-1: np.sqrt(np.mean(x, axis=axis)),
    "mean": lambda x, axis=-1: np.mean(np.sqrt(x), axis=axis),
    "abs-mean": lambda x, axis=-1: np.abs(np.mean(x, axis=axis)),
}
#: what each error metric of the strong studies measures (``sup`` squared errors use the RMS statistic)
METRIC_HELP = {
    "rms": "(E||h_L - H_1||^2)^1/2",
    "mean": "E||h_L - H_1||",
    "sup": "(E max_k ||h_k - H_k/L||^2)^1/2",
}


def _statistic(metric: str) -> Callable[..., np.ndarray]:
    """The statistic of a metric (``sup`` is the RMS of the sup-over-grid squared errors)."""
    name = "rms" if metric == "sup" else metric
    if name not in STATISTICS:
        raise ValueError(f"metric {metric!r} unknown (allowed: rms, mean, sup, abs-mean)")
    return STATISTICS[name]


def error_curve(values: np.ndarray, metric: str = "rms") -> np.ndarray:
    """The error of each depth from per-sample values of shape (N, D)."""
    return _statistic(metric)(np.asarray(values, dtype=float), axis=0)


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
) -> tuple[float, float, str]:
    """The package's one bootstrap: an interval for ``statistic(*columns)`` resampling rows (paths).

    Args:
        columns: D arrays of N values each, one per depth; row i of every column belongs to path i, and
            a resample draws the same paths for every column.
        statistic: ``statistic(*columns, axis=-1)``, vectorised: each column may carry leading batch axes.
        resamples: bootstrap resamples (≥ 1).
        confidence: interval level in (0, 1).
        seed: seed of the resampling (numpy ``default_rng``).
        method: ``"BCa"`` (falls back to percentile when the BCa interval is degenerate) or
            ``"percentile"``.

    Returns:
        (low, high, description of the method used); (nan, nan, …) when the bootstrap distribution has
        non-finite values.
    """
    if method not in ("BCa", "percentile"):
        raise ValueError(f"bootstrap method {method!r} unknown (allowed: BCa, percentile)")
    n = len(columns[0])
    # keep the resampled data near 2^23 numbers at a time (scipy resamples every column at once)
    batch = max(1, min(resamples, (1 << 23) // max(1, n * len(columns))))

    def run(kind: str):
        return _stats.bootstrap(
            tuple(columns), statistic, paired=True, vectorized=True, n_resamples=resamples, batch=batch,
            confidence_level=confidence, method=kind, random_state=np.random.default_rng(seed),
        )

    if method == "BCa":
        try:
            result = run("BCa")
            low, high = result.confidence_interval
            if np.isfinite(low) and np.isfinite(high):
                return float(low), float(high), "paired bootstrap (BCa)"
        except (ValueError, FloatingPointError):
            pass
    result = run("percentile")
    if not np.all(np.isfinite(result.bootstrap_distribution)):
        return float("nan"), float("nan"), "paired bootstrap (percentile; non-finite resamples)"
    low, high = result.confidence_interval
    return float(low), float(high), "paired bootstrap (percentile)"


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
        finite: False when some value is NaN/inf or an error is zero (then no rate is fitted: rate and ci
            are NaN).
        depths: the depths L.
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

    @property
    def half_width(self) -> float:
        return (self.ci[1] - self.ci[0]) / 2

    def to_dict(self) -> dict[str, Any]:
        """The one JSON form of a rate fit, used by every study (see the shipped JSON Schema)."""
        return {
            "rate": self.rate if self.finite else None, "ci": list(self.ci) if self.finite else [None, None],
            "confidence": self.confidence, "method": self.method, "depths": list(self.depths),
            "errors": self.errors, "local_slopes": self.local, "fitted": self.fitted, "finite": bool(self.finite),
        }


def fit_rate(
    depths: Sequence[int],
    values: np.ndarray,
    metric: str = "rms",
    fit_from: int | None = None,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    method: str = "BCa",
) -> RateFit:
    """Fit the rate of the error curve of per-sample values ``values`` (N, D).

    Args:
        depths: the D depths.
        values: per-sample values (N ≥ 2 rows): squared errors for ``rms``/``sup``/``mean``, signed
            differences for ``abs-mean``.
        metric: ``rms`` / ``sup`` (root mean square), ``mean`` (mean norm) or ``abs-mean`` (|mean|).
        fit_from: fit only depths ≥ this (pre-asymptotic depths dropped explicitly); None: all.
        resamples, confidence, seed, method: of the paired bootstrap (:func:`paired_bootstrap`).
    """
    values = np.asarray(values, dtype=float)
    depths_arr = np.asarray(depths, dtype=float)
    errors = error_curve(values, metric)
    with np.errstate(divide="ignore", invalid="ignore"):
        local = local_slopes(depths, errors) if np.all(errors > 0) else np.full(len(depths) - 1, np.nan)
    fitted = depths_arr >= (fit_from or 0)
    nan = float("nan")
    as_tuple = tuple(int(d) for d in depths)
    if not np.all(np.isfinite(values)) or np.any(errors[fitted] <= 0):
        return RateFit(nan, (nan, nan), confidence, errors, fitted, local, "not fitted: non-finite or zero errors",
                       finite=False, depths=as_tuple)
    if fitted.sum() < 2:
        raise ValueError(f"fewer than two depths ≥ {fit_from} to fit a rate (depths {list(depths)})")
    log_depths = np.log(depths_arr[fitted])
    columns = [values[:, j] for j in np.flatnonzero(fitted)]
    stat = _statistic(metric)

    def rate_of(*cols: np.ndarray, axis: int = -1) -> np.ndarray:
        curve = np.stack([stat(c, axis=axis) for c in cols], axis=-1)
        with np.errstate(divide="ignore"):
            return -slope(log_depths, np.log(curve))

    rate = float(rate_of(*columns))
    low, high, how = paired_bootstrap(columns, rate_of, resamples=resamples, confidence=confidence, seed=seed,
                                      method=method)
    return RateFit(rate, (low, high), confidence, errors, fitted, local, how, depths=as_tuple)


def verdict(fit: RateFit, theory: float, tolerance: float, excluded: float | None = None) -> str:
    """``PASS`` or ``FAIL`` (rule: :func:`verdict_rule`). Non-finite errors always FAIL."""
    if not fit.finite or not (np.isfinite(fit.ci[0]) and np.isfinite(fit.ci[1])):
        return "FAIL"
    low, high = fit.ci
    if excluded is not None:
        return "PASS" if -tolerance <= low and high <= excluded - tolerance else "FAIL"
    return "PASS" if theory - tolerance <= low and high <= theory + tolerance else "FAIL"


def verdict_rule(theory: float, tolerance: float, excluded: float | None = None) -> tuple[float, float]:
    """The interval [low, high] the whole rate interval must lie in for PASS: [theory − δ, theory + δ] for
    a convergent pair; [−δ, excluded − δ] for a deliberately wrong limit (its error must stay bounded away
    from zero — not decay at the excluded rate — and must not grow either)."""
    if excluded is not None:
        return -tolerance, excluded - tolerance
    return theory - tolerance, theory + tolerance


def depth_intervals(
    values: np.ndarray, metric: str = "rms", confidence: float = 0.95, resamples: int = 1000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A percentile interval of e(L) at each depth (the shaded bands of the plots), from the same paired
    bootstrap: the same seed draws the same resampled paths for every depth."""
    values = np.asarray(values, dtype=float)
    stat = _statistic(metric)
    bounds = [paired_bootstrap([values[:, j]], stat, resamples=resamples, confidence=confidence, seed=seed,
                               method="percentile")[:2] for j in range(values.shape[1])]
    low, high = np.array(bounds, dtype=float).reshape(-1, 2).T
    return low, high
