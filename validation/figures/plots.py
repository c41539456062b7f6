"""Figures for ``python -m validation.figures`` (Peluchetti & Favaro Fig. 1, 3, 4; Marion et al. Fig. 6;
Chizat Remark 2.2 and §3; P&F App. B.1, B.3 and B.4, §3.4; Chizat & Netrapalli's angle), titled like the papers'
panels."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.plots import new_grid

__all__ = ["plot"]

_NAMES = {"SC_tanh": r"$\mathcal{SC}_{\tanh}$", "SC_swish": r"$\mathcal{SC}_{swish}$",
          "EO_tanh": r"$\mathcal{EO}_{\tanh}$", "EO_ReLU": r"$\mathcal{EO}_{ReLU}$"}


def plot(figure: str, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    return {"pf-function-space": plot_function_space, "pf-correlation": plot_correlation,
            "marion-fbm": plot_fbm, "chizat-maximal": plot_chizat,
            "chizat-backward": plot_chizat_backward, "pf-abc": plot_abc,
            "pf-2d": plot_two_d, "pf-qualitative": plot_qualitative, "pf-relu": plot_relu, "pf-sizes": plot_sizes,
            "chizat-kernel": plot_chizat_kernel,
            "chizat-phase": plot_chizat_phase, "chizat-feature-speed": plot_feature_speed}[figure](numbers, data, ax)


def _samples(ax: Any, z: np.ndarray, shown: list, quantiles: dict, colour: str, band: str, label: str) -> None:
    for i, row in enumerate(shown):
        ax.plot(z, row, color=colour, lw=0.9, alpha=0.8, label=f"{label}: draws" if i == 0 else None)
    q = {int(k): np.asarray(v) for k, v in quantiles.items()}
    ax.fill_between(z, q[5], q[95], color=band, alpha=0.18, lw=0)
    for level, style in ((5, "--"), (50, "-"), (95, "--")):
        ax.plot(z, q[level], style, color=band, lw=1.4, label=f"{label}: 5/50/95% quantiles" if level == 50 else None)


def plot_function_space(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Top row: SC_tanh, SC_swish (ResNet and its SDE on the same paths); bottom row: EO_tanh, EO_ReLU."""
    z = np.asarray(numbers["z"])
    fig, axes = new_grid(2, 2, ax, figsize=(10.5, 7.6))
    for panel, entry in zip(axes.ravel(), numbers["models"]):
        name = entry["model"]
        net = f"L = {entry['depth']}, D = {entry['width']}"
        _samples(panel, z, entry["shown"], entry["quantiles"], "tab:blue", "tab:orange", "ResNet" if "sde" in entry
                 else "network")
        if "sde" in entry:
            sde = entry["sde"]
            for i, row in enumerate(sde["shown"]):
                panel.plot(z, row, ":", color="black", lw=1.0, label="SDE, same path" if i == 0 else None)
            q = {int(k): np.asarray(v) for k, v in sde["quantiles"].items()}
            panel.plot(z, q[5], ":", color="tab:red", lw=1.2, label="SDE 5/50/95%")
            panel.plot(z, q[50], ":", color="tab:red", lw=1.2)
            panel.plot(z, q[95], ":", color="tab:red", lw=1.2)
            subtitle = f"RMS gap/SD {sde['relative_gap']:.3f}"
        else:
            subtitle = f"σ_w = {entry['sigma_w']:.3f}, σ_b = {entry['sigma_b']:g}"
        kind = r"$x_{T,1}(z)$" if "sde" in entry else r"$x_{last,1}(z)$"
        panel.set_title(f"{_NAMES[name]}: {kind}, {net}\nfirst PC {entry['top_pc_fraction']:.3f}; {subtitle}",
                        fontsize=10)
        panel.set_xlabel("z")
        panel.grid(True, alpha=0.3)
        panel.legend(fontsize=7, loc="best")
    fig.suptitle(f"P&F Fig. 3 (top) and Fig. 1 (bottom): {numbers['draws']} draws, 5 shown", fontsize=11)
    return fig


