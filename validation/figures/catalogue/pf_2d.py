"""The ``pf-2d`` figure: Peluchetti & Favaro (2020) Appendix B.4: 2-D function samples of x_{T,1}(z).

Peluchetti & Favaro's App. B.4, function samples of SC_tanh and SC_swish over z ∈ [−2, 2]², with
pf-function-space's non-degeneracy check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.seeding import stream_seed
from validation.core.checks import bound_check
from validation.core.plots import new_grid
from validation.core.stats import resampled_interval_batched
from validation.core.workers import TaskRunner
from validation.figures.figure import Figure
from validation.figures.pf_models import pf_megabytes, SC_MODELS, pc_fractions, resnet_outputs, top_pc_fraction
from validation.figures.plots import NAMES


def two_d_figure(s: Any, device: torch.device, progress: bool,
                 runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
    """**pf-2d** (App. B.4): function samples x_{T,1}(z) of SC_tanh and SC_swish over a grid of z ∈ [−2, 2]²
    (``--inputs`` points per axis; the input layer copies (z_1, z_2) alternately across the D dimensions, a choice
    the paper does not state, or ``--input-layer random``). Draw i is network i of ``pf-function-space`` (the same
    stream), read at 2-D inputs. Check, as in ``pf-function-space``: the draws are not degenerate — the first
    principal component of the draws (vectors over the grid) explains at most ``--resnet-max-pc`` of their
    variance (the upper end of its 95% bootstrap interval), a three-valued :func:`~validation.core.checks.bound_check`."""
    axis = np.linspace(-2.0, 2.0, s.inputs)
    z1, z2 = np.meshgrid(axis, axis, indexing="xy")
    grid = np.stack([z1.ravel(), z2.ravel()], axis=1)                    # (n², 2), row-major over (z2, z1)
    models, data, checks = [], {"axis": axis}, []
    with tqdm(total=2 * s.draws, desc="pf-2d", unit="draw", disable=not progress, leave=False, delay=2.0) as bar:
        for name, activation in SC_MODELS:
            values, _ = resnet_outputs(s, activation, grid, s.draws, None, device, bar, runner)
            keep = np.all(np.isfinite(values), axis=1)
            good = values[keep]
            rng = np.random.default_rng(stream_seed(s.seed, "figures", "bootstrap", "pf-2d", name))
            fraction = top_pc_fraction(good)
            low, high = resampled_interval_batched(pc_fractions, good, s.resamples, rng)
            half = s.inputs // 2
            surfaces = good.reshape(-1, s.inputs, s.inputs)
            models.append({"model": name, "kind": "resnet", "activation": activation, "nonfinite_draws": int((~keep).sum()),
                           "top_pc_fraction": fraction, "top_pc_ci95": [low, high],
                           "sd_along_z1": float(np.std(surfaces[:, half, :], axis=1).mean()),
                           "sd_along_z2": float(np.std(surfaces[:, :, half], axis=1).mean()),
                           "shown": surfaces[: s.show].tolist()})
            data[name] = surfaces[: s.show]
            checks.append(bound_check(f"{name}: not degenerate over z ∈ [−2, 2]²", (low, high), s.resnet_max_pc,
                                      at_most=True, detail=f"first PC explains {fraction:.3f} [{low:.3f}, {high:.3f}]"
                                      ).to_dict())
    result = {"draws": s.draws, "grid_per_axis": s.inputs, "input_layer": s.input_layer, "width": s.width,
              "depth": s.depth, "sigma_w": s.sigma_w, "sigma_b": s.sigma_b,
              "rule": f"first-PC fraction of the draws over the {s.inputs}² grid ≤ {s.resnet_max_pc:g} (upper 95% end)",
              "models": models, "checks": checks}
    return result, data


def two_d_table(r: dict[str, Any]) -> str:
    """The ``pf-2d`` console table."""
    lines = [f"{r['draws']} draws over a {r['grid_per_axis']}×{r['grid_per_axis']} grid of [−2, 2]², D = {r['width']}, "
             f"L = {r['depth']}, σ_w = {r['sigma_w']:g}, σ_b = {r['sigma_b']:g}, input layer {r['input_layer']}",
             f"rule: {r['rule']}",
             f"{'model':>9} | {'first PC [95% CI]':>26} | {'SD along z1':>11} {'SD along z2':>11} | {'non-finite':>10}"]
    for m in r["models"]:
        lo, hi = m["top_pc_ci95"]
        lines.append(f"{m['model']:>9} | {m['top_pc_fraction']:>8.3f} [{lo:>6.3f}, {hi:>6.3f}]    | "
                     f"{m['sd_along_z1']:>11.3f} {m['sd_along_z2']:>11.3f} | {m['nonfinite_draws']:>10}")
    return "\n".join(lines)


def plot_two_d(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F App. B.4: a few draws of x_{T,1}(z) over z ∈ [−2, 2]², one row per model, as filled contours."""
    models = numbers["models"]
    shown = min(len(data[m["model"]]) for m in models)
    if shown == 0:
        raise ValueError("pf-2d: no draw to show (--show 0)")
    fig, axes = new_grid(len(models), shown, ax, figsize=(3.6 * shown + 0.8, 3.3 * len(models)))
    axes = np.asarray(axes).reshape(len(models), shown)
    axis = np.asarray(data["axis"])
    for row, model in enumerate(models):
        for col in range(shown):
            panel = axes[row, col]
            surface = np.asarray(data[model["model"]][col])
            filled = panel.contourf(axis, axis, surface, levels=20, cmap="viridis")
            panel.contour(axis, axis, surface, levels=10, colors="white", linewidths=0.4, alpha=0.6)
            fig.colorbar(filled, ax=panel, shrink=0.85)
            panel.set_title(f"{NAMES[model['model']]}: draw {col + 1}", fontsize=10)
            panel.set_xlabel(r"$z_1$")
            panel.set_ylabel(r"$z_2$")
            panel.set_aspect("equal")
    fig.suptitle(f"Peluchetti & Favaro App. B.4: 2-D function samples of $x_{{T,1}}(z)$, D = {numbers['width']}, "
                 f"L = {numbers['depth']}", fontsize=11)
    return fig


