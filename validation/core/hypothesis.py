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

**Two bands, and the check passes inside either.** In the explosion regime r² is heavy-tailed (the sd of log r²
reaches 0.8–1.3 at β = ¼ in Fig. 1), and for res-3 Lemma 14's lower bound *is* the exact mean, so the claim sits
on the edge of the band. There the ± z·se band of the sample mean is not a level-1% test: a sample short of its
tail has both a low mean and a small standard error, and `python -m validation.regimes --preset fig1` FAILed a right
model on seeds 2, 3 and 6 of 1–10 (one cell of 42 each, z down to −4.08). Where r² is log-normal, Cox's interval
for E r² = exp(μ + σ²/2) — exp(ȳ + s²/2 ± t √(s²/N + s⁴/(2(N − 1)))), with ȳ and s² the mean and variance of
log r² and t Student's quantile at z's tail — comes much nearer its level (:func:`_cox_interval`: 4× nominal at
σ = 1 and N = 50, against 75× for the mean's band; an exact generalised interval is the next step). A check passes when either band meets [lower, upper]; a FAIL needs
both to exclude it (so its false-alarm rate is at most either band's). Measured on Fig. 1's own draws, seeds
0–19 (``benchmarks/calibrate.py``, row ``fig1-bounds``): the mean band alone FAILed the right model on 3 seeds of 20
(2, 3 and 6; 95% interval [0.03, 0.38]), the two bands on none ([0, 0.17]); both rules FAIL the planted
alternatives — Lemma 14's bounds stated with the weight variance 1.15× too large (lower) or 0.45× too small
(upper) — on 20 seeds of 20 (24–35 and 7–21 of the 42 cells outside).

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
    band = bool(exploded == 0 and mean + z * se >= lower and mean - z * se <= upper)
    # Cox's band from fewer than MIN_Z_SAMPLES draws is no band either (Student's quantile at 3 degrees of freedom
    # makes it wide enough to pass anything): below that only the mean's band, as before
    usable = exploded == 0 and positive.size == n and n >= MIN_Z_SAMPLES
    log_interval = _cox_interval(positive, z) if usable else (math.nan, math.nan)
    log_band = bool(log_interval[1] >= lower and log_interval[0] <= upper)
    inside = band or log_band
    reliable = bool(exploded == 0 and math.isfinite(sd_log) and n >= max(MIN_Z_SAMPLES,
                                                                           RELIABLE_FACTOR * math.expm1(sd_log**2)))
    return {
        "mean_r2": mean, "se": se, "lower": lower, "upper": upper, "log_normal_interval": list(log_interval),
        "mean_band_passed": band, "log_normal_band_passed": log_band,
        "z_vs_lower": (mean - lower) / se if se > 0 else math.nan,
        "z_vs_upper": (mean - upper) / se if se > 0 else math.nan,
        "sd_log_r2": sd_log, "samples": int(r.size), "exploded": exploded,
        "reliable": reliable, "passed": inside,
        "verdict": "pass" if inside else ("fail" if reliable else "fail (too few samples for the tail: not counted)"),
    }


def _cox_interval(r2: np.ndarray, z: float) -> tuple[float, float]:
    """Cox's interval for E r² of log-normal draws r² (Land 1972; Zhou & Gao 1997, with Student's quantile): with
    y = log r² of mean ȳ and variance s², log E r² = μ + σ²/2 is estimated by ȳ + s²/2 with standard error
    √(s²/N + s⁴/(2(N − 1))); the interval is exp(ȳ + s²/2 ± t·se), t the quantile of Student's law with N − 1
    degrees of freedom at z's tail. NaN for fewer than two draws.

    Its level, measured on log-normal draws (N = 50, the tail of z = 3.67, nominal 2.4e-4 two-sided; 20,000
    replicates): 2.0e-4, 7.5e-4, 1.1e-3 and 2.1e-3 at σ = 0.5, 1, 1.3, 2 (with z instead of t: 4.5e-4 … 3.5e-3);
    the mean's z band alone on the same draws: 1.7% at σ = 1, 3.8% at σ = 1.3 (bounds_check of both: 0.11%, 0.14%)."""
    if r2.size < 2:
        return math.nan, math.nan
    y = np.log(r2)
    variance = float(y.var(ddof=1))
    centre = float(y.mean()) + variance / 2
    se = math.sqrt(variance / y.size + variance**2 / (2 * (y.size - 1)))
    quantile = float(stats.t.isf(stats.norm.sf(z), y.size - 1))
    with np.errstate(over="ignore"):
        return float(np.exp(centre - quantile * se)), float(np.exp(centre + quantile * se))


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
