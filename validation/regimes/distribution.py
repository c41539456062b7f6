"""The ``distribution`` kind of regimes preset: the law of ‖h_L‖/‖h_0‖ and ‖p_0‖/‖p_L‖ at one depth and one β,
against the paper's quartile bounds and Prop. 3's one-sided bounds (Marion et al. Fig. 2; the preset ``fig2``),
its networks shared out to ``--workers`` in blocks of :data:`FIG2_BLOCK`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from limits.initialisation import Block, measure_ratios
from limits.regime_theory import prop3_norm_bounds
from validation.core import runtime
from validation.core.checks import Check
from validation.core.hypothesis import exceedance_check, lognormal_summary
from validation.core.plots import new_grid
from validation.core.settings import SettingsError
from validation.core.workers import run_tasks
from validation.regimes import assumptions as regime_assumptions

from validation.regimes.preset import (
    C_SAMPLES, SUB_GAUSSIAN_S, WeightsPreset, exceedance_summary, noise_dtype_of, progress_bar,
    prop3_applies, regime_of,
)


#: networks per task of a fig2 run (the unit that --workers shares out)
FIG2_BLOCK = 250


PAPER_FIG2 = {"bound_q1": 0.87, "bound_q3": 2.06, "empirical_q1": 1.21, "width": 100, "depth": 1000, "beta": 0.5}


def _fig2_block(task: tuple[Any, str, int, int]) -> dict[str, np.ndarray]:
    """The ratios of networks first … first + count − 1 of a fig2 run (a task of :func:`validation.core.workers.run_tasks`)."""
    s, device, first, count = task
    with runtime.threads(1 if s.workers > 1 or s.scheduler is not None else None):
        res = measure_ratios(regime_of(s), s.depths[0], [s.betas[0]], count, s.inputs, s.width, s.n_in,
                             Block(s.block, s.activation), seed=s.seed, label=("regimes", s.preset),
                             dtype=s.torch_dtype, device=device, memory_mb=s.chunk_mb, first=first,
                             noise_dtype=noise_dtype_of(s))
    return {k: getattr(res, k).reshape(-1).double().numpy() for k in ("r_h", "r_p", "n_h", "n_p")}


def _distribution(s: Any, device: torch.device, progress: bool) -> tuple[dict, dict]:
    depth, beta = s.depths[0], s.betas[0]
    tasks = [(s, str(device), first, min(FIG2_BLOCK, s.samples - first)) for first in range(0, s.samples, FIG2_BLOCK)]
    with progress_bar(s.samples, f"fig2 {regime_of(s).name}", progress) as bar:
        blocks = run_tasks(_fig2_block, tasks, s.workers, scheduler=s.scheduler,
                           on_result=lambda block: bar.update(block["r_h"].size // s.inputs))
    data = {k: np.concatenate([block[k] for block in blocks]) for k in ("r_h", "r_p", "n_h", "n_p")}
    paper_size = (s.regime == "iid" and s.block == "res3" and beta == PAPER_FIG2["beta"]
                  and depth == PAPER_FIG2["depth"] and s.width == PAPER_FIG2["width"])
    result = {
        "title": s.title, "beta": beta, "depth": depth, "width": s.width, "samples": int(data["n_h"].size),
        "tasks": len(tasks), "block": FIG2_BLOCK,
        "paper": PAPER_FIG2,
        "forward": lognormal_summary(data["n_h"], (PAPER_FIG2["bound_q1"], PAPER_FIG2["bound_q3"])),
        "backward": lognormal_summary(data["n_p"]),
        "forward_r_h": lognormal_summary(data["r_h"]),
    }
    nonfinite = sum(int((~np.isfinite(v)).sum()) for v in data.values())
    checks = [Check.of("no overflow",
                       nonfinite == 0,
                       f"{nonfinite} non-finite values").to_dict()]
    if paper_size:
        f = result["forward"]
        checks.append(Check.of("paper's Q1 bound",
                               f["q1_above_bound"],
                               f"Q1 {f['quartiles'][0]:.3f} ≥ {PAPER_FIG2['bound_q1']}").to_dict())
        checks.append(Check.of("paper's Q3 bound",
                               f["q3_below_bound"],
                               f"Q3 {f['quartiles'][2]:.3f} ≤ {PAPER_FIG2['bound_q3']}").to_dict())
    else:
        checks.append(Check.of("paper's quartile bounds",
                               True,
                               "not checked: they are stated for i.i.d. res-3, β = ½, L = 1000, d = 100").to_dict())
    if s.regime == "iid":
        result["quantile_bounds"] = _fig2_quantile_bounds(s, data["n_h"], Block(s.block, s.activation))
        if result["quantile_bounds"]["cells"]:
            checks.append(exceedance_summary("Prop. 3: each quantile of ‖h_L‖/‖h_0‖ against its own bound",
                                              result["quantile_bounds"]["cells"]).to_dict())
    result["checks"] = checks
    return result, data


#: the tail probabilities q of Fig. 2's quantile bounds: the q-quantile of ‖h_L‖/‖h_0‖ from below (Prop. 3 (i)),
#: the (1 − q)-quantile from above (Prop. 3 (ii)); ¼ gives the paper's quartile bounds
FIG2_TAILS = (0.1, 0.25, 0.5)


def _fig2_quantile_bounds(s: Any, ratios: np.ndarray, block: Block) -> dict[str, Any]:
    """Each quantile of ‖h_L‖/‖h_0‖ against the bound at its own tail probability δ (:func:`limits.regime_theory.
    prop3_norm_bounds`), where Prop. 3's conditions hold (the same as in :func:`_prop3_bounds`): the q-quantile is
    at least √exp(3Lα²/8 − √(11Lα²/(dq))), the (1 − q)-quantile at most √exp(Lα² + √(5Lα²/(dq))). Each is an
    exceedance probability ≤ q (Clopper–Pearson, Bonferroni over the cells, family-wise 1%). At q = ¼, d = 100,
    Lα² = 1 they are the paper's 0.87 and 2.06; Cor. 4 (iii) read as two-sided at δ = ¼ would give 0.755, 2.26."""
    depth, beta, d = s.depths[0], s.betas[0], s.width
    a2 = depth ** (-2.0 * beta)
    la2 = depth * a2
    C = regime_assumptions.eighth_moment_constant(block, s.law, d, C_SAMPLES, s.seed, s.torch_dtype)
    squared = np.asarray(ratios, dtype=np.float64) ** 2
    planned = []
    for q in FIG2_TAILS:
        lower, upper = prop3_norm_bounds(la2, d, q)
        lower_applies, upper_applies = prop3_applies(C, d, depth, a2, q)
        if lower_applies:
            planned.append((f"(i) {q:g}-quantile ≥ {lower:.3f}", lower, q, False))
        if upper_applies:
            planned.append((f"(ii) {1 - q:g}-quantile ≤ {upper:.3f}", upper, q, True))
    level = 0.01 / max(1, len(planned))
    cells = [{"bound_kind": kind, "beta": beta, "depth": depth, **exceedance_check(squared, bound**2, q, level, above=above),
              "bound_ratio": bound, "quantile_ratio": float(np.quantile(ratios, 1 - q if above else q))}
             for kind, bound, q, above in planned]
    return {"C": C, "s": SUB_GAUSSIAN_S, "width": d, "cells": cells, "cor4_two_sided_quarter": [
        math.sqrt(math.exp(3 * la2 / 8 - math.sqrt(22 * la2 / (d * 0.25)))),
        math.sqrt(math.exp(la2 + math.sqrt(10 * la2 / (d * 0.25))))]}


