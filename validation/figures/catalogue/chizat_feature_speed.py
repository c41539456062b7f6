"""The ``chizat-feature-speed`` figure: Chizat & Netrapalli (2024): the backward–feature angle θ_ℓ at initialisation, MLP against ResNet.

Chizat & Netrapalli (NeurIPS 2024), the angle θ_ℓ between a gradient step's feature
update and the backward pass at initialisation, for a ReLU MLP and the lecture's ResNet at α = κ/√(ML): the exponent
of E cos θ_L in L must be −½ for the MLP (the angle degenerates) and not below 0 for the ResNets (it does not).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.feature_speed import feature_angles
from validation.core.checks import Check, bound_check, interval_check
from validation.core.plots import new_grid
from validation.figures.chizat_fits import ChizatFigure, exponent_fit_of_mean
from validation.core.settings import SettingsError
from validation.core.workers import PROCESS_MB


#: the exponents of cos θ at the last layer in L, stated by Chizat & Netrapalli (2024): Θ(1/√ℓ) for the ReLU MLP,
#: Θ(1) for the ResNet with branch scale 1/√L
FEATURE_SPEED_EXPONENTS = {"mlp": -0.5, "resnet": 0.0}


def _identity_tolerance(dtype: torch.dtype) -> float:
    """The largest relative error of ⟨K_ℓ b_ℓ, b_ℓ⟩ = Σ_{k≤ℓ} ‖∇_{θ_k}F‖² taken as rounding: 10⁴ units of round-off."""
    return 1e4 * torch.finfo(dtype).eps


def feature_speed_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """``chizat-feature-speed`` (Chizat & Netrapalli, NeurIPS 2024): the backward–feature angle θ_ℓ at
    initialisation (:mod:`limits.feature_speed`) of a ReLU MLP at He initialisation and of the lecture's ResNet at
    α = κ/√(ML), for every depth of ``--depths`` and κ of ``--kappas``, ``--networks`` networks each (the same inputs
    x and readouts w at every depth and for every model; every κ reads the same ResNet weights).

    The paper's claim, made in the large width-then-depth limit: cos θ_ℓ = Θ(1/√ℓ) for the MLP, Θ(1) for the ResNet.
    Measured: the exponent of E cos θ_L (the last layer, where K_L is the tangent kernel) in L, a least-squares slope
    in log–log over the depths with a paired bootstrap interval over networks. Checks (three-valued, τ =
    ``--exponent-tolerance``): the MLP's exponent within −½ ± τ; each ResNet's above −τ — cos θ ≤ 1, so Θ(1) means
    bounded below, and over a finite range of depths the ResNet's angle still rises towards its limit (a positive
    slope that must flatten: 0.111 [0.106, 0.115] over L = 8…128 at d = 256, M = 64); and the identity ⟨K_ℓ b_ℓ, b_ℓ⟩ =
    Σ_{k≤ℓ} ‖∇_{θ_k}F‖² behind the feature speed formula, to rounding (the forward tangent pass against the backward
    pass: an exact identity, PASS or FAIL). Reported beside them, not checked: the exponent of cos θ_ℓ in ℓ inside the
    deepest network (ℓ from the smallest depth to L) and the exponent in L of the relative feature speed
    ‖K_L b_L‖/‖f_L‖ per unit learning rate."""
    tau, depths = s.exponent_tolerance, list(s.depths)
    models = [("mlp", None)] + [("resnet", kappa) for kappa in s.kappas]
    log_depths = np.log(np.asarray(depths, dtype=float))
    tolerance = _identity_tolerance(s.torch_dtype)
    entries, data, checks = [], {}, []
    by_depth = []                                            # per depth: {(architecture, κ): its three quantities}
    with tqdm(total=2 * len(depths), desc="chizat-feature-speed", unit="net", disable=not progress,
              leave=False, delay=2.0) as bar:
        for depth in depths:
            common = dict(hidden=s.hidden, sigma_u=s.sigma_u, sigma_v=s.sigma_v, seed=s.seed,
                          label=("figures", "chizat-feature-speed"), dtype=s.torch_dtype, device=device)
            mlp = feature_angles("mlp", depth, s.width, s.networks, **common)
            bar.update(1)
            resnet = feature_angles("resnet", depth, s.width, s.networks, kappas=s.kappas, **common)
            bar.update(1)
            by_depth.append({("mlp", None): {key: value[0].numpy() for key, value in mlp.items()},
                             **{("resnet", kappa): {key: value[j].numpy() for key, value in resnet.items()}
                                for j, kappa in enumerate(s.kappas)}})
    for architecture, kappa in models:
        runs = [quantities[(architecture, kappa)] for quantities in by_depth]
        name = "ReLU MLP (He)" if kappa is None else f"ResNet κ = {kappa:g}"
        last = np.stack([r["cosine"][-1] for r in runs])                     # (depths, networks)
        speed = np.stack([r["speed"][-1] for r in runs])
        deepest = runs[-1]["cosine"][depths[0] - 1:]                          # ℓ = depths[0] … L
        bad = int(np.sum(~np.all([np.isfinite(r["cosine"]).all(axis=0) for r in runs], axis=0)))

        def fit(values: np.ndarray, log_x: np.ndarray) -> dict[str, Any]:
            if bad:  # noqa: B023 (called within this iteration)
                return {"exponent": math.nan, "ci95": [math.nan, math.nan], "method": "not fitted"}
            return exponent_fit_of_mean(values, log_x, s.resamples, s.seed)

        entry = {
            "model": name, "kind": architecture, "kappa": kappa,
            "alpha": None if kappa is None else [kappa / math.sqrt(s.hidden * L) for L in depths],
            "expected_exponent": FEATURE_SPEED_EXPONENTS[architecture], "degenerate_networks": bad,
            "mean_cos_last": np.mean(last, axis=1).tolist(), "mean_speed_last": np.mean(speed, axis=1).tolist(),
            "depth_exponent": fit(last, log_depths), "speed_exponent": fit(speed, log_depths),
            "profile_exponent": fit(deepest, np.log(np.arange(depths[0], depths[-1] + 1, dtype=float))),
            "mean_cos_by_depth": [r["cosine"].mean(axis=1).tolist() for r in runs],
            "max_identity_error": float(max(r["identity_error"].max() for r in runs)),
        }
        entries.append(entry)
        data[(architecture, kappa)] = {"last": last, "runs": runs}
        expected, p = entry["expected_exponent"], entry["depth_exponent"]
        claim = (f"{name}: E cos θ_L ∝ L^p with p within {expected:g} ± {tau:g} (Θ(1/√ℓ))" if architecture == "mlp"
                 else f"{name}: the angle does not degenerate, p > −{tau:g} (Θ(1))")
        if bad:
            checks.append(Check(claim, "INCONCLUSIVE", f"{bad} networks had a layer with every unit off (b = 0, "
                                                       "no angle): widen the network").to_dict())
        elif architecture == "mlp":
            checks.append(interval_check(claim, p["exponent"], tuple(p["ci95"]), (expected - tau, expected + tau),
                                         s.networks, what=f"p = {p['exponent']:.3f}, the 95% interval").to_dict())
        else:   # cos θ ≤ 1: Θ(1) is "bounded below", and a positive slope is the approach to the limit's value
            checks.append(bound_check(claim, tuple(p["ci95"]), -tau, at_most=False,
                                      detail=f"p = {p['exponent']:.3f} [{p['ci95'][0]:.3f}, {p['ci95'][1]:.3f}]"
                                      ).to_dict())
    worst = max(e["max_identity_error"] for e in entries)
    checks.append(Check.of("feature speed identity ⟨K_ℓ b_ℓ, b_ℓ⟩ = Σ_{k≤ℓ} ‖∇_{θ_k}F‖² to rounding",
                           bool(worst <= tolerance),
                           f"largest relative error {worst:.2e} ≤ {tolerance:.1e}, every layer, network and depth"
                           ).to_dict())
    result = {
        "width": s.width, "hidden": s.hidden, "depths": depths, "networks": s.networks, "sigma_u": s.sigma_u,
        "sigma_v": s.sigma_v, "tau": tau, "identity_tolerance": tolerance,
        "networks_compared": ("ReLU MLP: f_1 = W_1 x/√d, f_ℓ = √(2/d) W_ℓ ρ(f_{ℓ−1}), F = √(2/d) wᵀρ(f_L); ResNet: "
                              "h_ℓ = h_{ℓ−1} + α Σ_j v_j ρ(u_jᵀ h_{ℓ−1}), α = κ/√(ML), F = wᵀh_L/√d; every layer "
                              "trained at one learning rate"),
        "rule": (f"cos θ_ℓ = ⟨K_ℓ b_ℓ, b_ℓ⟩/(‖K_ℓ b_ℓ‖ ‖b_ℓ‖); the exponent p of E cos θ_L in L (least squares in "
                 f"log–log, 95% paired bootstrap over networks): within −½ ± {tau:g} for the MLP; above −{tau:g} for "
                 "each ResNet (cos θ ≤ 1, so Θ(1) means bounded below)"),
        "models": entries, "checks": checks,
    }
    return result, data


def feature_speed_table(r: dict[str, Any]) -> str:
    """The ``chizat-feature-speed`` console table."""
    lines = [f"d = {r['width']}, M = {r['hidden']}, σ_u = {r['sigma_u']:.4g}, σ_v = {r['sigma_v']:.4g}, "
             f"{r['networks']} networks per depth; {r['networks_compared']}", f"rule: {r['rule']}",
             f"{'model':>16} | {'E cos θ_L by L = ' + ','.join(map(str, r['depths'])):>38} | "
             f"{'exponent in L [95%]':>26} (expected) | {'in ℓ, deepest':>14} | {'speed exponent':>14}"]
    for e in r["models"]:
        p, q, v = e["depth_exponent"], e["profile_exponent"], e["speed_exponent"]
        cosines = " ".join(f"{c:.3f}" for c in e["mean_cos_last"])
        lines.append(f"{e['model']:>16} | {cosines:>38} | {p['exponent']:>7.3f} [{p['ci95'][0]:>6.3f}, "
                     f"{p['ci95'][1]:>6.3f}] ({e['expected_exponent']:+g}) | {q['exponent']:>14.3f} | "
                     f"{v['exponent']:>14.3f}")
    return "\n".join(lines)


def plot_feature_speed(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Left: E cos θ_ℓ over ℓ in the deepest networks, log–log, with an ℓ^{-1/2} guide; middle: E cos θ_L against L
    with the fitted exponents and intervals; right: the relative feature speed ‖K_L b_L‖/‖f_L‖ against L."""
    fig, axes = new_grid(1, 3, ax, figsize=(15, 4.4))
    profile, last, speed = axes.ravel()
    depths = np.asarray(numbers["depths"], dtype=float)
    for k, entry in enumerate(numbers["models"]):
        colour, marker = f"C{k}", "s" if entry["kind"] == "mlp" else "o"
        deepest = np.asarray(entry["mean_cos_by_depth"][-1])
        layers = np.arange(1, len(deepest) + 1)
        profile.loglog(layers, deepest, "-", color=colour, lw=1.4, label=entry["model"])
        fit = entry["depth_exponent"]
        last.loglog(depths, entry["mean_cos_last"], marker + "-", color=colour, ms=5,
                    label=f"{entry['model']}: p = {fit['exponent']:.3f} [{fit['ci95'][0]:.3f}, {fit['ci95'][1]:.3f}]")
        s_fit = entry["speed_exponent"]
        speed.loglog(depths, entry["mean_speed_last"], marker + "-", color=colour, ms=5,
                     label=f"{entry['model']}: {s_fit['exponent']:.2f}")
    mlp = next(e for e in numbers["models"] if e["kind"] == "mlp")
    start = np.asarray(mlp["mean_cos_by_depth"][-1])
    layers = np.arange(1, len(start) + 1)
    profile.loglog(layers, start[-1] * (layers / layers[-1]) ** -0.5, ":", color="black", lw=1, label=r"$\ell^{-1/2}$")
    last.loglog(depths, mlp["mean_cos_last"][-1] * (depths / depths[-1]) ** -0.5, ":", color="black", lw=1,
                label=r"$L^{-1/2}$")
    profile.set_xlabel(r"layer $\ell$ (deepest networks, L = " + f"{numbers['depths'][-1]})")
    profile.set_ylabel(r"$E \cos\theta_\ell$")
    profile.set_title("the angle through the layers", fontsize=10)
    last.set_xlabel("depth L")
    last.set_ylabel(r"$E \cos\theta_L$ (last layer: the tangent kernel)")
    last.set_title("exponent in L: −½ expected for the MLP, 0 for the ResNets", fontsize=10)
    speed.set_xlabel("depth L")
    speed.set_ylabel(r"$E\,\|K_L b_L\| / \|f_L\|$ per unit learning rate")
    speed.set_title("feature speed at one learning rate for every depth", fontsize=10)
    for panel in (last, speed):
        panel.set_xticks(depths, [f"{d:g}" for d in depths], minor=False)
        panel.set_xticks([], minor=True)
    for panel in (profile, last, speed):
        panel.grid(True, which="both", alpha=0.3)
        panel.legend(fontsize=7)
    fig.suptitle(f"Chizat & Netrapalli (2024): the backward–feature angle at initialisation (d = {numbers['width']}, "
                 f"M = {numbers['hidden']}, {numbers['networks']} networks per depth)", fontsize=11)
    return fig


