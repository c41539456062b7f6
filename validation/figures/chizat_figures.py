"""Chizat's lecture §3 as figures of ``python -m validation.figures``: the backward pass (``chizat-backward``), the
first gradient step and the tangent kernel (``chizat-kernel``), the phase diagram (``chizat-phase``), and Chizat &
Netrapalli's backward–feature angle (``chizat-feature-speed``, :func:`feature_speed_figure`).

**chizat-backward** (§3.1). The ResNet with ReLU 2LP blocks at α = κ/√(ML) (:mod:`limits.chizat`), the loss
½‖h^L − y‖², and S_b^ℓ = ‖b^ℓ − ∇loss(y, x)‖²/‖∇loss(y, x)‖² with b^ℓ = ∂loss/∂h^ℓ:

* through the real forward pass, by autograd (:func:`limits.chizat.chizat_backward_spread`);
* through the lecture's simplified backward, the forward frozen at h^ℓ = x
  (:func:`limits.chizat.chizat_frozen_backward_spread`), whose mean is exactly (1 + cα²M)^{L−ℓ} − 1
  (docs/theory.md, "Chizat §3.1").

The lecture's claim: sup_ℓ S_b^ℓ = o(1) when M L α² = κ² → 0 — the backward pass is asymptotically the
identity map. Stated before measuring: E sup_ℓ S_b^ℓ is of order κ², exponent 1 in M L α² (the simplified
spread is (1 + cκ²/L)^L − 1 = cκ² + O(κ⁴), and Doob's inequality for the backward martingale bounds its sup
by 4× its end point; the real pass adds the forward's own spread, also O(κ²), to b^L). Checks:

* the simplified backward's Monte Carlo mean of S_b^0 against its closed form, every κ: |z| at most the
  two-sided Bonferroni quantile at family level :data:`FAMILY_LEVEL` (an exact identity: PASS or FAIL);
* the exponent of E sup_ℓ S_b^ℓ (real pass) in κ², a least-squares slope in log–log over the κ given, with a
  paired bootstrap interval over networks, against 1 ± ``--exponent-tolerance`` (PASS, FAIL or INCONCLUSIVE,
  :func:`validation.core.checks.rate_check`'s equivalence test). Over a finite κ grid the closed form itself has a
  slope slightly above 1 (printed beside it): the grid's curvature, not a failure of the claim.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.chizat import (
    chizat_backward_spread, chizat_constant, chizat_expected_spread, chizat_frozen_backward_spread,
    chizat_kernel_errors, chizat_training_changes,
)
from limits.feature_speed import feature_angles
from validation.core.checks import Check, bound_check, interval_check
from validation.core.stats import slope, slope_fit

__all__ = ["FAMILY_LEVEL", "backward_pass", "backward_table", "kernel_figure", "kernel_table", "KERNEL_EXPONENTS",
           "phase_figure", "phase_table", "CLASSES", "DEPTH_MUP", "COMPLETE_P", "FEATURE_SPEED_EXPONENTS",
           "feature_speed_figure", "feature_speed_table"]

#: the family-wise level of the closed-form checks (two-sided z, Bonferroni over the κ values)
FAMILY_LEVEL = 0.01


def _exponent_fit(values: np.ndarray, log_x: np.ndarray, resamples: int, seed: int,
                  method: str = "BCa") -> dict[str, Any]:
    """The exponent of a mean in x: the slope of log (mean over networks) on ``log_x``, with a paired bootstrap over
    networks (the same networks at every x; :func:`validation.core.stats.slope_fit`); ``values`` (x values,
    networks)."""
    fit = slope_fit(log_x, [values[j] for j in range(values.shape[0])],
                    lambda col, axis: np.log(np.mean(col, axis=axis)), resamples=resamples, confidence=0.95,
                    seed=seed, method=method)
    return {"exponent": fit.slope, "ci95": [fit.low, fit.high], "method": fit.method}


def _too_few_kappas(check: Check, kappas: Any) -> Check:
    """An exponent check on fewer than 3 values of κ is INCONCLUSIVE: a slope, not a fit."""
    if len(kappas) >= 3:
        return check
    return Check(check.name, "INCONCLUSIVE", "an exponent from fewer than 3 values of κ is a slope, not a fit: give "
                                             "at least three --kappas")


def backward_pass(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """The ``chizat-backward`` figure's numbers and plot data (module docstring); ``s``: resolved figure
    settings (width, hidden, layers, kappas, networks, sigma_u, sigma_v, exponent_tolerance, resamples)."""
    d, m, layers, n = s.width, s.hidden, s.layers, s.networks
    c = chizat_constant(d, s.sigma_u, s.sigma_v)
    alphas = [k / math.sqrt(m * layers) for k in s.kappas]
    common = dict(width=d, hidden=m, layers=layers, networks=n, sigma_u=s.sigma_u, sigma_v=s.sigma_v, seed=s.seed,
                  label=("figures", "chizat-backward"), dtype=s.torch_dtype, device=device)
    real = chizat_backward_spread(alphas, **common).numpy()            # (κ, L + 1, n)
    frozen = chizat_frozen_backward_spread(alphas, **common).numpy()
    z_limit = NormalDist().inv_cdf(1 - FAMILY_LEVEL / (2 * len(alphas)))
    per_kappa, data, z_scores = [], {}, []
    for j, (kappa, alpha) in enumerate(zip(s.kappas, alphas)):
        exact = chizat_expected_spread(alpha, m, layers, c).flip(0).numpy()   # E S_b^ℓ = (1 + cα²M)^{L−ℓ} − 1
        start = frozen[j, 0]
        se = float(start.std(ddof=1) / math.sqrt(n))
        z = (float(start.mean()) - float(exact[0])) / se if se > 0 else (0.0 if start.mean() == exact[0] else math.inf)
        z_scores.append(z)
        sup_real, sup_frozen = real[j].max(axis=0), frozen[j].max(axis=0)
        per_kappa.append({
            "kappa": kappa, "alpha": alpha, "ml_alpha2": kappa**2,
            "exact_mean_start": float(exact[0]), "frozen_mean_start": float(start.mean()), "frozen_se_start": se,
            "z": z, "real_mean_start": float(real[j, 0].mean()), "real_mean_sup": float(sup_real.mean()),
            "frozen_mean_sup": float(sup_frozen.mean()),
            "real_mean_by_layer": real[j].mean(axis=1).tolist(), "frozen_mean_by_layer": frozen[j].mean(axis=1).tolist(),
            "exact_by_layer": exact.tolist(),
        })
        data[kappa] = {"sup_real": sup_real, "sup_frozen": sup_frozen}
    log_k2 = np.log(np.asarray(s.kappas, dtype=float) ** 2)

    fits = {name: _exponent_fit(spreads.max(axis=1), log_k2, s.resamples, s.seed)   # E sup_ℓ S_b^ℓ per κ
            for name, spreads in (("real", real), ("frozen", frozen))}
    exact_slope = float(slope(log_k2, np.log([e["exact_mean_start"] for e in per_kappa])))
    tol = s.exponent_tolerance
    worst = int(np.argmax(np.abs(z_scores)))
    checks = [
        Check.of("simplified backward: E S_b^0 = (1 + cα²M)^L − 1 at every κ",
                 bool(np.all(np.abs(z_scores) <= z_limit)),
                 f"max |z| = {abs(z_scores[worst]):.2f} (κ = {s.kappas[worst]:g}) ≤ {z_limit:.2f}, the two-sided "
                 f"Bonferroni quantile at family level {FAMILY_LEVEL:g}").to_dict(),
        _too_few_kappas(interval_check(
            f"real backward: E sup_ℓ S_b^ℓ ∝ (MLα²)^p with p within 1 ± {tol:g}", fits["real"]["exponent"],
            tuple(fits["real"]["ci95"]), (1 - tol, 1 + tol), n,
            what=f"p = {fits['real']['exponent']:.3f}, the 95% interval"), s.kappas).to_dict(),
    ]
    result = {
        "width": d, "hidden": m, "layers": layers, "networks": n, "c": c,
        "sigma_u": s.sigma_u, "sigma_v": s.sigma_v, "loss": "½‖h^L − y‖², x, y ~ N(0, I_d)",
        "expected_exponent": 1.0, "closed_form_slope_on_grid": exact_slope, "fits": fits, "z_limit": z_limit,
        "rule": (f"S_b^ℓ = ‖b^ℓ − ∇loss(y, x)‖²/‖∇loss(y, x)‖²; simplified (forward frozen at x): |z| of E S_b^0 "
                 f"against (1 + cα²M)^L − 1 ≤ {z_limit:.2f}; real (autograd): the exponent p of E sup_ℓ S_b^ℓ in "
                 f"MLα² = κ², 95% paired-bootstrap interval within 1 ± {tol:g}"),
        "backward": per_kappa, "checks": checks,
    }
    return result, data


def backward_table(r: dict[str, Any]) -> str:
    """The ``chizat-backward`` console table."""
    lines = [f"d = {r['width']}, M = {r['hidden']}, L = {r['layers']}, σ_u = {r['sigma_u']:.4g}, σ_v = "
             f"{r['sigma_v']:.4g}, c = {r['c']:.4g}, {r['networks']} networks, loss {r['loss']}",
             f"rule: {r['rule']}",
             f"{'κ':>7} {'MLα²':>9} | {'E S_b^0 exact':>13} {'simplified':>11} {'z':>6} | {'real E S_b^0':>12} "
             f"{'real E sup S_b':>14} | {'simplified E sup':>16}"]
    for e in r["backward"]:
        lines.append(f"{e['kappa']:>7g} {e['ml_alpha2']:>9.4g} | {e['exact_mean_start']:>13.5g} "
                     f"{e['frozen_mean_start']:>11.5g} {e['z']:>+6.2f} | {e['real_mean_start']:>12.5g} "
                     f"{e['real_mean_sup']:>14.5g} | {e['frozen_mean_sup']:>16.5g}")
    fits = r["fits"]
    lines.append(f"exponent of E sup_ℓ S_b^ℓ in MLα² (expected {r['expected_exponent']:g}; the closed form's own "
                 f"slope over these κ: {r['closed_form_slope_on_grid']:.3f}):")
    for name in ("real", "frozen"):
        lo, hi = fits[name]["ci95"]
        lines.append(f"  {name:>6}: {fits[name]['exponent']:.3f} [{lo:.3f}, {hi:.3f}] ({fits[name]['method']})")
    return "\n".join(lines)


#: the exponents in MLα² stated before measuring (docs/theory.md, "Chizat §3.2–3.3"): an error made of the forward
#: states' and the backward states' deviations is of order √(MLα²) (exponent 1/2); the u-gradient also carries
#: ReLU's slope ρ' flipping on a fraction O(√(MLα²)) of units, an error of order (MLα²)^{1/4}
KERNEL_EXPONENTS = {"kernel": "1/2", "gradient_v": "1/2", "gradient_u": "between 1/4 and 1/2", "gradient": "between 1/4 and 1/2"}


def kernel_figure(s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
    """``chizat-kernel`` (lecture §3.2 and §3.3): at initialisation, the ResNet's empirical tangent kernel against
    the shallow kernel of M × L units, and its first-step gradient against eq. (5), for α = κ/√(ML).

    The lecture's claim: as MLα² = κ² → 0 both agree (the ResNet is, to first order, a shallow network). Checks:
    the exponent of the mean relative Frobenius error in κ² lies above 0 (its 95% paired-bootstrap interval; a
    three-valued :func:`~validation.core.checks.bound_check`), for the kernel and for the gradient; the exponents are
    reported against :data:`KERNEL_EXPONENTS`, stated before measuring."""
    d, m, layers, n = s.width, s.hidden, s.layers, s.networks
    alphas = [k / math.sqrt(m * layers) for k in s.kappas]
    errors = {key: value.numpy() for key, value in chizat_kernel_errors(
        alphas, width=d, hidden=m, layers=layers, networks=n, inputs=s.inputs, sigma_u=s.sigma_u, sigma_v=s.sigma_v,
        seed=s.seed, label=("figures", "chizat-kernel"), dtype=s.torch_dtype, device=device).items()}
    log_k2 = np.log(np.asarray(s.kappas, dtype=float) ** 2)
    fits = {key: _exponent_fit(values, log_k2, s.resamples, s.seed) for key, values in errors.items()}
    per_kappa = [{"kappa": kappa, "alpha": alpha, "ml_alpha2": kappa**2,
                  **{f"mean_{key}_error": float(values[j].mean()) for key, values in errors.items()}}
                 for j, (kappa, alpha) in enumerate(zip(s.kappas, alphas))]
    checks = []
    for key, claim in (("kernel", "tangent kernel → the shallow kernel of M × L units (§3.3)"),
                       ("gradient", "first-step gradient → eq. (5) (§3.2)")):
        fit = fits[key]
        check = bound_check(f"{claim}: its relative error vanishes as MLα² → 0", tuple(fit["ci95"]), 0.0,
                            at_most=False, detail=f"exponent of the mean relative error in MLα² {fit['exponent']:.3f} "
                                                  f"[{fit['ci95'][0]:.3f}, {fit['ci95'][1]:.3f}] (expected "
                                                  f"{KERNEL_EXPONENTS[key]})")
        checks.append(_too_few_kappas(check, s.kappas).to_dict())
    result = {
        "width": d, "hidden": m, "layers": layers, "networks": n, "inputs": s.inputs, "sigma_u": s.sigma_u,
        "sigma_v": s.sigma_v, "loss": "½‖h^L(x_1) − y‖², x_i, y ~ N(0, I_d)", "fits": fits,
        "expected_exponents": KERNEL_EXPONENTS, "kernel_errors": per_kappa,
        "rule": ("relative Frobenius errors: K (autograd, every block weight) against α² Σ D₂φ D₂φᵀ; the first-step "
                 "gradient against α D₂φ(x, z)ᵀ ∇loss(y, x); PASS when the 95% interval of each error's exponent in "
                 "MLα² = κ² lies above 0"),
        "checks": checks,
    }
    return result, {key: values for key, values in errors.items()}


def kernel_table(r: dict[str, Any]) -> str:
    """The ``chizat-kernel`` console table."""
    lines = [f"d = {r['width']}, M = {r['hidden']}, L = {r['layers']}, σ_u = {r['sigma_u']:.4g}, σ_v = "
             f"{r['sigma_v']:.4g}, {r['networks']} networks, {r['inputs']} inputs, loss {r['loss']}",
             f"rule: {r['rule']}",
             f"{'κ':>7} {'MLα²':>9} | {'kernel':>9} | {'gradient':>9} {'u part':>9} {'v part':>9}"]
    for e in r["kernel_errors"]:
        lines.append(f"{e['kappa']:>7g} {e['ml_alpha2']:>9.4g} | {e['mean_kernel_error']:>9.4f} | "
                     f"{e['mean_gradient_error']:>9.4f} {e['mean_gradient_u_error']:>9.4f} "
                     f"{e['mean_gradient_v_error']:>9.4f}")
    lines.append("exponent of the mean relative error in MLα² [95% interval] (expected):")
    for key, fit in r["fits"].items():
        lines.append(f"  {key:>10}: {fit['exponent']:.3f} [{fit['ci95'][0]:.3f}, {fit['ci95'][1]:.3f}] "
                     f"({r['expected_exponents'][key]})")
    return "\n".join(lines)


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
                fits = ({"predictor": _exponent_fit(predictor, log_depths, s.resamples, s.seed, "percentile"),
                         "share": _exponent_fit(share, log_depths, s.resamples, s.seed, "percentile")} if finite else
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
            return _exponent_fit(values, log_x, s.resamples, s.seed)

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
