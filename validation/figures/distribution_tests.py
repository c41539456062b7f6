"""Two tests of a law's shape, for Peluchetti & Favaro §3.4 ("Qualitative properties"): that the coordinates of
the output are exchangeable, and that the joint law of the output at two inputs is not Gaussian.

**Exchangeability: a within-row permutation test.** The data are N independent networks' outputs X (N, D, K): D
coordinates at K inputs. H0: each row's law is invariant under permutations of its D coordinates, the same
permutation at every input (the law of the D processes x_{·,d}, d = 1 … D, is exchangeable). Under H0, permuting
the coordinates of every row by its own uniformly random permutation leaves the law of the whole array unchanged,
so for any statistic T the Monte-Carlo p-value

    p = (1 + #{b : T(X^(b)) ≥ T(X)}) / (1 + B),   X^(b)_{n,·,k} = X_{n,π_{n,b}(·),k},  π_{n,b} uniform,

is exact (valid at every N). The coordinates of one network are dependent — they share ‖x‖ — so the usual
k-sample p-values, which assume independent samples, do not apply; permuting within rows needs no independence
between coordinates. Two statistics, each summed over the inputs:

* T_marg, the marginals: the k-sample Anderson–Darling statistic of the D columns (Scholz & Stephens 1987, the
  version for continuous data),

      A²_kN = (1/M) Σ_i (1/n_i) Σ_{j=1}^{M−1} (M M_ij − j n_i)² / (j (M − j)),

  M = N·D pooled values, n_i = N, M_ij the number of column i's values among the j smallest pooled ones — the
  statistic of ``scipy.stats.anderson_ksamp(…, midrank=False)`` before its normalisation (a map that does not
  depend on the data, so the p-values agree);
* T_pair, the pair laws: with ρ^{kl}_{ij} the correlation of x_i(z_k) and x_j(z_l), the spread
  Σ_{k≤l} Σ_{i≠j} (ρ^{kl}_{ij} − mean)² of the off-diagonal entries of every block, plus, for k ≠ l, that of the
  diagonal ones (under H0 each group is one number).

The test's statistic combines the two: both are sums of squares, right-skewed, so each is taken in logarithm and
standardised by its mean and SD over the B + 1 arrays X^(0) = X, X^(1), …, X^(B) (which are exchangeable under
H0, so the standardisation keeps the test exact); the larger,

    T(X^(i)) = max_s (log T_s(X^(i)) − mean_b log T_s(X^(b))) / SD_b log T_s(X^(b)),
    p = #{i : T(X^(i)) ≥ T(X^(0))} / (B + 1),

which, unlike a Bonferroni or minimum-p combination, can reach 1/(B + 1) when either statistic is extreme.
p ≥ 1/(B + 1): B must be well above 1/α − 1 for a test at level α to be able to reject.

**Non-Gaussianity: Mardia's tests.** For n draws of a p-vector with sample mean x̄ and covariance S (divisor n),
g_ij = (x_i − x̄)ᵀ S⁻¹ (x_j − x̄):

    b_1 = (1/n²) Σ_ij g_ij³,   c n b_1 / 6 → χ²(p(p+1)(p+2)/6),   c = (p+1)(n+1)(n+3) / (n((n+1)(p+1) − 6));
    b_2 = (1/n) Σ_i g_ii²,     (b_2 − E b_2) / √Var b_2 → N(0, 1)   (two-sided),

with E b_2 = p(p+2)(n−1)/(n+1) and Var b_2 = 8p(p+2)(n−3)(n−p−1)(n−p+1) / ((n+1)²(n+3)(n+5)), the exact
moments under normality (Mardia 1970, 1974; c → 1 and the moments → p(p+2), 8p(p+2)/n as n grows). Both are
affine invariant. The test's p-value is Bonferroni's of the two.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["ad_ksamp", "pair_spread", "exchangeability_test", "mardia_test"]


def ad_ksamp(x: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
    """A²_kN of the D columns of x (N, D) (module docstring), for the column assignments ``columns`` (B, N, D):
    value x[n, d] counts in column ``columns[b, n, d]`` (None: its own column d) → (B,) (or (1,)).

    With P_q(t) = Σ_{j<t} j^q w_j, w_j = 1/(j(M − j)) (w_0 = 0), and r_{i,1} < … < r_{i,N} the pooled ranks
    (0-based) of column i, M_ij = m for r_{i,m} < j ≤ r_{i,m+1}; summing the steps by parts,

        M·N·A²_kN = D (M²N² P_0(M) − 2MN² P_1(M) + N² P_2(M)) + 2MN Σ_{t=1}^{M} P_1(t)
                    − M² Σ_i Σ_m (2m − 1) P_0(r_{i,m} + 1),

    so only the last sum depends on the assignment: O(M) work each (a radix sort of the column labels).
    """
    n, d = x.shape
    total = n * d
    ranks = np.empty(total, dtype=np.int64)
    ranks[np.argsort(x.ravel(), kind="stable")] = np.arange(total)
    if columns is None:
        columns = np.broadcast_to(np.arange(d), (1, n, d))
    j = np.arange(total, dtype=float)
    w = np.zeros(total)
    w[1:] = 1.0 / (j[1:] * (total - j[1:]))
    p0, p1, p2 = (np.concatenate([[0.0], np.cumsum(w * j**power)]) for power in range(3))
    fixed = (d * (total**2 * n**2 * p0[-1] - 2 * total * n**2 * p1[-1] + n**2 * p2[-1])
             + 2 * total * n * p1[1:].sum())
    odd = 2 * np.arange(1, n + 1, dtype=float) - 1                                      # 2m − 1
    label_type = np.uint8 if d <= 255 else np.int16
    out = np.empty(columns.shape[0])
    batch = max(1, (1 << 22) // total)
    for start in range(0, columns.shape[0], batch):
        cols = columns[start:start + batch].reshape(-1, total)
        labels = np.empty(cols.shape, dtype=label_type)                                 # column of each pooled rank
        labels[:, ranks] = cols
        by_column = np.argsort(labels, axis=1, kind="stable").reshape(-1, d, n)        # r_{i,m}, increasing in m
        varying = (p0[by_column + 1] @ odd).sum(axis=1)
        out[start:start + batch] = (fixed - total**2 * varying) / (total * n)
    return out


def pair_spread(x: np.ndarray) -> np.ndarray:
    """T_pair of each batch x (B, N, D, K) → (B,) (module docstring)."""
    b, n, d, k = x.shape
    centred = x - x.mean(axis=1, keepdims=True)
    scaled = centred / np.sqrt((centred * centred).sum(axis=1, keepdims=True))
    flat = scaled.transpose(0, 1, 3, 2).reshape(b, n, k * d)                          # columns k-major
    corr = (flat.transpose(0, 2, 1) @ flat).reshape(b, k, d, k, d)
    off = ~np.eye(d, dtype=bool)
    total = np.zeros(b)
    for first in range(k):
        for second in range(first, k):
            block = corr[:, first, :, second, :]
            groups = [block[:, off]] + ([np.diagonal(block, axis1=1, axis2=2)] if first != second else [])
            for g in groups:
                total += ((g - g.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return total


def exchangeability_test(x: np.ndarray, permutations: int, rng: np.random.Generator) -> dict[str, Any]:
    """The within-row permutation test of exchangeable coordinates (module docstring) on x (N, D, K) (or (N, D)).

    Returns the observed statistics, their p-values and the test's (combined) ``p_value``.
    """
    if x.ndim == 2:
        x = x[:, :, None]
    n, d, k = x.shape
    if d < 2 or n < 3 or permutations < 1:
        raise ValueError(f"an exchangeability test needs ≥ 2 coordinates, ≥ 3 rows and ≥ 1 permutation "
                         f"(got {d}, {n}, {permutations})")
    columns = rng.permuted(np.broadcast_to(np.arange(d), (permutations, n, d)), axis=2)  # value d → column
    marg_obs = sum(float(ad_ksamp(x[:, :, i])[0]) for i in range(k))
    marg = sum(ad_ksamp(x[:, :, i], columns) for i in range(k))
    pair_obs = float(pair_spread(x[None])[0])
    pair = np.empty(permutations)
    batch = max(1, (1 << 22) // (n * d * k))
    for start in range(0, permutations, batch):
        cols = columns[start:start + batch]
        moved = np.empty((cols.shape[0], n, d, k))
        for i in range(k):
            np.put_along_axis(moved[..., i], cols, np.broadcast_to(x[:, :, i], cols.shape), axis=2)
        pair[start:start + batch] = pair_spread(moved)
    values = np.stack([np.concatenate([[marg_obs], marg]), np.concatenate([[pair_obs], pair])])   # (2, B + 1)
    logs = np.log(np.maximum(values, np.finfo(float).tiny))
    spread = logs.std(axis=1, keepdims=True)
    standard = (logs - logs.mean(axis=1, keepdims=True)) / np.where(spread > 0, spread, 1.0)
    combined = standard.max(axis=0)
    return {"permutations": permutations, "ad_statistic": marg_obs, "ad_z": float(standard[0, 0]),
            "ad_p_value": float(np.mean(values[0] >= marg_obs)), "pair_spread": pair_obs,
            "pair_z": float(standard[1, 0]), "pair_p_value": float(np.mean(values[1] >= pair_obs)),
            "p_value": float(np.mean(combined >= combined[0]))}


def mardia_test(x: np.ndarray) -> dict[str, Any]:
    """Mardia's multivariate skewness and kurtosis tests of normality of the rows of x (n, p) (module docstring).

    Returns b_1, b_2, their test statistics and p-values and the test's (Bonferroni) ``p_value``.
    """
    from scipy import stats  # imported when used: the figures command starts without it

    n, p = x.shape
    if n <= max(p + 1, 3):
        raise ValueError(f"Mardia's tests need more than max(p + 1, 3) = {max(p + 1, 3)} draws (got {n})")
    centred = x - x.mean(axis=0)
    cov = centred.T @ centred / n
    white = np.linalg.solve(np.linalg.cholesky(cov), centred.T).T                  # rows w_i, g_ij = w_i · w_j
    third = np.einsum("na,nb,nc->abc", white, white, white) / n                    # b_1 = Σ_abc (mean w_a w_b w_c)²
    b1 = float(np.sum(third * third))
    b2 = float(np.mean(np.sum(white * white, axis=1) ** 2))
    small = (p + 1) * (n + 1) * (n + 3) / (n * ((n + 1) * (p + 1) - 6))
    skew_stat, dof = small * n * b1 / 6, p * (p + 1) * (p + 2) / 6
    mean_b2 = p * (p + 2) * (n - 1) / (n + 1)
    var_b2 = 8 * p * (p + 2) * (n - 3) * (n - p - 1) * (n - p + 1) / ((n + 1) ** 2 * (n + 3) * (n + 5))
    kurt_z = (b2 - mean_b2) / math.sqrt(var_b2)
    p_skew = float(stats.chi2.sf(skew_stat, dof))
    p_kurt = float(2 * stats.norm.sf(abs(kurt_z)))
    return {"draws": n, "b1": b1, "b2": b2, "b2_gaussian": p * (p + 2), "skewness_chi2": skew_stat,
            "skewness_dof": dof, "skewness_p_value": p_skew, "kurtosis_z": kurt_z, "kurtosis_p_value": p_kurt,
            "p_value": min(1.0, 2 * min(p_skew, p_kurt))}
