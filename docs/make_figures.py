"""Regenerate every figure of the documentation site from the current code — one command.

    python docs/make_figures.py                  # every figure, at the documented sizes (about 25 minutes on 2 cores)
    python docs/make_figures.py --list           # what it makes, with the command each figure comes from
    python docs/make_figures.py --only convergence_res1 ablation_cohen
    python docs/make_figures.py --quick --out /tmp/figures    # every figure at small sizes (a smoke test)

Each study figure comes from the study's Python API with the documented settings (seed 0) — the same run
as the command shown next to it on the site; the tutorial figures come from running each tutorial file
(``docs/tutorial/NN_*.py``) at full size and saving every module-level ``figure_<name>`` as
``tutorial_NN_<name>.png``; what each of their code cells prints is recorded in
``docs/tutorial/outputs/NN_*.json`` (at full size only) and shown on the tutorial's page. The numbers behind
each study figure are saved as JSON next to it in ``--data`` (default ``results/figure-runs/``, not part of the
site), so the numbers quoted on the results pages can be checked against the runs that drew the figures.
Every figure is checked for tick labels that run into each other once drawn
(:func:`validation.core.plots.overlapping_tick_labels`); any found are listed at the end and the command exits 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "hooks"))

from validation import (  # noqa: E402
    ablation, convergence, figures, gradients, multilevel, phase, regimes, solvers, training, weak,
)
from validation.core.plots import overlapping_tick_labels  # noqa: E402
from validation.core.results import RunInfo, save_figure  # noqa: E402
from tutorial_outputs import record, run_cells  # noqa: E402


@dataclass(frozen=True)
class StudyFigure:
    """A figure drawn by one study run: ``run(quick)`` returns the study's result."""

    name: str
    command: str
    run: Callable[[bool], Any]


def _conv(model: str, **settings: Any) -> Callable[[bool], Any]:
    small = dict(samples=40, depths=(4, 8, 16, 32), reference_steps=512, fit_from=4, bootstrap=200)
    if model in ("res1-ode", "res2-ode", "res3-ode", "cohen-ode"):
        small = dict(samples=10, depths=(64, 128, 256, 512), fit_from=64, bootstrap=200)
    return lambda quick: convergence.run(model, **{**settings, **(small if quick else {})}, progress=True)


