"""Statistical tests of the law of the recorded Brownian path (:mod:`limits.brownian`).

What is tested, on paths from :func:`limits.brownian.record_path` (float64, fixed seeds, fine step h = t1/steps):

1. increments of steps of 1, 4 and 64 fine steps are N(0, length·h) (Kolmogorov–Smirnov);
2. the Brownian bridge: given a coarse step, its first half's increment minus half the coarse increment is
   N(0, h_c/4) and uncorrelated with the coarse increment;
3. space-time areas H of steps of 1, 8 and 64 fine steps are N(0, h_step/12) and uncorrelated with W;
4. Lévy areas A of 2 channels: over a step of 64 fine steps A has the exact law, density sech(πa/h)/h, CDF
   F(a) = (2/π) arctan(exp(πa/h)), mean 0, variance h²/4; at the fine step, regressed on E[A | W, H] =
   H_1 W_2 − W_1 H_2 it has slope 1 and residual variance h²/12 (the average conditional variance);
5. each check rejects an injected error (wrong variance of W, of H, of the fine step's Lévy-area noise; a
   wrong conditional mean; a wrong merge rule): the passing and failing tests call the same helper;
6. Chen's relation to rounding: H and A of every coarse step equal the discrete sums over its fine steps.

Thresholds. A distribution check passes at KS p > ``ALPHA`` = 1e-4: the file makes about ten such checks,
so about one false alarm per 1000 seeds. A moment check (mean, variance, correlation, regression slope)
computes a z-score, ≈ N(0, 1) under the hypothesis, and passes at |z| < ``Z_BOUND`` = 5 (two-sided 6e-7
each). An injected error must be rejected with margin: p < ``REJECT`` = 1e-6 or |z| > ``Z_REJECT`` = 8.
The seeds are fixed, so the outcome is deterministic; the thresholds say how unlucky a seed would have to be.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

import limits.brownian as brownian
from limits.brownian import DyadicPath, levy_area_pairs, record_path

ALPHA = 1e-4  # KS p-value above which a correct law passes
Z_BOUND = 5.0  # |z| below which a moment check passes
REJECT = 1e-6  # KS p-value below which an injected error counts as rejected
Z_REJECT = 8.0  # |z| above which an injected error counts as rejected
POOL = 1_000_000  # at most this many values go into one KS test (time; the power is ample)


# ---------------------------------------------------------------------------------------------- helpers
def _flat(x: torch.Tensor, limit: int = POOL) -> np.ndarray:
    return x.detach().reshape(-1)[:limit].numpy()


def ks_normal(x: torch.Tensor, variance: float) -> float:
    """KS p-value of the pooled entries of ``x`` (independent by construction) against N(0, variance)."""
    return stats.kstest(_flat(x) / math.sqrt(variance), "norm").pvalue


def correlation_z(x: torch.Tensor, y: torch.Tensor) -> float:
    """√n × the pooled sample correlation of x and y: ≈ N(0, 1) when they are independent."""
    x, y = _flat(x), _flat(y)
    return math.sqrt(x.size) * float(np.corrcoef(x, y)[0, 1])


def levy_cdf(a: np.ndarray, h: float) -> np.ndarray:
    """CDF of the Lévy area of two independent Brownian motions over a step of length h."""
    return (2.0 / math.pi) * np.arctan(np.exp(math.pi * a / h))


def levy_area_law(a: torch.Tensor, h: float) -> tuple[float, float, float]:
    """(KS p-value against the exact CDF, z of the mean, z of the variance) of pooled Lévy areas of steps of
    length h. The exact law has variance h²/4 and excess kurtosis 2, so Var(A²) = 4 (h²/4)²."""
    x = _flat(a)
    p = stats.kstest(x, lambda v: levy_cdf(v, h)).pvalue
    variance = h * h / 4.0
    mean_z = float(x.mean()) / math.sqrt(variance / x.size)
    var_z = (float(np.mean(x * x)) - variance) / (2.0 * variance / math.sqrt(x.size))
    return p, mean_z, var_z


def levy_regression(w: torch.Tensor, hh: torch.Tensor, a: torch.Tensor, h: float) -> tuple[float, float]:
    """Regress fine-step Lévy areas (2 channels) on their conditional mean M = H_1 W_2 − W_1 H_2.

    Returns (z of slope − 1, z of residual variance − h²/12), with heteroscedasticity-robust standard errors
    (the conditional variance h²/20 + (h/5)(H_1² + H_2²) depends on H)."""
    m = (hh[..., 0] * w[..., 1] - w[..., 0] * hh[..., 1]).reshape(-1)
    y = a[..., 0].reshape(-1)
    mm = (m * m).sum()
    slope = (m * y).sum() / mm
    resid = y - slope * m
    slope_se = ((resid * resid * m * m).sum()).sqrt() / mm
    r2 = resid * resid
    var_se = r2.std() / math.sqrt(r2.numel())
    return float((slope - 1.0) / slope_se), float((r2.mean() - h * h / 12.0) / var_se)


def bridge_statistics(path: DyadicPath, length: int, h: float) -> tuple[float, float]:
    """For the steps of ``length`` fine steps: D = (first half's increment − ½ W) / √(h_c/4).
    Returns (KS p-value of D against N(0, 1), correlation z of D with W)."""
    coarse = path.level(length).increments
    first_half = path.level(length // 2).increments[0::2]
    h_c = length * h
    d = first_half - 0.5 * coarse
    return ks_normal(d, h_c / 4.0), correlation_z(d, coarse)


def fine_levy_noise(w: torch.Tensor, hh: torch.Tensor, h: float, base: float, seed: int) -> torch.Tensor:
    """Fine-step Lévy areas (2 channels) = E[A | W, H] + N(0, base·h² + (h/5)(H_1² + H_2²)); base = 1/20 is the
    package's choice (average h²/12), others inject a wrong noise variance."""
    mean = hh[..., :1] * w[..., 1:] - w[..., :1] * hh[..., 1:]
    std = (base * h * h + (h / 5.0) * (hh[..., :1] ** 2 + hh[..., 1:] ** 2)).sqrt()
    gen = torch.Generator().manual_seed(seed)
    return mean + std * torch.randn(mean.shape, generator=gen, dtype=mean.dtype)


# ---------------------------------------------------------------------------------------------- paths
STEPS = 64
H = 1.0 / STEPS


@pytest.fixture(scope="module")
def plain_path() -> DyadicPath:
    return record_path(samples=50_000, channels=2, steps=STEPS, seed=20240611)


@pytest.fixture(scope="module")
def space_time_path() -> DyadicPath:
    return record_path(samples=20_000, channels=2, steps=STEPS, seed=314, areas="space-time")


@pytest.fixture(scope="module")
def levy_path() -> DyadicPath:
    return record_path(samples=50_000, channels=2, steps=STEPS, seed=2718, areas="levy")


# ---------------------------------------------------------------------------------------------- 1. increments
@pytest.mark.parametrize("length", [1, 4, 64])
def test_increments_are_normal(plain_path, length):
    """Increments of steps of 1, 4, 64 fine steps, over √(length·h), are N(0, 1) by KS."""
    assert ks_normal(plain_path.level(length).increments, length * H) > ALPHA


@pytest.mark.parametrize("length", [1, 4, 64])
def test_increment_check_rejects_scaled_increments(plain_path, length):
    """The same KS check rejects increments scaled by 1.05 (variance ×1.1025)."""
    assert ks_normal(1.05 * plain_path.level(length).increments, length * H) < REJECT


# ---------------------------------------------------------------------------------------------- 2. bridge
@pytest.mark.parametrize("length", [2, 64])
def test_bridge_half_step_is_independent_normal(plain_path, length):
    """Given a step of 2 or 64 fine steps, its first half's increment − ½W is N(0, h_c/4), uncorrelated with W."""
    p, z = bridge_statistics(plain_path, length, H)
    assert p > ALPHA
    assert abs(z) < Z_BOUND


def test_bridge_check_rejects_wrong_variance_and_correlation(plain_path):
    """Fine steps scaled by 1.05 fail the KS; halves of unequal variance (1 ± 0.05) fail the correlation
    (D = ½(w_1 − w_2) keeps its variance there, so the KS alone would not see it)."""
    w = plain_path.level(1).increments
    p, z = bridge_statistics(DyadicPath(1.05 * w), 2, H)
    assert p < REJECT
    assert abs(z) < Z_BOUND
    unequal = w.clone()
    unequal[0::2] *= math.sqrt(1.05)
    unequal[1::2] *= math.sqrt(0.95)
    p, z = bridge_statistics(DyadicPath(unequal), 2, H)
    assert p > ALPHA
    assert abs(z) > Z_REJECT


# ---------------------------------------------------------------------------------------------- 3. space-time areas
@pytest.mark.parametrize("length", [1, 8, 64])
def test_space_time_areas_are_normal_and_uncorrelated(space_time_path, length):
    """H of steps of 1, 8, 64 fine steps, over √(h_step/12), is N(0, 1) by KS and uncorrelated with W."""
    w, hh, _ = space_time_path.level(length)
    assert ks_normal(hh, length * H / 12.0) > ALPHA
    assert abs(correlation_z(hh, w)) < Z_BOUND


@pytest.mark.parametrize("length", [1, 2])
def test_space_time_check_rejects_doubled_variance(space_time_path, length):
    """Fine H of variance h/6 (instead of h/12) fails the same KS at levels 1 and 2 (variance ×2, ×1.25).
    Merging dilutes a fine-step error of H by 1/r² (the coarse H carries (1/r) Σ H_k): at level 8 it is
    +1.6% of the variance, beyond this KS."""
    w, hh, _ = space_time_path.level(1)
    wrong = DyadicPath(w, math.sqrt(2.0) * hh)
    assert ks_normal(wrong.level(length).areas, length * H / 12.0) < REJECT


# ---------------------------------------------------------------------------------------------- 4. Lévy areas
def test_levy_area_of_coarse_step_has_exact_law(levy_path):
    """Over a step of 64 fine steps, A matches the exact CDF (2/π) arctan(exp(πa/h)), mean 0, variance h²/4."""
    p, mean_z, var_z = levy_area_law(levy_path.level(STEPS).levy_areas, STEPS * H)
    assert p > ALPHA
    assert abs(mean_z) < Z_BOUND
    assert abs(var_z) < Z_BOUND


def test_levy_area_fine_step_conditional_structure(levy_path):
    """At the fine step, A regressed on H_1 W_2 − W_1 H_2 has slope 1 and residual variance h²/12."""
    slope_z, resid_z = levy_regression(*levy_path.level(1), H)
    assert abs(slope_z) < Z_BOUND
    assert abs(resid_z) < Z_BOUND


def test_levy_regression_rejects_wrong_mean_and_noise(levy_path):
    """The regression check rejects a conditional mean scaled by 0.95 and a noise variance h²/6 + (h/5)(…)."""
    w, hh, a = levy_path.level(1)
    mean = hh[..., :1] * w[..., 1:] - w[..., :1] * hh[..., 1:]
    slope_z, _ = levy_regression(w, hh, a - 0.05 * mean, H)
    assert abs(slope_z) > Z_REJECT
    _, resid_z = levy_regression(w, hh, fine_levy_noise(w, hh, H, 1.0 / 6.0, seed=1), H)
    assert abs(resid_z) > Z_REJECT


# A wrong fine-step noise variance is diluted by the merge: the coarse variance over r fine steps is
# (h_c²/4)(1 + 4(c − 1/4)/r) where c h² is the fine step's average variance of A. With 64 steps the
# wrong fine laws below are invisible at r = 64 with 5·10⁴ samples (measured KS p = 0.09 and 0.33), so the
# companion test uses 16 fine steps merged by r = 4 (4·5·10⁴ = 2·10⁵ coarse areas). Measured (seed 5):
#   package's fine law (base h²/20):   KS p = 0.85,    variance z = +0.9
#   base h²/6:                         KS p = 1e-71,   variance z = +26
#   no Gaussian term:                  KS p = 9e-59,   variance z = −18
#   base h²/50:                        KS p = 2e-10,   variance z = −6.2
# (At the fine step itself the Gaussian approximation is visible: KS p = 9e-34 over 3.2·10⁶ pooled areas;
# at r = 2, p = 0.04; from r = 4 on, nothing.)
@pytest.mark.parametrize("base", [1.0 / 6.0, None, 1.0 / 50.0], ids=["h2/6", "no-noise", "h2/50"])
def test_levy_law_check_rejects_wrong_fine_noise(base):
    """Fine-step Lévy areas with a wrong noise variance, merged by Chen over 4 fine steps, fail the exact-law
    check, which the package's own areas of the same path pass."""
    fine_steps, r = 16, 4
    h = 1.0 / fine_steps
    path = record_path(samples=50_000, channels=2, steps=fine_steps, seed=5, areas="levy")
    w, hh, a = path.level(1)
    p, mean_z, var_z = levy_area_law(path.level(r).levy_areas, r * h)
    assert p > ALPHA and abs(mean_z) < Z_BOUND and abs(var_z) < Z_BOUND
    if base is None:
        wrong = hh[..., :1] * w[..., 1:] - w[..., :1] * hh[..., 1:]
    else:
        wrong = fine_levy_noise(w, hh, h, base, seed=9)
    p, _, var_z = levy_area_law(DyadicPath(w, hh, levy_areas=wrong).level(r).levy_areas, r * h)
    assert p < REJECT or abs(var_z) > Z_REJECT


# ---------------------------------------------------------------------------------------------- 6. Chen's relation
def chen_errors(path: DyadicPath, length: int) -> tuple[float, float]:
    """Max |merged − direct| / max |direct| for H and A of the steps of ``length`` fine steps, where "direct"
    sums over the fine steps k of a coarse step [s, t] (W_k − W_s: the fine increments before k in it):

        H = (1/h_c) Σ_k h_f ((W_k − W_s) + ½ w_k + H_k) − ½ W,
        A_ij = Σ_k a_k,ij + ½ Σ_k ((W_k − W_s)_i w_k,j − (W_k − W_s)_j w_k,i).
    """
    w, hh, a = path.level(1)
    k, n, m = w.shape
    rows, columns = levy_area_pairs(m)
    w = w.reshape(k // length, length, n, m)
    hh = hh.reshape(k // length, length, n, m)
    a = a.reshape(k // length, length, n, -1)
    before = w.cumsum(1) - w  # W_k − W_s
    total = w.sum(1)
    h_direct = ((before + 0.5 * w + hh).sum(1)) / length - 0.5 * total
    cross = before[..., rows] * w[..., columns] - before[..., columns] * w[..., rows]
    a_direct = a.sum(1) + 0.5 * cross.sum(1)
    merged = path.level(length)
    h_error = float((merged.areas - h_direct).abs().max() / h_direct.abs().max())
    a_error = float((merged.levy_areas - a_direct).abs().max() / a_direct.abs().max())
    return h_error, a_error


@pytest.mark.parametrize("length", [2, 4, 8, 16, 32, 64])
def test_chen_merge_equals_direct_sums(length):
    """H and A (3 channels) of each coarse step from ``level`` equal the fine-step sums to 1e-12 relative."""
    path = record_path(samples=200, channels=3, steps=STEPS, seed=77, areas="levy")
    h_error, a_error = chen_errors(path, length)
    assert h_error < 1e-12
    assert a_error < 1e-12


def test_chen_check_rejects_wrong_merge(monkeypatch):
    """The same comparison catches a merge with the Lévy cross term's sign flipped (measured error 1.9), and one
    with H's ¼ as ⅛ (error 0.50); the right merge is within 1e-15."""
    path = record_path(samples=200, channels=3, steps=STEPS, seed=77, areas="levy")
    right_levy = brownian.merge_levy_areas

    def flipped_levy(w, h, a):
        merged_w, merged_h, merged_a = right_levy(w, h, a)
        return merged_w, merged_h, a[0::2] + a[1::2] - (merged_a - a[0::2] - a[1::2])

    def wrong_space_time(w, h):
        return w[0::2] + w[1::2], 0.5 * (h[0::2] + h[1::2]) + 0.125 * (w[0::2] - w[1::2])

    monkeypatch.setattr(brownian, "merge_levy_areas", flipped_levy)
    assert chen_errors(path, 8)[1] > 1e-2
    monkeypatch.setattr(brownian, "merge_levy_areas", right_levy)
    monkeypatch.setattr(brownian, "merge_space_time_areas", wrong_space_time)
    fresh = DyadicPath(*path.level(1)[:2], levy_areas=path.level(1).levy_areas)
    assert chen_errors(fresh, 8)[0] > 1e-2
