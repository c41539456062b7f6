"""The ``chizat-kernel`` figure: Chizat (lecture 12) §3.2–3.3: at initialisation the ResNet is, to first order, a shallow network.

the same ResNet's tangent kernel and first gradient at initialisation against the shallow
network's of M × L units (the lecture's §3.2–3.3); their relative errors must vanish as MLα² → 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from limits.chizat import chizat_kernel_errors
from validation.core.checks import bound_check
from validation.core.plots import new_grid
from validation.figures.chizat_fits import ChizatFigure, exponent_fit_of_mean, too_few_kappas
from validation.core.workers import PROCESS_MB


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
    fits = {key: exponent_fit_of_mean(values, log_k2, s.resamples, s.seed) for key, values in errors.items()}
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
        checks.append(too_few_kappas(check, s.kappas).to_dict())
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


def plot_chizat_kernel(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Left: the tangent kernel's relative error against MLα²; right: the first-step gradient's (all, u part,
    v part); log–log with the fitted exponents, a slope-1/2 guide through the first point."""
    fig, axes = new_grid(1, 2, ax, figsize=(11, 4.4))
    k2 = np.array([e["ml_alpha2"] for e in numbers["kernel_errors"]])
    fits = numbers["fits"]
    for panel, keys, title in ((axes.ravel()[0], ("kernel",), "§3.3: tangent kernel against the shallow kernel"),
                               (axes.ravel()[1], ("gradient", "gradient_u", "gradient_v"),
                                "§3.2: first gradient against eq. (5)")):
        for key, marker in zip(keys, "osD"):
            values = np.array([e[f"mean_{key}_error"] for e in numbers["kernel_errors"]])
            fit = fits[key]
            panel.loglog(k2, values, marker + "-", ms=5, label=f"{key.replace('_', ' ')}: p = {fit['exponent']:.3f} "
                                                               f"[{fit['ci95'][0]:.3f}, {fit['ci95'][1]:.3f}]")
        first = np.array([e[f"mean_{keys[0]}_error"] for e in numbers["kernel_errors"]])[0]
        panel.loglog(k2, first * (k2 / k2[0]) ** 0.5, ":", color="black", lw=1, label="slope 1/2")
        panel.set_xlabel(r"$M L \alpha^2 = \kappa^2$")
        panel.set_ylabel("mean relative Frobenius error")
        panel.set_title(title, fontsize=10)
        panel.grid(True, which="both", alpha=0.3)
        panel.legend(fontsize=7)
    fig.suptitle(f"Chizat §3.2–3.3: the ResNet at initialisation is, to first order, a shallow network of M × L units "
                 f"(d = {numbers['width']}, M = {numbers['hidden']}, L = {numbers['layers']}, {numbers['networks']} "
                 "networks)", fontsize=10)
    return fig


class ChizatKernel(ChizatFigure):
    """The ``chizat-kernel`` figure (module docstring)."""

    name = "chizat-kernel"
    title = "Chizat (lecture 12) §3.2–3.3: at initialisation the ResNet is, to first order, a shallow network"
    paper = (
        "§3.2: the first gradient is α D₂φ(x, z^{j,ℓ})ᵀ ∇loss(y, x) (eq. 5); §3.3: the tangent kernel is "
        "α² Σ_j Σ_ℓ D₂φ(x, z^{j,ℓ}) D₂φ(x', z^{j,ℓ})ᵀ, a shallow network's of M × L units, when MLα² = o(1)"
    )
    defaults = dict(
        width=10,
        hidden=16,
        layers=32,
        kappas=(0.0625, 0.125, 0.25, 0.5),
        networks=200,
        inputs=3,
        sigma_u=None,
        sigma_v=1.0,
        resamples=1000,
    )
    smoke = dict(
        width=3,
        hidden=3,
        layers=4,
        networks=12,
        inputs=2,
        resamples=50,
    )
    rejects = {
        "the same initial network with α moved from a multiplier into v's initial variance (W = αV trained): its "
        "tangent kernel and first gradient are the shallow network's at scale α anyway":
            "tests/test_chizat_plants.py::test_chizat_kernel_fails_with_alpha_in_the_initial_variance_not_a_multiplier",
    }

    def estimate_mb(self, s: Any) -> float:
        """A chunk's Jacobian rows (inputs · d of them, each over every block weight)."""
        item = s.torch_dtype.itemsize
        params = 2 * s.layers * s.hidden * s.width
        # the arrays counted and 0.8 of them again: the backward passes' temporaries (measured: 733 MiB at the defaults)
        return PROCESS_MB + 1.8 * (3 * s.inputs * s.width * 32 * params + 4 * 32 * s.layers * s.width * s.inputs) * item / 2**20

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
        return kernel_figure(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return kernel_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_chizat_kernel(numbers, data, ax)
