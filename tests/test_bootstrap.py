"""The package's paired bootstrap (:func:`validation.core.stats.paired_bootstrap`) is ``scipy.stats.bootstrap(…,
paired=True, vectorized=True)`` written out: the same intervals, BCa and percentile, with several batches of
resamples and of the jackknife, the fallback of a degenerate BCa interval and non-finite resamples. SciPy 1.17's
arithmetic is followed expression by expression, so with it the numbers are equal to the last bit; another SciPy
version may round its quantile differently, so there they agree to 1e-12 (seconds)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy
from scipy import stats

from validation.core.stats import paired_bootstrap, slope

EXACT = scipy.__version__.startswith("1.17.")


def _rate(*columns: np.ndarray, axis: int = -1) -> np.ndarray:
    """A rate fit of the kind the studies bootstrap: minus the slope of log RMS on log L."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_errors = np.stack([0.5 * np.log(np.mean(c, axis=axis)) for c in columns], axis=-1)
    return -slope(np.log(2.0 ** np.arange(2, 2 + len(columns))), log_errors)


def _scipy(columns, statistic, resamples, confidence, seed, method):
    n = len(columns[0])
    batch = max(1, min(resamples, (1 << 23) // max(1, n * len(columns))))
    result = stats.bootstrap(tuple(columns), statistic, paired=True, vectorized=True, n_resamples=resamples,
                             batch=batch, confidence_level=confidence, method=method,
                             random_state=np.random.default_rng(seed))
    return tuple(float(v) for v in result.confidence_interval)


def _columns(rows: int, depths: int, seed: int = 0) -> list[np.ndarray]:
    """Squared errors of ``rows`` paths at ``depths`` depths, RMS falling as L^-1/2, with a heavy path factor."""
    rng = np.random.default_rng(seed)
    paths = rng.lognormal(0.0, 0.5, (rows, 1))
    squared = (rng.standard_normal((rows, depths)) * 2.0 ** (-np.arange(depths) / 2)) ** 2 * paths
    return [np.ascontiguousarray(column) for column in squared.T]


def _agree(ours, theirs):
    if EXACT:
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
@pytest.mark.parametrize("rows, depths, resamples, confidence", [(40, 4, 300, 0.95), (2000, 8, 1100, 0.9)])
def test_the_intervals_are_scipys(method, rows, depths, resamples, confidence):
    """The second case cuts the resamples into 3 batches and the jackknife into 4 (2^23 / (2000·8) = 524 rows)."""
    columns = _columns(rows, depths)
    low, high, how = paired_bootstrap(columns, _rate, resamples=resamples, confidence=confidence, seed=7,
                                      method=method)
    assert how == f"paired bootstrap ({method})"
    _agree((low, high), _scipy(columns, _rate, resamples, confidence, 7, method))
    assert low < float(_rate(*columns)) < high


def test_a_degenerate_bca_interval_falls_back_to_scipys_percentile_interval():
    """Every resample gives the same value (ẑ₀ = Φ⁻¹(1) = ∞): BCa has no interval, so the percentile one is
    returned — SciPy's percentile interval on the same draws."""
    columns = [np.full(30, 2.0), np.full(30, 1.0), np.full(30, 0.5)]
    low, high, how = paired_bootstrap(columns, _rate, resamples=200, confidence=0.95, seed=3)
    assert how == "paired bootstrap (percentile)"
    _agree((low, high), _scipy(columns, _rate, 200, 0.95, 3, "percentile"))


def test_non_finite_resamples_give_no_interval():
    """A column with a zero error for most paths: some resamples' RMS is 0, log 0 = −∞, and no interval exists."""
    zeros = np.zeros(12)
    zeros[0] = 1.0
    with np.errstate(invalid="ignore"):
        low, high, how = paired_bootstrap([np.ones(12), zeros], _rate, resamples=200, confidence=0.95, seed=0)
    assert np.isnan(low) and np.isnan(high) and "non-finite" in how


def test_too_few_rows_is_a_clear_error():
    with pytest.raises(ValueError, match="at least 2 paired rows; got 1"):
        paired_bootstrap([np.ones(1), np.ones(1)], _rate, resamples=10, confidence=0.95, seed=0)


@pytest.mark.parametrize("metric", ["rms", "mean", "abs-mean", "sup"])
def test_the_closed_form_jackknife_is_the_leave_one_out_one(metric):
    """The O(N) leave-one-out curves of a mean-form statistic are the curves of the samples with one row left out,
    to rounding; and the BCa interval made with them is the O(N²) one's to a few units in the last place (the
    rate fits pass them to :func:`paired_bootstrap`). Planted: a jackknife that divides by N instead of N − 1
    moves the curves by 1/N relative and fails the first comparison."""
    from validation.core.stats import MEAN_FORMS, leave_one_out_curves, metric_statistic

    rng = np.random.default_rng(3)
    n, depths = 300, 5
    data = np.exp(1.5 * rng.normal(size=(depths, n))) * 2.0 ** -np.arange(depths)[:, None]
    if metric == "abs-mean":
        data = data - 0.9 * data.mean(axis=1, keepdims=True)
    stat = metric_statistic(metric)
    rows = np.arange(n - 1)
    direct = np.stack([stat(data[:, rows + (rows >= i)], axis=-1) for i in range(n)])
    closed = leave_one_out_curves(data, metric)
    np.testing.assert_allclose(closed, direct, rtol=1e-12, atol=0)
    inner, outer = MEAN_FORMS["rms" if metric == "sup" else metric]
    planted = outer((inner(data).sum(axis=1, keepdims=True) - inner(data)) / n).T  # divided by N, not N − 1
    assert not np.allclose(planted, direct, rtol=1e-6, atol=0)

    log_depths = np.log(2.0 ** np.arange(2, 2 + depths))

    def rate_of_curve(curve):
        return -slope(log_depths, np.log(curve))

    def rate(*columns, axis=-1):
        return rate_of_curve(np.stack([stat(c, axis=axis) for c in columns], axis=-1))

    columns = list(data)
    slow = paired_bootstrap(columns, rate, resamples=500, confidence=0.95, seed=1)
    fast = paired_bootstrap(columns, rate, resamples=500, confidence=0.95, seed=1,
                            leave_one_out=lambda d: rate_of_curve(leave_one_out_curves(d, metric)))
    assert fast[2] == slow[2] == "paired bootstrap (BCa)"
    np.testing.assert_allclose(fast[:2], slow[:2], rtol=1e-12, atol=0)
