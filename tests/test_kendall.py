"""Kendall's τ, its leave-one-out values and the elliptical correlation sin(πτ/2) (validation.core.kendall)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from validation.core.kendall import (elliptical_correlation, elliptical_statistic, jackknife_interval, kendall_tau,
                                     leave_one_out_tau, minimum_off_diagonal, top_eigen_share)


def _gaussian_pair(n: int, rho: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n)
    return np.stack([a, rho * a + math.sqrt(1 - rho**2) * rng.standard_normal(n)], axis=1)


def test_tau_and_every_leave_one_out_value_match_scipy():
    x = np.random.default_rng(1).standard_normal((23, 4))
    tau, left_out = kendall_tau(x), leave_one_out_tau(x)
    for a in range(4):
        for b in range(4):
            assert tau[a, b] == pytest.approx(kendalltau(x[:, a], x[:, b])[0], abs=1e-12)
    for i in (0, 7, 22):
        rest = np.delete(x, i, axis=0)
        assert left_out[i, 0, 3] == pytest.approx(kendalltau(rest[:, 0], rest[:, 3])[0], abs=1e-12)


def test_sin_pi_tau_over_2_is_pearsons_rho_on_a_gaussian_pair():
    """The relation the checks rely on: on Gaussian draws with ρ = 0.6 the jackknife interval of sin(πτ/2) covers 0.6
    and excludes 0.55 and 0.65 (a wrong relation, e.g. τ itself at 0.41, is far outside)."""
    full, (low, high), _ = elliptical_statistic(_gaussian_pair(4000, 0.6, 2), minimum_off_diagonal)
    assert low < 0.6 < high and 0.55 < low and high < 0.65


def test_a_heavy_tailed_common_scale_leaves_the_elliptical_correlation_where_pearsons_wanders():
    """Draws N·g, g Gaussian with ρ = 0.9 and N = exp(2Z) (sd of log|x| above 2, like EO_ReLU's): the interval of
    sin(πτ/2) covers 0.9 and lies above 0.85; Pearson's ρ of the same draws is off by more than 0.05 on most seeds."""
    rng = np.random.default_rng(3)
    pearson_misses = 0
    for seed in range(5):
        g = _gaussian_pair(1000, 0.9, 10 + seed)
        x = g * np.exp(2 * rng.standard_normal(1000))[:, None]
        full, (low, high), _ = elliptical_statistic(x, minimum_off_diagonal)
        assert low < 0.9 < high and low > 0.85
        pearson_misses += abs(np.corrcoef(x.T)[0, 1] - 0.9) > 0.05
    assert pearson_misses >= 3


def test_independent_columns_read_zero_and_a_shared_column_reads_one():
    x = np.random.default_rng(4).standard_normal((500, 3))
    _, (low, high), _ = elliptical_statistic(x, minimum_off_diagonal)
    assert high < 0.2
    same = np.repeat(x[:, :1], 3, axis=1) * np.array([1.0, 2.0, 0.5])
    full, interval, _ = elliptical_statistic(same, top_eigen_share)
    assert full == pytest.approx(1.0) and interval == pytest.approx([1.0, 1.0])


def test_a_constant_column_has_no_tau_and_is_left_out():
    x = np.random.default_rng(5).standard_normal((50, 3))
    x[:, 1] = 0.0
    assert np.isnan(kendall_tau(x)[1]).all() and np.isnan(leave_one_out_tau(x)[:, :, 1]).all()
    full, _, rho = elliptical_statistic(x, top_eigen_share)
    assert math.isfinite(full) and np.isnan(rho[1, 1])
    assert elliptical_correlation(np.array(1.0)) == pytest.approx(1.0)


def test_too_few_draws_are_refused_with_the_shape():
    with pytest.raises(ValueError, match="n ≥ 3"):
        kendall_tau(np.zeros((2, 4)))
    full, interval, rho = elliptical_statistic(np.zeros((2, 4)), minimum_off_diagonal)
    assert math.isnan(full) and np.isnan(interval).all() and rho.shape == (4, 4)


def test_the_statistic_is_the_same_in_chunks_of_any_size(monkeypatch):
    """The second pass works chunk by chunk (memory flat in n): one draw per chunk gives the same interval."""
    from validation.core import kendall

    x = np.random.default_rng(6).standard_normal((40, 5)) + np.linspace(0, 1, 5)
    full, interval, _ = elliptical_statistic(x, top_eigen_share)
    monkeypatch.setattr(kendall, "_CHUNK_ELEMENTS", 1)
    chunked, chunked_interval, _ = elliptical_statistic(x, top_eigen_share)
    assert chunked == pytest.approx(full) and chunked_interval == pytest.approx(interval)


def test_jackknife_interval_is_centred_and_scaled_as_stated():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    spread = math.sqrt(3 / 4 * 5.0)
    low, high = jackknife_interval(10.0, values)
    assert (low + high) / 2 == pytest.approx(10.0) and (high - low) / 2 == pytest.approx(1.959964 * spread, rel=1e-5)
