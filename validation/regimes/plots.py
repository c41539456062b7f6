"""Figures for ``python -m validation.regimes`` (Marion et al. Fig. 1–5, Chizat Prop. 2.1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.plots import new_grid

__all__ = ["plot_sweep", "plot_distribution", "plot_chizat"]

_COLOURS = {"explosion": "tab:red", "non-trivial": "black", "identity": "tab:blue"}


def plot_sweep(result: dict[str, Any], samples: dict[str, np.ndarray], ax: Any = None) -> Any:
    """Rows r_h, r_p; one column per β; samples, median, RMS ± 2 s.e. and √(Lemma 14 bounds)."""
    depths = np.asarray(result["depths"], dtype=float)
    betas = result["betas"]
    names = (("r_h", r"$\|h_L-h_0\|/\|h_0\|$"), ("r_p", r"$\|p_0-p_L\|/\|p_L\|$"))
    fig, axes = new_grid(2, len(betas), ax, figsize=(4.2 * len(betas), 7.2))
    for row, (key, label) in enumerate(names):
        data = samples[key]  # (depths, betas, samples)
        for col, beta in enumerate(betas):
            ax = axes[row, col]
            r = data[:, col, :]
            finite = np.where(np.isfinite(r), r, np.nan)
            jitter = np.exp(np.random.default_rng(col).uniform(-0.04, 0.04, r.shape[1]))
            for i, depth in enumerate(depths):
                ax.scatter(depth * jitter, finite[i], s=4, color="0.6", alpha=0.5, lw=0,
                           label="samples" if i == 0 else None)
            ax.plot(depths, np.nanmedian(finite, axis=1), "o-", color="tab:orange", ms=4, label="median")
            rms = np.sqrt(np.nanmean(finite**2, axis=1))
            se = np.nanstd(finite**2, axis=1, ddof=1) / np.sqrt(np.isfinite(finite).sum(1)) / (2 * rms)
            ax.errorbar(depths, rms, yerr=2 * se, fmt="s", color="tab:green", ms=4, capsize=2,
                        label=r"RMS $\sqrt{\mathbb{E}r^2}$ ± 2 s.e.")
            info = result["per_beta"][col][key]
            if result.get("bounds"):
                lo = np.array([b[key]["lower"] for b in result["bounds"] if b["beta"] == beta])
                hi = np.array([b[key]["upper"] for b in result["bounds"] if b["beta"] == beta])
                ax.fill_between(depths, np.sqrt(lo), np.sqrt(hi), color="tab:purple", alpha=0.2,
                                label="Lemma 14 / Prop. 7 bounds on RMS")
            exploded = int((~np.isfinite(r)).sum())
            title = f"β = {beta:g}: {info['class']} (slope {info['slope']:.2f})"
            if exploded:
                title += f"\n{exploded} overflowed samples"
            ax.set_title(title, color=_COLOURS.get(info["class"], "black"), fontsize=10)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("depth L")
            ax.set_ylabel(label)
            ax.grid(True, which="major", alpha=0.3)
            if row == 0 and col == 0:
                ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{result['title']}  (α_L = L^-β, {result['samples']} samples per point)", fontsize=11)
    return fig


def plot_distribution(n_h: np.ndarray, n_p: np.ndarray, result: dict[str, Any], ax: Any = None) -> Any:
    """Histograms of ‖h_L‖/‖h_0‖ and ‖p_0‖/‖p_L‖ (log x), fitted log-normal, quartiles and the paper's
    bounds."""
    fig, grid = new_grid(1, 2, ax, figsize=(11, 4.2))
    axes = grid[0]
    for ax, values, key, label in (
        (axes[0], n_h, "forward", r"$\|h_L\|/\|h_0\|$"),
        (axes[1], n_p, "backward", r"$\|p_0\|/\|p_L\|$"),
    ):
        summary = result[key]
        v = values[np.isfinite(values) & (values > 0)]
        bins = np.geomspace(v.min(), v.max(), 60)
        ax.hist(v, bins=bins, density=True, color="0.7", label=f"{v.size} samples")
        mu, sd = summary["log_mean"], summary["log_sd"]
        xs = np.geomspace(v.min(), v.max(), 400)
        pdf = np.exp(-((np.log(xs) - mu) ** 2) / (2 * sd**2)) / (xs * sd * np.sqrt(2 * np.pi))
        ax.plot(xs, pdf, color="black", lw=1.2,
                label=f"log-normal fit (D'Agostino p = {summary.get('dagostino_p', float('nan')):.2g})")
        q1, _, q3 = summary["quartiles"]
        ax.axvline(q1, color="tab:orange", lw=1.5, label=f"measured Q1 = {q1:.2f}, Q3 = {q3:.2f}")
        ax.axvline(q3, color="tab:orange", lw=1.5)
        if key == "forward":
            lo, hi = result["paper"]["bound_q1"], result["paper"]["bound_q3"]
            ax.axvline(lo, color="tab:blue", ls="--", label=f"paper bounds Q1 ≥ {lo}, Q3 ≤ {hi}")
            ax.axvline(hi, color="tab:blue", ls="--")
            ax.axvline(result["paper"]["empirical_q1"], color="tab:red", ls=":",
                       label=f"paper's empirical Q1 = {result['paper']['empirical_q1']}")
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("density")
        ax.legend(fontsize=7)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(f"{result['title']}", fontsize=11)
    return fig


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
        colour = _COLOURS.get(entry["class"], f"C{i}")
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


def plot_assumptions(result: dict[str, Any], ax: Any = None) -> Any:
    """Marion et al.'s (A₂) and (A₄): the mean ratios m₂ and a₄ of every block at the three inputs, against the
    band [½, 1] the propositions need (hollow markers: outside their class)."""
    fig, grid = new_grid(1, 2, ax, figsize=(12, 4.6))
    rows = result["rows"]
    labels = [f"{r['block']} {r['activation'].replace('0.7071067811865476', '1/√2')}"
              + ("" if r["law"] == "—" else f"\n{r['law']}") for r in rows]
    for ax, key, title in ((grid[0][0], "m2", "(A₂): E‖g(h)‖²/‖h‖²"), (grid[0][1], "a4", "(A₄): E‖∂g·q‖²/‖q‖²")):
        ax.axhspan(0.5, 1.0, color="tab:green", alpha=0.12, label="[½, 1]: the propositions' band")
        for j, (name, marker) in enumerate(zip(result["inputs"], ("o", "s", "^"))):
            for i, r in enumerate(rows):
                mean, se = r[key]["mean"][j], r[key]["se"][j]
                ax.errorbar(i + (j - 1) * 0.2, mean, yerr=2 * se, fmt=marker, color=f"C{j}",
                            mfc=f"C{j}" if r["inside"] else "none", ms=5,
                            label=f"h = {name}" if i == 0 else None)
        ax.set_xticks(range(len(rows)), labels, rotation=60, ha="right", fontsize=6.5)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle(f"{result['title']}, d = {result['width']}, {result['samples']} draws (hollow: outside the class)",
                 fontsize=10)
    return fig