class PF2D(Figure):
    """The ``pf-2d`` figure (module docstring)."""

    name = "pf-2d"
    title = "Peluchetti & Favaro (2020) Appendix B.4: 2-D function samples of x_{T,1}(z)"
    paper = (
        "App. B.4, Fig. 4: 2-D function samples of x_{T,1} for SC_tanh and SC_swish (L = D = 500), complementing "
        "Fig. 3"
    )
    shares_draws = True
    defaults = dict(
        width=32,
        depth=64,
        sigma_w=1.0,
        sigma_b=1.0,
        input_layer="copy",
        inputs=25,
        draws=200,
        show=3,
        resnet_max_pc=0.9,
        resamples=400,
    )
    smoke = dict(
        width=4,
        depth=4,
        inputs=5,
        draws=24,
        resamples=20,
        show=2,
    )
    rejects = {
        "ResNet function samples degenerate over the plane, every draw a constant function (planted records)":
            "tests/test_figures.py::test_pf_2d_fails_resnet_samples_that_are_constant_over_the_plane",
    }

    def estimate_seconds(self, s: Any) -> float:
        """Two ResNets, no edge-of-chaos network: ~5e-10 s per multiply-add, ~1.5e-8 s per normal drawn."""
        return 5e-10 * 2 * s.draws * s.depth * s.width**2 * (s.inputs**2 + 2) + 1.5e-8 * 2 * s.draws * s.depth * (
            s.width**2 + s.width)

    def estimate_mb(self, s: Any) -> float:
        return pf_megabytes(s)

    def compute(self, s: Any, device: torch.device, progress: bool,
                runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
        return two_d_figure(s, device, progress, runner)

    def table(self, numbers: dict[str, Any]) -> str:
        return two_d_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_two_d(numbers, data, ax)
