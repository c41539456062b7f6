"""The ``chizat-phase`` figure: Chizat (lecture 12) §3, Fig. 1: lazy ODE against local feature learning, over (β, γ).

the lecture's Fig. 1 — a few gradient steps at α = L^-β/√M, η = η₀ L^γ over a (β, γ)
grid; the predictor's change and the local share of the features' change against L classify each cell
(unstable, trivial, local feature learning, lazy ODE); depth-μP and CompleteP are checked.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.chizat import chizat_training_changes
from validation.core.checks import Check, bound_check, interval_check
from validation.core.plots import new_grid
from validation.figures.chizat_fits import ChizatFigure, exponent_fit_of_mean
from validation.core.workers import PROCESS_MB


#: the regimes of the lecture's Figure 1, as classified here
CLASSES = ("unstable", "trivial", "local feature learning", "lazy ODE")


#: (β, γ) of depth-μP (α = L^{-1/2}, SGD learning rate constant in L) and of CompleteP (α = L^{-1}, SGD learning rate
#: ∝ L): both on the line γ = 2β − 1 where the tangent kernel's scale, α² M L η ∝ L^{γ+1−2β}, is constant in L
DEPTH_MUP, COMPLETE_P = (0.5, 0.0), (1.0, 1.0)


def _classify(predictor: float, share: float, tau: float) -> str:
    if not (math.isfinite(predictor) and math.isfinite(share)) or predictor > tau:
        return "unstable"
    if predictor < -tau:
        return "trivial"
    return "local feature learning" if share >= -tau else "lazy ODE"


def phase_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """``chizat-phase`` (the lecture's Figure 1): for every (β, γ) of the grid, α = L^{-β}/√M and η = η₀ L^γ,
    ``--steps`` full-batch gradient steps from the same initialisation at every depth of ``--depths``
    (:func:`limits.chizat.chizat_training_changes`), and the exponents in L of the predictor's change and of the
    local share of the features' change, each with a 95% bootstrap interval over networks.

    Classification, the rule fixed before measuring (τ = ``--exponent-tolerance``): *unstable* when the predictor's
    change grows (exponent > τ, or a non-finite value); *trivial* when it vanishes (< −τ); otherwise *local feature
    learning* when the local share is of order 1 (exponent ≥ −τ), *lazy ODE* when it vanishes (< −τ).
    Expected (docs/theory.md, "Chizat §3, Figure 1"): the predictor's change scales as L^{γ+1−2β}, so the stable
    line is γ = 2β − 1; on it the local share scales as L^{2(β−1)} — lazy ODE for β < 1, local learning at β = 1.
    Checks: depth-μP (β = ½, γ = 0) has a predictor change of order 1 and a vanishing local share; CompleteP
    (β = 1, γ = 1) a predictor change and a local share of order 1 — each three-valued against ±τ."""
    tau = s.exponent_tolerance
    log_depths = np.log(np.asarray(s.depths, dtype=float))
    cells, data = [], {}
    total = len(s.betas) * len(s.gammas) * len(s.depths)
    with tqdm(total=total, desc="chizat-phase", unit="run", disable=not progress, leave=False, delay=2.0) as bar:
        for beta in s.betas:
            for gamma in s.gammas:
                runs = []
                for depth in s.depths:
                    runs.append(chizat_training_changes(
                        beta, gamma, depth, s.eta0, width=s.width, hidden=s.hidden, networks=s.networks,
                        samples=s.inputs, steps=s.steps, sigma_u=s.sigma_u, sigma_v=s.sigma_v, seed=s.seed,
                        label=("figures", "chizat-phase"), dtype=s.torch_dtype, device=device))
                    bar.update(1)
                predictor = np.stack([r["predictor"].numpy() for r in runs])          # (depths, networks)
                share = np.stack([r["share"].numpy() for r in runs])
                finite = bool(np.all(np.isfinite(predictor)) and np.all(np.isfinite(share)))
                fits = ({"predictor": exponent_fit_of_mean(predictor, log_depths, s.resamples, s.seed, "percentile"),
                         "share": exponent_fit_of_mean(share, log_depths, s.resamples, s.seed, "percentile")} if finite else
                        {"predictor": {"exponent": math.nan, "ci95": [math.nan, math.nan], "method": "not fitted"},
                         "share": {"exponent": math.nan, "ci95": [math.nan, math.nan], "method": "not fitted"}})
                with np.errstate(invalid="ignore", over="ignore"):  # a diverged cell: inf/NaN, flagged by "finite"
                    mean_predictor, mean_share = predictor.mean(axis=1), share.mean(axis=1)
                cell = {"beta": beta, "gamma": gamma, "finite": finite,
                        "mean_predictor_change": mean_predictor.tolist(), "mean_local_share": mean_share.tolist(),
                        "predictor_exponent": fits["predictor"], "share_exponent": fits["share"],
                        "class": _classify(fits["predictor"]["exponent"], fits["share"]["exponent"], tau)}
                cells.append(cell)
                data[(beta, gamma)] = {"predictor": predictor, "share": share}
    checks = []
    for name, (beta, gamma), share_side in (("depth-μP", DEPTH_MUP, "vanishes"), ("CompleteP", COMPLETE_P, "order 1")):
        cell = next((c for c in cells if math.isclose(c["beta"], beta) and math.isclose(c["gamma"], gamma)), None)
        label = f"{name} (β = {beta:g}, γ = {gamma:g})"
        if cell is None or not cell["finite"]:
            why = "the grid lacks this cell" if cell is None else "non-finite changes"
            checks += [Check(f"{label}: predictor change of order 1", "INCONCLUSIVE" if cell is None else "FAIL",
                             why).to_dict()]
            continue
        p, q = cell["predictor_exponent"], cell["share_exponent"]
        checks.append(interval_check(f"{label}: predictor change of order 1 in L", p["exponent"], tuple(p["ci95"]),
                                     (-tau, tau), s.networks, what=f"exponent {p['exponent']:.3f}, the 95% interval"
                                     ).to_dict())
        detail = f"exponent of the local share {q['exponent']:.3f} [{q['ci95'][0]:.3f}, {q['ci95'][1]:.3f}]"
        checks.append(bound_check(f"{label}: local share of the feature change {share_side}", tuple(q["ci95"]), -tau,
                                  at_most=share_side == "vanishes", detail=detail).to_dict())
    result = {
        "width": s.width, "hidden": s.hidden, "depths": list(s.depths), "networks": s.networks, "samples": s.inputs,
        "steps": s.steps, "eta0": s.eta0, "sigma_u": s.sigma_u, "sigma_v": s.sigma_v, "tau": tau,
        "scaling": "α = L^-β/√M, η = η₀ L^γ, full-batch gradient descent on (1/n) Σ ½‖h^L(x_i) − y_i‖²",
        "rule": (f"exponents in L (95% bootstrap over networks): unstable if the predictor's change grows (> {tau:g}), "
                 f"trivial if it vanishes (< −{tau:g}), else local feature learning if the local share's exponent ≥ "
                 f"−{tau:g}, lazy ODE if below"),
        "cells": cells, "checks": checks,
    }
    return result, data


def phase_table(r: dict[str, Any]) -> str:
    """The ``chizat-phase`` console table."""
    lines = [f"d = {r['width']}, M = {r['hidden']}, L = {r['depths']}, {r['networks']} networks × {r['samples']} "
             f"samples, {r['steps']} steps, η₀ = {r['eta0']:g}; {r['scaling']}", f"rule: {r['rule']}",
             f"{'β':>5} {'γ':>5} | {'predictor change by L':>30} {'exponent':>22} | {'local share by L':>26} "
             f"{'exponent':>22} | class"]
    for c in r["cells"]:
        pred = " ".join(f"{v:.3g}" for v in c["mean_predictor_change"])
        share = " ".join(f"{v:.3g}" for v in c["mean_local_share"])
        p, q = c["predictor_exponent"], c["share_exponent"]
        lines.append(f"{c['beta']:>5g} {c['gamma']:>5g} | {pred:>30} {p['exponent']:>7.3f} [{p['ci95'][0]:>6.3f}, "
                     f"{p['ci95'][1]:>6.3f}] | {share:>26} {q['exponent']:>7.3f} [{q['ci95'][0]:>6.3f}, "
                     f"{q['ci95'][1]:>6.3f}] | {c['class']}")
    return "\n".join(lines)


_CLASS_COLOURS = {"unstable": "tab:red", "trivial": "lightgray", "local feature learning": "tab:green",
                  "lazy ODE": "tab:orange"}


def plot_chizat_phase(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Left: the measured (β, γ) diagram, each cell coloured by its class, with the line γ = 2β − 1 and depth-μP
    and CompleteP marked. Middle and right: the local share and the predictor's change against L for every cell
    (the two marked cells bold)."""
    from matplotlib.patches import Patch

    fig, axes = new_grid(1, 3, ax, figsize=(16, 4.6))
    diagram, shares, changes = axes.ravel()
    cells = numbers["cells"]
    betas = sorted({c["beta"] for c in cells})
    gammas = sorted({c["gamma"] for c in cells})
    db = (betas[1] - betas[0]) if len(betas) > 1 else 0.25
    dg = (gammas[1] - gammas[0]) if len(gammas) > 1 else 0.5
    for c in cells:
        diagram.add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"]).Rectangle(
            (c["beta"] - db / 2, c["gamma"] - dg / 2), db, dg, color=_CLASS_COLOURS[c["class"]], alpha=0.8))
    line = np.array([min(betas) - db / 2, max(betas) + db / 2])
    diagram.plot(line, 2 * line - 1, "k--", lw=1, label="γ = 2β − 1 (kernel scale constant in L)")
    for (beta, gamma), name, marker in (((0.5, 0.0), "depth-μP", "o"), ((1.0, 1.0), "CompleteP", "*")):
        diagram.plot([beta], [gamma], marker, color="black", ms=11, label=name)
    diagram.set_xlim(min(betas) - db / 2, max(betas) + db / 2)
    diagram.set_ylim(min(gammas) - dg / 2, max(gammas) + dg / 2)
    diagram.set_xlabel(r"β  ($\alpha = L^{-\beta}/\sqrt{M}$)")
    diagram.set_ylabel(r"γ  ($\eta = \eta_0 L^{\gamma}$)")
    diagram.set_title("measured regimes", fontsize=10)
    handles = [Patch(color=colour, label=name) for name, colour in _CLASS_COLOURS.items()]
    diagram.legend(handles=handles + diagram.get_legend_handles_labels()[0], fontsize=7, loc="upper left")
    depths = np.asarray(numbers["depths"])
    for c in cells:
        marked = (c["beta"], c["gamma"]) in ((0.5, 0.0), (1.0, 1.0))
        style = dict(lw=2.2 if marked else 0.8, alpha=1.0 if marked else 0.5, color=_CLASS_COLOURS[c["class"]],
                     label=f"β = {c['beta']:g}, γ = {c['gamma']:g}" if marked else None)
        shares.loglog(depths, c["mean_local_share"], "o-", ms=3, **style)
        change = np.asarray(c["mean_predictor_change"], dtype=float)
        change[~(change < 1e3)] = np.nan  # a diverging cell (inf, NaN, or on its way) is not drawn past 10³
        changes.loglog(depths, change, "o-", ms=3, **style)
    for panel, title, label in ((shares, "local share of the features' change", "local / (local + below)"),
                                (changes, "predictor's change after the steps", r"mean $\|\Delta h^L\|$")):
        panel.set_xlabel("depth L")
        panel.set_ylabel(label)
        panel.set_title(title, fontsize=10)
        panel.grid(True, which="both", alpha=0.3)
        panel.legend(fontsize=7)
    fig.suptitle(f"Chizat §3, Fig. 1: {numbers['steps']} gradient steps, d = {numbers['width']}, M = {numbers['hidden']}, "
                 f"{numbers['networks']} networks", fontsize=11)
    return fig


