"""Scaling regimes at initialisation: Marion et al. Fig. 1–5 and Chizat Prop. 2.1, one command each.

    python -m validation.regimes --preset fig1     # Fig. 1 + 3: i.i.d. U(−√(3/d), √(3/d)), β ∈ {¼, ½, 1}
    python -m validation.regimes --preset fig2     # Fig. 2: β = ½, L = 1000, d = 100, 10⁴ draws
    python -m validation.regimes --preset fig4     # Fig. 4 + 5: smooth weights, β ∈ {½, 1, 2}
    python -m validation.regimes --preset chizat   # Chizat Prop. 2.1, 2LP blocks
    python -m validation.regimes --preset fig1 --regime fractional --hurst 0.8 --betas 0.6,0.8,1

Every preset setting can be overridden by its flag. Each run prints a table, classifies every β as
explosion / non-trivial / identity (rule: :mod:`validation.regime_stats`), checks the Lemma 14 /
Prop. 7 bounds where they apply (i.i.d. weights), and writes a JSON (with run metadata) and a figure.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from limits.chizat import chizat_constant, chizat_expected_spread, chizat_spread
from limits.fractional import FractionalNoiseError, check_hurst
from limits.initialisation import IID_LAWS, Block, FractionalRegime, IIDRegime, Regime, SmoothRegime, measure_ratios

from .cli import HelpFormatter, UsageError, add_threads_argument, dtype_arg, device_arg, int_at_least, positive_float, resolve_device, run_cli
from .regime_stats import TAU, bounds_check, family_z, classify, critical_beta, fit_slope, lemma14_bounds, lognormal_summary
from .runinfo import run_metadata, write_json

PAPER_DEPTHS = [10, 20, 50, 100, 200, 500, 1000]

#: Paper settings (Marion et al. App. E, Table 2; Chizat lecture §2). Every key is a CLI flag.
PRESETS: dict[str, dict[str, Any]] = {
    "fig1": dict(kind="sweep", regime="iid", law="uniform", block="res3", betas=[0.25, 0.5, 1.0],
                 depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1,
                 title="Fig. 1 & 3: res-3, i.i.d. U(−√(3/d), √(3/d)), d = 40"),
    "fig4": dict(kind="sweep", regime="smooth", lengthscale=0.1, block="res3", betas=[0.5, 1.0, 2.0],
                 depths=PAPER_DEPTHS, width=40, n_in=64, samples=50, inputs=1,
                 title="Fig. 4 & 5: res-3, smooth RBF weights (ℓ = 0.1), d = 40"),
    "fig2": dict(kind="distribution", regime="iid", law="uniform", block="res3", betas=[0.5], depths=[1000],
                 width=100, n_in=64, samples=10_000, inputs=1,
                 title="Fig. 2: res-3, i.i.d. uniform, β = 1/2, L = 1000, d = 100"),
    "chizat": dict(kind="chizat", width=40, hidden=16, layers=100, kappas=[0.25, 1.0, 4.0],
                   betas=[0.25, 0.5, 1.0], depths=PAPER_DEPTHS, samples=1000, sweep_samples=100, sigma_u=None,
                   sigma_v=1.0,
                   title="Chizat Prop. 2.1: ResNet with ReLU 2LP blocks"),
}
ALIASES = {"fig3": "fig1", "fig5": "fig4"}
PAPER_FIG2 = {"bound_q1": 0.87, "bound_q3": 2.06, "empirical_q1": 1.21}


def _float_list(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None
    if not values or any(not math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f"{text!r} must be a non-empty list of finite numbers")
    return values


def _beta_list(text: str) -> list[float]:
    values = _float_list(text)
    for v in values:
        if v < 0:
            raise argparse.ArgumentTypeError(f"β={v:g} is out of range (allowed: β ≥ 0)")
    return values


def _depth_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None
    if not values:
        raise argparse.ArgumentTypeError("at least one depth is needed")
    for v in values:
        if v < 1:
            raise argparse.ArgumentTypeError(f"depth L={v} is out of range (allowed: L ≥ 1)")
    if sorted(set(values)) != values:
        raise argparse.ArgumentTypeError(f"depths {text!r} must be strictly increasing")
    return values


def _hurst(text: str) -> float:
    try:
        return check_hurst(float(text))
    except (ValueError, FractionalNoiseError):
        raise argparse.ArgumentTypeError(f"Hurst index H={text!r} is out of range (allowed: 0 < H < 1)") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m validation.regimes", description=__doc__, formatter_class=HelpFormatter
    )
    add = parser.add_argument
    add("--preset", required=True, choices=sorted([*PRESETS, *ALIASES]),
        help="paper settings: fig1 (= fig3), fig2, fig4 (= fig5), chizat")
    add("--regime", choices=["iid", "smooth", "fractional"], default=None,
        help="weight regime (default: the preset's): iid entries, smooth RBF Gaussian processes read at k/L, "
             "or fractional Gaussian noise of Hurst index --hurst along the layers")
    add("--law", choices=IID_LAWS, default=None, help="law of √d·V_ij for --regime iid (unit variance)")
    add("--lengthscale", type=positive_float, default=None, help="RBF length-scale ℓ for --regime smooth")
    add("--hurst", type=_hurst, default=None, help="Hurst index H ∈ (0, 1) for --regime fractional")
    add("--block", choices=["res1", "res2", "res3"], default=None, help="residual block (Marion et al. Table 1)")
    add("--activation", default=None, help="σ for res1/res2 (limits.activations names, e.g. relu, tanh, prelu:0.8)")
    add("--betas", type=_beta_list, default=None, help="scalings β (α_L = L^-β), comma list, each ≥ 0")
    add("--depths", type=_depth_list, default=None, help="depths L, increasing comma list, each ≥ 1")
    add("--width", type=int_at_least(1), default=None, help="width d")
    add("--n-in", type=int_at_least(1), default=None, help="input dimension n_in (h_0 = A x)")
    add("--samples", type=int_at_least(2), default=None,
        help="independent networks (each with its own weights, input layer and input)")
    add("--inputs", type=int_at_least(1), default=None, help="inputs per network (samples = networks × inputs)")
    add("--sweep-samples", type=int_at_least(2), default=None, help="chizat: networks per depth in the β sweep")
    add("--hidden", type=int_at_least(1), default=None, help="chizat: hidden units M per block")
    add("--layers", type=int_at_least(1), default=None, help="chizat: depth L of the per-layer curves")
    add("--kappas", type=_float_list, default=None, help="chizat: α = κ/√(ML) for the per-layer curves")
    add("--sigma-u", type=positive_float, default=None, help="chizat: std of u_j (default 1/√d)")
    add("--sigma-v", type=positive_float, default=None, help="chizat: std of v_j")
    add("--tau", type=positive_float, default=TAU, help="classification threshold on the log-log slope")
    add("--seed", type=int, default=0, help="seed of every random stream")
    add("--dtype", type=dtype_arg, default=torch.float64, help="float64 or float32")
    add("--device", type=device_arg, default="cpu", help="cpu, cuda, cuda:N or auto")
    add_threads_argument(parser)
    add("--memory-mb", type=positive_float, default=512.0, help="memory budget per chunk of networks")
    add("--json", type=Path, default=None, help="result file (default results/regimes_<preset>.json)")
    add("--plot", type=Path, default=None, help="figure (default results/regimes_<preset>.png)")
    add("--no-plot", action="store_true", help="skip the figure")
    add("--quiet", action="store_true", help="no progress bars")
    return parser


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    name = ALIASES.get(args.preset, args.preset)
    cfg = dict(PRESETS[name], preset=name)
    for key in ("regime", "law", "lengthscale", "hurst", "block", "activation", "betas", "depths", "width",
                "n_in", "samples", "sweep_samples", "inputs", "hidden", "layers", "kappas", "sigma_u", "sigma_v"):
        value = getattr(args, key)
        if value is not None:
            cfg[key] = value
    if cfg["kind"] != "chizat":
        cfg.setdefault("activation", "relu")
        if cfg.get("regime") == "fractional" and "hurst" not in cfg:
            raise UsageError("--regime fractional needs --hurst H (0 < H < 1)")
        cfg.setdefault("law", "uniform")
        cfg.setdefault("lengthscale", 0.1)
    elif cfg.get("sigma_u") is None:
        cfg["sigma_u"] = 1.0 / math.sqrt(cfg["width"])
    if cfg["kind"] == "distribution" and len(cfg["depths"]) != 1:
        raise UsageError(f"fig2 studies one depth, got --depths {cfg['depths']}")
    return cfg


def _regime(cfg: dict[str, Any]) -> Regime:
    if cfg["regime"] == "iid":
        return IIDRegime(cfg["law"])
    if cfg["regime"] == "smooth":
        return SmoothRegime(cfg["lengthscale"])
    return FractionalRegime(cfg["hurst"])


def _block(cfg: dict[str, Any]) -> Block:
    try:
        return Block(cfg["block"], cfg["activation"])
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _bar(total: int, desc: str, quiet: bool) -> tqdm:
    return tqdm(total=total, desc=desc, unit="net", disable=quiet, file=sys.stderr, leave=False)


def run_sweep(cfg: dict[str, Any], args: argparse.Namespace, device: torch.device) -> tuple[dict, dict]:
    """r_h, r_p over depths × β; classification, critical β, bounds."""
    regime, block = _regime(cfg), _block(cfg)
    depths, betas = cfg["depths"], cfg["betas"]
    data = {k: np.empty((len(depths), len(betas), cfg["samples"] * cfg["inputs"])) for k in ("r_h", "r_p", "n_h", "n_p")}
    with _bar(len(depths) * cfg["samples"], f"{cfg['preset']} {regime.name}", args.quiet) as bar:
        for i, depth in enumerate(depths):
            res = measure_ratios(
                regime, depth, betas, cfg["samples"], cfg["inputs"], cfg["width"], cfg["n_in"], block,
                seed=args.seed, label=("regimes", cfg["preset"]), dtype=args.dtype, device=device,
                memory_mb=args.memory_mb, progress=bar.update,
            )
            for key in data:
                data[key][i] = getattr(res, key).reshape(len(betas), -1).double().numpy()
    per_beta = []
    for j, beta in enumerate(betas):
        entry: dict[str, Any] = {"beta": beta}
        for key in ("r_h", "r_p"):
            fit = fit_slope(depths, data[key][:, j], seed=args.seed)
            r = data[key][:, j]
            entry[key] = {
                **fit, "class": classify(fit["slope"], args.tau),
                "median": np.median(np.where(np.isfinite(r), r, np.inf), axis=1).tolist(),
                "exploded": (~np.isfinite(r)).sum(axis=1).tolist(),
            }
        per_beta.append(entry)
    crit = {key: critical_beta(betas, [e[key]["slope"] for e in per_beta]) for key in ("r_h", "r_p")}
    bounds = []
    z = family_z(2 * len(betas) * len(depths))
    if cfg["regime"] == "iid" or (cfg["regime"] == "fractional" and cfg["hurst"] == 0.5):
        for j, beta in enumerate(betas):
            for i, depth in enumerate(depths):
                lo, hi = lemma14_bounds(beta, depth)
                bounds.append({"beta": beta, "depth": depth,
                               **{key: bounds_check(data[key][i, j], lo, hi, z) for key in ("r_h", "r_p")}})
    result = {
        "title": cfg["title"] if args.regime is None else f"res-{cfg['block'][-1]}, {regime.name}, d = {cfg['width']}",
        "depths": depths, "betas": betas, "samples": cfg["samples"] * cfg["inputs"],
        "rule": f"slope s of log median r on log L over L ≥ L_max/10: explosion if s > {args.tau}, "
                f"identity if s < −{args.tau}, else non-trivial",
        "per_beta": per_beta, "critical_beta_estimate": crit, "bounds": bounds, "bounds_z": z,
        "bounds_note": "Lemma 14 / Prop. 7 apply to i.i.d. symmetric unit-variance weights only"
        if bounds else "no bounds: Lemma 14 / Prop. 7 need weights independent across layers",
    }
    return result, data


def print_sweep(result: dict[str, Any]) -> None:
    print(f"\n{result['title']} — {result['samples']} samples per (β, L)")
    print(f"rule: {result['rule']}")
    head = f"{'β':>6} | {'slope r_h [95% CI]':>26} {'regime r_h':>12} | {'slope r_p [95% CI]':>26} {'regime r_p':>12} | {'median r_h @Lmax':>16}"
    print(head)
    print("-" * len(head))
    for e in result["per_beta"]:
        cells = []
        for key in ("r_h", "r_p"):
            lo, hi = e[key]["ci95"]
            cells.append(f"{e[key]['slope']:>8.3f} [{lo:>7.3f}, {hi:>7.3f}] {e[key]['class']:>12}")
        print(f"{e['beta']:>6g} | {cells[0]} | {cells[1]} | {e['r_h']['median'][-1]:>16.4g}")
    crit = result["critical_beta_estimate"]
    print(f"critical β (zero of the slope, interpolated): r_h {crit['r_h']}, r_p {crit['r_p']}")
    if result["bounds"]:
        print(f"\nLemma 14 / Prop. 7: (1+α²/2)^L − 1 ≤ E r² ≤ (1+α²)^L − 1 within z = {result['bounds_z']:.2f} s.e. "
              f"(Bonferroni, family-wise 1%); res-3 attains the lower bound exactly, so z(lower) ~ N(0, 1)")
        print(f"{'β':>6} {'L':>6} | {'mean r_h²':>11} {'z(lower)':>9} {'sd log':>7} {'':>6} | "
              f"{'mean r_p²':>11} {'z(lower)':>9} {'sd log':>7} {'':>6} | {'lower':>10} {'upper':>10}")
        for b in result["bounds"]:
            cells = [f"{b[k]['mean_r2']:>11.4g} {b[k]['z_vs_lower']:>9.2f} {b[k]['sd_log_r2']:>7.2f} "
                     f"{b[k]['verdict'][:6]:>6}" for k in ("r_h", "r_p")]
            print(f"{b['beta']:>6g} {b['depth']:>6} | {cells[0]} | {cells[1]} | {b['r_h']['lower']:>10.4g} "
                  f"{b['r_h']['upper']:>10.4g}")
        checks = [b[k] for b in result["bounds"] for k in ("r_h", "r_p")]
        passed = sum(c["passed"] for c in checks)
        print(f"bounds: {passed}/{len(checks)} checks pass; "
              f"{sum(not c['reliable'] for c in checks)} flagged heavy-tailed (sd log r² > 2)")
    else:
        print(result["bounds_note"])


def run_distribution(cfg: dict[str, Any], args: argparse.Namespace, device: torch.device) -> tuple[dict, dict]:
    regime, block = _regime(cfg), _block(cfg)
    depth, beta = cfg["depths"][0], cfg["betas"][0]
    with _bar(cfg["samples"], f"fig2 {regime.name}", args.quiet) as bar:
        res = measure_ratios(
            regime, depth, [beta], cfg["samples"], cfg["inputs"], cfg["width"], cfg["n_in"], block,
            seed=args.seed, label=("regimes", cfg["preset"]), dtype=args.dtype, device=device,
            memory_mb=args.memory_mb, progress=bar.update,
        )
    data = {k: getattr(res, k).reshape(-1).double().numpy() for k in ("r_h", "r_p", "n_h", "n_p")}
    result = {
        "title": cfg["title"] if args.regime is None else f"{regime.name}, β = {beta:g}, L = {depth}",
        "beta": beta, "depth": depth, "width": cfg["width"], "samples": int(data["n_h"].size),
        "paper": PAPER_FIG2,
        "forward": lognormal_summary(data["n_h"], (PAPER_FIG2["bound_q1"], PAPER_FIG2["bound_q3"])),
        "backward": lognormal_summary(data["n_p"]),
        "forward_r_h": lognormal_summary(data["r_h"]),
    }
    return result, data


def print_distribution(result: dict[str, Any]) -> None:
    print(f"\n{result['title']} — {result['samples']} samples")
    print(f"{'quantity':>16} | {'Q1':>7} {'median':>7} {'Q3':>7} | {'log mean':>8} {'log sd':>7} | "
          f"{'D’Agostino p':>12} {'Shapiro p':>10} {'KS p':>7}")
    for key, name in (("forward", "‖h_L‖/‖h_0‖"), ("backward", "‖p_0‖/‖p_L‖"), ("forward_r_h", "‖h_L−h_0‖/‖h_0‖")):
        s = result[key]
        q1, q2, q3 = s["quartiles"]
        print(f"{name:>16} | {q1:>7.3f} {q2:>7.3f} {q3:>7.3f} | {s['log_mean']:>8.3f} {s['log_sd']:>7.3f} | "
              f"{s.get('dagostino_p', math.nan):>12.3g} {s.get('shapiro_p', math.nan):>10.3g} {s.get('ks_p', math.nan):>7.3g}")
    f = result["forward"]
    print(f"paper: Q1 ≥ {PAPER_FIG2['bound_q1']} (bound) — measured {f['quartiles'][0]:.3f}: "
          f"{'holds' if f['q1_above_bound'] else 'VIOLATED'}; paper's empirical Q1 {PAPER_FIG2['empirical_q1']}")
    print(f"paper: Q3 ≤ {PAPER_FIG2['bound_q3']} (bound) — measured {f['quartiles'][2]:.3f}: "
          f"{'holds' if f['q3_below_bound'] else 'VIOLATED'}")


def run_chizat(cfg: dict[str, Any], args: argparse.Namespace, device: torch.device) -> tuple[dict, dict]:
    d, m, layers, n = cfg["width"], cfg["hidden"], cfg["layers"], cfg["samples"]
    c = chizat_constant(d, cfg["sigma_u"], cfg["sigma_v"])
    alphas = [k / math.sqrt(m * layers) for k in cfg["kappas"]]
    common = dict(width=d, hidden=m, networks=n, sigma_u=cfg["sigma_u"], sigma_v=cfg["sigma_v"],
                  seed=args.seed, dtype=args.dtype, device=device)
    spread = chizat_spread(alphas, layers=layers, label=("chizat", "curves"), **common).numpy()
    z_max = family_z(len(alphas) * layers)
    per_alpha = []
    for i, (kappa, alpha) in enumerate(zip(cfg["kappas"], alphas)):
        expected = chizat_expected_spread(alpha, m, layers, c).numpy()
        mean = spread[i].mean(-1)
        se = spread[i].std(-1, ddof=1) / math.sqrt(n)
        z = np.where(se[1:] > 0, (mean[1:] - expected[1:]) / se[1:], 0.0)
        sd_log = float(np.log(spread[i, -1][spread[i, -1] > 0]).std(ddof=1))
        worst = float(np.abs(z).max())
        per_alpha.append({
            "kappa": kappa, "alpha": alpha, "expected": expected.tolist(), "mean": mean.tolist(), "se": se.tolist(),
            "max_abs_z": worst, "z_at_L": float(z[-1]), "sd_log_at_L": sd_log,
            "verdict": "pass" if worst <= z_max else "fail",
        })
    depths, betas = cfg["depths"], cfg["betas"]
    n = cfg["sweep_samples"]
    common["networks"] = n
    sweep = np.empty((len(depths), len(betas), n))
    with _bar(len(depths), "chizat depths", args.quiet) as bar:
        for i, depth in enumerate(depths):
            a = [(m * depth) ** (-b) for b in betas]
            s = chizat_spread(a, layers=depth, label=("chizat", "sweep", depth), **common)[:, -1, :]
            sweep[i] = np.sqrt(s.numpy())
            bar.update(1)
    per_beta = []
    for j, beta in enumerate(betas):
        fit = fit_slope(depths, sweep[:, j], seed=args.seed)
        per_beta.append({"beta": beta, **fit, "class": classify(fit["slope"], args.tau),
                         "median": np.median(sweep[:, j], axis=1).tolist()})
    result = {
        "title": cfg["title"], "width": d, "hidden": m, "layers": layers, "samples": cfg["samples"],
        "sweep_samples": n, "c": c,
        "sigma_u": cfg["sigma_u"], "sigma_v": cfg["sigma_v"],
        "check_rule": f"|mean − exact| ≤ z s.e. at every layer ℓ and α, z = {z_max:.2f} (Bonferroni over "
                      f"{len(alphas) * layers} checks, family-wise 1%)",
        "per_alpha": per_alpha, "depths": depths, "per_beta": per_beta,
        "rule": f"α = (ML)^-β; slope s of log median ‖h^L − x‖/‖x‖ on log L (top decade): explosion if "
                f"s > {args.tau}, identity if s < −{args.tau}, else non-trivial",
        "critical_beta_estimate": critical_beta(betas, [e["slope"] for e in per_beta]),
    }
    return result, {"spread": spread, "sweep": sweep}


def print_chizat(result: dict[str, Any]) -> None:
    print(f"\n{result['title']}: d = {result['width']}, M = {result['hidden']}, σ_u = {result['sigma_u']:.4g}, "
          f"σ_v = {result['sigma_v']:.4g}, c = dσ_v²σ_u²/2 = {result['c']:.4g}, {result['samples']} networks")
    print(f"E‖h^ℓ − x‖²/‖x‖² against ((1 + cα²M)^ℓ − 1), ℓ = 1…{result['layers']}; rule: {result['check_rule']}")
    print(f"{'α√(ML)':>8} {'α':>9} | {'mean @L':>10} {'exact @L':>10} {'z @L':>6} {'max|z|':>7} {'sd log':>7} | verdict")
    for e in result["per_alpha"]:
        print(f"{e['kappa']:>8g} {e['alpha']:>9.4g} | {e['mean'][-1]:>10.4g} {e['expected'][-1]:>10.4g} "
              f"{e['z_at_L']:>6.2f} {e['max_abs_z']:>7.2f} {e['sd_log_at_L']:>7.2f} | {e['verdict']}")
    print(f"\nrule: {result['rule']}")
    print(f"{'β':>6} | {'slope [95% CI]':>26} | {'regime':>12} | median r @Lmax   ({result['sweep_samples']} networks per depth)")
    for e in result["per_beta"]:
        lo, hi = e["ci95"]
        print(f"{e['beta']:>6g} | {e['slope']:>8.3f} [{lo:>7.3f}, {hi:>7.3f}] | {e['class']:>12} | {e['median'][-1]:.4g}")
    print(f"critical β (zero of the slope): {result['critical_beta_estimate']}")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cfg = _settings(args)
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    start = time.perf_counter()
    if cfg["kind"] == "sweep":
        result, data = run_sweep(cfg, args, device)
        print_sweep(result)
    elif cfg["kind"] == "distribution":
        result, data = run_distribution(cfg, args, device)
        print_distribution(result)
    else:
        result, data = run_chizat(cfg, args, device)
        print_chizat(result)
    elapsed = time.perf_counter() - start
    print(f"\nwall time {elapsed:.1f} s")
    settings = {k: v for k, v in cfg.items() if k not in ("kind", "title")}
    payload = {"study": "regimes", "preset": cfg["preset"], "settings": settings, "result": result,
               "wall_time_s": elapsed, "run": run_metadata(args.seed, args.dtype, device)}
    json_path = args.json or Path("results") / f"regimes_{cfg['preset']}.json"
    write_json(json_path, payload)
    print(f"wrote {json_path}")
    if not args.no_plot:
        from . import regime_plots

        plot_path = args.plot or Path("results") / f"regimes_{cfg['preset']}.png"
        if cfg["kind"] == "sweep":
            regime_plots.plot_sweep(result, data, plot_path)
        elif cfg["kind"] == "distribution":
            regime_plots.plot_distribution(data["n_h"], data["n_p"], result, plot_path)
        else:
            regime_plots.plot_chizat(result, data["spread"], data["sweep"], plot_path)
        print(f"wrote {plot_path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
