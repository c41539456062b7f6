"""The ``pf-relu`` figure: Peluchetti & Favaro (2020) §3.4: non-smooth (positively homogeneous) activations.

Peluchetti & Favaro's §3.4, "Non-smooth activations" — the ResNet x + φ(Δt^γ (ε^W tanh(x) + ε^b))
over ``--depths``: with φ = ReLU at γ = ½ the mean displacement grows like L^{1/2} (the drift blows up), with the
identity (E φ(h) = 0) it stays bounded; at γ = 1 the spread over networks vanishes like L^-1 and the mean tends to
the neural ODE's (exponents with bootstrap intervals, three-valued).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.seeding import stream_seed
from validation.core.checks import PASS, Check, combine, interval_check, with_enough_samples
from validation.core.plots import new_grid
from validation.core.stats import percentile_interval, resampled_rows, slope_fit
from validation.core.settings import SettingsError
from validation.core.workers import TaskRunner
from validation.figures.figure import Figure
from validation.figures.pf_models import homogeneous_ode, homogeneous_outputs


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


def relu_figure(s: Any, device: torch.device, progress: bool,
                runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
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
                                      dtype=s.torch_dtype, device=device, bar=bar, runner=runner)
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
    checks = [with_enough_samples(c, n, "networks per depth") for c in checks]  # bootstrap intervals over them
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


_RELU_STYLE = {("relu", 0.5): ("tab:red", "o-"), ("relu", 1.0): ("tab:orange", "s-"),
               ("identity", 0.5): ("tab:blue", "o--"), ("identity", 1.0): ("tab:cyan", "s--")}


def plot_relu(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F §3.4, non-smooth activations: the mean displacement against L (log–log, slope-½ guide), the standardised
    drift E[x_T − x_0]/SD(x_T) (the control's margin shaded), the spread Var[x_T] against L (slopes 0 and −1), and the
    γ = 1 ReLU mean against the neural ODE's."""
    fig, axes = new_grid(2, 2, ax, figsize=(10.5, 8.4))
    (mean_ax, drift_ax), (var_ax, ode_ax) = axes
    depths = np.asarray(numbers["depths"], dtype=float)
    entries = {(m["phi"], m["gamma"]): m for m in numbers["models"]}
    for key, m in entries.items():
        colour, style = _RELU_STYLE.get(key, ("black", ".-"))
        label = f"φ = {m['phi']}, γ = {m['gamma']:g}"
        per = m["per_depth"]
        mean = np.array([e["mean"] for e in per])
        ci = np.array([e["mean_ci95"] for e in per])
        if m["phi"] == "relu":
            mean_ax.errorbar(depths, mean, yerr=[mean - ci[:, 0], ci[:, 1] - mean], fmt=style, color=colour, ms=4,
                             capsize=2, label=label + (f": exponent {m['mean_exponent']['exponent']:.3f}"
                                                       if m["mean_exponent"] else ""))
        if m["gamma"] == 0.5:  # at γ = 1 the SD vanishes, so E/SD grows for ReLU without a drift blowing up
            drift = np.array([e["standardised_drift"] for e in per])
            dci = np.array([e["standardised_drift_ci95"] for e in per])
            drift_ax.errorbar(depths, drift, yerr=[drift - dci[:, 0], dci[:, 1] - drift], fmt=style, color=colour,
                              ms=4, capsize=2, label=label)
        fit = m["variance_exponent"]
        var_ax.plot(depths, fit["values"], style, color=colour, ms=4,
                    label=f"{label}: exponent {fit['exponent']:.3f} [{fit['ci95'][0]:.3f}, {fit['ci95'][1]:.3f}]")
    first = entries[("relu", 0.5)]["per_depth"][0]["mean"]
    mean_ax.plot(depths, first * np.sqrt(depths / depths[0]), "k:", lw=1, label=r"$\propto L^{1/2}$")
    mean_ax.set_xscale("log")
    mean_ax.set_yscale("log")
    mean_ax.set_xlabel("L")
    mean_ax.set_ylabel(r"$E[x_T - x_0]$")
    mean_ax.set_title("ReLU: the mean displacement (γ = ½ blows up, γ = 1 converges)", fontsize=10)
    mean_ax.legend(fontsize=7)
    tolerance = numbers["drift_tolerance"]
    drift_ax.axhspan(-tolerance, tolerance, color="tab:blue", alpha=0.12, lw=0, label="the control's margin")
    drift_ax.set_xscale("log")
    drift_ax.set_yscale("symlog", linthresh=0.1)
    drift_ax.set_xlabel("L")
    drift_ax.set_ylabel(r"$E[x_T - x_0]\,/\,SD(x_T)$")
    drift_ax.set_title("γ = ½, the drift against the spread: ReLU grows, the identity stays at 0", fontsize=10)
    drift_ax.legend(fontsize=7)
    var_ax.set_xscale("log")
    var_ax.set_yscale("log")
    var_ax.set_xlabel("L")
    var_ax.set_ylabel(r"$Var[x_{T,d}]$ over networks")
    var_ax.set_title("the spread: a diffusion at γ = ½ (slope 0), deterministic at γ = 1 (slope −1)", fontsize=10)
    var_ax.legend(fontsize=7)
    relu1 = entries[("relu", 1.0)]["per_depth"]
    mean = np.array([e["mean"] for e in relu1])
    ci = np.array([e["mean_ci95"] for e in relu1])
    ode_ax.errorbar(depths, mean, yerr=[mean - ci[:, 0], ci[:, 1] - mean], fmt="s-", color="tab:orange", ms=4,
                    capsize=2, label="ResNet, γ = 1 (95% interval)")
    ode_ax.axhline(numbers["ode_displacement"], color="black", ls="--", lw=1, label="neural ODE")
    ode_ax.set_xscale("log")
    ode_ax.set_xlabel("L")
    ode_ax.set_ylabel(r"$E[x_T - x_0]$")
    ode_ax.set_title("γ = 1, ReLU: the mean tends to the neural ODE's", fontsize=10)
    ode_ax.legend(fontsize=7)
    for panel in axes.ravel():
        panel.grid(True, alpha=0.3)
    fig.suptitle(f"Peluchetti & Favaro §3.4: x + φ(Δt^γ (W ψ(x) + b)), ψ = {numbers['psi']}, D = {numbers['width']}, "
                 f"{numbers['draws']} networks per depth", fontsize=11)
    return fig


