"""What the P&F figures' plots share: the models' names as the paper prints them, and a panel of function
samples with their quantile band (each figure's own plot is in its file of :mod:`validation.figures.catalogue`)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["NAMES", "samples_panel"]

#: the P&F models' names as the paper prints them
NAMES = {"SC_tanh": r"$\mathcal{SC}_{\tanh}$", "SC_swish": r"$\mathcal{SC}_{swish}$",
         "EO_tanh": r"$\mathcal{EO}_{\tanh}$", "EO_ReLU": r"$\mathcal{EO}_{ReLU}$"}


def samples_panel(ax: Any, z: np.ndarray, shown: list, quantiles: dict, colour: str, band: str, label: str) -> None:
    """Draws ``shown`` of a function over ``z`` and the 5/50/95% quantiles with a band between 5 and 95%."""
    for i, row in enumerate(shown):
        ax.plot(z, row, color=colour, lw=0.9, alpha=0.8, label=f"{label}: draws" if i == 0 else None)
    q = {int(k): np.asarray(v) for k, v in quantiles.items()}
    ax.fill_between(z, q[5], q[95], color=band, alpha=0.18, lw=0)
    for level, style in ((5, "--"), (50, "-"), (95, "--")):
        ax.plot(z, q[level], style, color=band, lw=1.4, label=f"{label}: 5/50/95% quantiles" if level == 50 else None)
