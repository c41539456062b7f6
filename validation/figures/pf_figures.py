"""Peluchetti & Favaro's Appendix B as figures of ``python -m validation.figures``: the ABC posterior of B.1
(``pf-abc``), the function samples over (L, D) of B.3 (``pf-sizes``, :func:`sizes_figure`) and the 2-D function
samples of B.4 (``pf-2d``); and three claims of their §3.4 (``pf-qualitative``; non-smooth activations, ``pf-relu``,
:func:`relu_figure`).

**pf-abc.** Approximate Bayesian computation by rejection for function regression, with two priors over
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

**pf-qualitative** (§3.4, "Qualitative properties"), for the SC models (x_0 = z·1, fully i.i.d. parameters of
Assumption 3.4: ΔW ~ N(0, σ_w²Δt/D) entries, Δb ~ N(0, σ_b²Δt I_D)) at the two inputs of the paper's §4.1,
z = 0 and z = 1, each model both as the ResNet of depth L and as the Euler scheme of its limit SDE on
``--sde-factor``× finer steps of the same path (:func:`validation.figures.pf_models.block_outputs`, all D coordinates):

* **exchangeability**: "the law of the processes x_{t,d} is exchangeable across d ∈ D if the distribution of
  x_{0,d} is so" — the quadratic variation σ_b² + σ_w²/D ‖ψ(x)‖² depends on the state only through a norm. Tested
  by the within-row permutation test of :func:`validation.figures.distribution_tests.exchangeability_test` (the marginal
  laws by the k-sample Anderson–Darling statistic, the pair laws by the spread of the coordinates' correlations,
  jointly at both inputs; ``--resamples`` permutations, so p ≥ 1/(resamples + 1)). Check: not rejected at
  level ``--alpha``.
* **non-Gaussianity**: "the joint distribution p(x_T^{(i)}, x_T^{(j)} | x_0^{(i)}, x_0^{(j)}) is not Gaussian",
  unlike the Gaussian process of wide networks. Tested by Mardia's skewness and kurtosis tests of the pair
  (x_{T,1}(0), x_{T,1}(1)) over the draws (:func:`validation.figures.distribution_tests.mardia_test`). Check: rejected at
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
from typing import Any, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.activations import get_activation
from limits.peluchetti_favaro import PFBlock, simulate_gram
from limits.seeding import generator, stream_seed
from validation.core.checks import FAIL, PASS, Check, bound_check, combine, interval_check
from validation.figures.distribution_tests import exchangeability_test, mardia_test
from validation.figures.pf_models import (block_outputs, eoc_outputs, homogeneous_ode, homogeneous_outputs, pc_fractions,
                                  resnet_outputs, top_pc_fraction)
from validation.core.stats import (
    percentile_interval, resampled_interval, resampled_interval_batched, resampled_rows, slope_fit,
)

__all__ = ["DEFAULT_DATA", "parse_data", "abc_figure", "abc_table", "two_d_figure", "two_d_table",
           "QUALITATIVE_INPUTS", "PLANTED", "qualitative_figure", "qualitative_table", "relu_figure", "relu_table",
           "exponent_fit", "exponent_check", "bounded_drift_check", "sizes_figure", "sizes_table"]

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
    variance (the upper end of its 95% bootstrap interval), a three-valued :func:`~validation.core.checks.bound_check`."""
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


# ------------------------------------------------------------------------------------------------ pf-relu (§3.4)
#: pf-relu's input z (x_0 = z·1) and its inner activation ψ (bounded: the drift's blow-up is then the drift's
#: own, Δt^{γ−1}, not fed back through ‖x‖ — with ψ = identity the ReLU network grows like exp(c√L))
RELU_INPUT, RELU_PSI = 1.0, "tanh"
#: pf-relu's activations: ReLU (E φ(h) > 0) and its control, the identity (E φ(h) = 0 for the symmetric h; the only
#: positively homogeneous φ with E φ(h) = 0, up to scale: φ = p a⁺ − q a⁻ has E φ(h) = (p − q) E h⁺)
RELU_PHIS: tuple[str, ...] = ("relu", "identity")
RELU_GAMMAS: tuple[float, ...] = (0.5, 1.0)


def displacement_mean(x: np.ndarray) -> np.ndarray:
    """E[x_T − x_0] over draws and coordinates of (…, N, D) displacements → (…)."""
    return x.mean(axis=(-2, -1))


