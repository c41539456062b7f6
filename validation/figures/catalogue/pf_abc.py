"""The ``pf-abc`` figure: Peluchetti & Favaro (2020) Appendix B.1: ABC posterior of SR_tanh against EO_tanh.

Approximate Bayesian computation by rejection for function regression, with two priors over
functions z ↦ x_{T,1}(z) on [−2, 2]:

* **SR_tanh**, the stable ResNet with φ = tanh, σ_w² = σ_b² = 10, T = 1, and a random input layer
  x_0 = W_I z, W_I ~ N(0, I_D) (:func:`validation.figures.pf_models.resnet_outputs`);
* **EO_tanh**, the feed-forward network on the edge of chaos, read at the first pre-activation of its last
  layer (:func:`validation.figures.pf_models.eoc_outputs`).

Each prior is simulated ``--draws`` times (the paper: 10 000) on a grid of ``--inputs`` points and at the data's
inputs; the ``--accepted`` draws (the paper: 10) nearest to the data in l2 over the data points are the
posterior sample, and the largest accepted distance is the acceptance threshold. The data are three points
(``--data z:y,z:y,z:y``; the paper does not give its own): by default (−1.5, −1), (0, 1), (1.5, −1), a bump that
no constant and no line fits.

The paper's claim: EO's prior draws are almost constant in z, so its posterior can only find the best constant
(or line); SR's flexible prior gives a much better posterior. Check: the log ratio of the mean accepted
distance, SR over EO, is below 0 — PASS when its 95% bootstrap interval (over the simulations, both models
resampled by the same row indices, which are independent draws) lies below 0, FAIL when it lies above,
INCONCLUSIVE when it contains 0 (:func:`validation.core.checks.bound_check`). The bootstrap of a mean of the
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
from validation.core.checks import bound_check
from validation.core.plots import new_grid
from validation.core.stats import resampled_interval
from validation.core.settings import SettingsError
from validation.core.workers import TaskRunner
from validation.figures.figure import Figure
from validation.figures.pf_models import pf_megabytes, pf_seconds, eoc_outputs, resnet_outputs
from validation.figures.plots import NAMES


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


def abc_figure(s: Any, device: torch.device, progress: bool,
               runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
    """The ``pf-abc`` figure's numbers and plot data (module docstring); ``s``: resolved figure settings."""
    data = np.asarray(s.data, dtype=float)
    grid = np.linspace(-2.0, 2.0, s.inputs)
    z = np.concatenate([grid, data[:, 0]])
    k = len(grid)
    with tqdm(total=2 * s.draws, desc="pf-abc", unit="draw", disable=not progress, leave=False, delay=2.0) as bar:
        sr, _ = resnet_outputs(s, "tanh", z, s.draws, None, device, bar, runner)
        eo, eo_params = eoc_outputs(s, "tanh", z, s.draws, device, bar, runner)
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


def plot_abc(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F App. B.1, Fig. 1: prior and ABC posterior draws of SR_tanh and EO_tanh, with the data points."""
    fig, axes = new_grid(1, 4, ax, figsize=(17, 3.9))
    grid, points = np.asarray(data["grid"]), np.asarray(data["data"])
    by_name = {m["model"]: m for m in numbers["models"]}
    for panel, (name, part) in zip(axes.ravel(), [("SR_tanh", "prior"), ("SR_tanh", "posterior"),
                                                  ("EO_tanh", "prior"), ("EO_tanh", "posterior")]):
        for row in np.asarray(data[name][part]):
            panel.plot(grid, row, color="lightsteelblue" if part == "prior" else "tab:blue", lw=0.9)
        panel.plot(points[:, 0], points[:, 1], "o", color="navy", ms=6, zorder=5, label="data")
        label = NAMES.get(name.replace("SR", "SC"), name).replace("SC", "SR")
        title = f"{label}: {'prior' if part == 'prior' else 'ABC posterior'}"
        if part == "posterior":
            title += f"\nmean accepted l2 {by_name[name]['mean_accepted_distance']:.3g}"
        panel.set_title(title, fontsize=10)
        panel.set_xlabel("z")
        panel.grid(True, alpha=0.3)
    axes.ravel()[0].set_ylabel(r"$x_{T,1}(z)$")
    axes.ravel()[0].legend(fontsize=8)
    fig.suptitle(f"Peluchetti & Favaro App. B.1: ABC rejection, the {numbers['accepted']} of {numbers['draws']} "
                 "prior draws nearest to the data accepted", fontsize=11)
    return fig


class PFABC(Figure):
    """The ``pf-abc`` figure (module docstring)."""

    name = "pf-abc"
    title = "Peluchetti & Favaro (2020) Appendix B.1: ABC posterior of SR_tanh against EO_tanh"
    paper = (
        "App. B.1, Fig. 1: SR_tanh (σ_w² = σ_b² = 10, T = 1, L = D = 500, x_0 = W_I z) against EO_tanh, 10 000 "
        "simulations, the 10 nearest in l2 to 3 data points; prior and posterior, 10 draws each on [−2, 2]"
    )
    shares_draws = True
    defaults = dict(
        width=32,
        depth=64,
        sigma_w=math.sqrt(10.0),
        sigma_b=math.sqrt(10.0),
        input_layer="random",
        eoc_width=48,
        eoc_depth=100,
        eoc_sigma_b=0.2,
        inputs=100,
        draws=2000,
        accepted=10,
        data=DEFAULT_DATA,
        show=10,
        resamples=1000,
    )
    smoke = dict(
        width=4,
        depth=4,
        eoc_width=4,
        eoc_depth=6,
        inputs=6,
        draws=60,
        accepted=5,
        resamples=50,
        show=3,
    )
    rejects = {
        "that SR_tanh's flexible prior fits three points of a constant better than EO_tanh's flat one":
            "tests/test_figures.py::test_abc_prefers_the_flat_prior_on_a_constant_and_refuses_bad_data",
    }

    def check_values(self, values: dict[str, Any]) -> None:
        if values["accepted"] > values["draws"]:
            raise SettingsError("accepted", f"{values['accepted']} is more than the {values['draws']} draws")

    def estimate_seconds(self, s: Any) -> float:
        """~5e-10 s per multiply-add of the networks and ~1.5e-8 s per normal drawn."""
        return pf_seconds(s, resnet_passes=1, models=1, points=s.inputs + 2 + len(s.data))

    def estimate_mb(self, s: Any) -> float:
        return pf_megabytes(s)

    def compute(self, s: Any, device: torch.device, progress: bool,
                runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
        return abc_figure(s, device, progress, runner)

    def table(self, numbers: dict[str, Any]) -> str:
        return abc_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_abc(numbers, data, ax)