class ChizatFeatureSpeed(ChizatFigure):
    """The ``chizat-feature-speed`` figure (module docstring)."""

    name = "chizat-feature-speed"
    title = "Chizat & Netrapalli (2024): the backward–feature angle θ_ℓ at initialisation, MLP against ResNet"
    paper = (
        "NeurIPS 2024, \"The feature speed formula\", §4: in the large width-then-depth limit, cos θ_ℓ = "
        "Θ(1/√ℓ) for ReLU MLPs at i.i.d. initialisation, Θ(1) for ResNets with branch scale O(1/√depth) "
        "(proved from prior work, no figure of the exponent)"
    )
    defaults = dict(
        width=128,
        hidden=128,
        depths=(4, 8, 16, 32, 64),
        kappas=(0.5, 1.0, 2.0),
        networks=32,
        sigma_u=None,
        sigma_v=1.0,
        exponent_tolerance=0.1,
        resamples=1000,
    )
    smoke = dict(
        width=32,
        hidden=8,
        depths=(2, 4, 8),
        kappas=(1.0,),
        networks=6,
        resamples=50,
    )
    rejects = {
        "an MLP whose feature speed stays of order 1 with depth, like the ResNet's (misstated exponent 0)":
            "tests/test_feature_speed.py::test_the_mlp_check_fails_against_the_resnets_claim",
    }

    def check_values(self, values: dict[str, Any]) -> None:
        super().check_values(values)
        if len(values["depths"]) < 3:
            raise SettingsError("depths", f"{list(values['depths'])}: chizat-feature-speed fits exponents, give at least "
                                          "three depths")

    def estimate_mb(self, s: Any) -> float:
        """A chunk of 8 networks' weights, gradients, states and tangents."""
        item = s.torch_dtype.itemsize
        per_layer = max(s.width**2, 2 * s.hidden * s.width)
        # the arrays counted and 0.7 of them again: autograd's saved tensors (measured: 1001 MiB at the defaults)
        return PROCESS_MB + 1.7 * 8 * s.depths[-1] * (3 * per_layer + 8 * s.width) * item / 2**20

    def estimate_seconds(self, s: Any) -> float:
        """Per layer and network: its normals and ~8 products (2.9 s at d = M = 128, L = 64, 32 networks measured
        for one ResNet); the MLP counts as one model."""
        return 2.5e-10 * sum(s.depths) * s.networks * s.width * (s.width + 2 * s.hidden * len(s.kappas)) * 8

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
        return feature_speed_figure(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return feature_speed_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_feature_speed(numbers, data, ax)
