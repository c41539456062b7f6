"""The ``pf-function-space`` figure: Peluchetti & Favaro (2020) Fig. 1 and 3: function samples of x_{T,1}(z).

the stable ResNets SC_tanh and SC_swish (x_{k+1} = x_k + φ(ΔW_k x_k + Δb_k),
ΔW ~ N(0, σ_w²Δt/D), Δb ~ N(0, σ_b²Δt), Δt = 1/L; input copied, x_0 = z·1, the paper's SC models) and
the Euler scheme of their SDE limit on ``--sde-factor``× finer steps of the SAME Brownian path, beside
the feed-forward networks EO_tanh and EO_ReLU on the edge of chaos. Checks (95% bootstrap intervals
over draws):
(a) the ResNet and its SDE agree: the upper end of RMS(x_net − x_sde)/SD(x_net) ≤ ``--sde-tolerance``;
(b) the function samples of the EOC networks are degenerate: the first principal component of the
    outputs' correlation matrix over z explains at least ``--eoc-min-pc`` of their standardised variance
    (λ_max/K, lower end of a 95% jackknife interval); this is 1 exactly when all outputs are perfectly
    correlated (constant functions for tanh, multiples of one function for ReLU);
(c) the ResNets' are not: the upper end of that share ≤ ``--resnet-max-pc``.
The correlations are Kendall's, ρ_τ = sin(πτ/2) (:mod:`validation.core.kendall`): Pearson's for a Gaussian pair, and
unmoved by the EOC networks' heavy tails at finite width, which left the covariance's first-PC share (still
reported, with its bootstrap interval) undecided on half the seeds (EO_ReLU, seed 5: 0.913 [0.842, 0.976] against
0.9).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from validation.core.checks import bound_check
from validation.core.kendall import elliptical_statistic, kendall_megabytes, kendall_seconds, top_eigen_share
from validation.core.plots import new_grid
from validation.core.stats import resampled_interval, resampled_interval_batched
from validation.core.workers import TaskRunner
from validation.figures.figure import Figure, figure_rng, finite_rows, input_grid, progress_bar
from validation.figures.pf_models import pf_megabytes, pf_seconds, MODELS, eoc_outputs, pc_fractions, resnet_outputs, top_pc_fraction
from validation.figures.plots import NAMES, samples_panel


def _function_space(s: Any, device: torch.device, progress: bool,
                    runner: TaskRunner | None = None) -> tuple[dict, dict]:
    z = input_grid(s)
    models, data, checks = [], {"z": z}, []
    with progress_bar(4 * s.draws, "pf-function-space", progress) as bar:
        for name, (kind, activation) in MODELS.items():
            if kind == "resnet":
                net, sde = resnet_outputs(s, activation, z, s.draws, s.sde_factor, device, bar, runner)
                params = {"sigma_w": s.sigma_w, "sigma_b": s.sigma_b, "width": s.width, "depth": s.depth}
            else:
                net, params = eoc_outputs(s, activation, z, s.draws, device, bar, runner)
                sde = None
            keep = finite_rows(net) & (finite_rows(sde) if sde is not None else True)
            rng = figure_rng(s.seed, "bootstrap", s.figure, name)
            good = net[keep]
            entry: dict[str, Any] = {"model": name, "kind": kind, "activation": activation, **params,
                                     "nonfinite_draws": int((~keep).sum())}
            entry["quantiles"] = {q: np.quantile(good, q / 100, axis=0).tolist() for q in (5, 50, 95)}
            entry["shown"] = net[: s.show].tolist()
            entry["top_pc_fraction"] = top_pc_fraction(good)
            entry["top_pc_ci95"] = resampled_interval_batched(pc_fractions, good, s.resamples, rng)
            share, share_ci, _ = elliptical_statistic(good, top_eigen_share)
            entry["kendall_top_pc_share"], entry["kendall_top_pc_share_ci95"] = share, share_ci
            entry["within_function_sd"] = float(np.sqrt(good.var(axis=1).mean()))
            entry["total_sd"] = float(good.std())
            data[name] = net
            if sde is not None:
                sde_good = sde[keep]
                gap = lambda i: float(np.sqrt(((good[i] - sde_good[i]) ** 2).mean()) / good[i].std())  # noqa: E731, B023
                entry["sde"] = {"steps": s.depth * s.sde_factor, "quantiles": {q: np.quantile(sde_good, q / 100,
                                axis=0).tolist() for q in (5, 50, 95)}, "shown": sde[: s.show].tolist(),
                                "rms_gap": float(np.sqrt(((good - sde_good) ** 2).mean())),
                                "relative_gap": gap(np.arange(len(good))),
                                "relative_gap_ci95": resampled_interval(gap, len(good), s.resamples, rng)}
                data[name + "_sde"] = sde
                g_lo, g_hi = entry["sde"]["relative_gap_ci95"]
                checks.append(bound_check(f"{name}: ResNet ≈ its SDE on the same path", (g_lo, g_hi), s.sde_tolerance,
                                          at_most=True, detail=f"RMS gap / SD = {entry['sde']['relative_gap']:.3f} "
                                                               f"[{g_lo:.3f}, {g_hi:.3f}]").to_dict())
            lo, hi = entry["top_pc_ci95"]
            checks.append(bound_check(f"{name}: {'degenerate' if kind == 'eoc' else 'not degenerate'} in z",
                                      tuple(share_ci), s.eoc_min_pc if kind == "eoc" else s.resnet_max_pc,
                                      at_most=kind != "eoc",
                                      detail=f"first PC of ρ_τ = sin(πτ/2) explains {share:.3f} [{share_ci[0]:.3f}, "
                                             f"{share_ci[1]:.3f}] (of the covariance {entry['top_pc_fraction']:.3f} "
                                             f"[{lo:.3f}, {hi:.3f}], reported)").to_dict())
            models.append(entry)
    result = {"z": z.tolist(), "draws": s.draws,
              "rule": "first-PC share = λ_max/K of the outputs' correlation matrix over z, read through Kendall's τ as "
                      "sin(πτ/2), unmoved by heavy tails (1 iff all outputs are perfectly correlated; 95% jackknife "
                      f"interval): EOC ≥ {s.eoc_min_pc:g} (lower end), ResNet ≤ {s.resnet_max_pc:g} (upper end); the "
                      "covariance's λ_max/trace is reported; ResNet vs SDE: RMS(x_net − x_sde)/SD(x_net) ≤ "
                      f"{s.sde_tolerance:g} (upper end)",
              "models": models, "checks": checks}
    return result, data


def _function_space_table(r: dict[str, Any]) -> str:
    lines = [f"{r['draws']} draws, {len(r['z'])} inputs on [−2, 2]; rule: {r['rule']}",
             f"{'model':>9} {'net':>12} | {'first PC of ρ_τ [95% CI]':>26} | {'of the cov. [95% CI]':>26} | "
             f"{'SD within f':>11} {'SD all':>8} | "
             f"{'SDE gap/SD [95% CI]':>26} | {'non-finite':>10}"]
    for e in r["models"]:
        net = f"D={e['width']},L={e['depth']}"
        lo, hi = e["top_pc_ci95"]
        gap = "—"
        if "sde" in e:
            g = e["sde"]
            gap = f"{g['relative_gap']:.3f} [{g['relative_gap_ci95'][0]:.3f}, {g['relative_gap_ci95'][1]:.3f}]"
        k_lo, k_hi = e["kendall_top_pc_share_ci95"]
        lines.append(f"{e['model']:>9} {net:>12} | {e['kendall_top_pc_share']:>8.3f} [{k_lo:>6.3f}, {k_hi:>6.3f}]    | "
                     f"{e['top_pc_fraction']:>8.3f} [{lo:>6.3f}, {hi:>6.3f}]    | "
                     f"{e['within_function_sd']:>11.4g} {e['total_sd']:>8.4g} | {gap:>26} | {e['nonfinite_draws']:>10}")
    lines.append("EOC parameters: " + "; ".join(f"{e['model']} σ_w = {e['sigma_w']:.4f}, σ_b = {e['sigma_b']:g}"
                                                 for e in r["models"] if e["kind"] == "eoc"))
    return "\n".join(lines)


def plot_function_space(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Top row: SC_tanh, SC_swish (ResNet and its SDE on the same paths); bottom row: EO_tanh, EO_ReLU."""
    z = np.asarray(numbers["z"])
    fig, axes = new_grid(2, 2, ax, figsize=(10.5, 7.6))
    for panel, entry in zip(axes.ravel(), numbers["models"]):
        name = entry["model"]
        net = f"L = {entry['depth']}, D = {entry['width']}"
        samples_panel(panel, z, entry["shown"], entry["quantiles"], "tab:blue", "tab:orange", "ResNet" if "sde" in entry
                 else "network")
        if "sde" in entry:
            sde = entry["sde"]
            for i, row in enumerate(sde["shown"]):
                panel.plot(z, row, ":", color="black", lw=1.0, label="SDE, same path" if i == 0 else None)
            q = {int(k): np.asarray(v) for k, v in sde["quantiles"].items()}
            panel.plot(z, q[5], ":", color="tab:red", lw=1.2, label="SDE 5/50/95%")
            panel.plot(z, q[50], ":", color="tab:red", lw=1.2)
            panel.plot(z, q[95], ":", color="tab:red", lw=1.2)
            subtitle = f"RMS gap/SD {sde['relative_gap']:.3f}"
        else:
            subtitle = f"σ_w = {entry['sigma_w']:.3f}, σ_b = {entry['sigma_b']:g}"
        kind = r"$x_{T,1}(z)$" if "sde" in entry else r"$x_{last,1}(z)$"
        panel.set_title(f"{NAMES[name]}: {kind}, {net}\nfirst PC {entry['top_pc_fraction']:.3f}; {subtitle}",
                        fontsize=10)
        panel.set_xlabel("z")
        panel.grid(True, alpha=0.3)
        panel.legend(fontsize=7, loc="best")
    fig.suptitle(f"P&F Fig. 3 (top) and Fig. 1 (bottom): {numbers['draws']} draws, 5 shown", fontsize=11)
    return fig


