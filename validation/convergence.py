"""``python -m validation.convergence``: how fast a depth-L ResNet approaches its continuous-depth limit.

For the chosen model (a *pair*, see ``--list``) the study draws N weight processes, runs the network
at every depth L and the limit on the same weights in one pass (validation.engine), and reports

* a table: depth, RMS error (E‖h_L − H_1‖²)^½, mean-norm error E‖h_L − H_1‖, sup-over-grid error
  (E max_k ‖h_k − H_{k/L}‖²)^½, local slope, the RMS error against a second, coarser reference, and
  the successive difference (E‖h_L − h_{2L}‖²)^½, which needs no reference at all;
* the fitted rate r (e ≍ L^-r, least squares in log–log) with a 95% paired-bootstrap interval, the
  theoretical rate and a verdict: PASS when the whole interval lies within ±tolerance of the theory
  (an equivalence test), FAIL otherwise. For a deliberately wrong limit (``cohen-sde-naive``) PASS
  means the interval lies wholly below the excluded rate − tolerance, i.e. the error does not decay
  as a convergent pair's would.

Exit status: 0 PASS, 1 FAIL (also when errors are NaN/inf: no rate is fitted through them), 2 bad input.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from limits.activations import ACTIVATION_NAMES, ActivationError
from limits.pairs import ModelConfig, Pair, PairError, get_pair, pair_names
from validation import cli
from validation.engine import StudyErrors, study_errors
from validation.plots import Curve, plot_error_curves
from validation.runinfo import run_metadata, write_json
from validation.stats import METRIC_HELP, RateFit, depth_intervals, fit_rate, verdict

#: study size when neither the command line nor the pair's ``default_study`` says otherwise
#: ``fit_from`` drops the shallowest depth from the fit (it stays in the table, marked "not fitted"):
#: measured over seeds 0–3 (res1, d = 10, N = 500), the local slope from L = 4 to 8 is 0.45–0.47 while
#: the later ones scatter around 0.50; for the ODE pairs the slope from L = 8 to 16 is 1.03–1.20.
KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "sde": {"depths": [4, 8, 16, 32, 64, 128, 256], "samples": 500, "reference_factor": 32, "width": 10,
            "fit_from": 8},
    "ode": {"depths": [8, 16, 32, 64, 128, 256, 512, 1024], "samples": 200, "width": 10, "fit_from": 16},
}

#: the tightest ODE tolerance an adaptive solver can meet in float32 (machine epsilon 1.2e-7)
FLOAT32_TOLERANCE = 1e-6

EPILOG = """\
examples:
  python -m validation.convergence --model res1
  python -m validation.convergence --model res1 --activation relu --weight-var 2 --plot res1.png --json res1.json
  python -m validation.convergence --model res2-ode --depths 8:2048 --samples 100
  python -m validation.convergence --model cohen-ode --beta 0.3 --activation tanh
  python -m validation.convergence --list

