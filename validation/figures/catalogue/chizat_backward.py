"""The ``chizat-backward`` figure: Chizat (lecture 12) §3.1: the backward pass is asymptotically the identity when MLα² → 0.

(§3.1). The ResNet with ReLU 2LP blocks at α = κ/√(ML) (:mod:`limits.chizat`), the loss
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

from limits.chizat import chizat_backward_spread, chizat_constant, chizat_expected_spread, chizat_frozen_backward_spread
from validation.core.checks import Check, interval_check
from validation.core.plots import new_grid
from validation.core.stats import slope
from validation.figures.chizat_fits import ChizatFigure, FAMILY_LEVEL, exponent_fit_of_mean, too_few_kappas
from validation.core.workers import PROCESS_MB


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

    fits = {name: exponent_fit_of_mean(spreads.max(axis=1), log_k2, s.resamples, s.seed)   # E sup_ℓ S_b^ℓ per κ
            for name, spreads in (("real", real), ("frozen", frozen))}
    exact_slope = float(slope(log_k2, np.log([e["exact_mean_start"] for e in per_kappa])))
    tol = s.exponent_tolerance
    worst = int(np.argmax(np.abs(z_scores)))
    checks = [
        Check.of("simplified backward: E S_b^0 = (1 + cα²M)^L − 1 at every κ",
                 bool(np.all(np.abs(z_scores) <= z_limit)),
                 f"max |z| = {abs(z_scores[worst]):.2f} (κ = {s.kappas[worst]:g}) "
                 f"{'≤' if abs(z_scores[worst]) <= z_limit else '>'} {z_limit:.2f}, the two-sided "
                 f"Bonferroni quantile at family level {FAMILY_LEVEL:g}").to_dict(),
        too_few_kappas(interval_check(
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


def plot_chizat_backward(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Left: E S_b^ℓ over ℓ for each κ — the real backward (autograd), the simplified one (forward frozen at x)
    and its closed form. Right: E sup_ℓ S_b^ℓ against MLα² in log–log, with the fitted exponents and slope 1."""
    entries = numbers["backward"]
    fig, axes = new_grid(1, 2, ax, figsize=(11, 4.4))
    left, right = axes.ravel()
    layers = np.arange(numbers["layers"] + 1)
    for k, entry in enumerate(entries):
        colour = f"C{k}"
        left.plot(layers, entry["real_mean_by_layer"], "-", color=colour, lw=1.4,
                  label=f"κ = {entry['kappa']:g}: real (autograd)")
        left.plot(layers, entry["frozen_mean_by_layer"], "--", color=colour, lw=1.1, label="simplified" if k == 0
                  else None)
        left.plot(layers, entry["exact_by_layer"], ":", color="black", lw=1, label="closed form" if k == 0 else None)
    left.set_yscale("log")
    left.set_xlabel("layer ℓ (the backward pass runs from L down to 0)")
    left.set_ylabel(r"$E\,\|b^\ell - \nabla loss(y, x)\|^2 / \|\nabla loss(y, x)\|^2$")
    left.set_title("§3.1: backward spread per layer", fontsize=10)
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=7)
    k2 = np.array([e["ml_alpha2"] for e in entries])
    fits = numbers["fits"]
    for name, key, marker in (("real", "real_mean_sup", "o"), ("simplified", "frozen_mean_sup", "s")):
        values = np.array([e[key] for e in entries])
        fit = fits["real" if name == "real" else "frozen"]
        right.loglog(k2, values, marker, ms=5, label=f"{name}: p = {fit['exponent']:.3f} "
                                                    f"[{fit['ci95'][0]:.3f}, {fit['ci95'][1]:.3f}]")
        right.loglog(k2, values[0] * (k2 / k2[0]) ** fit["exponent"], "-", lw=0.8, color="gray")
    exact = np.array([e["exact_mean_start"] for e in entries])
    right.loglog(k2, exact, ":", color="black", label=r"closed form $E\,S_b^0$ (simplified)")
    right.set_xlabel(r"$M L \alpha^2 = \kappa^2$")
    right.set_ylabel(r"$E \sup_\ell S_b^\ell$")
    right.set_title(f"exponent in MLα² (expected {numbers['expected_exponent']:g})", fontsize=10)
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=7)
    fig.suptitle(f"Chizat §3.1: the backward pass tends to the identity; ReLU 2LP blocks, d = {numbers['width']}, "
                 f"M = {numbers['hidden']}, L = {numbers['layers']}, {numbers['networks']} networks", fontsize=11)
    return fig


class ChizatBackward(ChizatFigure):
    """The ``chizat-backward`` figure (module docstring)."""

    name = "chizat-backward"
    title = "Chizat (lecture 12) §3.1: the backward pass is asymptotically the identity when MLα² → 0"
    paper = (
        "§3.1: b^{ℓ−1} = b^ℓ + α Σ_j D₁φ(h^{ℓ−1}, Z^{j,ℓ})ᵀ b^ℓ has the forward pass's form, so "
        "sup_ℓ ‖b^ℓ − ∇loss(y, x)‖² = o(1) w.h.p. when MLα² = o(1) (stated without a figure)"
    )
    defaults = dict(
        width=10,
        hidden=16,
        layers=64,
        kappas=(0.0625, 0.125, 0.25, 0.5),
        networks=2000,
        sigma_u=None,
        sigma_v=1.0,
        exponent_tolerance=0.1,
        resamples=1000,
    )
    smoke = dict(
        width=4,
        hidden=4,
        layers=8,
        networks=60,
        resamples=50,
    )
    rejects = {
        "blocks at α = √κ/√(ML), MLα² = κ where κ² is claimed: E sup_ℓ S_b^ℓ of order κ, exponent 1/2 in MLα²":
            "tests/test_chizat_plants.py::test_chizat_backward_fails_on_blocks_at_ml_alpha2_kappa_not_kappa2",
        "output weights of variance 1.15 σ_v², so the constant c of E S_b^0 = (1 + cα²M)^L − 1 is off by 15%":
            "tests/test_chizat_plants.py::test_chizat_backward_fails_on_output_weights_of_variance_1_15_sigma_v2",
    }

    def estimate_mb(self, s: Any) -> float:
        """A chunk's states and gradients, and two spreads (κ, L + 1, n) in float64."""
        item = s.torch_dtype.itemsize
        chunk = 64 * len(s.kappas) * s.width * (s.layers + 1) * 6 + 64 * 2 * s.layers * s.hidden * s.width
        # the arrays counted, four times over: autograd's saved tensors and the backward pass's temporaries (measured:
        # 443 MiB at the defaults, whose arrays are 26 MiB)
        return PROCESS_MB + 4 * (chunk * item + 2 * len(s.kappas) * (s.layers + 1) * s.networks * 8) / 2**20

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
        return backward_pass(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return backward_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_chizat_backward(numbers, data, ax)