def displacement_variance(x: np.ndarray) -> np.ndarray:
    """Var[x_{T,d}] over draws, averaged over the D exchangeable coordinates, of (…, N, D) → (…)."""
    return x.var(axis=-2, ddof=1).mean(-1)


def standardised_drift(x: np.ndarray) -> np.ndarray:
    """E[x_T − x_0] / SD(x_T) of (…, N, D) → (…)."""
    return displacement_mean(x) / np.sqrt(displacement_variance(x))


def exponent_fit(depths: Sequence[int], samples: Sequence[np.ndarray], statistic: Any, resamples: int,
                 rng: np.random.Generator) -> dict[str, Any]:
    """The exponent of ``statistic`` in L: the least-squares slope of log statistic on log L over the depths (a
    non-positive statistic: NaN), with a 95% percentile bootstrap interval, the draws of each depth resampled
    independently — the depths are independent samples (:func:`validation.core.stats.slope_fit`, independent).
    ``samples``: one (N, D) array per depth."""

    def log_statistic(x: np.ndarray) -> np.ndarray:
        value = np.asarray(statistic(x), dtype=float)
        return np.where(value > 0, np.log(np.where(value > 0, value, 1.0)), np.nan)

    fit = slope_fit(np.log(np.asarray(depths, dtype=float)), samples, log_statistic, resamples=resamples,
                    confidence=0.95, rng=rng)
    values = np.array([float(statistic(x)) for x in samples])
    local = np.diff(np.log(np.where(values > 0, values, np.nan))) / np.diff(np.log(np.asarray(depths, dtype=float)))
    return {"exponent": fit.slope, "ci95": [fit.low, fit.high], "values": values.tolist(),
            "local_exponents": local.tolist()}


def exponent_check(name: str, fit: dict[str, Any], theory: float, tolerance: float, samples: int) -> Check:
    """Three-valued: the exponent's 95% interval within theory ± tolerance (:func:`validation.core.checks.interval_check`)."""
    return interval_check(name, fit["exponent"], tuple(fit["ci95"]), (theory - tolerance, theory + tolerance), samples,
                          what="the exponent's 95% bootstrap interval")


def bounded_drift_check(name: str, per_depth: Sequence[dict[str, Any]], tolerance: float, samples: int) -> Check:
    """Three-valued, over the depths: E[x_T − x_0]/SD(x_T) within ± tolerance at every depth — FAIL if one depth's
    95% interval lies wholly outside, PASS if every one lies inside, INCONCLUSIVE otherwise; ``per_depth``: entries
    with ``depth``, ``standardised_drift`` and its ``standardised_drift_ci95``."""
    checks = [interval_check(name, e["standardised_drift"], tuple(e["standardised_drift_ci95"]),
                             (-tolerance, tolerance), samples, what=f"L = {e['depth']}: the 95% interval")
              for e in per_depth]
    worst = max(range(len(checks)), key=lambda i: abs(per_depth[i]["standardised_drift"]))
    verdict = combine(checks)
    shown = next((c for c in checks if c.verdict == verdict and verdict != PASS), checks[worst])
    values = ", ".join(f"{e['standardised_drift']:+.3f}" for e in per_depth)
    return Check(name, verdict, f"E[x_T − x_0]/SD(x_T) = {values} at L = "
                                f"{', '.join(str(e['depth']) for e in per_depth)}; {shown.detail}",
                 shown.samples_needed)


