"""Hypothesis tests the studies share: a mean of r² within bounds (with when such a check is reliable), an
exceedance probability against δ (Clopper–Pearson), Hotelling's zero-mean test, an exact binomial test, the
log-normality summary, and the Bonferroni z of a family of checks. The theory they test against is in
:mod:`limits.regime_theory`.

**Bounds** (:func:`bounds_check`): of Lemma 14 and Prop. 7 (:func:`limits.regime_theory.lemma14_bounds`), and
of the exact mean, attained by res-3 (:func:`limits.regime_theory.exact_mean_r2`). The check is: the Monte-Carlo mean m of r² with
standard error se satisfies m + z·se ≥ lower and m − z·se ≤ upper. A sweep makes many such checks
(42 for Fig. 1/3), so z is Bonferroni-corrected for a family-wise false-alarm rate of 1%:
z = Φ⁻¹(1 − 0.01/(2m)) for m checks (3.67 for m = 42; :func:`family_z`). The per-check z-scores are
reported so their spread can be compared with N(0, 1).

**When the check is reliable.** r² is close to log-normal, and the mean of N draws of a log-normal with
log-standard-deviation s is close to normal — as the ± z·se check assumes — only when N is large against its
squared coefficient of variation e^{s²} − 1. With fewer draws the sample mean is usually far *below* E r² and
its standard error too small, so a failure says nothing about the bound. A check is therefore counted only
when N ≥ 10 (e^{s²} − 1), with s the sample standard deviation of log r² (and no sample overflowed); a failed
check below that is reported as unreliable, not counted. (s = 1 needs 17 draws, s = 1.5 needs 85, s = 2
needs 536.)

**Quantile bounds** (:func:`quantile_bound_check`): Props. 2 and 6 state, for i.i.d. weights and Lα² ≤ 1, that
P(r² ≤ 2Lα²/δ) ≥ 1 − δ for every δ ∈ (0, 1) (r = r_h for Prop. 2, r_p for Prop. 6): the (1 − δ)-quantile of r²
is at most 2Lα²/δ. Equivalently the exceedance probability p = P(r² > 2Lα²/δ) is at most δ. With k of N draws
above the bound, the Clopper–Pearson interval of p at confidence 1 − level (level Bonferroni-shared by the
sweep's cells, family-wise 1%) decides: PASS when its upper end is ≤ δ, FAIL when its lower end is > δ,
INCONCLUSIVE otherwise (with no exceedance, N ≥ ln(level)/ln(1 − δ) draws settle it). The bound is Markov's
inequality on Lemma 14's E r² ≤ (1 + α²)^L − 1 ≤ 2Lα², so it is loose by design; the quantile's slack
(bound / quantile) is reported beside the verdict.

**Exact mean** (:func:`exact_mean_check`): Markov's bound above cannot fail for any plausible implementation, so
Props. 2 and 6 are also checked on the quantity their proof rests on. The exact E r² of res-3 (:func:`limits.regime_theory.exact_mean_r2`) is checked. The check is two-sided: |m − exact| ≤ z·se (Bonferroni z as above, with the
same reliability rule). A weight variance 1.3/d instead of 1/d moves E r² by about 30% at Lα² ≤ 1, which 350 draws
resolve (tests/test_regimes.py plants it).

**Zero mean** (:func:`hotelling_zero_mean`): Chizat's Prop. 2.1 states E h^ℓ = x, a statement about a vector. From
N draws of D = (h^ℓ − x)/‖x‖ ∈ R^d with mean m and sample covariance S, Hotelling's T² = N mᵀ S⁻¹ m, and
(N − d) T² / (d (N − 1)) follows F(d, N − d) under E D = 0 for Gaussian D; the per-layer p-values are
Bonferroni-combined (family-wise 1%). D is heavy-tailed at large α√(ML), where the F law is only approximate.

"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from limits.regime_theory import exact_mean_r2

__all__ = ["RELIABLE_FACTOR", "MIN_Z_SAMPLES", "finite_or_inf", "family_z", "bounds_check", "exceedance_check", "quantile_bound_check",
           "hotelling_zero_mean", "exact_mean_check", "binomial_consistency", "lognormal_summary"]

#: a bounds check is counted when samples ≥ this × (e^{s²} − 1), s the sd of log r² (see the module doc)
RELIABLE_FACTOR = 10.0
#: and when there are at least this many: a z band read from fewer draws' sample sd is no band (regimes fig1 at 4
#: draws per cell put an exact mean 4.6 "standard errors" off and said FAIL)
MIN_Z_SAMPLES = 30


def finite_or_inf(r: np.ndarray) -> np.ndarray:
    """Ratios with every non-finite value (overflow: inf or NaN) replaced by +inf."""
    r = np.asarray(r, dtype=np.float64)
    return np.where(np.isfinite(r), r, np.inf)


def family_z(checks: int, level: float = 0.01) -> float:
    """Two-sided Bonferroni z for ``checks`` simultaneous checks at family-wise level ``level``."""
    return float(stats.norm.isf(level / (2.0 * max(1, checks))))


def bounds_check(r: np.ndarray, lower: float, upper: float, z: float = 3.0) -> dict[str, Any]:
    """Check lower ≤ E r² ≤ upper within z standard errors of the Monte-Carlo mean of r²."""
    r = np.asarray(r, dtype=np.float64).ravel()
    exploded = int((~np.isfinite(r)).sum())
    r2 = r[np.isfinite(r)] ** 2
    n = r2.size
    mean = float(r2.mean()) if n else math.nan
    se = float(r2.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    positive = r2[r2 > 0]
    sd_log = float(np.log(positive).std(ddof=1)) if positive.size > 1 else math.nan
    inside = bool(exploded == 0 and mean + z * se >= lower and mean - z * se <= upper)
    reliable = bool(exploded == 0 and math.isfinite(sd_log) and n >= max(MIN_Z_SAMPLES,
                                                                           RELIABLE_FACTOR * math.expm1(sd_log**2)))
    return {
        "mean_r2": mean, "se": se, "lower": lower, "upper": upper,
        "z_vs_lower": (mean - lower) / se if se > 0 else math.nan,
        "z_vs_upper": (mean - upper) / se if se > 0 else math.nan,
        "sd_log_r2": sd_log, "samples": int(r.size), "exploded": exploded,
        "reliable": reliable, "passed": inside,
        "verdict": "pass" if inside else ("fail" if reliable else "fail (too few samples for the tail: not counted)"),
    }


def exceedance_check(r2: np.ndarray, bound: float, delta: float, level: float, *, above: bool) -> dict[str, Any]:
    """Is P(r² > bound) ≤ δ (``above``), or P(r² ≤ bound) ≤ δ (not ``above``)? The Clopper–Pearson interval of that
    exceedance probability at confidence 1 − ``level`` decides (module doc); non-finite draws count as +∞."""
    r2 = finite_or_inf(r2).ravel()
    n = r2.size
    k = int((r2 > bound).sum() if above else (r2 <= bound).sum())
    lower = float(stats.beta.ppf(level / 2, k, n - k + 1)) if k > 0 else 0.0
    upper = float(stats.beta.isf(level / 2, k + 1, n - k)) if k < n else 1.0
    quantile = float(np.quantile(r2, 1.0 - delta if above else delta, method="inverted_cdf"))  # an order statistic
    if upper <= delta:
        verdict = "PASS"
    elif lower > delta:
        verdict = "FAIL"
    else:
        verdict = "INCONCLUSIVE"
    needed = math.ceil(math.log(level / 2) / math.log1p(-delta)) if verdict == "INCONCLUSIVE" and k == 0 else None
    if above:
        slack = bound / quantile if quantile > 0 else math.inf
    else:
        slack = quantile / bound if bound > 0 else math.inf
    return {"delta": float(delta), "bound": float(bound), "quantile": quantile, "slack": slack, "exceedances": k,
            "samples": n, "interval": [lower, upper], "verdict": verdict, "samples_needed": needed}


def quantile_bound_check(r: np.ndarray, beta: float, depth: int, delta: float, level: float) -> dict[str, Any]:
    """Props. 2 / 6: is P(r² > 2Lα²/δ) ≤ δ, α = L^-β? (:func:`exceedance_check`, module doc.)"""
    bound = 2.0 * depth ** (1.0 - 2.0 * beta) / delta
    r2 = finite_or_inf(r).ravel() ** 2
    return {"beta": float(beta), "depth": int(depth), **exceedance_check(r2, bound, delta, level, above=True)}


def hotelling_zero_mean(total: np.ndarray, total_outer: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Hotelling's test of E D = 0 from Σ D (…, d), Σ D Dᵀ (…, d, d) and the draw count N > d: (T², p-value),
    each of shape (…) (module doc)."""
    total, total_outer = np.asarray(total, dtype=np.float64), np.asarray(total_outer, dtype=np.float64)
    d = total.shape[-1]
    if n <= d:
        raise ValueError(f"Hotelling's test needs more draws than dimensions: N={n} ≤ d={d}")
    mean = total / n
    cov = (total_outer - n * mean[..., :, None] * mean[..., None, :]) / (n - 1)
    t2 = n * np.einsum("...i,...i->...", mean, np.linalg.solve(cov, mean[..., None])[..., 0])
    p = stats.f.sf((n - d) * t2 / (d * (n - 1)), d, n - d)
    return t2, p


