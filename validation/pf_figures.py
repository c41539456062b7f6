"""Peluchetti & Favaro's Appendix B as figures of ``python -m validation.figures``: the ABC posterior of B.1
(``pf-abc``) and the 2-D function samples of B.4 (``pf-2d``).

**pf-abc.** Approximate Bayesian computation by rejection for function regression, with two priors over
functions z ↦ x_{T,1}(z) on [−2, 2]:

* **SR_tanh**, the stable ResNet with φ = tanh, σ_w² = σ_b² = 10, T = 1, and a random input layer
  x_0 = W_I z, W_I ~ N(0, I_D) (:func:`validation.pf_models.resnet_outputs`);
* **EO_tanh**, the feed-forward network on the edge of chaos, read at the first pre-activation of its last
  layer (:func:`validation.pf_models.eoc_outputs`).

Each prior is simulated ``--draws`` times (the paper: 10 000) on a grid of ``--inputs`` points and at the data's
inputs; the ``--accepted`` draws (the paper: 10) nearest to the data in l2 over the data points are the
posterior sample, and the largest accepted distance is the acceptance threshold. The data are three points
(``--data z:y,z:y,z:y``; the paper does not give its own): by default (−1.5, −1), (0, 1), (1.5, −1), a bump that
no constant and no line fits.

The paper's claim: EO's prior draws are almost constant in z, so its posterior can only find the best constant
(or line); SR's flexible prior gives a much better posterior. Check: the log ratio of the mean accepted
distance, SR over EO, is below 0 — PASS when its 95% bootstrap interval (over the simulations, both models
resampled by the same row indices, which are independent draws) lies below 0, FAIL when it lies above,
INCONCLUSIVE when it contains 0 (:func:`validation.checks.bound_check`). The bootstrap of a mean of the
smallest distances is that of an extreme order statistic: the interval is a guide to its spread across
repeated runs, not an exact one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.seeding import stream_seed
from validation.checks import bound_check
from validation.pf_models import eoc_outputs, pc_fractions, resnet_outputs, top_pc_fraction
from validation.stats import resampled_interval, resampled_interval_batched

__all__ = ["DEFAULT_DATA", "parse_data", "abc_figure", "abc_table", "two_d_figure", "two_d_table"]

#: the default synthetic data set: three (z, y) points, a bump no constant and no line fits
DEFAULT_DATA: tuple[tuple[float, float], ...] = ((-1.5, -1.0), (0.0, 1.0), (1.5, -1.0))


def parse_data(text: str) -> tuple[tuple[float, float], ...]:
    """``z:y,z:y,…`` → ((z, y), …)."""
    points = []
    for part in text.split(","):
        z, sep, y = part.strip().partition(":")
        if not sep:
            raise ValueError(f"{part.strip()!r} must look like z:y (the data are z:y,z:y,z:y)")
        try:
            points.append((float(z), float(y)))
        except ValueError:
            raise ValueError(f"{part.strip()!r}: z and y must be numbers") from None
    return tuple(points)


def _accept(values: np.ndarray, targets: np.ndarray, accepted: int) -> tuple[np.ndarray, np.ndarray]:
    """(l2 distances of every draw to the data, indices of the ``accepted`` nearest finite draws)."""
    distances = np.sqrt(np.sum((values - targets[None, :]) ** 2, axis=1))
    distances = np.where(np.isfinite(distances), distances, np.inf)
    return distances, np.argsort(distances, kind="stable")[:accepted]


def abc_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """The ``pf-abc`` figure's numbers and plot data (module docstring); ``s``: resolved figure settings."""
    data = np.asarray(s.data, dtype=float)
    grid = np.linspace(-2.0, 2.0, s.inputs)
    z = np.concatenate([grid, data[:, 0]])
    k = len(grid)
    with tqdm(total=2 * s.draws, desc="pf-abc", unit="draw", disable=not progress, leave=False, delay=2.0) as bar:
        sr, _ = resnet_outputs(s, "tanh", z, s.draws, None, device, bar)
        eo, eo_params = eoc_outputs(s, "tanh", z, s.draws, device, bar)
    models, plot_data = [], {"grid": grid, "data": data}
    distances = {}
    for name, values, params in (("SR_tanh", sr, {"sigma_w": s.sigma_w, "sigma_b": s.sigma_b, "width": s.width,
                                                  "depth": s.depth, "input_layer": "random"}),
                                 ("EO_tanh", eo, eo_params)):
        dist, accepted = _accept(values[:, k:], data[:, 1], s.accepted)
        distances[name] = dist
        finite = np.isfinite(dist)
        models.append({"model": name, "kind": "resnet" if name.startswith("SR") else "eoc", **params,
                       "nonfinite_draws": int((~finite).sum()), "threshold": float(dist[accepted[-1]]),
                       "mean_accepted_distance": float(dist[accepted].mean()),
                       "prior_sd_at_data": np.std(values[finite][:, k:], axis=0).tolist(),
                       "shown_prior": values[: s.show, :k].tolist(), "posterior": values[accepted, :k].tolist()})
        plot_data[name] = {"prior": values[: s.show, :k], "posterior": values[accepted, :k]}
    rng = np.random.default_rng(stream_seed(s.seed, "figures", "bootstrap", "pf-abc"))

    def log_ratio(rows: np.ndarray) -> float:
        means = [np.sort(distances[name][rows])[: s.accepted].mean() for name in ("SR_tanh", "EO_tanh")]
        return float(math.log(means[0] / means[1])) if means[1] > 0 and np.isfinite(means).all() else math.nan

    point = log_ratio(np.arange(s.draws))
    low, high = resampled_interval(log_ratio, s.draws, s.resamples, rng)
    sr_mean, eo_mean = (m["mean_accepted_distance"] for m in models)
    check = bound_check("SR_tanh's accepted draws lie closer to the data than EO_tanh's", (low, high), 0.0,
                        at_most=True, detail=f"mean accepted l2 distance SR {sr_mean:.4g}, EO {eo_mean:.4g}; "
                                             f"log(SR/EO) = {point:.3f} [{low:.3f}, {high:.3f}]")
    result = {
        "draws": s.draws, "accepted": s.accepted, "inputs": len(grid),
        "data": [{"z": float(zv), "y": float(yv)} for zv, yv in data],
        "log_distance_ratio": {"value": point, "ci95": [low, high]},
        "rule": (f"ABC rejection: the {s.accepted} of {s.draws} prior draws nearest in l2 to the data at its inputs; "
                 "PASS when the 95% bootstrap interval of log(mean accepted distance SR / EO) lies below 0"),
        "models": models, "checks": [check.to_dict()],
    }
    return result, plot_data


