"""Peluchetti & Favaro's Appendix B as figures of ``python -m validation.figures``: the ABC posterior of B.1
(``pf-abc``) and the 2-D function samples of B.4 (``pf-2d``); and two claims of their §3.4 (``pf-qualitative``).

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

**pf-qualitative** (§3.4, "Qualitative properties"), for the SC models (x_0 = z·1, fully i.i.d. parameters of
Assumption 3.4: ΔW ~ N(0, σ_w²Δt/D) entries, Δb ~ N(0, σ_b²Δt I_D)) at the two inputs of the paper's §4.1,
z = 0 and z = 1, each model both as the ResNet of depth L and as the Euler scheme of its limit SDE on
``--sde-factor``× finer steps of the same path (:func:`validation.pf_models.block_outputs`, all D coordinates):

* **exchangeability**: "the law of the processes x_{t,d} is exchangeable across d ∈ D if the distribution of
  x_{0,d} is so" — the quadratic variation σ_b² + σ_w²/D ‖ψ(x)‖² depends on the state only through a norm. Tested
  by the within-row permutation test of :func:`validation.distribution_tests.exchangeability_test` (the marginal
  laws by the k-sample Anderson–Darling statistic, the pair laws by the spread of the coordinates' correlations,
  jointly at both inputs; ``--resamples`` permutations, so p ≥ 1/(resamples + 1)). Check: not rejected at
  level ``--alpha``.
* **non-Gaussianity**: "the joint distribution p(x_T^{(i)}, x_T^{(j)} | x_0^{(i)}, x_0^{(j)}) is not Gaussian",
  unlike the Gaussian process of wide networks. Tested by Mardia's skewness and kurtosis tests of the pair
  (x_{T,1}(0), x_{T,1}(1)) over the draws (:func:`validation.distribution_tests.mardia_test`). Check: rejected at
  level ``--alpha``. The departure shrinks with the width — given the path of ‖x‖²/D each coordinate is a Gaussian
  martingale, and ‖x‖²/D concentrates as D grows (Mardia's b_2 − 8 is about 23/D for SC_tanh at T = 1, measured
  at D = 8 and 32, more at D = 4): a narrow default width (8) keeps the test's power high at 2000 draws.

Planted controls, which make both checks able to fail for a real reason: the same ResNet with bias variances
σ_b²·(0.5 … 1.5) across the coordinates (``cov_b = diag:0.5:1.5``: the marginals differ) and with AR(1)
correlated biases (``cov_b = ar1:0.8``: equal marginals, the pair laws differ) must be rejected as
non-exchangeable; Gaussian draws with the SC_tanh limit's mean and covariance must not be rejected as
non-Gaussian.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.activations import get_activation
from limits.peluchetti_favaro import PFBlock
from limits.seeding import generator, stream_seed
from validation.checks import Check, bound_check
from validation.distribution_tests import exchangeability_test, mardia_test
from validation.pf_models import block_outputs, eoc_outputs, pc_fractions, resnet_outputs, top_pc_fraction
from validation.stats import resampled_interval, resampled_interval_batched

__all__ = ["DEFAULT_DATA", "parse_data", "abc_figure", "abc_table", "two_d_figure", "two_d_table",
           "QUALITATIVE_INPUTS", "PLANTED", "qualitative_figure", "qualitative_table"]

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


#: the two inputs of pf-qualitative: the paper's §4.1 (Fig. 2) pair z^(1) = 0, z^(2) = 1
QUALITATIVE_INPUTS: tuple[float, float] = (0.0, 1.0)
#: the planted non-exchangeable ResNets of pf-qualitative: (name, activation, bias covariance family R_b)
PLANTED: tuple[tuple[str, str, tuple], ...] = (("SC_tanh, bias variances 0.5…1.5", "tanh", ("diag", 0.5, 1.5)),
                                              ("SC_tanh, AR(1) biases ρ = 0.8", "tanh", ("ar1", 0.8)))


def _finite(x: np.ndarray) -> np.ndarray:
    return np.all(np.isfinite(x.reshape(len(x), -1)), axis=1)


def qualitative_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """The ``pf-qualitative`` figure's numbers and plot data (module docstring); ``s``: resolved figure settings."""
    z = QUALITATIVE_INPUTS
    models, checks, data = [], [], {"inputs": z}
    common = {"width": s.width, "depth": s.depth, "sigma_w": s.sigma_w, "sigma_b": s.sigma_b}

    def tested(name: str, kind: str, activation: str, values: np.ndarray, family: str, *, exchangeable: bool,
               gaussian: bool) -> dict[str, Any]:
        keep = _finite(values)
        good = values[keep]
        rng = np.random.default_rng(stream_seed(s.seed, "figures", "permutations", "pf-qualitative", name, kind))
        pair = good[:, 0, :]
        entry = {"model": name, "kind": kind, "activation": activation, **common, "bias_covariance": family,
                 "steps": s.depth * (s.sde_factor if kind == "sde" else 1), "nonfinite_draws": int((~keep).sum()),
                 "pair_mean": pair.mean(axis=0).tolist(), "pair_covariance": np.cov(pair.T).tolist(),
                 "coordinate_sd": good[:, :, 1].std(axis=0).tolist(),
                 "exchangeability": exchangeability_test(good, s.resamples, rng) if exchangeable else None,
                 "gaussianity": mardia_test(pair) if gaussian else None}
        data[(name, kind)] = good
        return entry

    with tqdm(total=(2 + len(PLANTED)) * s.draws, desc="pf-qualitative", unit="draw", disable=not progress,
              leave=False, delay=2.0) as bar:
        for name, activation in TWO_D_MODELS:
            block = PFBlock(get_activation(activation), get_activation("identity"), s.width, sigma_w=s.sigma_w,
                            sigma_b=s.sigma_b, dtype=s.torch_dtype, device=device)
            net, sde = block_outputs(block, z, s.depth, s.draws, s.sde_factor, seed=s.seed,
                                     labels=("pf-qualitative", activation), device=device, bar=bar)
            for kind, values in (("resnet", net), ("sde", sde)):
                entry = tested(name, kind, activation, values, "iid", exchangeable=True, gaussian=True)
                models.append(entry)
                what = "ResNet" if kind == "resnet" else "limit SDE"
                ex, ga = entry["exchangeability"], entry["gaussianity"]
                checks.append(Check.of(f"{name} {what}: coordinates exchangeable (not rejected at {s.alpha:g})",
                                       ex["p_value"] >= s.alpha, _exchange_detail(ex)).to_dict())
                checks.append(Check.of(f"{name} {what}: (x_T,1(0), x_T,1(1)) not Gaussian (rejected at {s.alpha:g})",
                                       ga["p_value"] < s.alpha, _mardia_detail(ga)).to_dict())
        for name, activation, family in PLANTED:
            block = PFBlock(get_activation(activation), get_activation("identity"), s.width, sigma_w=s.sigma_w,
                            sigma_b=s.sigma_b, cov_b=family, dtype=s.torch_dtype, device=device)
            net, _ = block_outputs(block, z, s.depth, s.draws, None, seed=s.seed,
                                   labels=("pf-qualitative", "planted", name), device=device, bar=bar)
            text = ":".join(map(str, family))
            entry = tested(name, "planted", activation, net, text, exchangeable=True, gaussian=False)
            models.append(entry)
            checks.append(Check.of(f"control {name} (cov_b = {text}): not exchangeable, rejected at {s.alpha:g}",
                                   entry["exchangeability"]["p_value"] < s.alpha,
                                   _exchange_detail(entry["exchangeability"])).to_dict())
    reference = next(m for m in models if m["model"] == "SC_tanh" and m["kind"] == "sde")
    mean, cov = np.asarray(reference["pair_mean"]), np.asarray(reference["pair_covariance"])
    size = len(data[("SC_tanh", "sde")])
    normal = torch.randn((size, 2), generator=generator(s.seed, "figures", "pf-qualitative", "gaussian"),
                         dtype=torch.float64).numpy()
    gaussian = mean + normal @ np.linalg.cholesky(cov).T
    ga = mardia_test(gaussian)
    name = "Gaussian control"
    models.append({"model": name, "kind": "gaussian", "draws": size, "pair_mean": mean.tolist(),
                   "pair_covariance": cov.tolist(), "exchangeability": None, "gaussianity": ga})
    data[(name, "gaussian")] = gaussian[:, None, :]
    checks.append(Check.of(f"control: Gaussian draws with the SC_tanh limit's mean and covariance, not rejected "
                           f"at {s.alpha:g}", ga["p_value"] >= s.alpha,
                           _mardia_detail(ga)).to_dict())
    result = {"inputs": list(z), **common, "draws": s.draws, "sde_factor": s.sde_factor, "alpha": s.alpha,
              "permutations": s.resamples,
              "rule": (f"at level {s.alpha:g}: exchangeability (within-row permutation test, {s.resamples} "
                       "permutations; Anderson–Darling of the marginals and the spread of the pair correlations, "
                       "combined by the larger standardised one) not rejected for the models, rejected for the planted controls; normality of "
                       "(x_T,1(0), x_T,1(1)) (Mardia's skewness and kurtosis, Bonferroni) rejected for the models, "
                       "not for the Gaussian control"),
              "models": models, "checks": checks}
    return result, data