def relu_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """**pf-relu** (P&F §3.4, "Non-smooth activations"): for positively homogeneous φ,
    E[φ(hΔt^γ)]/Δt = E[φ(h)] Δt^{γ−1} and E[φ(hΔt^γ)²]/Δt = E[φ(h)²] Δt^{2γ−1}. The ResNet
    x_{k+1} = x_k + φ(Δt^γ (ε^W_k ψ(x_k) + ε^b_k)) (:func:`validation.figures.pf_models.homogeneous_outputs`; ψ = tanh,
    x_0 = 1·1) at every ``--depths`` L = 1/Δt, ``--draws`` networks each, φ ∈ {ReLU, identity}, γ ∈ {½, 1}. Checks
    (95% bootstrap intervals over the networks; margins ± ``--exponent-tolerance``, ``--drift-tolerance``,
    ``--ode-tolerance``; three-valued):

    * γ = ½, ReLU: the mean displacement E[x_T − x_0] grows like L^{1/2} (the drift blows up): exponent ½;
    * γ = ½, identity (E φ(h) = 0): it stays bounded — E[x_T − x_0]/SD(x_T) within ± the drift tolerance at every L;
      and the spread Var[x_T] neither vanishes nor grows (exponent 0): the SDE limit of the paper's Thm 3.1;
    * γ = 1, ReLU and identity: Var[x_T] over the networks vanishes like L^{-1} (exponent −1): a deterministic limit;
    * γ = 1, ReLU: the mean converges to the neural ODE m' = E φ(s(m) N(0, 1)) (:func:`~validation.figures.pf_models.
      homogeneous_ode`) — its relative gap at the deepest L within ± the ODE tolerance.
    """
    depths = list(s.depths)
    samples: dict[tuple[str, float], list[np.ndarray]] = {}
    with tqdm(total=len(depths) * s.draws, desc="pf-relu", unit="draw", disable=not progress, leave=False,
              delay=2.0) as bar:
        for depth in depths:
            out = homogeneous_outputs(RELU_PHIS, RELU_GAMMAS, RELU_PSI, RELU_INPUT, s.width, depth, s.draws,
                                      sigma_w=s.sigma_w, sigma_b=s.sigma_b, seed=s.seed, labels=("pf-relu",),
                                      dtype=s.torch_dtype, device=device, bar=bar)
            for key, values in out.items():
                samples.setdefault(key, []).append(values)
    ode = homogeneous_ode("relu", RELU_PSI, RELU_INPUT, sigma_w=s.sigma_w, sigma_b=s.sigma_b)
    models, checks, data = [], [], {"depths": depths}
    fits: dict[tuple[str, float], dict[str, Any]] = {}
    for (phi, gamma), xs in samples.items():
        rng = np.random.default_rng(stream_seed(s.seed, "figures", "bootstrap", "pf-relu", phi, gamma))
        finite = [int(np.isfinite(x).all(axis=1).sum()) for x in xs]
        mean_fit = (exponent_fit(depths, xs, displacement_mean, s.resamples, rng) if phi == "relu" else None)
        var_fit = exponent_fit(depths, xs, displacement_variance, s.resamples, rng)
        per_depth = []
        for depth, x in zip(depths, xs):
            drift = resampled_rows(standardised_drift, x, s.resamples, rng)
            means = resampled_rows(displacement_mean, x, s.resamples, rng)
            entry = {"depth": depth, "mean": float(displacement_mean(x)), "mean_ci95": percentile_interval(means),
                     "variance": float(displacement_variance(x)), "standardised_drift": float(standardised_drift(x)),
                     "standardised_drift_ci95": percentile_interval(drift)}
            if phi == "relu" and gamma == 1.0:
                entry["ode_relative_gap"] = (entry["mean"] - ode) / ode
                entry["ode_relative_gap_ci95"] = [(v - ode) / ode for v in entry["mean_ci95"]]
            per_depth.append(entry)
        fits[(phi, gamma)] = {"mean": mean_fit, "variance": var_fit, "per_depth": per_depth}
        models.append({"model": f"{phi}, γ = {gamma:g}", "kind": "resnet", "phi": phi, "gamma": gamma, "psi": RELU_PSI,
                       "finite_draws": finite,
                       "mean_exponent": mean_fit, "variance_exponent": var_fit, "per_depth": per_depth})
        data[(phi, gamma)] = {"mean": np.array([e["mean"] for e in per_depth]),
                              "mean_ci95": np.array([e["mean_ci95"] for e in per_depth]),
                              "variance": np.asarray(var_fit["values"])}
    tol, n = s.exponent_tolerance, s.draws
    relu_half, identity_half = fits[("relu", 0.5)], fits[("identity", 0.5)]
    checks.append(exponent_check("γ = ½, ReLU: the mean displacement E[x_T − x_0] blows up like L^{1/2} (the drift "
                                 "E φ(h) Δt^{-1/2})", relu_half["mean"], 0.5, tol, n))
    checks.append(bounded_drift_check("γ = ½, identity (E φ(h) = 0): the mean displacement stays bounded, "
                                      f"|E[x_T − x_0]|/SD(x_T) ≤ {s.drift_tolerance:g} at every L",
                                      identity_half["per_depth"], s.drift_tolerance, n))
    checks.append(exponent_check("γ = ½, identity: the spread Var[x_T] converges (exponent 0, the SDE limit)",
                                 identity_half["variance"], 0.0, tol, n))
    for phi in RELU_PHIS:
        checks.append(exponent_check(f"γ = 1, {'ReLU' if phi == 'relu' else 'identity'}: Var[x_T] over the networks "
                                     "vanishes like L^-1 (a deterministic limit)", fits[(phi, 1.0)]["variance"], -1.0,
                                     tol, n))
    last = fits[("relu", 1.0)]["per_depth"][-1]
    gap, gap_ci = last["ode_relative_gap"], tuple(last["ode_relative_gap_ci95"])
    ode_check = interval_check(f"γ = 1, ReLU: the mean converges to the neural ODE's (relative gap at L = "
                               f"{last['depth']} within ± {s.ode_tolerance:g})", gap, gap_ci,
                               (-s.ode_tolerance, s.ode_tolerance), n, what="the 95% bootstrap interval")
    checks.append(Check(ode_check.name, ode_check.verdict, f"E[x_T − x_0] = {last['mean']:.5f} against the ODE's "
                        f"{ode:.5f}, relative gap {gap:+.5f}; {ode_check.detail}", ode_check.samples_needed))
    result = {"depths": depths, "width": s.width, "draws": s.draws, "sigma_w": s.sigma_w, "sigma_b": s.sigma_b,
              "input": RELU_INPUT, "psi": RELU_PSI, "ode_displacement": ode, "exponent_tolerance": tol,
              "drift_tolerance": s.drift_tolerance, "ode_tolerance": s.ode_tolerance,
              "rule": (f"exponents: least-squares slope of log statistic on log L, 95% bootstrap interval over the "
                       f"networks, within theory ± {tol:g}; identity at γ = ½: |E[x_T − x_0]|/SD(x_T) ≤ "
                       f"{s.drift_tolerance:g} at every L; ReLU at γ = 1: |mean/ODE − 1| ≤ {s.ode_tolerance:g} at the "
                       "deepest L; each PASS inside, FAIL wholly outside, INCONCLUSIVE across an edge"),
              "models": models, "checks": [c.to_dict() for c in checks]}
    return result, data


