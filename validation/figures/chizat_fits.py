"""What the Chizat figures share: their base class (σ_u defaults to 1/√d), the exponent of a mean in a log-spaced
variable (a paired bootstrap over networks, through the package's one slope fit) and the rule that an exponent from
fewer than three κ is a slope, not a fit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from validation.core.checks import Check
from validation.core.stats import slope_fit
from validation.figures.figure import Figure

__all__ = ["ChizatFigure", "FAMILY_LEVEL", "exponent_fit_of_mean", "too_few_kappas"]

#: the family-wise level of the closed-form checks (two-sided z, Bonferroni over the κ values)
FAMILY_LEVEL = 0.01


def exponent_fit_of_mean(values: np.ndarray, log_x: np.ndarray, resamples: int, seed: int,
                        method: str = "BCa") -> dict[str, Any]:
    """The exponent of a mean in x: the slope of log (mean over networks) on ``log_x``, with a paired bootstrap over
    networks (the same networks at every x; :func:`validation.core.stats.slope_fit`); ``values`` (x values,
    networks)."""
    fit = slope_fit(log_x, [values[j] for j in range(values.shape[0])],
                    lambda col, axis: np.log(np.mean(col, axis=axis)), resamples=resamples, confidence=0.95,
                    seed=seed, method=method)
    return {"exponent": fit.slope, "ci95": [fit.low, fit.high], "method": fit.method}


def too_few_kappas(check: Check, kappas: Any) -> Check:
    """An exponent check on fewer than 3 values of κ is INCONCLUSIVE: a slope, not a fit."""
    if len(kappas) >= 3:
        return check
    return Check(check.name, "INCONCLUSIVE", "an exponent from fewer than 3 values of κ is a slope, not a fit: give "
                                             "at least three --kappas")


class ChizatFigure(Figure):
    """A figure of the lecture's ResNet with ReLU 2LP blocks (:mod:`limits.chizat`): σ_u is 1/√d unless given."""

    def check_values(self, values: dict[str, Any]) -> None:
        if values.get("sigma_u") is None:
            values["sigma_u"] = 1.0 / math.sqrt(values["width"])
