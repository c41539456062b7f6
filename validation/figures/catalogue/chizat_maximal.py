"""The ``chizat-maximal`` figure: Chizat (lecture 12) Remark 2.2: Doob's maximal inequality for ‖h^ℓ − x‖².

S^ℓ = ‖h^ℓ − x‖²/‖x‖² for the ResNet with ReLU 2LP blocks at α = κ/√(ML) is a
nonnegative submartingale, so (Doob) P(sup_ℓ S^ℓ ≥ a) ≤ E[S^L]/a with E[S^L] = (1 + cα²M)^L − 1 exactly,
and E[sup_ℓ S^ℓ] ≤ 4 E[S^L]. Checks (Monte Carlo with 95% bootstrap intervals): for every κ and every
threshold a = m·E[S^L] (``--thresholds`` lists m), the lower end of the interval of P̂(sup S ≥ a) is at
most ``--tail-constant``·E[S^L]/a; the lower end of the interval of E[sup S]/E[S^L] is at most
``--doob-constant`` (4). A deliberately wrong constant (e.g. ``--doob-constant 1``) FAILs. Doob's bounds are
loose, so no plausible implementation fails them; the check a wrong one fails is the exact mean: the Monte-Carlo
mean of S^L within z standard errors of (1 + cα²M)^L − 1 (Bonferroni over κ, family-wise 1%; counted when the
draws resolve the tail, as in :func:`validation.core.hypothesis.bounds_check`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from limits.chizat import chizat_constant, chizat_expected_spread, chizat_spread
from validation.core.checks import Check
from validation.core.hypothesis import bounds_check, family_z
from validation.core.plots import new_grid
from validation.core.stats import resampled_interval
from validation.figures.chizat_fits import ChizatFigure
from validation.figures.figure import figure_rng
from validation.core.workers import PROCESS_MB


def _chizat(s: Any, device: torch.device, progress: bool) -> tuple[dict, dict]:
    d, m, layers, n = s.width, s.hidden, s.layers, s.networks
    c = chizat_constant(d, s.sigma_u, s.sigma_v)
    alphas = [k / math.sqrt(m * layers) for k in s.kappas]
    spread = chizat_spread(alphas, width=d, hidden=m, layers=layers, networks=n, sigma_u=s.sigma_u,
                           sigma_v=s.sigma_v, seed=s.seed, label=("figures", "chizat-maximal"),
                           dtype=s.torch_dtype, device=device).numpy()  # (alphas, L + 1, n)
    per_kappa, checks, data = [], [], {}
    for j, (kappa, alpha) in enumerate(zip(s.kappas, alphas)):
        final = spread[j, -1]
        sup = spread[j].max(axis=0)
        exact = float(chizat_expected_spread(alpha, m, layers, c)[-1])
        rng = figure_rng(s.seed, "bootstrap", s.figure, kappa)
        ratio = lambda i: float(sup[i].mean() / final[i].mean())  # noqa: E731, B023
        ratio_ci = resampled_interval(ratio, n, s.resamples, rng)
        tails = []
        for multiple in s.thresholds:
            a = multiple * exact
            hits = (sup >= a).astype(float)
            p = float(hits.mean())
            ci = resampled_interval(lambda i: float(hits[i].mean()), n, s.resamples, rng)  # noqa: B023 (called within this iteration)
            bound = s.tail_constant * exact / a
            tails.append({"multiple": multiple, "a": a, "p_sup": p, "p_sup_ci95": ci,
                          "p_final": float((final >= a).mean()), "bound": bound,
                          "passed": bool(ci[0] <= bound)})
        entry = {"kappa": kappa, "alpha": alpha, "exact_mean_final": exact, "mc_mean_final": float(final.mean()),
                 "mc_mean_final_ci95": resampled_interval(lambda i: float(final[i].mean()), n, s.resamples, rng),  # noqa: B023 (called within this iteration)
                 "mc_mean_sup": float(sup.mean()), "ratio_sup_final": ratio(np.arange(n)),
                 "ratio_ci95": ratio_ci, "tails": tails}
        per_kappa.append(entry)
        data[kappa] = {"sup": sup, "final": final}
        worst = max(tails, key=lambda e: e["p_sup_ci95"][0] / e["bound"])
        checks.append(Check.of(f"κ = {kappa:g}: P(sup S ≥ a) ≤ {s.tail_constant:g}·E[S^L]/a",
                               all(e["passed"] for e in tails),
                               f"{sum(e['passed'] for e in tails)}/{len(tails)} thresholds; tightest a = "
                               f"{worst['multiple']:g}·E[S^L]: P̂ = {worst['p_sup']:.4f} [{worst['p_sup_ci95'][0]:.4f}, "
                               f"{worst['p_sup_ci95'][1]:.4f}] vs bound {worst['bound']:.4f}").to_dict())
        checks.append(Check.of(f"κ = {kappa:g}: E[sup S] ≤ {s.doob_constant:g}·E[S^L]",
                               bool(ratio_ci[0] <= s.doob_constant),
                               f"E[sup S]/E[S^L] = {entry['ratio_sup_final']:.3f} [{ratio_ci[0]:.3f}, "
                               f"{ratio_ci[1]:.3f}]; lower end ≤ {s.doob_constant:g}").to_dict())
        # Doob's bounds cannot fail for any plausible implementation; the exact mean they rest on can
        mean_check = bounds_check(np.sqrt(final), exact, exact, family_z(len(s.kappas)))
        entry["exact_mean_check"] = mean_check
        outside = not mean_check["passed"]
        checks.append(Check.counted(
            f"κ = {kappa:g}: E[S^L] = (1 + cα²M)^L − 1 (exact)", outside and mean_check["reliable"],
            outside and not mean_check["reliable"],
            f"Monte Carlo {mean_check['mean_r2']:.4g} ± {mean_check['se']:.2g} against {exact:.4g}: z = "
            f"{mean_check['z_vs_lower']:.2f}, |z| ≤ {family_z(len(s.kappas)):.2f} (Bonferroni, 1%)"
            + ("" if mean_check["reliable"] else "; not counted: too few samples for the tail of S^L")).to_dict())
    result = {"width": d, "hidden": m, "layers": layers,
              "networks": n, "c": c, "sigma_u": s.sigma_u, "sigma_v": s.sigma_v,
              "rule": "S^ℓ = ‖h^ℓ − x‖²/‖x‖², E[S^L] = (1 + cα²M)^L − 1 exactly (Prop. 2.1); PASS when the lower end of "
                      f"the 95% bootstrap interval of each Monte-Carlo estimate is at most its bound: P(sup S ≥ a) ≤ "
                      f"{s.tail_constant:g}·E[S^L]/a, E[sup S]/E[S^L] ≤ {s.doob_constant:g}; and the mean of S^L is "
                      "within z standard errors of its exact value (the check a wrong implementation fails)",
              "per_kappa": per_kappa, "checks": checks}
    return result, data


def _chizat_table(r: dict[str, Any]) -> str:
    lines = [f"d = {r['width']}, M = {r['hidden']}, L = {r['layers']}, σ_u = {r['sigma_u']:.4g}, σ_v = "
             f"{r['sigma_v']:.4g}, c = {r['c']:.4g}, {r['networks']} networks", f"rule: {r['rule']}"]
    for e in r["per_kappa"]:
        lo, hi = e["mc_mean_final_ci95"]
        lines.append(f"κ = {e['kappa']:g} (α = {e['alpha']:.4g}): E[S^L] exact {e['exact_mean_final']:.4g}, Monte "
                     f"Carlo {e['mc_mean_final']:.4g} [{lo:.4g}, {hi:.4g}]; E[sup S] {e['mc_mean_sup']:.4g}; "
                     f"E[sup S]/E[S^L] {e['ratio_sup_final']:.3f} [{e['ratio_ci95'][0]:.3f}, {e['ratio_ci95'][1]:.3f}]")
        lines.append(f"  {'a/E[S^L]':>9} | {'P(sup S ≥ a) [95% CI]':>30} | {'P(S^L ≥ a)':>10} | {'bound':>7}")
        for t in e["tails"]:
            lines.append(f"  {t['multiple']:>9g} | {t['p_sup']:>8.4f} [{t['p_sup_ci95'][0]:>7.4f}, "
                         f"{t['p_sup_ci95'][1]:>7.4f}]      | {t['p_final']:>10.4f} | {t['bound']:>7.4f}")
    return "\n".join(lines)


def plot_chizat(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Per κ: the empirical tail P(sup_ℓ S^ℓ ≥ a) with its 95% interval (and P(S^L ≥ a)) against E[S^L]/a."""
    entries = numbers["per_kappa"]
    fig, axes = new_grid(1, len(entries), ax, figsize=(4.6 * len(entries), 4.0))
    for panel, entry in zip(axes.ravel(), entries):
        exact = entry["exact_mean_final"]
        sup = np.sort(np.asarray(data[entry["kappa"]]["sup"])) if entry["kappa"] in data else None
        if sup is not None and sup.size:
            grid = np.geomspace(max(exact / 20, sup[sup > 0].min() if (sup > 0).any() else exact / 20),
                                max(sup.max(), exact * 2), 200)
            panel.plot(grid, 1 - np.searchsorted(sup, grid, side="left") / sup.size, color="tab:blue", lw=1,
                       label=r"$\hat P(\sup_\ell S^\ell \geq a)$")
            final = np.sort(np.asarray(data[entry["kappa"]]["final"]))
            panel.plot(grid, 1 - np.searchsorted(final, grid, side="left") / final.size, color="tab:green", lw=1,
                       alpha=0.7, label=r"$\hat P(S^L \geq a)$")
            panel.plot(grid, np.minimum(1, exact / grid), "--", color="black", label=r"Doob: $E[S^L]/a$")
        a = np.array([t["a"] for t in entry["tails"]])
        p = np.array([t["p_sup"] for t in entry["tails"]])
        ci = np.array([t["p_sup_ci95"] for t in entry["tails"]])
        panel.errorbar(a, np.maximum(p, 1e-12), yerr=[np.maximum(p - ci[:, 0], 0), np.maximum(ci[:, 1] - p, 0)],
                       fmt="o", color="tab:red", ms=4, capsize=3, label="checked thresholds (95% CI)")
        panel.set_xscale("log")
        panel.set_yscale("log")
        panel.set_ylim(max(0.5 / numbers["networks"], 1e-5), 1.5)
        panel.set_xlabel(r"$a$ (units of $\|x\|^2$)")
        panel.set_title(f"Remark 2.2, α√(ML) = {entry['kappa']:g}\nE[sup S]/E[S^L] = {entry['ratio_sup_final']:.2f} "
                        f"(Doob ≤ 4)", fontsize=10)
        panel.grid(True, which="both", alpha=0.3)
        panel.legend(fontsize=7, loc="lower left")
    fig.suptitle(f"Chizat Remark 2.2: Doob's maximal inequality, ReLU 2LP blocks, L = {numbers['layers']}, "
                 f"{numbers['networks']} networks", fontsize=11)
    return fig


