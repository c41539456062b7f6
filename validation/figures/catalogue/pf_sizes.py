"""The ``pf-sizes`` figure: Peluchetti & Favaro (2020) SM B.3: function samples of x_{T,1}(z) over (L, D).

Peluchetti & Favaro's SM B.3 (Fig. 3) — the function samples of SC_tanh and SC_swish over a grid of
(L, D): the shape of their law (first-PC fraction, correlations) and its scale (variances) against the largest
cell's, within stated margins.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.activations import get_activation
from limits.peluchetti_favaro import simulate_gram
from limits.seeding import stream_seed
from validation.core.checks import FAIL, PASS, Check, combine, interval_check
from validation.core.plots import new_grid
from validation.core.stats import percentile_interval
from validation.core.settings import SettingsError
from validation.figures.figure import Figure
from validation.figures.pf_models import SC_MODELS
from validation.figures.plots import NAMES


#: pf-sizes' statistics of the function samples: the shape (first-PC fraction over the input grid, correlations at
#: two input pairs: the §4.1 pair and the ends of [−2, 2]) and the scale (the log SD at three inputs)
SIZE_PAIRS: tuple[tuple[float, float], ...] = ((0.0, 1.0), (-2.0, 2.0))


SIZE_SPREADS: tuple[float, ...] = (0.0, 1.0, 2.0)


def _nearest(grid: np.ndarray, value: float) -> int:
    return int(np.argmin(np.abs(grid - value)))


def pooled_covariances(first: torch.Tensor, second: torch.Tensor, count: int) -> torch.Tensor:
    """The covariance over the inputs of function draws pooled over networks and coordinates, from per-network sums:
    ``first`` (R, n, K) = Σ_d x_d, ``second`` (R, n, K, K) = Σ_d x_d x_dᵀ over the ``count`` coordinates of each
    network (the D coordinates are exchangeable, so each is a draw of the same law) → (R, K, K)."""
    total = first.shape[1] * count
    mean = first.sum(1) / total
    return (second.sum(1) - total * mean[:, :, None] * mean[:, None, :]) / (total - 1)


def size_statistics(cov: torch.Tensor, grid: np.ndarray) -> dict[str, torch.Tensor]:
    """pf-sizes' statistics from covariances over the input grid (R, K, K) → each (R,): ``first PC`` (λ_max/trace),
    ``ρ(z1, z2)`` for :data:`SIZE_PAIRS` and ``log SD(z)`` for :data:`SIZE_SPREADS` (nearest grid points)."""
    values = torch.linalg.eigvalsh(cov)
    out = {"first PC": values[..., -1] / values.sum(-1)}
    var = torch.diagonal(cov, dim1=-2, dim2=-1)
    for a, b in SIZE_PAIRS:
        i, j = _nearest(grid, a), _nearest(grid, b)
        out[f"ρ({grid[i]:g}, {grid[j]:g})"] = cov[:, i, j] / (var[:, i] * var[:, j]).sqrt()
    for z in SIZE_SPREADS:
        i = _nearest(grid, z)
        out[f"log SD({grid[i]:g})"] = 0.5 * var[:, i].log()
    return out


def agreement_check(name: str, cells: Sequence[dict[str, Any]], statistic: str, tolerance: float,
                    samples: int) -> Check:
    """Three-valued, over the judged cells: every cell's difference from the reference cell (its 95% bootstrap
    interval, ``cells[i]["differences"][statistic]``) within ± tolerance — FAIL if one lies wholly outside, PASS if
    all lie inside, INCONCLUSIVE otherwise; the detail names the farthest cell."""
    judged = [c for c in cells if c["judged"] and not c["reference"]]
    if not judged:
        return Check(name, FAIL, "no judged cell besides the reference")
    checks = [interval_check(name, c["differences"][statistic]["value"], tuple(c["differences"][statistic]["ci95"]),
                             (-tolerance, tolerance), samples, what=f"L = {c['depth']}, D = {c['width']}: the 95% "
                                                                   "interval")
              for c in judged]
    verdict = combine(checks)
    far = max(range(len(judged)), key=lambda i: abs(judged[i]["differences"][statistic]["value"]))
    shown = next((c for c in checks if c.verdict == verdict and verdict != PASS), checks[far])
    inside = sum(c.verdict == PASS for c in checks)
    return Check(name, verdict, f"{inside}/{len(checks)} cells within ± {tolerance:g} of the reference; farthest "
                                f"L = {judged[far]['depth']}, D = {judged[far]['width']}: "
                                f"{judged[far]['differences'][statistic]['value']:+.3f}; {shown.detail}",
                 shown.samples_needed)


def sizes_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """**pf-sizes** (P&F SM B.3, Fig. 3: "similar dynamics across different orders of magnitude for both L and D"):
    the function samples x_{T,1}(z) of SC_tanh and SC_swish (x_0 = z·1, fully i.i.d. parameters) over ``--inputs``
    points of [−2, 2], ``--draws`` networks in every cell of ``--depths`` × ``--widths``, simulated exactly in law by
    :func:`limits.peluchetti_favaro.simulate_gram` (per layer the K pre-activations of each coordinate are drawn from
    their joint Gaussian law given the state: O(N·D·K) per layer instead of O(N·D²)). Per cell: the shape of the
    law (first-PC fraction, ρ at :data:`SIZE_PAIRS`) and its scale (log SD at :data:`SIZE_SPREADS`), each with a
    95% bootstrap interval, and its difference from the reference cell (the largest L and D; the two cells
    resampled independently). Checks, one per model and statistic, three-valued: the shape within
    ± ``--shape-tolerance`` in every cell; the scale (log ratio) within ± ``--scale-tolerance`` in the cells with
    L ≥ ``--judged-depth`` and D ≥ ``--judged-width`` (the smaller cells are tabulated, not judged)."""
    grid = np.linspace(-2.0, 2.0, s.inputs)
    cells, data = [], {"grid": grid}
    names = [n for n, _ in SC_MODELS]
    with tqdm(total=len(names) * len(s.depths) * len(s.widths) * s.draws, desc="pf-sizes", unit="draw",
              disable=not progress, leave=False, delay=2.0) as bar:
        for name, activation in SC_MODELS:
            for depth in s.depths:
                for width in s.widths:
                    values = simulate_gram(get_activation(activation), grid, width, depth, s.draws, mode="network",
                                           sigma_w=s.sigma_w, sigma_b=s.sigma_b, seed=s.seed,
                                           stream=f"figures/pf-sizes/{activation}/{depth}/{width}",
                                           dtype=s.torch_dtype, device=device, keep=None).double().cpu()  # (N, D, K)
                    keep = torch.isfinite(values).flatten(1).all(dim=1)
                    good = values[keep]
                    first, second = good.sum(1), torch.einsum("ndk,ndl->nkl", good, good)
                    rng = np.random.default_rng(stream_seed(s.seed, "figures", "bootstrap", "pf-sizes", name, depth,
                                                            width))
                    index = torch.as_tensor(rng.integers(0, len(good), (s.resamples, len(good))))
                    point = {k: float(v[0]) for k, v in
                             size_statistics(pooled_covariances(first[None], second[None], width), grid).items()}
                    step = max(1, (1 << 23) // max(1, second[0].numel() * len(good)))
                    parts = [size_statistics(pooled_covariances(first[index[i:i + step]], second[index[i:i + step]],
                                                                width), grid) for i in range(0, s.resamples, step)]
                    replicates = {k: torch.cat([p[k] for p in parts]).numpy() for k in point}
                    cells.append({"model": name, "activation": activation, "depth": depth, "width": width,
                                  "nonfinite_draws": int((~keep).sum()), "statistics": point,
                                  "ci95": {k: percentile_interval(v) for k, v in replicates.items()},
                                  "_replicates": replicates,
                                  "reference": depth == s.depths[-1] and width == s.widths[-1],
                                  "judged": depth >= s.judged_depth and width >= s.judged_width})
                    data[(name, depth, width)] = {"shown": good[: s.show, 0].numpy(),
                                                  "quantiles": np.quantile(good[:, 0].numpy(), [0.05, 0.5, 0.95],
                                                                           axis=0)}
                    bar.update(s.draws)
    statistics = list(cells[0]["statistics"])
    models, checks, outside = [], [], []
    for name in names:
        own = [c for c in cells if c["model"] == name]
        reference = next(c for c in own if c["reference"])
        for c in own:
            c["differences"] = {}
            for k in statistics:
                diff = c["_replicates"][k] - reference["_replicates"][k]
                c["differences"][k] = {"value": c["statistics"][k] - reference["statistics"][k],
                                       "ci95": [0.0, 0.0] if c["reference"] else percentile_interval(diff)}
        for c in own:
            del c["_replicates"]
        for k in statistics:
            scale = k.startswith("log SD")
            tolerance = s.scale_tolerance if scale else s.shape_tolerance
            what = (f"{name}: {k} agrees across (L, D) ({'log ratio' if scale else 'difference'} to L = "
                    f"{reference['depth']}, D = {reference['width']} within ± {tolerance:g}, cells L ≥ "
                    f"{s.judged_depth}, D ≥ {s.judged_width})")
            checks.append(agreement_check(what, own, k, tolerance, s.draws).to_dict())
            for c in own:
                a, b = c["differences"][k]["ci95"]
                if not c["judged"] and (b < -tolerance or a > tolerance):
                    outside.append({"model": name, "depth": c["depth"], "width": c["width"], "statistic": k,
                                    "difference": c["differences"][k]["value"], "ci95": [a, b]})
        models.append({"model": name, "kind": "resnet", "activation": dict(SC_MODELS)[name], "cells": own})
    result = {"depths": list(s.depths), "widths": list(s.widths), "inputs": len(grid), "draws": s.draws,
              "sigma_w": s.sigma_w, "sigma_b": s.sigma_b, "statistics": statistics,
              "judged_depth": s.judged_depth, "judged_width": s.judged_width,
              "shape_tolerance": s.shape_tolerance, "scale_tolerance": s.scale_tolerance,
              "rule": (f"each cell's statistic minus the reference cell's (L = {s.depths[-1]}, D = {s.widths[-1]}), "
                       "95% bootstrap interval over the networks (the D coordinates pooled): the shape (first PC, ρ) "
                       f"within ± {s.shape_tolerance:g}, the scale (log SD) within ± {s.scale_tolerance:g}, judged in "
                       f"the cells L ≥ {s.judged_depth}, D ≥ {s.judged_width}; PASS inside, FAIL wholly outside, "
                       "INCONCLUSIVE across an edge"),
              "not_judged_outside": outside, "models": models, "checks": checks}
    return result, data


_WIDTH = 35


def sizes_table(r: dict[str, Any]) -> str:
    """The ``pf-sizes`` console table: every cell's statistics and its difference from the reference cell
    (``*`` inside the margin, ``x`` wholly outside, ``?`` across an edge; in parentheses for a cell not judged)."""
    stats = r["statistics"]
    lines = [f"{r['draws']} draws per cell, {r['inputs']} inputs on [−2, 2], σ_w = {r['sigma_w']:g}, σ_b = "
             f"{r['sigma_b']:g}; L ∈ {r['depths']}, D ∈ {r['widths']}",
             f"rule: {r['rule']}",
             "value [95% CI] difference from the reference: * inside the margin, x wholly outside, ? across an edge; "
             "in parentheses: a cell not judged"]
    for m in r["models"]:
        for block in ([k for k in stats if not k.startswith("log SD")], [k for k in stats if k.startswith("log SD")]):
            margin = r["scale_tolerance"] if block[0].startswith("log SD") else r["shape_tolerance"]
            lines.append(f"{m['model']} (margin ± {margin:g}):")
            lines.append(f"  {'L':>5} {'D':>5} | " + " | ".join(f"{k:>{_WIDTH}}" for k in block) + " | non-finite")
            for c in m["cells"]:
                parts = []
                for k in block:
                    lo, hi = c["ci95"][k]
                    d = c["differences"][k]
                    a, b = d["ci95"]
                    mark = "*" if -margin <= a and b <= margin else ("x" if b < -margin or a > margin else "?")
                    mark = "ref" if c["reference"] else (mark if c["judged"] else f"({mark})")
                    parts.append(f"{c['statistics'][k]:.3f} [{lo:.3f}, {hi:.3f}] {d['value']:+.3f}{mark}".rjust(_WIDTH))
                lines.append(f"  {c['depth']:>5} {c['width']:>5} | " + " | ".join(parts)
                             + f" | {c['nonfinite_draws']:>10}")
    if r["not_judged_outside"]:
        lines.append(f"cells not judged whose difference lies wholly outside the margin "
                     f"({len(r['not_judged_outside'])}):")
        lines += [f"  {e['model']} L = {e['depth']}, D = {e['width']}: {e['statistic']} {e['difference']:+.3f} "
                  f"[{e['ci95'][0]:+.3f}, {e['ci95'][1]:+.3f}]" for e in r["not_judged_outside"]]
    return "\n".join(lines)


def plot_sizes(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F SM B.3 (Fig. 3) quantified: per model, the 5/50/95% quantiles of x_{T,1}(z) in every (L, D) cell (colour:
    L, line style: D) with draws of the reference cell; the shape statistics' and the log SDs' differences from the
    reference cell with their 95% intervals and margins (hollow markers: cells not judged)."""
    fig, axes = new_grid(2, 3, ax, figsize=(15.5, 8.6))
    grid = np.asarray(data["grid"]) if "grid" in data else np.linspace(-2, 2, numbers["inputs"])
    depths, widths = numbers["depths"], numbers["widths"]
    colours = dict(zip(depths, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"] * 4))
    styles = dict(zip(widths, [":", "--", "-", "-."] * 4))
    stats = numbers["statistics"]
    for row, m in zip(axes, numbers["models"]):
        samples, shape_ax, scale_ax = row
        name = m["model"]
        for c in m["cells"]:
            entry = data.get((name, c["depth"], c["width"]))
            if entry is None:
                continue
            q = np.asarray(entry["quantiles"])
            label = f"L = {c['depth']}, D = {c['width']}"
            for i, level in enumerate(q):
                samples.plot(grid, level, styles[c["width"]], color=colours[c["depth"]], lw=1.0,
                             label=label if i == 1 else None)
            if c["reference"]:
                for draw in np.asarray(entry["shown"]):
                    samples.plot(grid, draw, color="black", lw=0.7, alpha=0.6)
        samples.set_xlabel("z")
        samples.set_ylabel(r"$x_{T,1}(z)$: 5/50/95% quantiles")
        samples.set_title(f"{NAMES.get(name, name)}: quantiles in every (L, D) cell\n(black: draws of the "
                          "reference cell)", fontsize=10)
        samples.legend(fontsize=6, ncol=2)
        labels = [f"{c['depth']}/{c['width']}" for c in m["cells"]]
        x = np.arange(len(labels))
        for panel, keys, margin in ((shape_ax, [k for k in stats if not k.startswith("log SD")],
                                     numbers["shape_tolerance"]),
                                    (scale_ax, [k for k in stats if k.startswith("log SD")], numbers["scale_tolerance"])):
            for j, key in enumerate(keys):
                shift = (j - (len(keys) - 1) / 2) * 0.18
                for i, c in enumerate(m["cells"]):
                    d = c["differences"][key]
                    lo, hi = d["ci95"]
                    panel.errorbar(x[i] + shift, d["value"], yerr=[[d["value"] - lo], [hi - d["value"]]], fmt="o",
                                   color=f"C{j}", ms=4, capsize=2, mfc=f"C{j}" if c["judged"] else "white",
                                   label=key if i == 0 else None)
            panel.axhspan(-margin, margin, color="tab:green", alpha=0.12, lw=0)
            panel.axhline(0, color="black", lw=0.6)
            panel.set_xticks(x)
            panel.set_xticklabels(labels, rotation=45, fontsize=7)
            panel.set_xlabel("L / D")
            panel.legend(fontsize=7)
        shape_ax.set_ylabel("difference from the reference cell")
        shape_ax.set_title(f"{NAMES.get(name, name)}: the shape (margin ± {numbers['shape_tolerance']:g}; hollow: "
                           "not judged)", fontsize=10)
        scale_ax.set_ylabel("log SD ratio to the reference cell")
        scale_ax.set_title(f"{NAMES.get(name, name)}: the scale (margin ± {numbers['scale_tolerance']:g})",
                           fontsize=10)
        for panel in row:
            panel.grid(True, alpha=0.3)
    fig.suptitle(f"Peluchetti & Favaro SM B.3: function samples across (L, D), {numbers['draws']} networks per cell",
                 fontsize=11)
    return fig


class PFSizes(Figure):
    """The ``pf-sizes`` figure (module docstring)."""

    name = "pf-sizes"
    title = "Peluchetti & Favaro (2020) SM B.3: function samples of x_{T,1}(z) over (L, D)"
    paper = (
        "SM B.3, Fig. 3: function samples of SC_tanh and SC_swish for several L and D, \"similar dynamics across "
        "different orders of magnitude for both L and D\" (a picture, no numbers)"
    )
    defaults = dict(
        depths=(16, 64, 256),
        widths=(8, 32, 128),
        inputs=9,
        draws=500,
        show=3,
        sigma_w=1.0,
        sigma_b=1.0,
        shape_tolerance=0.1,
        scale_tolerance=0.15,
        judged_depth=64,
        judged_width=32,
        resamples=400,
    )
    smoke = dict(
        depths=(4, 8),
        widths=(4, 8),
        inputs=5,
        draws=200,
        judged_depth=4,
        judged_width=4,
        resamples=100,
        show=2,
    )
    rejects = {
        "a judged cell whose ρ(0, 1) lies 0.3 from the reference cell's (planted records)":
            "tests/test_pf_relu_sizes.py::test_sizes_check_fails_on_a_planted_difference",
        "that SC_tanh's spread at |z| = 2 at depth 16 already matches the deep reference":
            "tests/test_pf_relu_sizes.py::test_shallow_tanh_networks_are_measurably_narrower",
    }

    def check_values(self, values: dict[str, Any]) -> None:
        if values["inputs"] < 5:
            raise SettingsError("inputs", f"{values['inputs']}: pf-sizes needs at least 5 inputs on [−2, 2] (its "
                                          "statistics read z = −2, 0, 1, 2)")
        judged = [(L, D) for L in values["depths"] for D in values["widths"]
                  if L >= values["judged_depth"] and D >= values["judged_width"]]
        if len(judged) < 2:
            raise SettingsError("judged_depth", f"--judged-depth {values['judged_depth']} and --judged-width "
                                                f"{values['judged_width']} leave no cell of --depths × --widths to judge "
                                                "besides the reference (the largest L and D)")

    def estimate_mb(self, s: Any) -> float:
        """A chunk's Gram states, every cell's resampled statistics, a batch of resamples."""
        item = s.torch_dtype.itemsize
        cells = 2 * len(s.depths) * len(s.widths)
        return (6 * min(1000, s.draws) * s.widths[-1] * s.inputs * item + cells * 8 * s.resamples * 8
                + 4 * 2**23 * 8) / 2**20 + 300

    def estimate_seconds(self, s: Any) -> float:
        """Per layer and draw: a K × K eigen-decomposition and O(D·K²) products."""
        layers = 2 * sum(s.depths) * len(s.widths)
        return 1.2e-8 * layers * s.draws * s.inputs**2 * 1.5 + 5e-9 * 2 * sum(s.depths) * sum(s.widths) * s.draws * (
            s.inputs**2 + 3 * s.inputs)

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
        return sizes_figure(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return sizes_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_sizes(numbers, data, ax)