exit status: 0 PASS, 1 FAIL (or NaN/inf errors), 2 bad input.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m validation.convergence",
        description=__doc__.split("\n\n", 1)[1].rsplit("\n\nExit status", 1)[0],
        epilog=EPILOG,
        formatter_class=cli.HelpFormatter,
    )
    model = parser.add_argument_group("model")
    model.add_argument("--model", default="res1",
                       help="the pair to study (see --list for every model and its settings)")
    model.add_argument("--list", action="store_true", help="list the models, their theory rates and settings, and exit")
    model.add_argument("--width", type=cli.positive_int, default=None,
                       help="width d of the hidden state (default: the model's, usually 10)")
    model.add_argument("--activation", default=None,
                       help=f"activation σ: {', '.join(ACTIVATION_NAMES)} (prelu:SLOPE); default: the model's")
    model.add_argument("--weight-var", type=cli.nonnegative_float, default=1.0,
                       help="s²: i.i.d. weight entries have variance s²/d (res1: 2 is He init, the paper's choice)")
    model.add_argument("--lengthscale", type=cli.positive_float, default=0.1,
                       help="length-scale ℓ of the RBF kernel of smooth weights (ODE pairs)")
    model.add_argument("--input-dim", type=cli.positive_int, default=None,
                       help="add an input layer h_0 = A x with x in R^n (A entries N(0, 1/n)); default h_0 = x ~ N(0, I_d)")
    model.add_argument("--beta", type=float, default=None, help="β of Cohen et al.'s ODE regime (cohen-ode), in (0, 1)")
    model.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                       help="a model-specific setting (repeatable); --list shows each model's settings")
    study = parser.add_argument_group("study")
    study.add_argument("--depths", type=cli.power_of_two_list, default=None,
                       help="depths L: powers of two, increasing, as '4,8,16' or a range '4:256' "
                            "(default: the model's; SDE 4:256, ODE 8:1024)")
    study.add_argument("--samples", type=cli.int_at_least(2), default=None,
                       help="number N of independent weight draws (paths) (default: the model's; SDE 500, ODE 200)")
    study.add_argument("--seed", type=int, default=0, help="seed of every random draw (weights, inputs, bootstrap)")
    study.add_argument("--reference-steps", type=int, default=None,
                       help="SDE pairs: steps of the fine Euler reference on the same path, a power of two "
                            "finer than the deepest depth (default: 32 × deepest); a second reference uses half")
    study.add_argument("--rtol", type=cli.positive_float, default=None,
                       help="ODE pairs: relative tolerance of the adaptive dopri5 reference (second reference: "
                            "100× looser); default 1e-10 in float64, 1e-6 in float32 (the least float32 can reach)")
    study.add_argument("--atol", type=cli.positive_float, default=None,
                       help="ODE pairs: absolute tolerance (default: as --rtol)")
    fit = parser.add_argument_group("fit and verdict")
    fit.add_argument("--metric", choices=["rms", "mean", "sup"], default="rms",
                     help="error the verdict is based on: " + "; ".join(f"{k} = {v}" for k, v in METRIC_HELP.items()))
    fit.add_argument("--fit-from", type=cli.positive_int, default=None,
                     help="fit only depths ≥ this (pre-asymptotic depths dropped explicitly, still shown in the "
                          "table); default: the model's (SDE 8, ODE 16); 1 fits every depth")
    fit.add_argument("--tolerance", type=cli.positive_float, default=0.1,
                     help="δ of the equivalence test: PASS iff the whole rate interval lies in [theory − δ, theory + δ]")
    fit.add_argument("--confidence", type=cli.probability, default=0.95, help="level of the bootstrap interval")
    fit.add_argument("--bootstrap", type=cli.int_at_least(100), default=2000, help="bootstrap resamples")
    run = parser.add_argument_group("run and output")
    run.add_argument("--dtype", type=cli.dtype_arg, default=torch.float64,
                     help="float64 or float32 (references in float32 are only for quick looks)")
    run.add_argument("--device", type=cli.device_arg, default="cpu", help="cpu, cuda, cuda:N or auto")
    run.add_argument("--json", type=Path, default=None, help="write the full result as JSON to this file")
    run.add_argument("--csv", type=Path, default=None, help="write the per-depth table as CSV to this file")
    run.add_argument("--plot", type=Path, default=None, help="write the log–log error plot (PNG/PDF/SVG) to this file")
    cli.add_threads_argument(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def list_models() -> str:
    lines = []
    for name in pair_names():
        cls = get_pair(name)
        lines.append(f"{name:18s} [{cls.kind}] {cls.description}")
        lines.append(f"{'':18s} theory: {cls.theory_source}; default activation {cls.default_activation}")
        for key, spec in cls.option_specs.items():
            lines.append(f"{'':18s} --set {key}=… ({spec.default!r}): {spec.help}")
    return "\n".join(lines)


def resolve_study(args: argparse.Namespace, cls: type[Pair]) -> dict[str, Any]:
    """Command line > the pair's ``default_study`` > the kind's defaults; then check consistency."""
    defaults = {**KIND_DEFAULTS[cls.kind], **cls.default_study}
    depths = args.depths or list(defaults["depths"])
    study = {
        "depths": depths,
        "samples": args.samples or defaults["samples"],
        "width": args.width or defaults["width"],
        "fit_from": args.fit_from if args.fit_from is not None else defaults.get("fit_from"),
        "reference_steps": None,
    }
    if cls.kind == "sde":
        reference = args.reference_steps
        if reference is None:
            reference = defaults.get("reference_steps") or defaults["reference_factor"] * depths[-1]
            reference = max(reference, 2 * depths[-1])
        if not cli.is_power_of_two(reference) or reference <= depths[-1]:
            raise cli.UsageError(
                f"--reference-steps {reference} must be a power of two finer than the deepest depth {depths[-1]}"
            )
        if reference < 8 * depths[-1]:
            print(f"warning: reference only {reference // depths[-1]}× finer than the deepest depth; "
                  "THEORY §6: < 8–16× biases the slope upward", file=sys.stderr)
        study["reference_steps"] = reference
    elif args.reference_steps is not None:
        raise cli.UsageError(f"--reference-steps applies to SDE pairs only; {cls.name} is an ODE pair (use --rtol)")
    floor = FLOAT32_TOLERANCE if args.dtype == torch.float32 else 1e-10
    for flag in ("rtol", "atol"):
        value = getattr(args, flag)
        if value is None:
            setattr(args, flag, floor)
        elif args.dtype == torch.float32 and value < FLOAT32_TOLERANCE:
            raise cli.UsageError(f"--{flag} {value:g} is below what float32 can resolve "
                                 f"(≥ {FLOAT32_TOLERANCE:g} with --dtype float32); use --dtype float64")
    if study["fit_from"] is not None and sum(L >= study["fit_from"] for L in depths) < 2:
        raise cli.UsageError(f"--fit-from {study['fit_from']} leaves fewer than two of the depths {depths}")
    return study


def _format_table(depths, fits: dict[str, RateFit], second: RateFit, successive: np.ndarray) -> str:
    header = f"{'depth':>7} {'RMS error':>11} {'mean-norm':>11} {'sup-grid':>11} {'local slope':>11} " \
             f"{'RMS vs 2nd ref':>14} {'‖h_L−h_2L‖':>11}"
    rows = [header, "-" * len(header)]
    rms = fits["rms"]
    for j, depth in enumerate(depths):
        local = f"{rms.local[j - 1]:11.3f}" if j > 0 else f"{'':11}"
        succ = f"{successive[j]:11.4e}" if j < len(successive) else f"{'':11}"
        marker = "" if rms.fitted[j] else "  (not fitted)"
        rows.append(
            f"{depth:7d} {rms.errors[j]:11.4e} {fits['mean'].errors[j]:11.4e} {fits['sup'].errors[j]:11.4e} "
            f"{local} {second.errors[j]:14.4e} {succ}{marker}"
        )
    return "\n".join(rows)


def _fit_entry(fit: RateFit) -> dict[str, Any]:
    return {"rate": fit.rate, "rate_ci": list(fit.ci), "errors": fit.errors, "local_slopes": fit.local,
            "interval_method": fit.method}


def analyse(errors: StudyErrors, study: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Fit every error measure; return the fits and the successive-difference curve."""
    options = dict(fit_from=study["fit_from"], resamples=args.bootstrap, confidence=args.confidence, seed=args.seed)
    fits = {
        "rms": fit_rate(errors.depths, errors.final_sq, "rms", **options),
        "mean": fit_rate(errors.depths, errors.final_sq, "mean", **options),
        "sup": fit_rate(errors.depths, errors.sup_sq, "sup", **options),
    }
    second = fit_rate(errors.depths, errors.final_sq_second, args.metric if args.metric != "sup" else "rms", **options)
    successive_depths = errors.depths[:-1]
    succ_from = study["fit_from"] if study["fit_from"] is not None and \
        sum(L >= study["fit_from"] for L in successive_depths) >= 2 else None
    successive = (
        fit_rate(successive_depths, errors.successive_sq, "rms", fit_from=succ_from, resamples=args.bootstrap,
                 confidence=args.confidence, seed=args.seed)
        if len(successive_depths) >= 2 else None
    )
    return {"fits": fits, "second": second, "successive": successive}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        print(list_models())
        return 0
    torch.set_num_threads(args.threads)
    try:
        cls = get_pair(args.model)
        study = resolve_study(args, cls)
        device = cli.resolve_device(args.device)
        config = ModelConfig(
            width=study["width"], activation=args.activation, weight_var=args.weight_var,
            lengthscale=args.lengthscale, input_dim=args.input_dim, beta=args.beta,
            options=cli.parse_settings(args.settings),
        )
        pair = cls(config, study["samples"], seed=args.seed, dtype=args.dtype, device=device)
        theory = pair.theory_rate
    except (PairError, ActivationError) as exc:
        raise cli.UsageError(str(exc)) from None

    depths = study["depths"]
    describe = pair.describe()
    print(f"model {pair.name}: {pair.description}")
    reference_text = (f"Euler on the same path, {study['reference_steps']} steps (second: {study['reference_steps'] // 2})"
                      if pair.kind == "sde" else f"dopri5, rtol {args.rtol:g}, atol {args.atol:g} (second: 100× looser)")
    print(f"width {pair.width}, activation {pair.activation.name}, samples {pair.samples}, depths {depths}, "
          f"seed {args.seed}, {str(args.dtype).replace('torch.', '')} on {device}; reference: {reference_text}")
    started = time.perf_counter()
    errors = study_errors(pair, depths, reference_steps=study["reference_steps"] or 0, seed=args.seed,
                          rtol=args.rtol, atol=args.atol, progress=not args.quiet)
    elapsed = time.perf_counter() - started

    nonfinite = [L for j, L in enumerate(depths) if not np.all(np.isfinite(errors.final_sq[:, j]))]
    result = analyse(errors, study, args)
    fits, second, successive = result["fits"], result["second"], result["successive"]
    chosen = fits[args.metric]
    excluded = pair.excluded_rate if not pair.converges else None
    outcome = verdict(chosen, theory, args.tolerance, excluded=excluded)

    print()
    print(_format_table(depths, fits, second, np.sqrt(errors.successive_sq.mean(axis=0))))
    print()
    if nonfinite:
        print(f"errors contain NaN/inf at depths {nonfinite}: no rate is fitted through them")
    elif not chosen.finite:
        print("errors are exactly zero at some depth (the network equals its limit, e.g. zero weights): "
              "no rate can be fitted")
    level = int(round(100 * args.confidence))
    fitted_depths = [L for L, f in zip(depths, chosen.fitted) if f]
    if chosen.finite:
        print(f"fitted on depths {fitted_depths[0]}…{fitted_depths[-1]} ({len(fitted_depths)} depths), "
              f"{level}% intervals by {chosen.method}, {args.bootstrap} resamples")
    for name, fit in [*fits.items(), ("rms vs 2nd ref", second)] + ([("successive", successive)] if successive else []):
        mark = "  <- verdict" if name == args.metric else ""
        if fit.finite:
            print(f"  rate [{name:>14}]  {fit.rate:6.3f}   {level}% CI [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}]{mark}")
        else:
            print(f"  rate [{name:>14}]  not fitted ({fit.method.removeprefix('not fitted: ')}){mark}")
    gap = math.sqrt(float(np.mean(errors.reference_gap_sq)))
    print(f"  reference check: RMS gap between the two references {gap:.3e}; "
          f"rate shift vs 2nd ref {second.rate - fits['rms'].rate:+.3f}")
    if not chosen.finite:
        print(f"theory rate {theory:g} ({pair.theory_source})")
        print(f"verdict: {outcome} — no rate could be fitted")
    elif pair.converges:
        print(f"theory rate {theory:g} ({pair.theory_source}); tolerance ±{args.tolerance:g}")
        print(f"verdict: {outcome} — the {level}% interval [{chosen.ci[0]:.3f}, {chosen.ci[1]:.3f}] "
              f"{'lies' if outcome == 'PASS' else 'does not lie'} within [{theory - args.tolerance:.3f}, "
              f"{theory + args.tolerance:.3f}]")
    else:
        print(f"this limit is deliberately wrong: the check is that the error does NOT decay at rate "
              f"{excluded:g} ({pair.theory_source})")
        print(f"verdict: {outcome} — the {level}% interval [{chosen.ci[0]:.3f}, {chosen.ci[1]:.3f}] "
              f"{'lies' if outcome == 'PASS' else 'does not lie'} below {excluded - args.tolerance:.3f}")
    print(f"time {elapsed:.1f} s")

    payload = {
        "model": pair.name,
        "pair": describe,
        "depths": depths,
        "samples": pair.samples,
        "width": pair.width,
        "activation": pair.activation.name,
        "metric": args.metric,
        "errors": {name: fit.errors for name, fit in fits.items()},
        "errors_second_reference": second.errors,
        "successive_differences": np.sqrt(errors.successive_sq.mean(axis=0)),
        "rate": chosen.rate,
        "rate_ci": list(chosen.ci),
        "confidence": args.confidence,
        "theory_rate": theory,
        "tolerance": args.tolerance,
        "verdict": outcome,
        "converges": pair.converges,
        "excluded_rate": excluded,
        "fit_from": study["fit_from"],
        "fits": {name: _fit_entry(fit) for name, fit in fits.items()},
        "fit_second_reference": _fit_entry(second),
        "fit_successive": _fit_entry(successive) if successive else None,
        "reference": {**errors.reference, "rms_gap": gap},
        "nonfinite_depths": nonfinite,
        "bootstrap_resamples": args.bootstrap,
        "elapsed_seconds": elapsed,
        **run_metadata(args.seed, args.dtype, device),
    }
    if args.json:
        write_json(args.json, payload)
        print(f"wrote {args.json}")
    if args.csv:
        _write_csv(args.csv, depths, fits, second, np.sqrt(errors.successive_sq.mean(axis=0)))
        print(f"wrote {args.csv}")
    if args.plot:
        _plot(args.plot, pair, errors, fits, second, successive, theory, args)
        print(f"wrote {args.plot}")
    return 0 if outcome == "PASS" else 1


def _write_csv(path: Path, depths, fits, second, successive) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["depth", "rms_error", "mean_norm_error", "sup_grid_error", "local_slope_rms",
                         "rms_error_second_reference", "successive_difference"])
        for j, depth in enumerate(depths):
            writer.writerow([
                depth, fits["rms"].errors[j], fits["mean"].errors[j], fits["sup"].errors[j],
                fits["rms"].local[j - 1] if j else "", second.errors[j],
                successive[j] if j < len(successive) else "",
            ])


def _plot(path, pair, errors, fits, second, successive, theory, args) -> None:
    depths = errors.depths
    band = depth_intervals(errors.final_sq, "rms", args.confidence, seed=args.seed)
    curves = [
        Curve("RMS error", depths, fits["rms"].errors, band=band, rate=fits["rms"].rate, rate_ci=fits["rms"].ci,
              fitted=fits["rms"].fitted, style="o-"),
        Curve("mean-norm error", depths, fits["mean"].errors, rate=fits["mean"].rate, fitted=fits["mean"].fitted,
              style="s--"),
        Curve("sup-over-grid error", depths, fits["sup"].errors, rate=fits["sup"].rate, fitted=fits["sup"].fitted,
              style="^:"),
        Curve("RMS vs 2nd reference", depths, second.errors, rate=second.rate, fitted=second.fitted, style="x-"),
    ]
    if successive is not None:
        curves.append(Curve("successive diff. ||h_L - h_2L||", depths[:-1], successive.errors, rate=successive.rate,
                            fitted=successive.fitted, style="d-."))
    subtitle = (f"d={pair.width}, σ={pair.activation.name}, N={pair.samples}, seed={args.seed}; "
                f"verdict metric {args.metric}")
    plot_error_curves(path, curves, title=f"{pair.name}: {pair.description}", subtitle=subtitle,
                      theory_rate=theory if pair.converges else None,
                      theory_label="theory", ylabel="error (same weights)")


if __name__ == "__main__":
    sys.exit(cli.run_cli(main))
