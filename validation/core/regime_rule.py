"""The regimes' classification rule and critical β, shared by the regimes and phase studies.

**Classification rule** (:func:`classify`). For each β, fit the slope s of log(median r) against log L
over the top decade of depths (L ≥ L_max/10; every depth if fewer than two lie there). Then

    explosion     if s > τ,        identity     if s < −τ,        non-trivial   if |s| ≤ τ,

with τ = 0.15 by default. Medians are used because explosions are heavy-tailed; a non-finite ratio
(overflow) counts as +∞ in the median. Predicted slopes: i.i.d. identity 1/2 − β, smooth identity
1 − β, critical ≈ 0 (i.i.d.: E r² = (1 + 1/(2L))^L − 1 moves by 3% from L = 10 to 1000), explosion
grows like exp(c·L^{1−2β}) (i.i.d.) or exp(c·L^{1−β}) (smooth), so its local slope is large. τ = 0.15
separates 0 from the smallest identity slope in the presets (−0.5) with room for Monte-Carlo noise;
the bootstrap interval of s (resampling networks, the same at every depth) is reported with it.

**Critical β** (:func:`critical_beta`): the zero of s(β), by linear interpolation between the two
consecutive β values whose slopes change sign (finer β grids give sharper estimates).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .hypothesis import finite_or_inf
from .stats import slope_fit

__all__ = ["TAU", "fit_slope", "classify", "critical_beta"]

TAU = 0.15


def fit_slope(depths: list[int], r: np.ndarray, boot: int = 200, seed: int = 0) -> dict[str, Any]:
    """Slope of log median r on log L over the top decade; ``r`` has shape (len(depths), samples).

    Returns the slope (+inf when a median overflows), its 95% interval from the package's slope fit
    (:func:`validation.core.stats.slope_fit`: paired percentile bootstrap, networks resampled, the same indices at
    every depth; NaN when some resample's median overflows) and the depths used.
    """
    depths_arr = np.asarray(depths, dtype=np.float64)
    use = depths_arr >= depths_arr.max() / 10.0
    if use.sum() < 2:
        use[:] = True
    r = finite_or_inf(r)[use]
    fit = slope_fit(np.log(depths_arr[use]), list(r), lambda row, axis: np.log(np.median(row, axis=axis)),
                    resamples=boot, confidence=0.95, seed=seed, method="percentile", nonfinite_slope=np.inf)
    return {"slope": fit.slope, "ci95": [fit.low, fit.high], "depths_used": depths_arr[use].astype(int).tolist()}


def classify(slope: float, tau: float = TAU) -> str:
    """explosion (s > τ), identity (s < −τ) or non-trivial (|s| ≤ τ)."""
    if slope > tau:
        return "explosion"
    if slope < -tau:
        return "identity"
    return "non-trivial"


def critical_beta(betas: list[float], slopes: list[float]) -> float | None:
    """Zero of the slope s(β) by linear interpolation (β sorted); None if s never changes sign."""
    pairs = sorted(zip(betas, slopes))
    for (b0, s0), (b1, s1) in zip(pairs, pairs[1:]):
        if s0 == 0:
            return float(b0)
        if s0 > 0 > s1 or s0 < 0 < s1:
            if math.isinf(s0):
                return None
            return float(b0 + (b1 - b0) * s0 / (s0 - s1))
    if pairs and pairs[-1][1] == 0:
        return float(pairs[-1][0])
    return None