STUDIES = [
    StudyFigure("convergence_res1", "python -m validation.convergence --model res1", _conv("res1")),
    StudyFigure("convergence_res1-ode", "python -m validation.convergence --model res1-ode", _conv("res1-ode")),
    StudyFigure("convergence_res2-ode", "python -m validation.convergence --model res2-ode", _conv("res2-ode")),
    StudyFigure("convergence_res3-ode", "python -m validation.convergence --model res3-ode", _conv("res3-ode")),
    StudyFigure("cohen_sde", "python -m validation.convergence --model cohen-sde", _conv("cohen-sde")),
    StudyFigure("cohen_sde_naive", "python -m validation.convergence --model cohen-sde-naive",
                _conv("cohen-sde-naive")),
    StudyFigure("cohen_ode_softplus_beta0.3", "python -m validation.convergence --model cohen-ode --beta 0.3",
                _conv("cohen-ode", beta=0.3)),
    StudyFigure("cohen_ode_tanh_beta0.3",
                "python -m validation.convergence --model cohen-ode --beta 0.3 --activation tanh",
                _conv("cohen-ode", beta=0.3, activation="tanh")),
    StudyFigure("pf_swish", "python -m validation.convergence --model pf", _conv("pf")),
    StudyFigure("ablation_cohen", "python -m validation.ablation",
                lambda quick: ablation.run(**(dict(samples=40, depths=(8, 16, 32, 64), reference_steps=512,
                                                   fit_from=8, bootstrap=200) if quick else {}), progress=True)),
    StudyFigure("weak_sc_paper", "python -m validation.weak",
                lambda quick: weak.run(**(dict(draws=300, width=20, depth=20, sde_steps=20, weak_draws=300,
                                               weak_depths=(4, 8, 16), weak_reference=128, weak_fit_from=4,
                                               permutations=19, energy_points=100) if quick else {}), progress=True)),
    StudyFigure("weak_sc", "python -m validation.weak --width 250 --depth 250 --sde-steps 250",
                lambda quick: weak.run(width=250 if not quick else 10, depth=250 if not quick else 10,
                                       sde_steps=250 if not quick else 10,
                                       **(dict(draws=300, weak=False, permutations=19, energy_points=100)
                                          if quick else {}), progress=True)),
    StudyFigure("regimes_fig1_fig3", "python -m validation.regimes --preset fig1",
                lambda quick: regimes.run("fig1", **(dict(samples=8, depths=(10, 100, 1000)) if quick else {}),
                                          progress=True)),
    StudyFigure("regimes_fig4_fig5", "python -m validation.regimes --preset fig4",
                lambda quick: regimes.run("fig4", **(dict(samples=4, depths=(10, 100, 1000)) if quick else {}),
                                          progress=True)),
    StudyFigure("regimes_fig2", "python -m validation.regimes --preset fig2 --dtype float32 --workers 2",
                lambda quick: regimes.run("fig2", **(dict(samples=40, width=20, depths=(100,)) if quick else
                                                    dict(dtype="float32", workers=2)), progress=True)),
    StudyFigure("regimes_chizat", "python -m validation.regimes --preset chizat",
                lambda quick: regimes.run("chizat", **(dict(samples=60, sweep_samples=10, layers=20,
                                                            depths=(10, 100, 1000)) if quick else {}), progress=True)),
    StudyFigure("solvers_res1", "python -m validation.solvers --model res1",
                lambda quick: solvers.run("res1", **(dict(samples=40, depths=(4, 8, 16, 32), reference_steps=512,
                                                          bootstrap=200) if quick else {}), progress=True)),
    StudyFigure("solvers_res1_width1", "python -m validation.solvers --model res1 --width 1",
                lambda quick: solvers.run("res1", width=1, **(dict(samples=40, depths=(4, 8, 16, 32),
                                                                   reference_steps=512, bootstrap=200)
                                                              if quick else {}), progress=True)),
    StudyFigure("solvers_res1_levy_area", "python -m validation.solvers --model res1 --width 2 --samples 1000 "
                "--schemes euler,milstein_levy_area,log_ode_midpoint",
                lambda quick: solvers.run("res1", width=2, schemes=("euler", "milstein_levy_area", "log_ode_midpoint"),
                                          **(dict(samples=40, depths=(4, 8, 16, 32), reference_steps=256, bootstrap=200)
                                             if quick else dict(samples=1000)), progress=True)),
    StudyFigure("solvers_problem_gbm", "python -m validation.solvers --problem gbm",
                lambda quick: solvers.run(problem="gbm", **(dict(samples=40, depths=(4, 8, 16, 32), bootstrap=200)
                                                             if quick else {}))),
    StudyFigure("solvers_res2-ode", "python -m validation.solvers --model res2-ode",
                lambda quick: solvers.run("res2-ode", **(dict(samples=10, depths=(8, 16, 32, 64), bootstrap=200,
                                                              tolerances=(1e-4, 1e-6)) if quick else {}))),
    StudyFigure("multilevel_res1", "python -m validation.multilevel",
                lambda quick: multilevel.run("res1", **(dict(samples=2000, depths=(1, 2, 4, 8, 16), accuracies=(1e-2,),
                                                             resamples=200) if quick else {}), progress=True)),
    StudyFigure("gradients_res1", "python -m validation.gradients --model res1",
                lambda quick: gradients.run("res1", **(dict(samples=40, width=4, depths=(4, 8, 16, 32), reference_steps=256,
                                                            resamples=200, method_samples=8) if quick else {}),
                                            progress=True)),
    StudyFigure("phase_fig7", "python -m validation.phase",
                lambda quick: phase.run(**(dict(hursts=(0.3, 0.7), betas=(0.2, 0.6, 1.0, 1.3), depth=64, networks=2,
                                                inputs=2) if quick else {}), progress=True)),
    *[StudyFigure(f"training_{name}", f"python -m validation.training --experiment {name}",
                  (lambda name: lambda quick: training.run(name, checkpoint_dir=None, progress=True,  # noqa: B023 (called within this iteration)
                                                           **(training.EXPERIMENTS[name].smoke if quick else {})))(name))  # noqa: B023 (called within this iteration)
      for name in ("marion-fig8", "marion-fig9", "cohen-scaling", "pf-sgd", "depth-transfer", "marion2024-fig1",
                   "sander2022-linear", "trained-ode-convergence", "cohen-conv", "marion2024-fig2", "chaintron2026-linear",
                   "chaintron2026-nonlinear", "chaintron2026-budget", "chaintron2026-grid", "chizat2025-alpha")],
    StudyFigure("training_chizat2025-alpha-tanh",
                "python -m validation.training --experiment chizat2025-alpha --activation tanh",
                lambda quick: training.run("chizat2025-alpha", checkpoint_dir=None, progress=True, activation="tanh",
                                           **({**training.EXPERIMENTS["chizat2025-alpha"].smoke, "width": 8} if quick
                                              else {}))),
    StudyFigure("training_chaintron2026-budget-tanh",
                "python -m validation.training --experiment chaintron2026-budget --activation tanh",
                lambda quick: training.run("chaintron2026-budget", checkpoint_dir=None, progress=True, activation="tanh",
                                           **(training.EXPERIMENTS["chaintron2026-budget"].smoke if quick else {}))),
    *[StudyFigure(f"figures_{name}", f"python -m validation.figures --figure {name}",
                  (lambda name: lambda quick: figures.run(name, progress=True,  # noqa: B023 (called within this iteration)
                                                          **(figures.SMOKE[name] if quick else {})))(name))  # noqa: B023 (called within this iteration)
      for name in figures.FIGURES],
]