def plot_correlation(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Four heatmaps of ρ[x(z1), x(z2)] on [−2, 2]², one colour scale [−1, 1] (P&F Fig. 4's layout)."""
    fig, axes = new_grid(2, 2, ax, figsize=(9.5, 8.4))
    lo, hi = numbers["z"][0], numbers["z"][-1]
    image = None
    for panel, entry in zip(axes.ravel(), numbers["models"]):
        corr = np.asarray(entry["correlation"], dtype=float)
        image = panel.imshow(corr, origin="lower", extent=(lo, hi, lo, hi), vmin=-1, vmax=1, cmap="viridis")
        a, b = entry["min_correlation_ci95"]
        panel.set_title(f"{_NAMES[entry['model']]} (L = {entry['depth']}, D = {entry['width']})\n"
                        f"min ρ = {entry['min_correlation']:.3f} [{a:.3f}, {b:.3f}]", fontsize=10)
        panel.set_xlabel(r"$z^{(1)}$")
        panel.set_ylabel(r"$z^{(2)}$")
    if image is not None:
        fig.colorbar(image, ax=list(axes.ravel()), shrink=0.8, label=r"$\rho$")
    fig.suptitle(f"P&F Fig. 4: output correlation, {numbers['draws']} draws", fontsize=11)
    return fig


def plot_fbm(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """One panel per H with the realisations of B^H on [0, 1] (Marion et al. Fig. 6)."""
    entries = numbers["per_hurst"]
    fig, axes = new_grid(1, len(entries), ax, figsize=(4.2 * len(entries), 3.6))
    t = np.asarray(data["t"]) if "t" in data else np.linspace(0, 1, numbers["length"] + 1)
    for panel, entry in zip(axes.ravel(), entries):
        paths = data.get(entry["hurst"], entry["shown"])
        for row in np.asarray(paths):
            panel.plot(t, row, lw=0.8)
        a, b = entry["estimate_ci95"]
        panel.set_title(f"H = {entry['hurst']:g}\nestimated {entry['estimate']:.3f} [{a:.3f}, {b:.3f}]", fontsize=10)
        panel.set_xlabel("t")
        panel.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel(r"$B^H_t$")
    fig.suptitle("Marion et al. Fig. 6: realisations of fractional Brownian motion", fontsize=11)
    return fig


def plot_chizat(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Per κ: the empirical tail P(sup_ℓ S^ℓ ≥ a) with its 95% interval (and P(S^L ≥ a)) against E[S^L]/a."""
    entries = numbers["per_kappa"]
    fig, axes = new_grid(1, len(entries), ax, figsize=(4.6 * len(entries), 4.0))
    for panel, entry in zip(axes.ravel(), entries):
        exact = entry["exact_mean_final"]
        sup = np.sort(np.asarray(data[entry["kappa"]]["sup"])) if entry["kappa"] in data else None
        if sup is not None and sup.size:
            grid = np.geomspace(max(exact / 20, sup[sup > 0].min() if (sup > 0).any() else exact / 20),
                                max(sup.max(), exact * 2), 200)
            panel.plot(grid, 1 - np.searchsorted(sup, grid, side="left") / sup.size, color="tab:blue", lw=1,
                       label=r"$\hat P(\sup_\ell S^\ell \geq a)$")
            final = np.sort(np.asarray(data[entry["kappa"]]["final"]))
            panel.plot(grid, 1 - np.searchsorted(final, grid, side="left") / final.size, color="tab:green", lw=1,
                       alpha=0.7, label=r"$\hat P(S^L \geq a)$")
            panel.plot(grid, np.minimum(1, exact / grid), "--", color="black", label=r"Doob: $E[S^L]/a$")
        a = np.array([t["a"] for t in entry["tails"]])
        p = np.array([t["p_sup"] for t in entry["tails"]])
        ci = np.array([t["p_sup_ci95"] for t in entry["tails"]])
        panel.errorbar(a, np.maximum(p, 1e-12), yerr=[np.maximum(p - ci[:, 0], 0), np.maximum(ci[:, 1] - p, 0)],
                       fmt="o", color="tab:red", ms=4, capsize=3, label="checked thresholds (95% CI)")
        panel.set_xscale("log")
        panel.set_yscale("log")
        panel.set_ylim(max(0.5 / numbers["networks"], 1e-5), 1.5)
        panel.set_xlabel(r"$a$ (units of $\|x\|^2$)")
        panel.set_title(f"Remark 2.2, α√(ML) = {entry['kappa']:g}\nE[sup S]/E[S^L] = {entry['ratio_sup_final']:.2f} "
                        f"(Doob ≤ 4)", fontsize=10)
        panel.grid(True, which="both", alpha=0.3)
        panel.legend(fontsize=7, loc="lower left")
    fig.suptitle(f"Chizat Remark 2.2: Doob's maximal inequality, ReLU 2LP blocks, L = {numbers['layers']}, "
                 f"{numbers['networks']} networks", fontsize=11)
    return fig


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
        label = _NAMES.get(name.replace("SR", "SC"), name).replace("SC", "SR")
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


def plot_two_d(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F App. B.4: a few draws of x_{T,1}(z) over z ∈ [−2, 2]², one row per model, as filled contours."""
    models = numbers["models"]
    shown = min(len(data[m["model"]]) for m in models)
    if shown == 0:
        raise ValueError("pf-2d: no draw to show (--show 0)")
    fig, axes = new_grid(len(models), shown, ax, figsize=(3.6 * shown + 0.8, 3.3 * len(models)))
    axes = np.asarray(axes).reshape(len(models), shown)
    axis = np.asarray(data["axis"])
    for row, model in enumerate(models):
        for col in range(shown):
            panel = axes[row, col]
            surface = np.asarray(data[model["model"]][col])
            filled = panel.contourf(axis, axis, surface, levels=20, cmap="viridis")
            panel.contour(axis, axis, surface, levels=10, colors="white", linewidths=0.4, alpha=0.6)
            fig.colorbar(filled, ax=panel, shrink=0.85)
            panel.set_title(f"{_NAMES[model['model']]}: draw {col + 1}", fontsize=10)
            panel.set_xlabel(r"$z_1$")
            panel.set_ylabel(r"$z_2$")
            panel.set_aspect("equal")
    fig.suptitle(f"Peluchetti & Favaro App. B.4: 2-D function samples of $x_{{T,1}}(z)$, D = {numbers['width']}, "
                 f"L = {numbers['depth']}", fontsize=11)
    return fig


def plot_qualitative(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F §3.4: the pair (x_{T,1}(0), x_{T,1}(1)) of the SC_tanh limit beside Gaussian draws of its covariance; the
    squared Mahalanobis distances of the pairs against χ²_2; the SD of each coordinate at z = 1 and the correlation
    of coordinate pairs by |i − j|, models against the planted non-exchangeable controls."""
    fig, axes = new_grid(2, 2, ax, figsize=(10.5, 8.4))
    (scatter, qq), (spread, pairs) = axes
    entries = {(m["model"], m["kind"]): m for m in numbers["models"]}
    z = numbers["inputs"]
    limit = data[("SC_tanh", "sde")][:, 0, :]
    gaussian_key = next(k for k in data if isinstance(k, tuple) and k[1] == "gaussian")
    gaussian = data[gaussian_key][:, 0, :]
    scatter.scatter(gaussian[:, 0], gaussian[:, 1], s=3, alpha=0.35, color="tab:gray", label="Gaussian, same covariance")
    scatter.scatter(limit[:, 0], limit[:, 1], s=3, alpha=0.45, color="tab:blue", label="limit SDE")
    scatter.set_xlabel(f"$x_{{T,1}}(z = {z[0]:g})$")
    scatter.set_ylabel(f"$x_{{T,1}}(z = {z[1]:g})$")
    b2 = entries[("SC_tanh", "sde")]["gaussianity"]["b2"]
    scatter.set_title(f"{_NAMES['SC_tanh']} limit: the pair at z = {z[0]:g}, {z[1]:g}\nMardia b_2 = {b2:.2f} "
                      f"(Gaussian: 8)", fontsize=10)
    scatter.legend(fontsize=7, markerscale=3)
    for key, colour in ((("SC_tanh", "sde"), "tab:blue"), (("SC_swish", "sde"), "tab:orange"),
                        (gaussian_key, "tab:gray")):
        pair = data[key][:, 0, :]
        centred = pair - pair.mean(axis=0)
        white = np.linalg.solve(np.linalg.cholesky(centred.T @ centred / len(pair)), centred.T).T
        distances = np.sort(np.sum(white * white, axis=1))
        expected = -2 * np.log1p(-(np.arange(1, len(pair) + 1) - 0.5) / len(pair))  # χ²_2 quantiles
        qq.plot(expected, distances, ".", ms=2.5, color=colour, label=f"{key[0]} {key[1]}")
    top = qq.get_xlim()[1]
    qq.plot([0, top], [0, top], "k--", lw=0.8)
    qq.set_xlabel(r"$\chi^2_2$ quantile")
    qq.set_ylabel("squared Mahalanobis distance")
    qq.set_title("Q–Q against the Gaussian's χ²₂ (a straight line if Gaussian)", fontsize=10)
    qq.legend(fontsize=7, markerscale=3)
    for (model, kind), entry in entries.items():
        if kind in ("resnet", "sde", "planted"):
            sd = np.asarray(entry["coordinate_sd"])
            style = "o-" if kind == "planted" else ".--"
            spread.plot(np.arange(1, len(sd) + 1), sd, style, ms=4, label=f"{model} {kind}")
            values = data[(model, kind)][:, :, 1]
            corr = np.corrcoef(values.T)
            lags = np.arange(1, len(sd))
            pairs.plot(lags, [np.mean(np.diagonal(corr, lag)) for lag in lags], style, ms=4, label=f"{model} {kind}")
    spread.set_xlabel("coordinate d")
    spread.set_ylabel(f"SD of $x_{{T,d}}(z = {z[1]:g})$")
    spread.set_title("each coordinate's SD: equal if exchangeable", fontsize=10)
    spread.legend(fontsize=6)
    pairs.set_xlabel("|i − j|")
    pairs.set_ylabel(f"mean corr($x_{{T,i}}, x_{{T,j}}$) at z = {z[1]:g}")
    pairs.set_title("pair correlations by distance: flat if exchangeable", fontsize=10)
    pairs.legend(fontsize=6)
    for panel in axes.ravel():
        panel.grid(True, alpha=0.3)
    fig.suptitle(f"Peluchetti & Favaro §3.4: D = {numbers['width']}, L = {numbers['depth']}, {numbers['draws']} draws",
                 fontsize=11)
    return fig


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


def plot_sizes(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """P&F SM B.3 (Fig. 3) quantified: per model, the 5/50/95% quantiles of x_{T,1}(z) in every (L, D) cell (colour:
    L, line style: D) with draws of the reference cell; the shape statistics' and the log SDs' differences from the
    reference cell with their 95% intervals and margins (hollow markers: cells not judged)."""
    fig, axes = new_grid(2, 3, ax, figsize=(15.5, 8.6))
    grid = np.asarray(data["grid"]) if "grid" in data else np.linspace(-2, 2, numbers["inputs"])
    depths, widths = numbers["depths"], numbers["widths"]
    colours = dict(zip(depths, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"] * 4))
    styles = dict(zip(widths, [":", "--", "-", "-."] * 4))
    stats = numbers["statistics"]
    for row, m in zip(axes, numbers["models"]):
        samples, shape_ax, scale_ax = row
        name = m["model"]
        for c in m["cells"]:
            entry = data.get((name, c["depth"], c["width"]))
            if entry is None:
                continue
            q = np.asarray(entry["quantiles"])
            label = f"L = {c['depth']}, D = {c['width']}"
            for i, level in enumerate(q):
                samples.plot(grid, level, styles[c["width"]], color=colours[c["depth"]], lw=1.0,
                             label=label if i == 1 else None)
            if c["reference"]:
                for draw in np.asarray(entry["shown"]):
                    samples.plot(grid, draw, color="black", lw=0.7, alpha=0.6)
        samples.set_xlabel("z")
        samples.set_ylabel(r"$x_{T,1}(z)$: 5/50/95% quantiles")
        samples.set_title(f"{_NAMES.get(name, name)}: quantiles in every (L, D) cell\n(black: draws of the "
                          "reference cell)", fontsize=10)
        samples.legend(fontsize=6, ncol=2)
        labels = [f"{c['depth']}/{c['width']}" for c in m["cells"]]
        x = np.arange(len(labels))
        for panel, keys, margin in ((shape_ax, [k for k in stats if not k.startswith("log SD")],
                                     numbers["shape_tolerance"]),
                                    (scale_ax, [k for k in stats if k.startswith("log SD")], numbers["scale_tolerance"])):
            for j, key in enumerate(keys):
                shift = (j - (len(keys) - 1) / 2) * 0.18
                for i, c in enumerate(m["cells"]):
                    d = c["differences"][key]
                    lo, hi = d["ci95"]
                    panel.errorbar(x[i] + shift, d["value"], yerr=[[d["value"] - lo], [hi - d["value"]]], fmt="o",
                                   color=f"C{j}", ms=4, capsize=2, mfc=f"C{j}" if c["judged"] else "white",
                                   label=key if i == 0 else None)
            panel.axhspan(-margin, margin, color="tab:green", alpha=0.12, lw=0)
            panel.axhline(0, color="black", lw=0.6)
            panel.set_xticks(x)
            panel.set_xticklabels(labels, rotation=45, fontsize=7)
            panel.set_xlabel("L / D")
            panel.legend(fontsize=7)
        shape_ax.set_ylabel("difference from the reference cell")
        shape_ax.set_title(f"{_NAMES.get(name, name)}: the shape (margin ± {numbers['shape_tolerance']:g}; hollow: "
                           "not judged)", fontsize=10)
        scale_ax.set_ylabel("log SD ratio to the reference cell")
        scale_ax.set_title(f"{_NAMES.get(name, name)}: the scale (margin ± {numbers['scale_tolerance']:g})",
                           fontsize=10)
        for panel in row:
            panel.grid(True, alpha=0.3)
    fig.suptitle(f"Peluchetti & Favaro SM B.3: function samples across (L, D), {numbers['draws']} networks per cell",
                 fontsize=11)
    return fig


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


_CLASS_COLOURS = {"unstable": "tab:red", "trivial": "lightgray", "local feature learning": "tab:green",
                  "lazy ODE": "tab:orange"}


def plot_chizat_phase(numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
    """Left: the measured (β, γ) diagram, each cell coloured by its class, with the line γ = 2β − 1 and depth-μP
    and CompleteP marked. Middle and right: the local share and the predictor's change against L for every cell
    (the two marked cells bold)."""
    from matplotlib.patches import Patch

    fig, axes = new_grid(1, 3, ax, figsize=(16, 4.6))
    diagram, shares, changes = axes.ravel()
    cells = numbers["cells"]
    betas = sorted({c["beta"] for c in cells})
    gammas = sorted({c["gamma"] for c in cells})
    db = (betas[1] - betas[0]) if len(betas) > 1 else 0.25
    dg = (gammas[1] - gammas[0]) if len(gammas) > 1 else 0.5
    for c in cells:
        diagram.add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"]).Rectangle(
            (c["beta"] - db / 2, c["gamma"] - dg / 2), db, dg, color=_CLASS_COLOURS[c["class"]], alpha=0.8))
    line = np.array([min(betas) - db / 2, max(betas) + db / 2])
    diagram.plot(line, 2 * line - 1, "k--", lw=1, label="γ = 2β − 1 (kernel scale constant in L)")
    for (beta, gamma), name, marker in (((0.5, 0.0), "depth-μP", "o"), ((1.0, 1.0), "CompleteP", "*")):
        diagram.plot([beta], [gamma], marker, color="black", ms=11, label=name)
    diagram.set_xlim(min(betas) - db / 2, max(betas) + db / 2)
    diagram.set_ylim(min(gammas) - dg / 2, max(gammas) + dg / 2)
    diagram.set_xlabel(r"β  ($\alpha = L^{-\beta}/\sqrt{M}$)")
    diagram.set_ylabel(r"γ  ($\eta = \eta_0 L^{\gamma}$)")
    diagram.set_title("measured regimes", fontsize=10)
    handles = [Patch(color=colour, label=name) for name, colour in _CLASS_COLOURS.items()]
    diagram.legend(handles=handles + diagram.get_legend_handles_labels()[0], fontsize=7, loc="upper left")
    depths = np.asarray(numbers["depths"])
    for c in cells:
        marked = (c["beta"], c["gamma"]) in ((0.5, 0.0), (1.0, 1.0))
        style = dict(lw=2.2 if marked else 0.8, alpha=1.0 if marked else 0.5, color=_CLASS_COLOURS[c["class"]],
                     label=f"β = {c['beta']:g}, γ = {c['gamma']:g}" if marked else None)
        shares.loglog(depths, c["mean_local_share"], "o-", ms=3, **style)
        change = np.asarray(c["mean_predictor_change"], dtype=float)
        change[~(change < 1e3)] = np.nan  # a diverging cell (inf, NaN, or on its way) is not drawn past 10³
        changes.loglog(depths, change, "o-", ms=3, **style)
    for panel, title, label in ((shares, "local share of the features' change", "local / (local + below)"),
                                (changes, "predictor's change after the steps", r"mean $\|\Delta h^L\|$")):
        panel.set_xlabel("depth L")
        panel.set_ylabel(label)
        panel.set_title(title, fontsize=10)
        panel.grid(True, which="both", alpha=0.3)
        panel.legend(fontsize=7)
    fig.suptitle(f"Chizat §3, Fig. 1: {numbers['steps']} gradient steps, d = {numbers['width']}, M = {numbers['hidden']}, "
                 f"{numbers['networks']} networks", fontsize=11)
    return fig


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
