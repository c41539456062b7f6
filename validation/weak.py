"""``python -m validation.weak``: convergence in law of Peluchetti–Favaro ResNets (THEORY §4).

Two parts, for each sanity-check model SC_φ of the paper (φ = tanh or swish, ψ = id,
σ_w² = σ_b² = 1, T = 1, input z copied to every coordinate):

1. **The paper's check** (PF 2020 §4.1, Fig. 2 / SM Fig. 2). For z ∈ {0, 1}, ``--draws`` draws of the
   ResNet of depth L and width D (one weight draw serves both inputs) against as many draws of the limit
   SDE with *independent* noise, solved by Euler–Maruyama with ``--sde-steps`` steps (the paper's
   "discretization (6) of the limiting SDE"). Compared: the first output coordinate for each z
   (two-sample Kolmogorov–Smirnov test) and the joint law of (x_1(z=0), x_1(z=1)) (two-sample energy
   distance test, permutation p-value). PASS when no test rejects at the family-wise level ``--alpha``
   (Bonferroni over the tests of all models).

   Simulation (exact in law, see :func:`limits.peluchetti_favaro.simulate_gram`): with i.i.d. weights the
   rows of ΔW Y + Δb 1ᵀ (Y = the D × 2 matrix of the two states) are i.i.d. given the past, with the 2×2
   covariance Δt(σ_w²/D YᵀY + σ_b² 11ᵀ). Each step therefore draws 2D numbers per draw instead of D² + D;
   all D coordinates are still simulated (they interact through YᵀY), nothing is approximated. The SDE
   uses the same reduction for its own increments.

2. **Weak error versus depth.** |E f(h_L) − E f(H_1)| for f = ‖·‖² and the bounded f(x) = mean_j cos(x_j),
   with the fitted rate (weak order 1 is expected: the block matches the SDE's first two conditional
   moments to O(Δt²)). Monte Carlo noise would swamp E f(h_L) − E f(H_1) at these sizes, so the two are
   estimated on the **same** Brownian path (the ``pf`` pair's network against a fine Euler reference,
   as in the strong study): the difference of expectations does not depend on the coupling, only its
   variance does (variance reduction; the errors are still differences of laws). The same pass measures
   the weak error of Euler–Maruyama itself with step 1/L — the bias of the SDE sampler used in part 1.
   This part runs at a small width (``--weak-width``) because it needs the full D² + D noise channels.

Exit status: 0 PASS (every two-sample test passes), 1 FAIL, 2 bad input. The weak rates are reported
with their intervals and their own check against rate 1 (``--weak-tolerance``), which is printed and
stored but does not decide the exit status unless ``--strict-weak`` is given.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch
from scipy import stats as _stats
from tqdm.auto import tqdm

from limits.activations import get_activation
from limits.pairs import ModelConfig
from limits.peluchetti_favaro import PFPair, simulate_gram
from limits.seeding import stream_seed
from validation import cli
from validation.engine import sde_pass
from validation.runinfo import run_metadata, write_json
from validation.stats import RateFit, local_slopes, slope

__all__ = ["energy_test", "coupled_outputs", "weak_fit", "WEAK_FUNCTIONS", "main"]

SC_MODELS = ("tanh", "swish")

#: test functions of the weak error: name → (f on a (N, D) tensor → (N,), label)
WEAK_FUNCTIONS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], str]] = {
    "sqnorm": (lambda x: (x * x).sum(-1), "f(x) = ||x||^2"),
    "cos": (lambda x: torch.cos(x).mean(-1), "f(x) = mean_j cos(x_j)"),
}


# ----------------------------------------------------------------------------------------------- statistics
def energy_test(x: np.ndarray, y: np.ndarray, permutations: int = 500, max_points: int = 2000,
                seed: int = 0) -> tuple[float, float]:
    """Two-sample energy-distance test (Székely–Rizzo) with a permutation p-value.

    E = 2 E‖X − Y‖ − E‖X − X'‖ − E‖Y − Y'‖ (V-statistic) on at most ``max_points`` points of each sample
    (a random subsample, so the pairwise distance matrix stays small); p = (1 + #{E_perm ≥ E}) / (1 + P).
    Returns (E, p).
    """
    rng = np.random.default_rng(seed)
    x = np.asarray(x, float).reshape(len(x), -1)
    y = np.asarray(y, float).reshape(len(y), -1)
    if len(x) > max_points:
        x = x[rng.choice(len(x), max_points, replace=False)]
    if len(y) > max_points:
        y = y[rng.choice(len(y), max_points, replace=False)]
    pooled = np.concatenate([x, y])
    n, m = len(x), len(y)
    dist = np.sqrt(((pooled[:, None, :] - pooled[None, :, :]) ** 2).sum(-1))

    def statistic(labels: np.ndarray) -> float:
        a = labels.astype(float)
        b = 1.0 - a
        da, db = dist @ a, dist @ b
        return 2 * (a @ db) / (n * m) - (a @ da) / n**2 - (b @ db) / m**2

    labels = np.r_[np.ones(n, bool), np.zeros(m, bool)]
    observed = statistic(labels)
    exceed = sum(statistic(rng.permutation(labels)) >= observed for _ in range(permutations))
    return float(observed), float((1 + exceed) / (1 + permutations))


def weak_fit(depths: Sequence[int], diffs: np.ndarray, fit_from: int | None = None, confidence: float = 0.95,
             resamples: int = 2000, seed: int = 0) -> RateFit:
    """Rate of the weak error |mean_i diffs[i, j]| ≍ L_j^{-r}: least squares in log–log, with a paired
    percentile bootstrap over samples (the same resampled paths at every depth, as
    :func:`validation.stats.fit_rate` does for strong errors). Percentile rather than BCa: BCa's jackknife
    costs O(N²) at the N = 10⁴–10⁵ paths a weak error needs, and at that N the two agree."""
    diffs = np.asarray(diffs, float)
    depths_arr = np.asarray(depths, float)
    errors = np.abs(diffs.mean(axis=0))
    fitted = depths_arr >= (fit_from or 0)
    local = local_slopes(list(depths), errors) if np.all(errors > 0) else np.full(len(depths) - 1, np.nan)
    nan = float("nan")
    if not np.all(np.isfinite(diffs)) or np.any(errors[fitted] <= 0):
        return RateFit(nan, (nan, nan), confidence, errors, fitted, local, "not fitted", finite=False)
    log_depths = np.log(depths_arr[fitted])
    rate = float(-slope(log_depths, np.log(errors[fitted])))
    rng = np.random.default_rng(seed)
    n = diffs.shape[0]
    rates = []
    for start in range(0, resamples, 250):
        size = min(250, resamples - start)
        weights = rng.multinomial(n, np.full(n, 1.0 / n), size=size) / n  # (B, N): resampled paths
        curves = np.abs(weights @ diffs[:, fitted])
        with np.errstate(divide="ignore"):
            rates.append(-slope(log_depths, np.log(curves)))
    rates = np.concatenate(rates)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(rates, [alpha, 1 - alpha])
    return RateFit(rate, (float(low), float(high)), confidence, errors, fitted, local, "paired bootstrap (percentile)")


# ----------------------------------------------------------------------------------------------- coupled pass
def coupled_outputs(pair: PFPair, depths: Sequence[int], reference_steps: int, seed: int,
                    block_steps: int = 64) -> dict[str, Any]:
    """Final states on ONE Brownian path per sample: the network at every depth, Euler–Maruyama of the
    limit with step 1/L at every depth, and Euler references with n and n/2 steps.

    One pass over the path (:func:`validation.engine.sde_pass`, memory: one block of ``block_steps`` fine
    increments); Euler of the limit rides along as a second scheme on the same increments, with the
    pair's own drift and diffusion (``limit_sde().f`` / ``g_prod``): torchsde's Euler step written out.
    """
    sde = pair.limit_sde()

    def euler(y: torch.Tensor, t: float, dt: float, dw: torch.Tensor) -> torch.Tensor:
        return y + sde.f(t, y) * dt + sde.g_prod(t, y, dw)

    budget = min(block_steps, reference_steps) * pair.samples * pair.noise_dim
    result = sde_pass(pair, list(depths), reference_steps, seed,
                      schemes={"network": pair.network_step, "euler": euler}, block_budget=budget)
    return {
        "network": dict(zip(depths, result.states["network"])),
        "euler": dict(zip(depths, result.states["euler"])),
        "reference": result.reference,
        "second": result.second,
    }


def weak_differences(phi: str, z: float, width: int, draws: int, depths: Sequence[int], reference_steps: int,
                     seed: int, batch: int, progress: bool) -> dict[str, dict[str, np.ndarray]]:
    """Per-sample f(·) − f(H_ref) for the network and Euler at every depth, and for the second reference,
    on the SC_φ model at width ``width`` (float64). Returns {kind: {f name: array}} with kinds
    ``network`` / ``euler`` ((N, depths)) and ``second`` ((N,))."""
    config = ModelConfig(width=width, activation=phi,
                         options={"psi": "identity", "sigma_w": 1.0, "sigma_b": 1.0, "x0": float(z)})
    out: dict[str, dict[str, list]] = {k: {f: [] for f in WEAK_FUNCTIONS} for k in ("network", "euler", "second")}
    batches = [(s, min(batch, draws - s)) for s in range(0, draws, batch)]
    for index, (_, size) in enumerate(tqdm(batches, desc=f"weak error SC_{phi}", unit="batch",
                                           disable=not progress, leave=False)):
        pair = PFPair(config, size, seed=seed)
        res = coupled_outputs(pair, depths, reference_steps, stream_seed(seed, "weak-path", phi, index))
        for name, (f, _) in WEAK_FUNCTIONS.items():
            f_ref = f(res["reference"])
            for kind in ("network", "euler"):
                out[kind][name].append(torch.stack([f(res[kind][L]) - f_ref for L in depths], 1).cpu().numpy())
            out["second"][name].append((f(res["second"]) - f_ref).cpu().numpy())
    return {k: {f: np.concatenate(v) for f, v in d.items()} for k, d in out.items()}


# ----------------------------------------------------------------------------------------------- plotting
def _plot(path: Path, results: dict[str, Any], args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(results)
    with_weak = all("weak" in results[m] for m in models)
    columns = 4 if with_weak else 3
    fig, axes = plt.subplots(len(models), columns, figsize=(4.25 * columns, 4.1 * len(models)),
                             constrained_layout=True, squeeze=False)
    for row, phi in enumerate(models):
        res = results[phi]
        net, sde = res["samples"]["network"], res["samples"]["sde"]
        for col, z in enumerate(args.inputs):
            ax = axes[row, col]
            lo = np.quantile(np.r_[net[:, col], sde[:, col]], 0.001)
            hi = np.quantile(np.r_[net[:, col], sde[:, col]], 0.999)
            grid = np.linspace(lo, hi, 300)
            bins = np.linspace(lo, hi, 60)
            for data, colour, label in ((net[:, col], "C0", f"ResNet, L = {args.depth}"),
                                        (sde[:, col], "C1", f"SDE (Euler, {args.sde_steps} steps)")):
                ax.hist(data, bins=bins, density=True, alpha=0.25, color=colour)
                ax.plot(grid, _stats.gaussian_kde(data)(grid), color=colour, lw=1.6, label=label)
            test = res["tests"][f"ks_z{col}"]
            ax.set_title(f"SC_{phi}: density of x_1(T), input z = {z:g}\nKS D = {test['statistic']:.4f}, "
                         f"p = {test['p_value']:.3f}", fontsize=9)
            ax.set_xlabel("first output coordinate x_1(T)")
            ax.set_ylabel("density")
            ax.legend(fontsize=7)
        ax = axes[row, 2]
        show = min(3000, len(net))
        ax.scatter(net[:show, 0], net[:show, 1], s=2, alpha=0.35, color="C0", label="ResNet")
        ax.scatter(sde[:show, 0], sde[:show, 1], s=2, alpha=0.35, color="C1", label="SDE")
        test = res["tests"]["energy_joint"]
        ax.set_title(f"SC_{phi}: joint law ({show} draws each shown)\nenergy distance {test['statistic']:.2e}, "
                     f"p = {test['p_value']:.3f}", fontsize=9)
        ax.set_xlabel(f"x_1(T) for z = {args.inputs[0]:g}")
        ax.set_ylabel(f"x_1(T) for z = {args.inputs[1]:g}")
        ax.legend(fontsize=7, markerscale=4)
        if not with_weak:
            continue
        ax = axes[row, 3]
        weak = res["weak"]
        depths = np.asarray(weak["depths"], float)
        for k, (name, (_, label)) in enumerate(WEAK_FUNCTIONS.items()):
            entry = weak["functions"][name]
            for kind, style in (("network", "o-"), ("euler", "s:")):
                fit = entry[kind]
                err = np.asarray(fit["errors"], float)
                lo_b, hi_b = np.asarray(fit["band"][0]), np.asarray(fit["band"][1])
                who = "ResNet" if kind == "network" else "Euler SDE"
                text = f"{who}, {label}: rate {fit['rate']:.2f} [{fit['ci'][0]:.2f}, {fit['ci'][1]:.2f}]"
                ax.errorbar(depths, err, yerr=[np.clip(err - lo_b, 0, None), np.clip(hi_b - err, 0, None)],
                            fmt=style, color=f"C{2 * k + (kind == 'euler')}", ms=4, lw=1.2, capsize=2, label=text)
        ref = np.asarray(weak["functions"]["sqnorm"]["network"]["errors"], float)
        ax.plot(depths, ref[0] * depths[0] / depths * 0.5, "k--", lw=1, label="slope -1")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("depth L (Euler: steps)")
        ax.set_ylabel("weak error |E f(h_L) - E f(H_1)|")
        ax.set_title(f"SC_{phi}: weak error, D = {weak['width']}, z = {weak['z']:g}, N = {weak['draws']}\n"
                     f"(shared path, Euler reference {weak['reference_steps']} steps)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, loc="lower left")
    fig.suptitle(f"Peluchetti-Favaro SC checks: ResNet vs limit SDE with independent noise "
                 f"(D = {args.width}, L = {args.depth}, {args.draws} draws, seed {args.seed})", fontsize=11)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)


# ----------------------------------------------------------------------------------------------- CLI
EPILOG = """\
examples:
  python -m validation.weak                                   # the paper's size: D = L = 500, 10 000 draws
  python -m validation.weak --width 250 --depth 250 --sde-steps 250   # half the depth, a quarter of the time
  python -m validation.weak --models tanh --draws 2000 --width 100 --depth 100 --plot weak.png --json weak.json

exit status: 0 PASS, 1 FAIL, 2 bad input.
"""


def _inputs(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"inputs {text!r} must be two numbers like '0,1'") from None
    if len(values) != 2 or not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f"inputs {text!r} must be exactly two finite numbers like '0,1'")
    return values


def _models(text: str) -> list[str]:
    names = [v.strip().lower() for v in text.split(",") if v.strip()]
    bad = [n for n in names if n not in SC_MODELS]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"models {text!r}: allowed {', '.join(SC_MODELS)} (comma-separated)")
    return list(dict.fromkeys(names))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m validation.weak",
                                     description=__doc__.split("\n\n", 1)[1].rsplit("\n\nExit status", 1)[0],
                                     epilog=EPILOG, formatter_class=cli.HelpFormatter)
    sc = parser.add_argument_group("the paper's check (convergence in law)")
    sc.add_argument("--models", type=_models, default=list(SC_MODELS),
                    help="SC models to run: φ = tanh and/or swish (ψ = id, σ_w² = σ_b² = 1)")
    sc.add_argument("--draws", type=cli.int_at_least(20), default=10000,
                    help="independent draws of the ResNet and (separately) of the SDE")
    sc.add_argument("--width", type=cli.positive_int, default=500, help="D, the width (the paper's 500)")
    sc.add_argument("--depth", type=cli.positive_int, default=500, help="L, the ResNet depth (the paper's 500)")
    sc.add_argument("--sde-steps", type=cli.positive_int, default=500,
                    help="Euler–Maruyama steps of the limit SDE (its weak bias is O(1/steps), measured in part 2)")
    sc.add_argument("--inputs", type=_inputs, default=[0.0, 1.0], help="the two inputs z, copied to every coordinate")
    sc.add_argument("--alpha", type=cli.probability, default=0.01,
                    help="family-wise level: every test must have p > alpha / (number of tests) to PASS")
    sc.add_argument("--permutations", type=cli.int_at_least(19), default=500,
                    help="permutations of the energy-distance test of the joint law")
    sc.add_argument("--energy-points", type=cli.int_at_least(10), default=2000,
                    help="points per sample used by the energy test (a random subsample)")
    sc.add_argument("--chunk", type=cli.positive_int, default=250, help="draws simulated at once (memory)")
    weak = parser.add_argument_group("weak error versus depth")
    weak.add_argument("--weak-width", type=cli.positive_int, default=4,
                      help="D of the weak-error study (the shared path needs D² + D channels)")
    weak.add_argument("--weak-draws", type=cli.int_at_least(20), default=10000, help="paths of the weak-error study")
    weak.add_argument("--weak-depths", type=cli.power_of_two_list, default=[4, 8, 16, 32, 64, 128],
                      help="depths L (powers of two, '4:128' or '4,8,16')")
    weak.add_argument("--weak-reference", type=int, default=2048,
                      help="Euler steps of the reference (power of two, ≥ 16 × the deepest depth recommended)")
    weak.add_argument("--weak-z", type=float, default=1.0, help="input z of the weak-error study")
    weak.add_argument("--weak-fit-from", type=cli.positive_int, default=16, help="fit the weak rate on depths ≥ this")
    weak.add_argument("--weak-tolerance", type=cli.positive_float, default=0.25,
                      help="the weak-rate check: the interval must lie within 1 ± this")
    weak.add_argument("--strict-weak", action="store_true", help="let the weak-rate check decide the exit status too")
    weak.add_argument("--no-weak", action="store_true", help="skip the weak-error study")
    run = parser.add_argument_group("run and output")
    run.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    run.add_argument("--dtype", type=cli.dtype_arg, default=torch.float32,
                     help="dtype of part 1 (float32 is far below the statistical resolution; part 2 is float64)")
    run.add_argument("--json", type=Path, default=None, help="write the full result as JSON to this file")
    run.add_argument("--plot", type=Path, default=None, help="write the figure (densities, joint scatter, weak error)")
    cli.add_threads_argument(run)
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def _check(args: argparse.Namespace) -> None:
    if not cli.is_power_of_two(args.weak_reference) or args.weak_reference <= args.weak_depths[-1]:
        raise cli.UsageError(f"--weak-reference {args.weak_reference} must be a power of two finer than the deepest "
                             f"weak depth {args.weak_depths[-1]}")
    if sum(L >= args.weak_fit_from for L in args.weak_depths) < 2:
        raise cli.UsageError(f"--weak-fit-from {args.weak_fit_from} leaves fewer than two of {args.weak_depths}")
    if args.weak_draws < 20:
        raise cli.UsageError("--weak-draws must be ≥ 20")


def _fit_entry(fit: RateFit, diffs: np.ndarray, confidence: float, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    n = diffs.shape[0]
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=500) / n
    boot = np.abs(weights @ diffs)
    alpha = (1 - confidence) / 2
    return {"rate": fit.rate, "ci": list(fit.ci), "method": fit.method, "errors": fit.errors,
            "signed_errors": diffs.mean(axis=0), "standard_errors": diffs.std(axis=0, ddof=1) / math.sqrt(n),
            "band": [np.quantile(boot, alpha, axis=0), np.quantile(boot, 1 - alpha, axis=0)],
            "local_slopes": fit.local, "fitted": fit.fitted}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _check(args)
    torch.set_num_threads(args.threads)
    progress = not args.quiet
    started = time.perf_counter()
    results: dict[str, Any] = {}
    pvalues: list[tuple[str, float]] = []
    for phi_name in args.models:
        phi = get_activation(phi_name)
        t0 = time.perf_counter()
        common = dict(width=args.width, draws=args.draws, seed=args.seed, dtype=args.dtype, chunk=args.chunk,
                      keep=1, progress=progress, stream=phi_name)
        net = simulate_gram(phi, args.inputs, steps=args.depth, mode="network", **common)[:, 0, :].double().numpy()
        sde = simulate_gram(phi, args.inputs, steps=args.sde_steps, mode="sde", **common)[:, 0, :].double().numpy()
        sim_time = time.perf_counter() - t0
        tests: dict[str, Any] = {}
        for col, z in enumerate(args.inputs):
            res = _stats.ks_2samp(net[:, col], sde[:, col])
            tests[f"ks_z{col}"] = {"test": f"Kolmogorov-Smirnov, x_1(T) for z = {z:g}", "statistic": float(res.statistic),
                                   "p_value": float(res.pvalue)}
        e_stat, e_p = energy_test(net, sde, permutations=args.permutations, max_points=args.energy_points,
                                  seed=stream_seed(args.seed, "energy", phi_name) % 2**32)
        tests["energy_joint"] = {"test": "energy distance, joint (x_1(z0), x_1(z1)), permutation p-value",
                                 "statistic": e_stat, "p_value": e_p, "points": min(args.energy_points, args.draws),
                                 "permutations": args.permutations}
        pvalues += [(f"SC_{phi_name} {k}", v["p_value"]) for k, v in tests.items()]
        moments = {kind: {"mean": data.mean(0), "std": data.std(0, ddof=1), "corr": np.corrcoef(data.T)[0, 1]}
                   for kind, data in (("network", net), ("sde", sde))}
        entry: dict[str, Any] = {"tests": tests, "moments": moments, "simulation_seconds": sim_time,
                                 "samples": {"network": net, "sde": sde}}
        if not args.no_weak:
            t1 = time.perf_counter()
            diffs = weak_differences(phi_name, args.weak_z, args.weak_width, args.weak_draws, args.weak_depths,
                                     args.weak_reference, args.seed, batch=2000, progress=progress)
            functions = {}
            for name in WEAK_FUNCTIONS:
                functions[name] = {}
                for kind in ("network", "euler"):
                    fit = weak_fit(args.weak_depths, diffs[kind][name], fit_from=args.weak_fit_from,
                                   seed=args.seed)
                    functions[name][kind] = _fit_entry(fit, diffs[kind][name], 0.95, args.seed)
                second = diffs["second"][name]
                functions[name]["reference_bias_check"] = {
                    "second_minus_first": float(second.mean()),
                    "standard_error": float(second.std(ddof=1) / math.sqrt(len(second)))}
            entry["weak"] = {"width": args.weak_width, "draws": args.weak_draws, "depths": args.weak_depths,
                             "reference_steps": args.weak_reference, "z": args.weak_z,
                             "fit_from": args.weak_fit_from, "functions": functions,
                             "seconds": time.perf_counter() - t1}
        results[phi_name] = entry

    threshold = args.alpha / len(pvalues)
    sc_pass = all(p > threshold for _, p in pvalues)
    weak_checks = []
    if not args.no_weak:
        for phi_name, entry in results.items():
            for name, fits in entry["weak"]["functions"].items():
                low, high = fits["network"]["ci"]
                ok = bool(np.isfinite(low) and 1 - args.weak_tolerance <= low and high <= 1 + args.weak_tolerance)
                weak_checks.append((f"SC_{phi_name} {name}", ok))
    weak_pass = all(ok for _, ok in weak_checks)
    outcome = "PASS" if sc_pass and (weak_pass or not args.strict_weak) else "FAIL"
    elapsed = time.perf_counter() - started

    # ------------------------------------------------------------------ report
    print(f"Peluchetti-Favaro SC checks: D = {args.width}, L = {args.depth}, SDE Euler {args.sde_steps} steps, "
          f"{args.draws} draws each, inputs z = {args.inputs}, seed {args.seed}, {str(args.dtype)[6:]}")
    print()
    print(f"{'model':10s} {'test':44s} {'statistic':>10s} {'p-value':>9s}")
    for phi_name, entry in results.items():
        for key, test in entry["tests"].items():
            print(f"SC_{phi_name:7s} {test['test'][:44]:44s} {test['statistic']:10.4g} {test['p_value']:9.4f}")
    print()
    print(f"{'model':10s} {'z':>4s} {'mean net':>9s} {'mean sde':>9s} {'std net':>8s} {'std sde':>8s}   corr(z0,z1) net / sde")
    for phi_name, entry in results.items():
        m = entry["moments"]
        for col, z in enumerate(args.inputs):
            print(f"SC_{phi_name:7s} {z:4g} {m['network']['mean'][col]:9.4f} {m['sde']['mean'][col]:9.4f} "
                  f"{m['network']['std'][col]:8.4f} {m['sde']['std'][col]:8.4f}" +
                  (f"   {m['network']['corr']:.4f} / {m['sde']['corr']:.4f}" if col == 0 else ""))
    print(f"verdict (two-sample tests): {'PASS' if sc_pass else 'FAIL'} — every p-value must exceed "
          f"alpha/{len(pvalues)} = {threshold:.4g}")
    if not args.no_weak:
        print()
        print(f"weak error |E f(h_L) - E f(H_1)| (shared path, D = {args.weak_width}, z = {args.weak_z:g}, "
              f"N = {args.weak_draws}, Euler reference {args.weak_reference} steps; ± = 1 standard error)")
        for phi_name, entry in results.items():
            weak = entry["weak"]
            for name, fits in weak["functions"].items():
                print(f"  SC_{phi_name} {WEAK_FUNCTIONS[name][1]}")
                for kind in ("network", "euler"):
                    f = fits[kind]
                    row = "  ".join(f"{e:+.2e}±{s:.0e}" for e, s in zip(f["signed_errors"], f["standard_errors"]))
                    who = "ResNet   " if kind == "network" else "Euler 1/L"
                    print(f"    {who} L={weak['depths']}: {row}")
                    print(f"              rate {f['rate']:.3f}  95% CI [{f['ci'][0]:.3f}, {f['ci'][1]:.3f}] "
                          f"(depths ≥ {weak['fit_from']})")
                bias = fits["reference_bias_check"]
                print(f"    reference check: E f(H with n/2 steps) - E f(H with n steps) = "
                      f"{bias['second_minus_first']:+.2e} ± {bias['standard_error']:.0e}")
        print(f"weak-rate check (ResNet interval within 1 ± {args.weak_tolerance:g}): "
              + ", ".join(f"{n} {'ok' if ok else 'NOT ok'}" for n, ok in weak_checks)
              + ("" if args.strict_weak else "  [informational; --strict-weak makes it count]"))
    print(f"verdict: {outcome}")
    print(f"time {elapsed:.1f} s (" + ", ".join(
        f"SC_{k}: simulation {v['simulation_seconds']:.0f} s" + (f", weak {v['weak']['seconds']:.0f} s" if "weak" in v
                                                                 else "") for k, v in results.items()) + ")")

    if args.json:
        payload = {
            "study": "weak (convergence in law), Peluchetti & Favaro 2020 §4.1",
            "settings": {k: (str(v) if isinstance(v, (Path, torch.dtype)) else v) for k, v in vars(args).items()},
            "simulation": "exact-in-law Gram reduction (limits.peluchetti_favaro.simulate_gram); SDE: Euler-Maruyama "
                          "with its own independent noise",
            "results": {k: {kk: vv for kk, vv in v.items() if kk != "samples"} for k, v in results.items()},
            "p_values": dict(pvalues),
            "bonferroni_threshold": threshold,
            "sc_verdict": "PASS" if sc_pass else "FAIL",
            "weak_checks": dict(weak_checks),
            "verdict": outcome,
            "elapsed_seconds": elapsed,
            **run_metadata(args.seed, args.dtype, "cpu"),
        }
        write_json(args.json, payload)
        print(f"wrote {args.json}")
    if args.plot:
        _plot(args.plot, results, args)
        print(f"wrote {args.plot}")
    return 0 if outcome == "PASS" else 1


if __name__ == "__main__":
    sys.exit(cli.run_cli(main))
