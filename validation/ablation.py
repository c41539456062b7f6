"""``python -m validation.ablation``: the Itô correction, shown (Cohen et al. Thm 4.4, THEORY §3a).

One network, two limits. The ResNet h_{k+1} = h_k + σ(A_k h_k + b_k) with Brownian weights and a smooth
trend (the ``cohen-sde`` pair, σ with σ''(0) ≠ 0, by default σ(x) = 2(softplus(x) − log 2)) is compared,
on the same weight paths and the same samples, with

* the **corrected** limit dH = σ'(0)[dW^A H + dW^b + (Ā_t H + b̄_t) dt] + ½σ''(0) Q(t, H) dt, and
* the **naive** limit read off the recursion, without ½σ''(0) Q(t, H) dt (``cohen-sde-naive``).

Both error curves e(L) = (E‖h_L − H_1‖²)^½ are drawn on one log–log plot with their fitted rates and 95%
paired-bootstrap intervals. Verdict: PASS when the corrected rate's interval lies within ±tolerance of
1/2 AND the naive one lies wholly below 1/2 − tolerance (its error does not vanish); FAIL otherwise.

Exit status: 0 PASS, 1 FAIL, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from limits.activations import ACTIVATION_NAMES, ActivationError
from limits.cohen import CohenSDE, CohenSDENaive
from limits.pairs import ModelConfig, PairError
from validation import cli
from validation.engine import study_errors
from validation.runinfo import run_metadata, write_json
from validation.stats import METRIC_HELP, RateFit, depth_intervals, fit_rate, verdict

__all__ = ["main", "build_parser"]

DEFAULTS = CohenSDE.default_study

EPILOG = """\
examples:
  python -m validation.ablation
  python -m validation.ablation --plot docs/figures/ablation_cohen.png --json ablation.json
  python -m validation.ablation --activation swish --samples 400 --depths 8:256 --reference-steps 4096
  python -m validation.ablation --set s_a=1 --set s_b=1 --set trend=zero

exit status: 0 PASS, 1 FAIL, 2 bad input.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m validation.ablation",
                                     description=__doc__.split("\n\n", 1)[1].rsplit("\n\nExit status", 1)[0],
                                     epilog=EPILOG, formatter_class=cli.HelpFormatter)
    model = parser.add_argument_group("model (the cohen-sde pair; see python -m validation.convergence --list)")
    model.add_argument("--width", type=cli.positive_int, default=DEFAULTS["width"], help="width d")
    model.add_argument("--activation", default=CohenSDE.default_activation,
                       help=f"σ, with σ''(0) ≠ 0 for the ablation to mean anything: {', '.join(ACTIVATION_NAMES)}")
    model.add_argument("--lengthscale", type=cli.positive_float, default=0.1, help="ℓ of the smooth trend")
    model.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                       help="a cohen-sde setting (repeatable): " + ", ".join(
                           f"{k} (default {v.default})" for k, v in CohenSDE.option_specs.items()))
    study = parser.add_argument_group("study")
    study.add_argument("--depths", type=cli.power_of_two_list, default=DEFAULTS["depths"],
                       help="depths L, powers of two ('8,16,32' or '8:512')")
    study.add_argument("--samples", type=cli.int_at_least(2), default=DEFAULTS["samples"],
                       help="independent weight paths N (the same for both limits)")
    study.add_argument("--reference-steps", type=int, default=DEFAULTS["reference_steps"],
                       help="Euler steps of each limit's reference on the same path (power of two; second "
                            "reference: half)")
    study.add_argument("--seed", type=int, default=0, help="seed of the weights, inputs and bootstrap")
    fit = parser.add_argument_group("fit and verdict")
    fit.add_argument("--metric", choices=["rms", "mean", "sup"], default="rms",
                     help="error used for the rates: " + "; ".join(f"{k} = {v}" for k, v in METRIC_HELP.items()))
    fit.add_argument("--fit-from", type=cli.positive_int, default=DEFAULTS["fit_from"],
                     help="fit only depths ≥ this (pre-asymptotic depths dropped explicitly)")
    fit.add_argument("--tolerance", type=cli.positive_float, default=0.1,
                     help="δ: corrected interval within 0.5 ± δ, naive interval below 0.5 − δ")
    fit.add_argument("--confidence", type=cli.probability, default=0.95, help="level of the bootstrap intervals")
    fit.add_argument("--bootstrap", type=cli.int_at_least(100), default=2000, help="bootstrap resamples")
    run = parser.add_argument_group("run and output")
    run.add_argument("--dtype", type=cli.dtype_arg, default=torch.float64, help="float64 or float32")
    run.add_argument("--json", type=Path, default=None, help="write the result (both curves, both fits) as JSON")
    run.add_argument("--plot", type=Path, default=None, help="write the log–log plot of both curves (PNG/PDF/SVG)")
    cli.add_threads_argument(run)
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def _fit_json(fit: RateFit) -> dict[str, Any]:
    return {"rate": fit.rate, "ci": list(fit.ci), "method": fit.method, "errors": fit.errors,
            "local_slopes": fit.local, "fitted": fit.fitted, "finite": fit.finite}