def _exchange_detail(r: dict[str, Any]) -> str:
    return (f"p = {r['p_value']:.3g} (Anderson–Darling of the marginals {r['ad_statistic']:.4g}, "
            f"log {r['ad_z']:+.1f} permutation SDs from their mean, p = {r['ad_p_value']:.3g}; pair-correlation spread "
            f"{r['pair_spread']:.3g}, {r['pair_z']:+.1f} SDs, p = {r['pair_p_value']:.3g}; {r['permutations']} "
            "permutations)")


def _mardia_detail(r: dict[str, Any]) -> str:
    return (f"p = {r['p_value']:.3g} (Mardia b_1 = {r['b1']:.3g}, p = {r['skewness_p_value']:.3g}; b_2 = "
            f"{r['b2']:.3f} against {r['b2_gaussian']:g}, z = {r['kurtosis_z']:.2f}, p = {r['kurtosis_p_value']:.3g}; "
            f"{r['draws']} draws)")


def qualitative_table(r: dict[str, Any]) -> str:
    """The ``pf-qualitative`` console table."""
    lines = [f"{r['draws']} draws at z = {r['inputs'][0]:g}, {r['inputs'][1]:g}; D = {r['width']}, L = {r['depth']} "
             f"(SDE: {r['sde_factor']}× finer steps of the same path), σ_w = {r['sigma_w']:g}, σ_b = {r['sigma_b']:g}",
             f"rule: {r['rule']}",
             f"{'model':>32} {'kind':>8} | {'exchangeable: p (AD, pairs)':>30} | {'Gaussian: p (b_1, b_2)':>34} | "
             f"{'non-finite':>10}"]
    for m in r["models"]:
        ex, ga = m["exchangeability"], m["gaussianity"]
        ex_text = "—" if ex is None else f"{ex['p_value']:.3g} ({ex['ad_p_value']:.3g}, {ex['pair_p_value']:.3g})"
        ga_text = "—" if ga is None else f"{ga['p_value']:.3g} ({ga['b1']:.3g}, {ga['b2']:.3f})"
        lines.append(f"{m['model']:>32} {m['kind']:>8} | {ex_text:>30} | {ga_text:>34} | "
                     f"{m.get('nonfinite_draws', 0):>10}")
    return "\n".join(lines)