class PFReLU(Figure):
    """The ``pf-relu`` figure (module docstring)."""

    name = "pf-relu"
    title = "Peluchetti & Favaro (2020) §3.4: non-smooth (positively homogeneous) activations"
    paper = (
        "§3.4 (stated without a figure): E[φ(hΔt^γ)/Δt] = E[φ(h)] Δt^{γ−1}, E[φ(hΔt^γ)²/Δt] = E[φ(h)²] "
        "Δt^{2γ−1}: at γ = ½ the drift blows up unless E φ(h) = 0; γ = 1 gives a deterministic limit (the "
        "neural ODE of Chen et al. 2018)"
    )
    shares_draws = True
    defaults = dict(
        width=8,
        depths=(16, 32, 64, 128, 256, 512, 1024),
        draws=1000,
        sigma_w=1.0,
        sigma_b=1.0,
        exponent_tolerance=0.1,
        drift_tolerance=0.1,
        ode_tolerance=0.02,
        resamples=400,
    )
    smoke = dict(
        width=4,
        depths=(8, 16, 32),
        draws=200,
        resamples=100,
    )
    rejects = {
        "swapped regimes: ReLU a diffusion at γ = 1, deterministic at γ = ½, its γ = 1 mean drifting":
            "tests/test_pf_relu_sizes.py::test_relu_checks_come_out_the_other_way_on_swapped_cases",
        "a drift of order L^(1/2) for unbounded ψ = identity, whose drift grows like exp(c√L)":
            "tests/test_pf_relu_sizes.py::test_an_unbounded_psi_blows_up_faster_than_the_drift",
    }

    def check_values(self, values: dict[str, Any]) -> None:
        if len(values["depths"]) < 3:
            raise SettingsError("depths", f"{list(values['depths'])}: pf-relu fits exponents, give at least three depths")

    def estimate_mb(self, s: Any) -> float:
        """Every displacement (4 models × depths × draws × D) and a batch of resamples."""
        return (4 * len(s.depths) * s.draws * s.width * 8 + 3 * 2**22 * 8) / 2**20 + 300

    def estimate_seconds(self, s: Any) -> float:
        """Per layer and draw: D² + D normals, 4 small products and activations."""
        return 2.5e-8 * sum(s.depths) * s.draws * (s.width**2 + s.width) + 1e-7 * sum(s.depths) * s.draws * s.width

    def compute(self, s: Any, device: torch.device, progress: bool,
                runner: TaskRunner | None = None) -> tuple[dict[str, Any], dict[Any, Any]]:
        return relu_figure(s, device, progress, runner)

    def table(self, numbers: dict[str, Any]) -> str:
        return relu_table(numbers)

    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        return plot_relu(numbers, data, ax)
