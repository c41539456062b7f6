"""The ``pf-correlation`` figure: Peluchetti & Favaro (2020) Fig. 4: output correlation ρ[x_{T,1}(z1), x_{T,1}(z2)].

ρ[x_{T,1}(z1), x_{T,1}(z2)] over a grid of [−2, 2]² for the four models: the heatmaps and the minimum of Pearson's
ρ over the grid (with a 95% bootstrap interval over draws) are the paper's picture, reported. The checks read the
same correlation through Kendall's τ, ρ_τ = sin(πτ/2) (:mod:`validation.core.kendall`), which equals Pearson's ρ
for a Gaussian pair and for every scale mixture of one, and settles where Pearson's does not: at finite width the
EOC networks' outputs are heavy-tailed (EO_ReLU at D = 48, L = 100: sd of log|x| ≈ 2), and Pearson's minimum for
EO_ReLU read 0.851 [0.798, 0.913] at 1000 draws and 0.783 [0.756, 0.914] at 3000 on one seed, where ρ_τ reads
0.982 [0.979, 0.985]. Checks (95% jackknife intervals of the minimum of ρ_τ over the grid): the lower end for each
EOC network ≥ ``--eoc-min-correlation``; the upper end for each ResNet ≤ ``--resnet-max-correlation``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from validation.core.checks import bound_check
from validation.core.kendall import elliptical_statistic, kendall_megabytes, kendall_seconds, minimum_off_diagonal
from validation.core.plots import new_grid
from validation.core.stats import resampled_interval_batched
from validation.core.workers import TaskRunner
from validation.figures.figure import Figure, figure_rng, finite_rows, input_grid, progress_bar
from validation.figures.pf_models import pf_megabytes, pf_seconds, MODELS, eoc_outputs, resnet_outputs
from validation.figures.plots import NAMES


def _correlations(x: torch.Tensor) -> torch.Tensor:
    """ρ over draws for every pair of inputs, for each batch x (R, n, K) → (R, K, K); NaN where an input's
    output has zero variance (e.g. EO_ReLU at z = 0, where σ_b = 0 makes the output 0)."""
    centred = x - x.mean(dim=1, keepdim=True)
    sd = centred.square().sum(1, keepdim=True).sqrt()
    scaled = centred / torch.where(sd > 0, sd, torch.full_like(sd, math.nan))
    return (scaled.transpose(1, 2) @ scaled).clamp(-1.0, 1.0)


def _correlation(x: np.ndarray) -> np.ndarray:
    return _correlations(torch.as_tensor(x, dtype=torch.float64)[None])[0].numpy()


def _min_correlations(x: torch.Tensor) -> torch.Tensor:
    c = _correlations(x).flatten(1)
    return torch.where(torch.isnan(c), torch.full_like(c, math.inf), c).min(1).values.where(
        ~torch.isnan(c).all(1), torch.tensor(math.nan, dtype=c.dtype))


def _correlation_figure(s: Any, device: torch.device, progress: bool,
                        runner: TaskRunner | None = None) -> tuple[dict, dict]:
    z = input_grid(s)
    models, data, checks = [], {"z": z}, []
    with progress_bar(4 * s.draws, "pf-correlation", progress) as bar:
        for name, (kind, activation) in MODELS.items():
            if kind == "resnet":
                net, _ = resnet_outputs(s, activation, z, s.draws, None, device, bar, runner)
                params = {"sigma_w": s.sigma_w, "sigma_b": s.sigma_b, "width": s.width, "depth": s.depth}
            else:
                net, params = eoc_outputs(s, activation, z, s.draws, device, bar, runner)
            keep = finite_rows(net)
            good = net[keep]
            corr = _correlation(good)
            rng = figure_rng(s.seed, "bootstrap", s.figure, name)
            low = float(np.nanmin(corr)) if np.isfinite(corr).any() else math.nan
            ci = resampled_interval_batched(_min_correlations, good, s.resamples, rng)
            where = np.unravel_index(np.nanargmin(corr), corr.shape) if np.isfinite(corr).any() else (0, 0)
            off = corr[~np.eye(len(z), dtype=bool)]
            rank_low, rank_ci, rank = elliptical_statistic(good, minimum_off_diagonal)
            rank_where = np.unravel_index(np.nanargmin(rank), rank.shape) if np.isfinite(rank).any() else (0, 0)
            entry = {"model": name, "kind": kind, "activation": activation, **params,
                     "nonfinite_draws": int((~keep).sum()), "min_correlation": low, "min_correlation_ci95": ci,
                     "argmin_z": [float(z[where[0]]), float(z[where[1]])],
                     "min_kendall_correlation": rank_low, "min_kendall_correlation_ci95": rank_ci,
                     "kendall_argmin_z": [float(z[rank_where[0]]), float(z[rank_where[1]])],
                     "mean_offdiagonal": float(np.nanmean(off)), "undefined_inputs": int(np.isnan(np.diag(corr)).sum()),
                     "correlation": corr.tolist()}
            checks.append(bound_check(f"{name}: correlations {'all close to 1' if kind == 'eoc' else 'far from 1'}",
                                      tuple(rank_ci), s.eoc_min_correlation if kind == "eoc"
                                      else s.resnet_max_correlation, at_most=kind != "eoc",
                                      detail=f"min ρ_τ = sin(πτ/2) = {rank_low:.3f} [{rank_ci[0]:.3f}, "
                                             f"{rank_ci[1]:.3f}] (Pearson's min ρ {low:.3f} [{ci[0]:.3f}, "
                                             f"{ci[1]:.3f}], reported)").to_dict())
            models.append(entry)
            data[name] = corr
    result = {"z": z.tolist(), "draws": s.draws,
              "rule": f"minimum over the grid of Kendall's correlation ρ_τ = sin(πτ/2) between x(z1) and x(z2) (Pearson's "
                      f"ρ for a Gaussian pair, unmoved by heavy tails; docs/theory.md §6), with a 95% jackknife "
                      f"interval over draws: EOC lower end ≥ {s.eoc_min_correlation:g}; ResNet upper end ≤ "
                      f"{s.resnet_max_correlation:g}. Pearson's minimum and its bootstrap interval are reported",
              "models": models, "checks": checks}
    return result, data


def _correlation_table(r: dict[str, Any]) -> str:
    lines = [f"{r['draws']} draws, {len(r['z'])}×{len(r['z'])} grid on [−2, 2]²; rule: {r['rule']}",
             f"{'model':>9} {'net':>12} | {'min ρ_τ [95% CI]':>26} {'at (z1, z2)':>16} | "
             f"{'Pearson min ρ [95% CI]':>26} | {'mean off-diag':>13}"]
    for e in r["models"]:
        lo, hi = e["min_correlation_ci95"]
        rank_lo, rank_hi = e["min_kendall_correlation_ci95"]
        at = f"({e['kendall_argmin_z'][0]:.2f}, {e['kendall_argmin_z'][1]:.2f})"
        lines.append(f"{e['model']:>9} {'D=' + str(e['width']) + ',L=' + str(e['depth']):>12} | "
                     f"{e['min_kendall_correlation']:>8.3f} [{rank_lo:>6.3f}, {rank_hi:>6.3f}]    {at:>16} | "
                     f"{e['min_correlation']:>8.3f} [{lo:>6.3f}, {hi:>6.3f}]    | {e['mean_offdiagonal']:>13.3f}")
    return "\n".join(lines)


def plot_correlation(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Four heatmaps of ρ[x(z1), x(z2)] on [−2, 2]², one colour scale [−1, 1] (P&F Fig. 4's layout)."""
    fig, axes = new_grid(2, 2, ax, figsize=(9.5, 8.4))
    lo, hi = numbers["z"][0], numbers["z"][-1]
    image = None
    for panel, entry in zip(axes.ravel(), numbers["models"]):
        corr = np.asarray(entry["correlation"], dtype=float)
        image = panel.imshow(corr, origin="lower", extent=(lo, hi, lo, hi), vmin=-1, vmax=1, cmap="viridis")
        a, b = entry["min_correlation_ci95"]
        panel.set_title(f"{NAMES[entry['model']]} (L = {entry['depth']}, D = {entry['width']})\n"
                        f"min ρ = {entry['min_correlation']:.3f} [{a:.3f}, {b:.3f}]; "
                        f"min ρ_τ = {entry['min_kendall_correlation']:.3f}", fontsize=10)
        panel.set_xlabel(r"$z^{(1)}$")
        panel.set_ylabel(r"$z^{(2)}$")
    if image is not None:
        fig.colorbar(image, ax=list(axes.ravel()), shrink=0.8, label=r"$\rho$")
    fig.suptitle(f"P&F Fig. 4: output correlation, {numbers['draws']} draws", fontsize=11)
    return fig