#: figures drawn by an investigation script at a scale beyond this command (a GPU run of several processes):
#: listed with where their commands are, not redrawn here
INVESTIGATIONS = {
    "blowup": "docs/investigations/blowup.py (GPU-scale; the commands are on docs/results/blowup.md, 'Reproduce')",
    "bench_gradients": "benchmarks/bench_gradients.py (a benchmark of fresh processes: it writes "
                       "benchmarks/results/bench_gradients.png, copied here)",
}

TUTORIALS = sorted((HERE / "tutorial").glob("[0-9][0-9]_*.py"))


def tutorial_figures(path: Path, quick: bool) -> tuple[dict[str, Any], list[str]]:
    """Run a tutorial file cell by cell (at full size unless ``quick``): its ``figure_<name>`` objects by file
    name, and what each code cell printed."""
    namespace, printed = run_cells(path, quick)
    number = path.name[:2]
    return ({f"tutorial_{number}_{key.removeprefix('figure_')}": value for key, value in namespace.items()
             if key.startswith("figure_")}, printed)


def tutorial_provenance(started: datetime, seconds: float) -> dict[str, Any]:
    """Where a tutorial's recorded output came from (its seeds, dtypes and devices are in its code)."""
    info = RunInfo.capture(seed=0, dtype="float64", device="cpu", started=started, wall_time_s=seconds).to_dict()
    return {key: info[key] for key in ("started_utc", "wall_time_s", "threads", "package_version", "git", "versions",
                                       "platform")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python docs/make_figures.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="make only these (names from --list; "
                                                                  "'tutorial' for every tutorial, 'tutorial_05' for one)")
    parser.add_argument("--list", action="store_true", help="list the figures and the command behind each")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test; not for the site)")
    parser.add_argument("--out", type=Path, default=HERE / "figures", help="folder of the figures")
    parser.add_argument("--data", type=Path, default=HERE.parent / "results" / "figure-runs",
                        help="folder for the JSON of each study run behind a figure")
    args = parser.parse_args(argv)
    if args.list:
        for fig in STUDIES:
            print(f"{fig.name + '.png':34s} {fig.command}")
        for path in TUTORIALS:
            print(f"{'tutorial_' + path.name[:2] + '_*.png':34s} the figure_* variables of docs/tutorial/{path.name}")
        for name, where in INVESTIGATIONS.items():
            print(f"{name + '.png':34s} not redrawn here: {where}")
        return 0
    wanted = set(args.only or [])
    known = {fig.name for fig in STUDIES} | {"tutorial"} | {f"tutorial_{path.name[:2]}" for path in TUTORIALS}
    unknown = sorted(wanted - known)
    if unknown:
        print(f"error: unknown figure {unknown[0]!r} (known: {', '.join(sorted(known))})", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    args.data.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    unreadable: dict[str, list[str]] = {}   # figure name -> its overlapping tick labels

    def save(figure: Any, name: str) -> None:
        save_figure(figure, args.out / f"{name}.png")
        overlaps = overlapping_tick_labels(figure)
        if overlaps:
            unreadable[name] = overlaps

    for fig in STUDIES:
        if wanted and fig.name not in wanted:
            continue
        clock = time.perf_counter()
        result = fig.run(args.quick)
        print(result.table())
        save(result.plot(), fig.name)
        result.save(args.data / f"{fig.name}.json")
        print(f"== {fig.name}.png ({result.verdict}, {time.perf_counter() - clock:.0f} s): {fig.command}\n")
    chosen = [path for path in TUTORIALS
              if not wanted or "tutorial" in wanted or f"tutorial_{path.name[:2]}" in wanted]
    if chosen:
        for path in chosen:
            clock = time.perf_counter()
            when = datetime.now(timezone.utc)
            figures, printed = tutorial_figures(path, args.quick)
            for name, figure in figures.items():
                save(figure, name)
            if not args.quick:   # the page shows what the full-size run printed
                record(path, printed, HERE, tutorial_provenance(when, time.perf_counter() - clock))
            print(f"== {path.name}: {', '.join(sorted(figures))} ({time.perf_counter() - clock:.0f} s)")
    print(f"done in {time.perf_counter() - started:.0f} s; figures in {args.out}")
    for name, overlaps in unreadable.items():
        print(f"{name}.png: tick labels overlap: {'; '.join(overlaps)}", file=sys.stderr)
    return 1 if unreadable else 0


if __name__ == "__main__":
    raise SystemExit(main())
