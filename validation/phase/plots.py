"""The Fig. 7 heatmaps for ``python -m validation.phase``."""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.patches import Patch

from ..core.plots import new_grid

__all__ = ["plot_phase"]


def _edges(values: np.ndarray) -> np.ndarray:
    mid = (values[1:] + values[:-1]) / 2
    first = values[0] - (mid[0] - values[0]) if values.size > 1 else values[0] - 0.01
    last = values[-1] + (values[-1] - mid[-1]) if values.size > 1 else values[0] + 0.01
    return np.concatenate([[first], mid, [last]])


def plot_phase(result: dict[str, Any], vmax: float = 4.0, ax: Any = None) -> Any:
    """log10 r_h and log10 r_p over (H, β), clipped colour scale, overflow cells hatched, critical curves."""
    h = np.asarray(result["hursts"], dtype=float)
    b = np.asarray(result["betas"], dtype=float)
    fig, grid = new_grid(1, 2, ax, figsize=(13, 5.2), sharey=True)
    axes = grid[0]
    cmap = mpl.colormaps["RdBu_r"].with_extremes(bad="0.15")
    crit = result["critical_beta"]
    for ax, key, label in ((axes[0], "r_h", r"$\log_{10}\|h_L-h_0\|/\|h_0\|$"),
                           (axes[1], "r_p", r"$\log_{10}\|p_0-p_L\|/\|p_L\|$")):
        med = np.asarray(result["grid"][f"main_{key}_median_log10"], dtype=float)
        overflow_cell = ~np.isfinite(med)
        shown = np.ma.masked_where(overflow_cell, med)
        mesh = ax.pcolormesh(_edges(h), _edges(b), shown, cmap=cmap, vmin=-vmax, vmax=vmax, shading="flat")
        if overflow_cell.any():
            ax.pcolor(_edges(h), _edges(b), np.ma.masked_where(~overflow_cell, np.ones_like(med)),
                      hatch="xx", alpha=0.0, shading="flat")
        cbar = fig.colorbar(mesh, ax=ax, extend="both", pad=0.02)
        cbar.set_label(label + f"  (median; clipped at ±{vmax:g})")
        hh = np.linspace(h.min(), h.max(), 200)
        ax.plot(hh, np.where(hh > 0.5, hh, 0.5), color="lime", lw=2, ls="--",
                label="prediction β = H (H > ½), β = ½ (H < ½)")
        if f"depth_{key}" in crit:
            est = np.array([np.nan if v is None else v for v in crit[f"depth_{key}"]], dtype=float)
            ax.plot(h, est, "o-", color="gold", ms=3, lw=1.2,
                    label=f"measured β_c: r flat between L = {result['ref_depth']} and {result['depth']}")
        lev = np.array([np.nan if v is None else v for v in crit[f"level_{key}"]], dtype=float)
        ax.plot(h, lev, "s:", color="magenta", ms=2.5, lw=1, label=f"median r = 1 at L = {result['depth']}")
        n_over = result["overflow_samples"][f"main_{key}_overflow"]
        ax.set_title(f"{label}\n{n_over} overflowed samples, {int(overflow_cell.sum())} overflow cells "
                     f"(dark, hatched)", fontsize=10)
        ax.set_xlabel("Hurst index H")
        ax.set_xlim(h.min() - 0.01, h.max() + 0.01)
        ax.set_ylim(b.min(), b.max())
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Patch(facecolor="0.15", hatch="xx", label="overflow: median r = ∞ (float32)"))
        ax.legend(handles=handles, fontsize=7, loc="upper left")
    axes[0].set_ylabel("scaling β  (α_L = L^-β)")
    fig.suptitle(f"Fig. 7: res-3 with fractional weights, d = {result['width']}, L = {result['depth']}, "
                 f"{len(h)} H × {len(b)} β, {result['samples_per_cell']} samples per cell "
                 f"(red: explosion, white: r ≈ 1, blue: identity)", fontsize=11)
    return fig