class ChizatMaximal(ChizatFigure):
    """The ``chizat-maximal`` figure (module docstring)."""

    name = "chizat-maximal"
    title = "Chizat (lecture 12) Remark 2.2: Doob's maximal inequality for ‖h^ℓ − x‖²"
    paper = "Remark 2.2: P(sup_ℓ ‖h^ℓ − x‖ ≥ β‖x‖) ≤ ((1 + cα²M)^L − 1)/β² (stated without a figure)"
    defaults = dict(
        width=40,
        hidden=16,
        layers=100,
        kappas=(1.0, 2.0),
        networks=2000,
        sigma_u=None,
        sigma_v=1.0,
        thresholds=(1.0, 2.0, 4.0, 8.0, 16.0),
        doob_constant=4.0,
        tail_constant=1.0,
        resamples=1000,
    )
    smoke = dict(
        width=6,
        hidden=4,
        layers=10,
        networks=60,
        resamples=50,
    )
    rejects = {
        "blocks whose output weights have variance 1.15 σ_v², so E[S^L] is off (1 + cα²M)^L − 1":
            "tests/test_figures.py::test_chizat_maximal_exact_mean_fails_on_a_wrong_weight_scale",
    }

    def estimate_mb(self, s: Any) -> float:
        item = s.torch_dtype.itemsize
        # the arrays counted, 3.3 times over: the chunk's products and states (measured: 551 MiB at the defaults, whose
        # arrays are 66 MiB)
        return PROCESS_MB + 3.3 * (64 * 2 * s.layers * s.hidden * s.width + len(s.kappas) * (s.layers + 1) * s.networks) * item / 2**20

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
        return _chizat(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return _chizat_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_chizat(numbers, data, ax)