def _distribution_table(result: dict[str, Any]) -> str:
    lines = [f"{result['title']} — {result['samples']} samples",
             f"{'quantity':>16} | {'Q1':>7} {'median':>7} {'Q3':>7} | {'log mean':>8} {'log sd':>7} | "
             f"{'D’Agostino p':>12} {'Shapiro p':>10} {'KS p':>7}"]
    for key, name in (("forward", "‖h_L‖/‖h_0‖"), ("backward", "‖p_0‖/‖p_L‖"), ("forward_r_h", "‖h_L−h_0‖/‖h_0‖")):
        s = result[key]
        q1, q2, q3 = s["quartiles"]
        lines.append(f"{name:>16} | {q1:>7.3f} {q2:>7.3f} {q3:>7.3f} | {s['log_mean']:>8.3f} {s['log_sd']:>7.3f} | "
                     f"{s.get('dagostino_p', math.nan):>12.3g} {s.get('shapiro_p', math.nan):>10.3g} "
                     f"{s.get('ks_p', math.nan):>7.3g}")
    f = result["forward"]
    lines.append(f"paper: Q1 ≥ {PAPER_FIG2['bound_q1']} (bound) — measured {f['quartiles'][0]:.3f}: "
                 f"{'holds' if f['q1_above_bound'] else 'VIOLATED'}; paper's empirical Q1 {PAPER_FIG2['empirical_q1']}")
    lines.append(f"paper: Q3 ≤ {PAPER_FIG2['bound_q3']} (bound) — measured {f['quartiles'][2]:.3f}: "
                 f"{'holds' if f['q3_below_bound'] else 'VIOLATED'}")
    bounds = result.get("quantile_bounds")
    if bounds and bounds["cells"]:
        lo, hi = bounds["cor4_two_sided_quarter"]
        lines.append(f"each quantile of ‖h_L‖/‖h_0‖ against Prop. 3's one-sided bound at its own tail δ (C = "
                     f"{bounds['C']:.4g}, estimated); the paper's 0.87 and 2.06 are the δ = ¼ rows (Cor. 4 (iii) "
                     f"read as two-sided at δ = ¼ gives {lo:.3f} and {hi:.3f})")
        for c in bounds["cells"]:
            lines.append(f"  {c['bound_kind']:>24}: measured {c['quantile_ratio']:.3f}, {c['exceedances']}/{c['samples']} "
                         f"beyond — {c['verdict']}")
    return "\n".join(lines)