class PFCorrelation(Figure):
    """The ``pf-correlation`` figure (module docstring)."""

    name = "pf-correlation"
    title = "Peluchetti & Favaro (2020) Fig. 4: output correlation ρ[x_{T,1}(z1), x_{T,1}(z2)]"
    paper = (
        "Fig. 4: SC_tanh, SC_swish (L = D = 500) far from 1 off the diagonal; EO_tanh, EO_ReLU (500 × 500) "
        "all close to 1"
    )
    shares_draws = True
    defaults = dict(
        width=32,
        depth=64,
        inputs=40,
        draws=1000,
        sigma_w=1.0,
        sigma_b=1.0,
        input_layer="copy",
        eoc_width=48,
        eoc_depth=100,
        eoc_sigma_b=0.2,
        eoc_min_correlation=0.8,
        resnet_max_correlation=0.5,
        resamples=400,
    )
    smoke = dict(
        width=4,
        depth=4,
        inputs=6,
        draws=40,
        eoc_width=4,
        eoc_depth=6,
        resamples=20,
    )
    rejects = {
        "ResNet outputs perfectly correlated across inputs, every draw a constant function of z (planted records)":
            "tests/test_figures.py::test_pf_correlation_fails_resnet_samples_that_are_constant_in_z",
        "EOC network outputs independent across inputs instead of correlated near 1 (planted records)":
            "tests/test_figures.py::test_pf_correlation_fails_eoc_outputs_independent_across_inputs",
        "EO_tanh drawn at 1.1× its edge-of-chaos σ_w, 10% into the chaotic phase, where the edge is claimed":
            "tests/test_figures.py::test_eoc_checks_fail_tanh_networks_ten_percent_into_the_chaotic_phase",
    }

    def estimate_seconds(self, s: Any) -> float:
        """~5e-10 s per multiply-add of the networks and ~1.5e-8 s per normal drawn (22 s measured at the defaults),
        and Kendall's τ of the four models (:func:`~validation.core.kendall.kendall_seconds`)."""
        return pf_seconds(s, resnet_passes=1, models=2, points=s.inputs + 2) + kendall_seconds(s.draws, s.inputs)

    def estimate_mb(self, s: Any) -> float:
        """The function samples' (:func:`pf_megabytes`), and the batched bootstrap of the correlations: batches of at
        most 2^23 resampled numbers, four times over (measured: 716 MiB at the defaults, 750 estimated)."""
        batch = min(s.resamples * s.draws * s.inputs, 1 << 23)
        return pf_megabytes(s) + max(4 * batch * 8 / 2**20, kendall_megabytes(s.draws, s.inputs))

    def compute(self, s: Any, device: torch.device, progress: bool,
                runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
        return _correlation_figure(s, device, progress, runner)

    def table(self, numbers: dict[str, Any]) -> str:
        return _correlation_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_correlation(numbers, data, ax)