class ChizatPhase(ChizatFigure):
    """The ``chizat-phase`` figure (module docstring)."""

    name = "chizat-phase"
    title = "Chizat (lecture 12) §3, Fig. 1: lazy ODE against local feature learning, over (β, γ)"
    paper = (
        "Fig. 1: the phase diagram of the relative speeds of the parameters and the predictor; local feature "
        "learning (the local weight's contribution to its feature's evolution is non-vanishing) against the lazy "
        "ODE regime (it vanishes, the features still move through the layers below); Dey et al. 2025"
    )
    defaults = dict(
        width=10,
        hidden=16,
        depths=(8, 32, 128, 512),
        betas=(0.5, 0.75, 1.0),
        gammas=(-0.5, 0.0, 0.5, 1.0, 1.5),
        eta0=0.05,
        steps=3,
        networks=16,
        inputs=4,
        sigma_u=None,
        sigma_v=1.0,
        exponent_tolerance=0.1,
        resamples=1000,
    )
    smoke = dict(
        width=3,
        hidden=3,
        depths=(4, 8, 16),
        betas=(0.5, 1.0),
        gammas=(0.0, 1.0),
        networks=6,
        inputs=2,
        steps=2,
        resamples=50,
    )
    rejects = {
        "blocks scaled L^{-β-1/2}/√M (1/L where depth-μP's 1/√L is claimed): the predictor's change still of order 1":
            "tests/test_chizat_plants.py::test_chizat_phase_fails_on_blocks_scaled_1_over_l_where_1_over_sqrt_l_is_claimed",
        "depth-μP learns features locally and CompleteP is a lazy ODE (each cell trained with the other's α and η)":
            "tests/test_chizat_plants.py::test_chizat_phase_fails_when_depth_mup_learns_features_locally",
    }

    def estimate_mb(self, s: Any) -> float:
        """Every network's weights and states at the deepest depth, nine times over: the gradients, the updated
        copies and autograd's saved tensors (measured: 557 MiB at the defaults, whose arrays are 25 MiB)."""
        item = s.torch_dtype.itemsize
        return PROCESS_MB + 9 * s.networks * s.depths[-1] * (2 * s.hidden * s.width + 2 * s.width * s.inputs) * item / 2**20

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
        return phase_figure(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return phase_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_chizat_phase(numbers, data, ax)