def _sq(errors, metric: str) -> np.ndarray:
    return errors.sup_sq if metric == "sup" else errors.final_sq


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    depths = args.depths
    torch.set_num_threads(args.threads)
    if not cli.is_power_of_two(args.reference_steps) or args.reference_steps <= depths[-1]:
        raise cli.UsageError(f"--reference-steps {args.reference_steps} must be a power of two finer than the "
                             f"deepest depth {depths[-1]}")
    if sum(L >= args.fit_from for L in depths) < 2:
        raise cli.UsageError(f"--fit-from {args.fit_from} leaves fewer than two of the depths {depths}")
    config = ModelConfig(width=args.width, activation=args.activation, lengthscale=args.lengthscale,
                         options=cli.parse_settings(args.settings))
    try:
        pairs = {"corrected": CohenSDE(config, args.samples, seed=args.seed, dtype=args.dtype),
                 "naive": CohenSDENaive(config, args.samples, seed=args.seed, dtype=args.dtype)}
    except (PairError, ActivationError) as exc:
        raise cli.UsageError(str(exc)) from None
    corrected = pairs["corrected"]
    print(f"ablation of the Itô correction: {corrected.description}")
    print(f"width {args.width}, σ = {corrected.activation.name} (σ'(0) = {corrected.activation.d1:g}, "
          f"σ''(0) = {corrected.activation.d2:g}), samples {args.samples}, depths {depths}, reference "
          f"{args.reference_steps} Euler steps on the same path, seed {args.seed}")
    started = time.perf_counter()
    errors, fits, times = {}, {}, {}
    for label, pair in pairs.items():
        t0 = time.perf_counter()
        errors[label] = study_errors(pair, depths, reference_steps=args.reference_steps, seed=args.seed,
                                     progress=not args.quiet)
        times[label] = time.perf_counter() - t0
        fits[label] = fit_rate(depths, _sq(errors[label], args.metric), args.metric, fit_from=args.fit_from,
                               resamples=args.bootstrap, confidence=args.confidence, seed=args.seed)
    elapsed = time.perf_counter() - started
    outcome_corrected = verdict(fits["corrected"], 0.5, args.tolerance)
    outcome_naive = verdict(fits["naive"], 0.0, args.tolerance, excluded=0.5)
    outcome = "PASS" if outcome_corrected == "PASS" and outcome_naive == "PASS" else "FAIL"

    level = int(round(100 * args.confidence))
    print()
    print(f"{'depth':>6s} {'corrected e(L)':>15s} {'local slope':>12s} {'naive e(L)':>12s} {'local slope':>12s}")
    for j, L in enumerate(depths):
        cells = []
        for label in ("corrected", "naive"):
            fit = fits[label]
            local = f"{fit.local[j - 1]:12.3f}" if j else f"{'':12s}"
            cells.append(f"{fit.errors[j]:{15 if label == 'corrected' else 12}.4e} {local}")
        print(f"{L:6d} " + " ".join(cells))
    print()
    for label in ("corrected", "naive"):
        fit = fits[label]
        print(f"rate [{label:>9s}] {fit.rate:7.3f}   {level}% CI [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]  "
              f"(depths ≥ {args.fit_from}, {args.metric}, {fit.method})")
    print(f"corrected: {outcome_corrected} (interval within [{0.5 - args.tolerance:.2f}, {0.5 + args.tolerance:.2f}])")
    print(f"naive:     {outcome_naive} (interval below {0.5 - args.tolerance:.2f}: the error does not vanish; "
          f"e({depths[-1]}) / e({depths[0]}) = {fits['naive'].errors[-1] / fits['naive'].errors[0]:.3f})")
    print(f"verdict: {outcome}")
    print(f"time {elapsed:.1f} s (corrected {times['corrected']:.1f} s, naive {times['naive']:.1f} s)")

    if args.json:
        payload = {
            "study": "ablation of the Ito correction (cohen-sde vs cohen-sde-naive)",
            "pair": corrected.describe(),
            "depths": depths, "samples": args.samples, "reference_steps": args.reference_steps,
            "metric": args.metric, "fit_from": args.fit_from, "tolerance": args.tolerance,
            "confidence": args.confidence, "bootstrap_resamples": args.bootstrap,
            "corrected": {**_fit_json(fits["corrected"]), "verdict": outcome_corrected, "theory_rate": 0.5,
                          "reference_rms_gap": float(np.sqrt(errors["corrected"].reference_gap_sq.mean())),
                          "seconds": times["corrected"]},
            "naive": {**_fit_json(fits["naive"]), "verdict": outcome_naive, "excluded_rate": 0.5,
                      "reference_rms_gap": float(np.sqrt(errors["naive"].reference_gap_sq.mean())),
                      "seconds": times["naive"]},
            "verdict": outcome,
            "elapsed_seconds": elapsed,
            **run_metadata(args.seed, args.dtype, "cpu"),
        }
        write_json(args.json, payload)
        print(f"wrote {args.json}")
    if args.plot:
        from validation.plots import Curve, plot_error_curves

        curves = []
        for label, style in (("corrected", "o-"), ("naive", "s--")):
            fit = fits[label]
            band = depth_intervals(_sq(errors[label], args.metric), args.metric, args.confidence, seed=args.seed)
            name = ("Itô-corrected limit (+½σ''(0)Q dt)" if label == "corrected"
                    else "naive limit (no correction)")
            curves.append(Curve(name, depths, fit.errors, band=band, rate=fit.rate, rate_ci=fit.ci,
                                fitted=fit.fitted, style=style))
        plot_error_curves(
            args.plot, curves, title="The Itô correction: one ResNet h + σ(A_k h + b_k), two candidate limits",
            subtitle=(f"d={args.width}, σ={corrected.activation.name} (σ''(0)={corrected.activation.d2:g}), "
                      f"N={args.samples}, reference {args.reference_steps} steps, seed={args.seed}; "
                      f"verdict {outcome}"),
            theory_rate=0.5, theory_label="theory (corrected)",
            ylabel="RMS error (E||h_L - H_1||^2)^1/2" if args.metric == "rms" else f"{args.metric} error")
        print(f"wrote {args.plot}")
    return 0 if outcome == "PASS" else 1


if __name__ == "__main__":
    sys.exit(cli.run_cli(main))