def abc_table(r: dict[str, Any]) -> str:
    """The ``pf-abc`` console table."""
    points = ", ".join(f"({p['z']:g}, {p['y']:g})" for p in r["data"])
    lines = [f"{r['draws']} prior draws per model, the {r['accepted']} nearest accepted; data {points}",
             f"rule: {r['rule']}",
             f"{'model':>8} | {'mean accepted l2':>16} {'threshold':>10} | {'prior SD at the data':>28} | "
             f"{'non-finite':>10}"]
    for m in r["models"]:
        sd = ", ".join(f"{v:.3g}" for v in m["prior_sd_at_data"])
        lines.append(f"{m['model']:>8} | {m['mean_accepted_distance']:>16.4g} {m['threshold']:>10.4g} | {sd:>28} | "
                     f"{m['nonfinite_draws']:>10}")
    ratio = r["log_distance_ratio"]
    lines.append(f"log(mean accepted distance SR / EO) = {ratio['value']:.3f} [{ratio['ci95'][0]:.3f}, "
                 f"{ratio['ci95'][1]:.3f}] (95% bootstrap over the draws)")
    return "\n".join(lines)


#: the models of App. B.4: (name, activation)
TWO_D_MODELS = (("SC_tanh", "tanh"), ("SC_swish", "swish"))


def two_d_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """**pf-2d** (App. B.4): function samples x_{T,1}(z) of SC_tanh and SC_swish over a grid of z ∈ [−2, 2]²
    (``--inputs`` points per axis; the input layer copies (z_1, z_2) alternately across the D dimensions, a choice
    the paper does not state, or ``--input-layer random``). Draw i is network i of ``pf-function-space`` (the same
    stream), read at 2-D inputs. Check, as in ``pf-function-space``: the draws are not degenerate — the first
    principal component of the draws (vectors over the grid) explains at most ``--resnet-max-pc`` of their
    variance (the upper end of its 95% bootstrap interval), a three-valued :func:`~validation.checks.bound_check`."""
    axis = np.linspace(-2.0, 2.0, s.inputs)
    z1, z2 = np.meshgrid(axis, axis, indexing="xy")
    grid = np.stack([z1.ravel(), z2.ravel()], axis=1)                    # (n², 2), row-major over (z2, z1)
    models, data, checks = [], {"axis": axis}, []
    with tqdm(total=2 * s.draws, desc="pf-2d", unit="draw", disable=not progress, leave=False, delay=2.0) as bar:
        for name, activation in TWO_D_MODELS:
            values, _ = resnet_outputs(s, activation, grid, s.draws, None, device, bar)
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