def relu_table(r: dict[str, Any]) -> str:
    """The ``pf-relu`` console table."""
    depths = r["depths"]
    lines = [f"x_(k+1) = x_k + φ(Δt^γ (ε^W ψ(x_k) + ε^b)), ψ = {r['psi']}, x_0 = {r['input']:g}·1, D = {r['width']}, "
             f"σ_w = {r['sigma_w']:g}, σ_b = {r['sigma_b']:g}, {r['draws']} networks per depth; neural ODE (γ = 1, "
             f"ReLU): x_T − x_0 = {r['ode_displacement']:.5f}",
             f"rule: {r['rule']}",
             f"{'φ':>8} {'γ':>4} | {'':>10} " + " ".join(f"{'L=' + str(L):>9}" for L in depths) + " | exponent [95% CI]"]
    for m in r["models"]:
        rows = [("E[x_T−x_0]", [e["mean"] for e in m["per_depth"]], m["mean_exponent"]),
                ("Var[x_T]", [e["variance"] for e in m["per_depth"]], m["variance_exponent"]),
                ("E/SD", [e["standardised_drift"] for e in m["per_depth"]], None)]
        for i, (label, values, fit) in enumerate(rows):
            head = f"{m['phi']:>8} {m['gamma']:>4g}" if i == 0 else f"{'':>8} {'':>4}"
            shown = "" if fit is None else f"{fit['exponent']:+.3f} [{fit['ci95'][0]:+.3f}, {fit['ci95'][1]:+.3f}]"
            lines.append(f"{head} | {label:>10} " + " ".join(f"{v:>9.4g}" for v in values) + f" | {shown}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ pf-sizes (SM B.3)
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
    names = [n for n, _ in TWO_D_MODELS]
    with tqdm(total=len(names) * len(s.depths) * len(s.widths) * s.draws, desc="pf-sizes", unit="draw",
              disable=not progress, leave=False, delay=2.0) as bar:
        for name, activation in TWO_D_MODELS:
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
        models.append({"model": name, "kind": "resnet", "activation": dict(TWO_D_MODELS)[name], "cells": own})
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
