"""The theory of the scaling regimes at initialisation that the studies check (Marion et al. 2022; docs/theory.md
§5): the critical scaling of fractional weights, Lemma 14 / Prop. 7's bounds on E r², the exact E r² of res-3,
Prop. 3's quantile bounds on ‖h_L‖/‖h_0‖, and the probability of Prop. 13's event for a Gaussian matrix. The
hypothesis tests that compare measurements with them are :mod:`validation.core.hypothesis`'s.

**Bounds** (:func:`lemma14_bounds`): Lemma 14 and Prop. 7 state, for i.i.d. symmetric unit-variance weights,
(1 + α²/2)^L − 1 ≤ E r² ≤ (1 + α²)^L − 1 for r = r_h and r = r_p, α = L^-β.

**Exact mean** (:func:`exact_mean_r2`): for res-3 (ReLU) with i.i.d. symmetric unit-variance weights,
E‖ReLU(W h)‖² = ‖h‖²/2 and E_V ‖V u‖² = ‖u‖², so E‖h_{k+1}‖² = (1 + α²/2) ‖h_k‖²; since E h_{k+1} = h_k (V is
centred and independent of h_k), E r_h² = (1 + α²/2)^L − 1 **exactly** — Lemma 14's lower bound, attained — and
likewise E r_p².

**Quantile bounds of Fig. 2** (:func:`prop3_norm_bounds`): the proof of Prop. 3 (before its last step, which
subtracts or adds 1 for r_h) shows, for each δ ∈ (0, 1) and separately,
P(‖h_L‖²/‖h_0‖² ≤ exp(3Lα²/8 − √(11Lα²/(dδ)))) ≤ δ and P(‖h_L‖²/‖h_0‖² ≥ exp(Lα² + √(5Lα²/(dδ)))) ≤ δ.
So the q-quantile of ‖h_L‖/‖h_0‖ is at least √exp(3Lα²/8 − √(11Lα²/(dq))) and its (1 − q)-quantile at most
√exp(Lα² + √(5Lα²/(dq))). At Lα² = 1, d = 100, q = ¼: 0.866 and 2.062, the paper's 0.87 and 2.06 (Cor. 4 (iii)
at δ = ½ gives the same numbers, because its union bound spends δ/2 = ¼ on each tail). Cor. 4 (iii) read as
a two-sided statement at δ = ¼ gives the looser 0.755 and 2.26.

**Ginibre reference** (:func:`positive_eigenvalue_probability`): Prop. 13 assumes that 𝒱(0)ᵀ has a positive
eigenvalue. 𝒱(0) has i.i.d. N(0, 1/d) entries, so the probability of that event is the one of a real Ginibre
matrix, estimated here by Monte Carlo (its own stream); Götze & Jalowy's 1 − 1/d is a lower bound for d large
enough only. The measured count over the networks is compared with it by an exact two-sided binomial test.
"""

from __future__ import annotations

import math

import torch

from .initialisation import largest_real_eigenvalue
from .seeding import generator

__all__ = ["fractional_critical_beta", "lemma14_bounds", "exact_mean_r2", "prop3_norm_bounds",
           "positive_eigenvalue_probability"]


def fractional_critical_beta(hurst: float) -> float:
    """The critical scaling of fractional weights of Hurst index H (docs/theory.md §5): max(H, ½)."""
    return max(float(hurst), 0.5)


def lemma14_bounds(beta: float, depth: int) -> tuple[float, float]:
    """((1 + α²/2)^L − 1, (1 + α²)^L − 1) with α = L^{-β} (Lemma 14 / Prop. 7)."""
    a2 = float(depth) ** (-2.0 * beta)
    return math.expm1(depth * math.log1p(a2 / 2.0)), math.expm1(depth * math.log1p(a2))


def exact_mean_r2(beta: float, depth: int) -> float:
    """E r² = (1 + α²/2)^L − 1, α = L^-β: exact for res-3 with i.i.d. symmetric unit-variance weights (module doc)."""
    return math.expm1(depth * math.log1p(float(depth) ** (-2.0 * beta) / 2.0))


def prop3_norm_bounds(la2: float, width: int, delta: float) -> tuple[float, float]:
    """(lower, upper) bounds on ‖h_L‖/‖h_0‖, each failing with probability at most δ on its own side (the proof of
    Marion et al.'s Prop. 3; module doc): √exp(3Lα²/8 − √(11Lα²/(dδ))) and √exp(Lα² + √(5Lα²/(dδ)))."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"δ={delta} is out of range (allowed: 0 < δ < 1)")
    lower = math.exp(0.5 * (3.0 * la2 / 8.0 - math.sqrt(11.0 * la2 / (width * delta))))
    upper = math.exp(0.5 * (la2 + math.sqrt(5.0 * la2 / (width * delta))))
    return lower, upper


def positive_eigenvalue_probability(width: int, draws: int, seed: int) -> tuple[float, float]:
    """(p, standard error): the probability that a d × d matrix of i.i.d. N(0, 1/d) entries has a positive real
    eigenvalue, from ``draws`` matrices of a stream of its own (module doc, "Ginibre reference")."""
    gen = generator(seed, "ginibre-reference", width)
    hits = 0
    for start in range(0, draws, 2000):
        count = min(2000, draws - start)
        matrices = torch.randn((count, width, width), generator=gen, dtype=torch.float64)
        hits += int((largest_real_eigenvalue(matrices).nan_to_num(nan=-1.0) > 0).sum())
    p = hits / draws
    return p, math.sqrt(p * (1.0 - p) / draws)
