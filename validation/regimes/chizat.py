"""The ``chizat`` kind of regimes preset: Chizat's Prop. 2.1 for the ResNet with ReLU 2LP blocks — the exact
spread E‖h^ℓ − x‖²/‖x‖² = (1 + cα²M)^ℓ − 1 at every layer, E h^ℓ = x, the regimes of α = (ML)^-β over depths, and the
hidden width's sweep (the preset ``chizat``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.chizat import chizat_constant, chizat_expected_spread, chizat_spread
from validation.core.checks import Check
from validation.core.hypothesis import family_z, hotelling_zero_mean
from validation.core.plots import new_grid
from validation.core.regime_rule import TAU, classify, critical_beta, fit_slope
from validation.core.settings import SettingsError
from validation.core.workers import PROCESS_MB

from validation.regimes.preset import (
    CLASS_COLOURS, Preset, beta_text, classification_checks,
    critical_checks, predicted_class, predicted_critical_beta,
)


def _chizat(s: Any, device: torch.device, progress: bool) -> tuple[dict, dict]:
    d, m, layers, n = s.width, s.hidden, s.layers, s.samples
    c = chizat_constant(d, s.sigma_u, s.sigma_v)
    alphas = [k / math.sqrt(m * layers) for k in s.kappas]
    common = dict(width=d, hidden=m, networks=n, sigma_u=s.sigma_u, sigma_v=s.sigma_v, seed=s.seed,
                  dtype=s.torch_dtype, device=device)
    spread, first, second = (t.numpy() for t in chizat_spread(alphas, layers=layers, label=("chizat", "curves"),
                                                              moments=True, **common))
    _, mean_p = hotelling_zero_mean(first[:, 1:], second[:, 1:], n)          # (α, ℓ = 1…L)
    mean_level = 0.01 / (len(alphas) * layers)
    z_max = family_z(len(alphas) * layers)
    per_alpha = []
    for i, (kappa, alpha) in enumerate(zip(s.kappas, alphas)):
        expected = chizat_expected_spread(alpha, m, layers, c).numpy()
        mean = spread[i].mean(-1)
        se = spread[i].std(-1, ddof=1) / math.sqrt(n)
        z = np.where(se[1:] > 0, (mean[1:] - expected[1:]) / se[1:], 0.0)
        positive = spread[i, -1][spread[i, -1] > 0]
        sd_log = float(np.log(positive).std(ddof=1)) if positive.size > 1 else math.nan
        worst = float(np.abs(z).max())
        mean_displacement = first[i, -1] / n
        per_alpha.append({"kappa": kappa, "alpha": alpha, "expected": expected.tolist(), "mean": mean.tolist(),
                          "se": se.tolist(), "max_abs_z": worst, "z_at_L": float(z[-1]), "sd_log_at_L": sd_log,
                          "verdict": "pass" if worst <= z_max else "fail",
                          "mean_zero_p": mean_p[i].tolist(), "mean_zero_min_p": float(mean_p[i].min()),
                          "mean_displacement_at_L": float(np.linalg.norm(mean_displacement)),
                          "mean_displacement_null_rms_at_L": float(math.sqrt(max(0.0, np.trace(second[i, -1]) / n
                                                                           - mean_displacement @ mean_displacement)
                                                                       / (n - 1)))})
    hidden_sweep = _chizat_hidden_sweep(s, device)
    depths, betas = list(s.depths), list(s.betas)
    n = s.sweep_samples
    common["networks"] = n
    sweep = np.empty((len(depths), len(betas), n))
    with tqdm(total=len(depths), desc="chizat depths", disable=not progress, leave=False) as bar:
        for i, depth in enumerate(depths):
            a = [(m * depth) ** (-b) for b in betas]
            spread_l = chizat_spread(a, layers=depth, label=("chizat", "sweep", depth), **common)[:, -1, :]
            sweep[i] = np.sqrt(spread_l.numpy())
            bar.update(1)
    critical = predicted_critical_beta(s)
    per_beta = []
    for j, beta in enumerate(betas):
        fit = fit_slope(depths, sweep[:, j], seed=s.seed)
        per_beta.append({"beta": beta, **fit, "class": classify(fit["slope"], s.tau),
                         "predicted_class": predicted_class(beta, critical),
                         "median": np.median(sweep[:, j], axis=1).tolist()})
    estimate = critical_beta(betas, [e["slope"] for e in per_beta])
    checks = [Check.of(f"exact spread, α√(ML) = {e['kappa']:g}",
                       e["verdict"] == "pass",
                       f"max |z| {e['max_abs_z']:.2f} ≤ {z_max:.2f}").to_dict() for e in per_alpha]
    checks += [Check.of(f"E h^ℓ = x (Prop. 2.1), α√(ML) = {e['kappa']:g}",
                        e["mean_zero_min_p"] >= mean_level,
                        f"Hotelling's test of E (h^ℓ − x)/‖x‖ = 0 at every layer: smallest p {e['mean_zero_min_p']:.3g} "
                        f"(≥ {mean_level:.2g}: Bonferroni, family-wise 1%); at ℓ = L ‖mean‖ "
                        f"{e['mean_displacement_at_L']:.3g} (its size under E = 0: {e['mean_displacement_null_rms_at_L']:.3g})").to_dict()
               for e in per_alpha]
    checks += hidden_sweep["checks"]
    checks += classification_checks(per_beta, ("r",), lambda e, key: e["class"])
    checks += critical_checks(betas, {"r": estimate}, critical, s.critical_tolerance, ("r",))
    result = {
        "title": s.title, "width": d, "hidden": m, "layers": layers, "samples": s.samples, "sweep_samples": n,
        "c": c, "sigma_u": s.sigma_u, "sigma_v": s.sigma_v,
        "check_rule": f"|mean − exact| ≤ z s.e. at every layer ℓ and α, z = {z_max:.2f} (Bonferroni over "
                      f"{len(alphas) * layers} checks, family-wise 1%)",
        "per_alpha": per_alpha, "depths": depths, "per_beta": per_beta,
        "rule": f"α = (ML)^-β; slope s of log median ‖h^L − x‖/‖x‖ on log L (top decade): explosion if "
                f"s > {s.tau}, identity if s < −{s.tau}, else non-trivial",
        "critical_beta_estimate": estimate, "predicted_critical_beta": critical, "hidden_sweep": hidden_sweep,
        "checks": checks,
    }
    return result, {"spread": spread, "sweep": sweep}


def _chizat_hidden_sweep(s: Any, device: torch.device) -> dict[str, Any]:
    """Chizat §2.1, α = Θ(1/√(ML)): at depth L = ``layers`` and each M of ``hiddens``, two scalings on the same
    networks — α = 1/√(ML), where E‖h^L − x‖²/‖x‖² = (1 + c/L)^L − 1 whatever M is (MLα² = 1), and α = 1/√L,
    which forgets M: (1 + cM/L)^L − 1 ≈ e^{cM} − 1. Checks: with α = 1/√(ML) the mean spread at every M lies within
    z standard errors of the M-free value (z Bonferroni over the M's, family-wise 1%); the contrast is reported."""
    layers, n = s.layers, s.hidden_samples
    c = chizat_constant(s.width, s.sigma_u, s.sigma_v)
    z = family_z(len(s.hiddens))
    rows, worst = [], 0.0
    for m in s.hiddens:
        alphas = [1.0 / math.sqrt(m * layers), 1.0 / math.sqrt(layers)]
        spread = chizat_spread(alphas, width=s.width, hidden=m, layers=layers, networks=n, sigma_u=s.sigma_u,
                               sigma_v=s.sigma_v, seed=s.seed, label=("chizat", "hidden", m), dtype=s.torch_dtype,
                               device=device)[:, -1, :].numpy()                      # (2, n): the spread at ℓ = L
        entry: dict[str, Any] = {"hidden": m}
        for key, column, alpha in (("ml", 0, alphas[0]), ("l_only", 1, alphas[1])):
            exact = float(chizat_expected_spread(alpha, m, layers, c)[-1])
            mean, se = float(spread[column].mean()), float(spread[column].std(ddof=1) / math.sqrt(n))
            entry[key] = {"alpha": alpha, "mean": mean, "se": se, "exact": exact,
                          "z": (mean - exact) / se if se > 0 else 0.0}
        worst = max(worst, abs(entry["ml"]["z"]))
        rows.append(entry)
    m_free = float(chizat_expected_spread(1.0 / math.sqrt(layers), 1, layers, c)[-1])
    hiddens = ", ".join(str(r["hidden"]) for r in rows)
    means = ", ".join(f"{r['ml']['mean']:.4g}" for r in rows)
    check = Check.of("§2.1: at α = 1/√(ML) the spread does not depend on M", worst <= z,
                     f"mean ‖h^L − x‖²/‖x‖² at M = {hiddens}: {means} against (1 + c/L)^L − 1 = {m_free:.4g}; "
                     f"max |z| {worst:.2f} ≤ {z:.2f}")
    return {"layers": layers, "networks": n, "c": c, "m_free": m_free, "z": z, "rows": rows,
            "checks": [check.to_dict()]}


def _chizat_table(result: dict[str, Any]) -> str:
    lines = [f"{result['title']}: d = {result['width']}, M = {result['hidden']}, σ_u = {result['sigma_u']:.4g}, "
             f"σ_v = {result['sigma_v']:.4g}, c = dσ_v²σ_u²/2 = {result['c']:.4g}, {result['samples']} networks",
             f"E‖h^ℓ − x‖²/‖x‖² against ((1 + cα²M)^ℓ − 1), ℓ = 1…{result['layers']}; rule: {result['check_rule']}",
             f"{'α√(ML)':>8} {'α':>9} | {'mean @L':>10} {'exact @L':>10} {'z @L':>6} {'max|z|':>7} {'sd log':>7} | "
             "verdict"]
    for e in result["per_alpha"]:
        lines.append(f"{e['kappa']:>8g} {e['alpha']:>9.4g} | {e['mean'][-1]:>10.4g} {e['expected'][-1]:>10.4g} "
                     f"{e['z_at_L']:>6.2f} {e['max_abs_z']:>7.2f} {e['sd_log_at_L']:>7.2f} | {e['verdict']}")
    lines += ["", f"rule: {result['rule']}",
              f"{'β':>6} | {'slope [95% CI]':>26} | {'regime':>12} | median r @Lmax   ({result['sweep_samples']} "
              "networks per depth)"]
    for e in result["per_beta"]:
        lo, hi = e["ci95"]
        lines.append(f"{e['beta']:>6g} | {e['slope']:>8.3f} [{lo:>7.3f}, {hi:>7.3f}] | {e['class']:>12} | "
                     f"{e['median'][-1]:.4g}")
    lines.append(f"critical β (zero of the slope): {beta_text(result['critical_beta_estimate'])}; predicted "
                 f"{result['predicted_critical_beta']:g}")
    h = result.get("hidden_sweep")
    if h is not None:
        lines += ["", f"M sweep at L = {h['layers']} ({h['networks']} networks per M): mean ‖h^L − x‖²/‖x‖² [± s.e.] "
                      "at α = 1/√(ML) (MLα² = 1) and at α = 1/√L (M forgotten), each against its exact value",
                  f"{'M':>6} | {'α = 1/√(ML)':>22} {'exact':>8} {'z':>6} | {'α = 1/√L':>24} {'exact':>10}"]
        for r in h["rows"]:
            ml, lo = r["ml"], r["l_only"]
            lines.append(f"{r['hidden']:>6} | {ml['mean']:>12.4g} ± {ml['se']:<7.2g} {ml['exact']:>8.4g} {ml['z']:>6.2f} | "
                         f"{lo['mean']:>12.4g} ± {lo['se']:<9.2g} {lo['exact']:>10.4g}")
    return "\n".join(lines)


def plot_chizat(result: dict[str, Any], spread: np.ndarray, sweep: np.ndarray, ax: Any = None) -> Any:
    """Left: E‖h^ℓ − x‖²/‖x‖² against ℓ for each α (mean ± 2 s.e.) with ((1 + cα²M)^ℓ − 1).
    Right: ‖h^L − x‖/‖x‖ against L for α = (ML)^{-β} (median and samples)."""
    fig, grid = new_grid(1, 2, ax, figsize=(11.5, 4.4))
    axes = grid[0]
    ax = axes[0]
    ell = np.arange(spread.shape[1])
    for i, entry in enumerate(result["per_alpha"]):
        colour = f"C{i}"
        mean = spread[i].mean(-1)
        se = spread[i].std(-1, ddof=1) / np.sqrt(spread.shape[-1])
        ax.plot(ell[1:], mean[1:], color=colour, lw=1.5,
                label=f"α√(ML) = {entry['kappa']:g}: measured ({entry['verdict']})")
        ax.fill_between(ell[1:], (mean - 2 * se)[1:], (mean + 2 * se)[1:], color=colour, alpha=0.25, lw=0)
        ax.plot(ell[1:], np.asarray(entry["expected"])[1:], color=colour, ls="--", lw=1,
                label=r"$((1+c\alpha^2M)^\ell-1)$")
    ax.set_yscale("log")
    ax.set_xlabel("layer ℓ")
    ax.set_ylabel(r"$\mathbb{E}\|h^\ell-x\|^2/\|x\|^2$")
    ax.set_title(f"Chizat Prop. 2.1: d={result['width']}, M={result['hidden']}, L={result['layers']}, "
                 f"c={result['c']:.3g}", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, which="major", alpha=0.3)
    ax = axes[1]
    depths = np.asarray(result["depths"], dtype=float)
    for i, entry in enumerate(result["per_beta"]):
        colour = CLASS_COLOURS.get(entry["class"], f"C{i}")
        r = sweep[:, i, :]
        ax.plot(depths, np.nanmedian(np.where(np.isfinite(r), r, np.nan), axis=1), "o-", color=colour,
                label=f"α = (ML)^-{entry['beta']:g}: {entry['class']} (slope {entry['slope']:.2f})")
        lo, hi = np.nanpercentile(np.where(np.isfinite(r), r, np.nan), [10, 90], axis=1)
        ax.fill_between(depths, lo, hi, color=colour, alpha=0.15, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("depth L")
    ax.set_ylabel(r"$\|h^L-x\|/\|x\|$ (median, 10–90% band)")
    ax.set_title("regime against depth", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, which="major", alpha=0.3)
    return fig


class ChizatPreset(Preset):
    """Chizat's Prop. 2.1 (module docstring)."""

    kind = "chizat"
    applies = frozenset({"width", "hidden", "layers", "kappas", "betas", "depths", "samples", "sweep_samples",
                         "hiddens", "hidden_samples", "sigma_u", "sigma_v", "tau", "critical_tolerance"})
    kind_defaults = {"tau": TAU, "critical_tolerance": 0.1}

    def check_values(self, values: dict[str, Any], given: set[str]) -> None:
        values["sigma_u"] = values.get("sigma_u") or 1.0 / math.sqrt(values["width"])
        if values["samples"] <= values["width"]:
            raise SettingsError("samples", f"{values['samples']} networks for width d={values['width']}: the zero-mean "
                                           f"test (Hotelling's T²) needs more (allowed: samples ≥ {values['width'] + 1})")
        if len(values["depths"]) < 3:
            raise SettingsError("depths", f"{list(values['depths'])}: a sweep needs at least 3 depths to fit a slope")

    def estimate_mb(self, s: Any) -> float:
        """A chunk of at most 64 networks' weights at the deepest depth, 2.5 times over: the drawn matrices, their
        stacked copies and the products between them (measured: 2015 MiB at the preset, whose chunk is 655 MiB)."""
        item = s.torch_dtype.itemsize
        layers = max(s.layers, max(s.depths))
        per_net = 2 * layers * s.hidden * s.width * item
        return PROCESS_MB + 2.5 * min(64, max(s.samples, s.sweep_samples)) * per_net / 2**20

    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        return _chizat(s, device, progress)

    def table(self, numbers: dict[str, Any]) -> str:
        return _chizat_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[str, Any], ax: Any = None) -> Any:
        return plot_chizat(numbers, data["spread"], data["sweep"], ax)