class PFFunctionSpace(Figure):
    """The ``pf-function-space`` figure (module docstring)."""

    name = "pf-function-space"
    title = "Peluchetti & Favaro (2020) Fig. 1 and 3: function samples of x_{T,1}(z)"
    paper = (
        "Fig. 1: EO_tanh, EO_ReLU, 500 layers × 500 units; Fig. 3: SC_tanh, SC_swish, L = D = 500 (and "
        "other L, D in SM B), 400 inputs on [−2, 2], 10 000 draws; 5 draws and the 5/50/95% quantiles shown"
    )
    shares_draws = True
    defaults = dict(
        width=32,
        depth=64,
        inputs=100,
        draws=200,
        show=5,
        sigma_w=1.0,
        sigma_b=1.0,
        input_layer="copy",
        sde_factor=8,
        eoc_width=48,
        eoc_depth=100,
        eoc_sigma_b=0.2,
        sde_tolerance=0.25,
        eoc_min_pc=0.9,
        resnet_max_pc=0.9,
        resamples=400,
    )
    smoke = dict(
        width=4,
        depth=4,
        inputs=6,
        draws=24,
        sde_factor=2,
        eoc_width=4,
        eoc_depth=6,
        resamples=20,
        show=3,
    )
    rejects = {
        "an SDE limit with σ_b twice the network's, integrated on the network's own Brownian path":
            "tests/test_figures.py::test_pf_function_space_fails_an_sde_with_twice_the_bias_scale",
        "ResNet function samples degenerate in z, every draw a constant function (planted records)":
            "tests/test_figures.py::test_pf_function_space_fails_resnet_samples_that_are_constant_in_z",
        "EO_tanh drawn at 1.1× its edge-of-chaos σ_w, 10% into the chaotic phase, where the edge is claimed":
            "tests/test_figures.py::test_eoc_checks_fail_tanh_networks_ten_percent_into_the_chaotic_phase",
    }

    def estimate_seconds(self, s: Any) -> float:
        """~5e-10 s per multiply-add of the networks and ~1.5e-8 s per normal drawn (16 s measured at the defaults)."""
        return (pf_seconds(s, resnet_passes=s.sde_factor + 1, models=2, points=s.inputs + 2)
                + kendall_seconds(s.draws, s.inputs))

    def estimate_mb(self, s: Any) -> float:
        return pf_megabytes(s) + kendall_megabytes(s.draws, s.inputs)

    def compute(self, s: Any, device: torch.device, progress: bool,
                runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
        return _function_space(s, device, progress, runner)

    def table(self, numbers: dict[str, Any]) -> str:
        return _function_space_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_function_space(numbers, data, ax)