def plot_distribution(n_h: np.ndarray, n_p: np.ndarray, result: dict[str, Any], ax: Any = None) -> Any:
    """Histograms of ‖h_L‖/‖h_0‖ and ‖p_0‖/‖p_L‖ (log x), fitted log-normal, quartiles and the paper's
    bounds."""
    fig, grid = new_grid(1, 2, ax, figsize=(11, 4.2))
    axes = grid[0]
    for ax, values, key, label in (
        (axes[0], n_h, "forward", r"$\|h_L\|/\|h_0\|$"),
        (axes[1], n_p, "backward", r"$\|p_0\|/\|p_L\|$"),
    ):
        summary = result[key]
        v = values[np.isfinite(values) & (values > 0)]
        bins = np.geomspace(v.min(), v.max(), 60)
        ax.hist(v, bins=bins, density=True, color="0.7", label=f"{v.size} samples")
        mu, sd = summary["log_mean"], summary["log_sd"]
        xs = np.geomspace(v.min(), v.max(), 400)
        pdf = np.exp(-((np.log(xs) - mu) ** 2) / (2 * sd**2)) / (xs * sd * np.sqrt(2 * np.pi))
        ax.plot(xs, pdf, color="black", lw=1.2,
                label=f"log-normal fit (D'Agostino p = {summary.get('dagostino_p', float('nan')):.2g})")
        q1, _, q3 = summary["quartiles"]
        ax.axvline(q1, color="tab:orange", lw=1.5, label=f"measured Q1 = {q1:.2f}, Q3 = {q3:.2f}")
        ax.axvline(q3, color="tab:orange", lw=1.5)
        if key == "forward":
            lo, hi = result["paper"]["bound_q1"], result["paper"]["bound_q3"]
            ax.axvline(lo, color="tab:blue", ls="--", label=f"paper bounds Q1 ≥ {lo}, Q3 ≤ {hi}")
            ax.axvline(hi, color="tab:blue", ls="--")
            ax.axvline(result["paper"]["empirical_q1"], color="tab:red", ls=":",
                       label=f"paper's empirical Q1 = {result['paper']['empirical_q1']}")
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("density")
        ax.legend(fontsize=7)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(f"{result['title']}", fontsize=11)
    return fig


class Distribution(WeightsPreset):
    """One depth, one β: the laws of the norms (module docstring)."""

    kind = "distribution"
    applies = frozenset({"regime", "law", "lengthscale", "smooth_weights", "hurst", "block", "activation", "betas",
                         "depths", "width", "n_in", "samples", "inputs", "chunk_mb", "workers", "scheduler",
                         "noise_dtype"})
    kind_defaults = {**WeightsPreset.kind_defaults, "chunk_mb": 512.0, "workers": 1}

    def check_values(self, values: dict[str, Any], given: set[str]) -> None:
        super().check_values(values, given)
        if len(values["depths"]) != 1:
            raise SettingsError("depths", f"fig2 studies one depth, got {list(values['depths'])}")
        if len(values["betas"]) != 1:
            raise SettingsError("betas", f"fig2 studies one β, got {list(values['betas'])}")

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        return _distribution(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return _distribution_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[str, Any], ax: Any = None) -> Any:
        return plot_distribution(data["n_h"], data["n_p"], numbers, ax)