def exact_mean_check(r: np.ndarray, beta: float, depth: int, z: float) -> dict[str, Any]:
    """E r² = (1 + α²/2)^L − 1, α = L^-β, within z standard errors (two-sided; module doc, "Exact mean")."""
    exact = exact_mean_r2(beta, depth)
    out = bounds_check(r, exact, exact, z)
    return {"beta": float(beta), "depth": int(depth), "exact": exact, "z": out["z_vs_lower"],
            **{k: out[k] for k in ("mean_r2", "se", "samples", "exploded", "reliable", "passed", "verdict")}}


def binomial_consistency(count: int, total: int, p: float, level: float = 0.01) -> dict[str, Any]:
    """Is ``count`` of ``total`` consistent with probability p? Exact two-sided binomial test at ``level``, with the
    Clopper–Pearson 95% interval of the measured fraction."""
    test = stats.binomtest(count, total, p)
    ci = test.proportion_ci(0.95)
    return {"count": int(count), "total": int(total), "fraction": count / total, "reference": float(p),
            "p_value": float(test.pvalue), "ci95": [float(ci.low), float(ci.high)], "passed": bool(test.pvalue >= level),
            "level": level}


def lognormal_summary(values: np.ndarray, bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """Quartiles of ``values`` and normality tests of log(values) (D'Agostino–Pearson on all, Shapiro–Wilk
    on at most 5000, Kolmogorov–Smirnov against the fitted normal)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    finite = v[np.isfinite(v) & (v > 0)]
    logs = np.log(finite)
    q1, q2, q3 = np.percentile(finite, [25, 50, 75])
    out: dict[str, Any] = {
        "samples": int(v.size), "non_finite": int(v.size - finite.size),
        "quartiles": [float(q1), float(q2), float(q3)],
        "log_mean": float(logs.mean()), "log_sd": float(logs.std(ddof=1)),
        "skew_log": float(stats.skew(logs)), "excess_kurtosis_log": float(stats.kurtosis(logs)),
    }
    if logs.size >= 20:
        out["dagostino_p"] = float(stats.normaltest(logs).pvalue)
        out["shapiro_p"] = float(stats.shapiro(logs[:5000]).pvalue)
        out["ks_p"] = float(stats.kstest((logs - logs.mean()) / logs.std(ddof=1), "norm").pvalue)
    if bounds is not None:
        out["bound_q1_lower"], out["bound_q3_upper"] = bounds
        out["q1_above_bound"] = bool(q1 >= bounds[0])
        out["q3_below_bound"] = bool(q3 <= bounds[1])
    return out
