"""Side by side with the authors' published code: Marion et al.'s ``scaling-resnets`` and this package on the same cells.

The authors' repository (``PierreMarion23/scaling-resnets``) is never vendored, imported by the package or copied:
give a local checkout with ``--authors-dir`` and an interpreter that has its dependencies with
``--authors-python``. Their side runs in that interpreter, as a subprocess that imports their ``config``,
``utils``, ``models`` and the two experiment scripts and calls the scripts' own ``run_experiment`` (their figures'
code path, plots aside); this package's side calls :func:`limits.initialisation.measure_ratios`, the function behind
``python -m validation.regimes`` and ``python -m validation.phase``.

Cells (sizes below the paper's, stated in the JSON; flags change them):

* **fig1** (Figs. 1 and 3, i.i.d. weights): β ∈ {¼, ½, ¾, 1} × L ∈ {100, 300, 1000}, ``--iid-samples`` fresh
  networks per cell on each side (default 100).
* **fig4** (Figs. 4 and 5, smooth weights): β ∈ {½, 1, 2} × L ∈ {100, 300, 1000}, ``--smooth-samples`` networks
  (default 20; each of the authors' networks factorises two (L+1)² Gram matrices). The package runs both of its
  conventions (``smooth_weights``: ``values``, the paper's text, and ``increments``, the authors' code).
* **fig7** (Fig. 7, fractional weights): L = 1000, H ∈ {0.3, 0.5, 0.7, 0.9}, β ∈ {¼, ½, ¾, 1}, ``--fig7-networks``
  networks × 8 inputs (default 4 × 8). At the H of ``--exact-generator-at`` (default 0.9) the authors' code runs a
  second time with only ``utils.generate_fbm`` replaced by this package's exact Davies–Harte sampler
  (:class:`limits.fractional.FractionalNoise`, loaded from its file and wrapped to their signature in the
  subprocess; nothing of theirs is edited).
* **covariance**: the lag covariances of the authors' ``generate_fbm`` noise at H = 0.9, N = 1000 (``--fbm-paths``
  paths, default 2000), against the exact fGn autocovariance and the package's sampler, with the circulant
  eigenvalues λ₀, λ_N and the variance (λ₀ − λ_N)/2N of the alternating component (−1)^k ξ that their coefficient of
  the N-th eigen-component (√(λ₀/2N) where the method needs √(λ_N/2N)) adds.

Flag mapping (the authors' ``config.py`` → this package):

=====================================================  =====================================================
``FullResNet`` (res-3), ``width`` 40, ``ReLU``         ``Block("res3")``, ``width=40``
``dim_input`` 64, ``nb_classes`` 1                     ``n_in=64``, one output
``regularity {'type': 'iid'}``: U(±√(3/d))            ``IIDRegime("uniform")`` (the same law)
``regularity {'type': 'rbf', 'value': 0.01}``          ``SmoothRegime(0.1, ...)``: their kernel exp(−τ²/(2·0.01)) is ℓ = 0.1
``regularity {'type': 'fbm', 'value': H}``             ``FractionalRegime(H)``
``scaling`` β (α_L = L^{-β})                           ``betas``
``hidden_state_difference`` ‖h_L − h_0‖/‖h_0‖          r_h
``gradient_difference`` ‖∂ℒ/∂h_L − ∂ℒ/∂h_0‖/‖∂ℒ/∂h_L‖  r_p
``niter`` (a fresh network and input per draw)         ``networks``, ``inputs=1``
``niter_reg`` × ``niter_scaling`` (Fig. 7)             ``networks`` × ``inputs``
input x ~ U(0, 1)^64, A, B uniform                     x ~ N(0, I), A, B Gaussian (res-3 sees only h_0's direction)
float32 (their ``torch.Tensor``)                       float64 (statistics); float32 timed beside it
=====================================================  =====================================================

Statistics per cell and ratio (r_h, r_p): each side's median and mean (the paper plots means), the z-score of the
difference of the log₁₀ medians and of the means with bootstrap standard errors (networks resampled, their inputs
kept together), the ratio of the medians with a 95% bootstrap interval, the regime class of each β from the slope of
log median r on log L (``validation.core.regime_rule``: explosion > 0.15, identity < −0.15), and the wall time of
each side on one thread. Non-finite ratios (float32 overflow) count as +∞.

Usage::

    python benchmarks/against_authors.py --authors-dir ../scaling-resnets --authors-python ../authors-venv/bin/python --json /tmp/against_authors.json

The authors' side was set up here with ``python -m venv authors-venv && authors-venv/bin/pip install torch==2.13.0
numpy scipy pandas seaborn matplotlib pytorch-lightning`` (their ``requirements.txt`` pins 2022 versions that do
not install on Python 3.11; the versions used are recorded in the JSON). Exit 0 when the run completes, 2 when an
argument is bad or the checkout or the authors' dependencies are missing (one line says what, and how to install
it) — every argument is checked before the authors' side starts, and the committed
``benchmarks/results/against_authors.json`` is replaced only with ``--force`` — and 3 when the authors' side fails
or returns no result for a cell. Every finished
cell of the authors' side is kept in ``<json>.authors-cells.jsonl`` until the JSON is written: a run stopped
midway resumes there (each cell draws from its own seeds, so the numbers are those of an uninterrupted run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from limits.fractional import FractionalNoise, fgn_autocovariance  # noqa: E402
from limits.initialisation import Block, FractionalRegime, IIDRegime, SmoothRegime, measure_ratios  # noqa: E402
from limits.seeding import generator  # noqa: E402
from validation.core.hypothesis import finite_or_inf  # noqa: E402
from validation.core.regime_rule import TAU, classify, critical_beta, fit_slope
from validation.core.results import RunInfo, write_json  # noqa: E402

AUTHORS_FILES = ("config.py", "utils.py", "models.py", "experiment_scaling_initialization.py",
                 "experiment_regularity_and_scaling_initialization.py")
AUTHORS_MODULES = ("numpy", "torch", "pandas", "seaborn", "matplotlib", "pytorch_lightning")
LAGS = (0, 1, 2, 5, 50, 500)
FIG1 = dict(betas=(0.25, 0.5, 0.75, 1.0), depths=(100, 300, 1000))
FIG4 = dict(betas=(0.5, 1.0, 2.0), depths=(100, 300, 1000))
FIG7 = dict(betas=(0.25, 0.5, 0.75, 1.0), hursts=(0.3, 0.5, 0.7, 0.9), depth=1000, inputs=8)
BOOTSTRAP = 2000

#: the authors' side: reads a JSON job on stdin, writes one JSON line per cell on stdout (their prints go to stderr)
DRIVER = r'''
import contextlib, copy, importlib.util, json, math, sys, time, zlib
job = json.load(sys.stdin)
sys.path.insert(0, job["authors_dir"])
import numpy as np
import torch
torch.set_num_threads(1)
_rng = np.random.default_rng
_seeds = [np.random.SeedSequence(0)]

def seed_cell(name):
    """Every cell its own seeds (so a resumed run draws what a whole one does): torch's and numpy's global
    generators, and a child of one SeedSequence for each of their unseeded np.random.default_rng() calls."""
    cell_seed = zlib.crc32(f"{job['seed']}/{name}".encode())
    torch.manual_seed(cell_seed)
    np.random.seed(cell_seed)
    _seeds[0] = np.random.SeedSequence(cell_seed)

np.random.default_rng = lambda *a, **k: _rng(*a, **k) if (a or k) else _rng(_seeds[0].spawn(1)[0])
# the package's exact sampler, loaded from its file (numpy and torch only; the package itself is not installed here)
_spec = importlib.util.spec_from_file_location("package_fractional", job["package_dir"] + "/limits/fractional.py")
package_fractional = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(package_fractional)

def emit(record):
    sys.__stdout__.write(json.dumps(record) + "\n")
    sys.__stdout__.flush()

with contextlib.redirect_stdout(sys.stderr):
    import config, utils
    import experiment_scaling_initialization as scaling
    import experiment_regularity_and_scaling_initialization as regularity
    their_fbm = utils.generate_fbm
    for cell in job["cells"]:
        seed_cell(cell["name"])
        utils.generate_fbm = their_fbm
        if cell.get("exact_generator"):
            stream = torch.Generator().manual_seed(zlib.crc32(f"{job['seed']}/{cell['name']}/fgn".encode()))
            def exact_fbm(N, H):
                fgn = package_fractional.FractionalNoise(H, N, dtype=torch.float64).sample((), stream).numpy()
                return np.concatenate([[0.0], np.cumsum(fgn) * N ** (-H)]), fgn
            utils.generate_fbm = exact_fbm
        started = time.perf_counter()
        if cell["kind"] == "covariance":
            paths = np.array([utils.generate_fbm(cell["n"], cell["hurst"])[1].real for _ in range(cell["paths"])])
            n = cell["n"]
            emit({"name": cell["name"], "covariance": [float(np.mean(paths[:, : n - lag] * paths[:, lag:]))
                                                        for lag in cell["lags"]],
                  "seconds": time.perf_counter() - started})
            continue
        if cell["kind"] in ("iid", "smooth"):
            cfg = copy.deepcopy(config.scaling_initialization_exp_iid if cell["kind"] == "iid"
                                else config.scaling_initialization_exp_smooth)
            cfg["niter"] = cell["networks"]
            cfg["model-config"]["width"] = cell["width"]
            rows = scaling.run_experiment(cfg, [cell["beta"]], [cell["depth"]])
        else:
            cfg = copy.deepcopy(config.scaling_regularity_initialization_exp)
            cfg["niter_reg"], cfg["niter_scaling"] = cell["networks"], cell["inputs"]
            cfg["model-config"]["width"], cfg["model-config"]["depth"] = cell["width"], cell["depth"]
            rows = regularity.run_experiment(cfg, cell["betas"], [cell["hurst"]])
        emit({"name": cell["name"], "seconds": time.perf_counter() - started,
              "rows": [[r["scaling"], r["hidden_state_difference"], r["gradient_difference"]] for r in rows]})
'''


class Missing(Exception):
    """The authors' checkout or dependencies are not there (exit 2)."""


def check_authors(authors_dir: Path, python: str) -> dict[str, Any]:
    """The checkout's commit and the authors' interpreter's versions; :class:`Missing` says what is absent."""
    absent = [name for name in AUTHORS_FILES if not (authors_dir / name).is_file()]
    if absent:
        raise Missing(f"--authors-dir {authors_dir}: no {', '.join(absent)} there — give a checkout of "
                      "https://github.com/PierreMarion23/scaling-resnets")
    probe = ("import importlib, json, sys\nfound, missing = {}, []\n"
             f"for name in {AUTHORS_MODULES!r}:\n"
             "    try:\n        found[name] = importlib.import_module(name).__version__\n"
             "    except ImportError:\n        missing.append(name)\n"
             "print(json.dumps({'versions': found, 'missing': missing, 'python': sys.version.split()[0]}))")
    try:
        proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120)
    except OSError as exc:
        raise Missing(f"--authors-python {python}: cannot run it ({exc.strerror})") from None
    if proc.returncode != 0:
        raise Missing(f"--authors-python {python}: exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    found = json.loads(proc.stdout)
    if found["missing"]:
        packages = " ".join("pytorch-lightning" if m == "pytorch_lightning" else m for m in found["missing"])
        raise Missing(f"--authors-python {python} lacks {', '.join(found['missing'])}: install with "
                      f"`{python} -m pip install {packages}` (torch: torch==2.13.0 for the CPU build)")
    commit = subprocess.run(["git", "-C", str(authors_dir), "rev-parse", "HEAD"], capture_output=True, text=True)
    return {"dir": str(authors_dir), "commit": commit.stdout.strip() or None, "python": found["python"],
            "versions": found["versions"]}


def _cell_key(job: dict[str, Any], cell: dict[str, Any]) -> str:
    return json.dumps({"seed": job["seed"], "authors_dir": job["authors_dir"], **cell}, sort_keys=True)


def run_authors(job: dict[str, Any], python: str, cache: Path, on_cell) -> dict[str, dict[str, Any]]:
    """Run the authors' side of every cell in ``job`` in one subprocess; ``on_cell(record)`` as each ends. Each
    finished cell is appended to ``cache`` at once, and a cell found there (same settings) is not run again: an
    interrupted run resumes where it stopped (every cell draws from its own seeds)."""
    records: dict[str, dict[str, Any]] = {}
    if cache.exists():
        done = {}
        for line in cache.read_text().splitlines():
            entry = json.loads(line)
            done[entry["key"]] = entry["record"]
        for cell in job["cells"]:
            if _cell_key(job, cell) in done:
                records[cell["name"]] = done[_cell_key(job, cell)]
                on_cell({**records[cell["name"]], "cached": True})
    todo = [cell for cell in job["cells"] if cell["name"] not in records]
    if not todo:
        return records
    proc = subprocess.Popen([python, "-c", DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=job["authors_dir"],
                            env={**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"})
    proc.stdin.write(json.dumps({**job, "cells": todo}))
    proc.stdin.close()
    keys = {cell["name"]: _cell_key(job, cell) for cell in todo}
    with cache.open("a") as saved:
        for line in proc.stdout:
            record = json.loads(line)
            records[record["name"]] = record
            saved.write(json.dumps({"key": keys[record["name"]], "record": record}) + "\n")
            saved.flush()
            on_cell(record)
    if proc.wait() != 0:
        raise RuntimeError(f"the authors' side failed: {proc.stderr.read().strip()[-1500:]}")
    return records


def package_ratios(regime, depth: int, betas, networks: int, inputs: int, seed: int, label: tuple,
                   dtype: torch.dtype) -> tuple[dict[str, np.ndarray], float]:
    """r_h, r_p of shape (len(betas), networks, inputs) from the package, and the wall time."""
    started = time.perf_counter()
    res = measure_ratios(regime, depth, list(betas), networks, inputs, width=40, n_in=64, block=Block("res3"),
                         seed=seed, label=label, dtype=dtype)
    seconds = time.perf_counter() - started
    return {key: getattr(res, key).double().numpy() for key in ("r_h", "r_p")}, seconds


def _bootstrap(values: np.ndarray, statistic, rng: np.random.Generator) -> np.ndarray:
    """``statistic`` (a numpy reduction taking ``axis``) of ``BOOTSTRAP`` resamples of the rows (networks) of
    ``values`` (networks, inputs), all resamples in one call."""
    picks = rng.integers(0, values.shape[0], size=(BOOTSTRAP, values.shape[0]))
    return statistic(values[picks].reshape(BOOTSTRAP, -1), axis=1)


def compare(authors: np.ndarray, package: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    """Both sides' medians and means of one ratio, arrays of shape (networks, inputs): z-scores of the log₁₀ medians
    and of the means (bootstrap standard errors), the ratio of the medians with its 95% interval."""
    a, b = finite_or_inf(authors), finite_or_inf(package)
    out: dict[str, Any] = {"authors": {}, "package": {}}
    boots = {}
    for side, values in (("authors", a), ("package", b)):
        logs = np.log10(values)
        with np.errstate(invalid="ignore", over="ignore"):     # overflowed ratios: inf, and an inf spread
            median_boot = _bootstrap(logs, np.median, rng)
            mean_boot = _bootstrap(values, np.mean, rng)
        boots[side] = median_boot
        with np.errstate(invalid="ignore", over="ignore"):
            out[side] = {"median": float(np.median(values)), "mean": float(np.mean(values)),
                         "log10_median": float(np.median(logs)), "non_finite": int(np.sum(~np.isfinite(values))),
                         "n": int(values.size), "se_log10_median": float(np.std(median_boot)),
                         "se_mean": float(np.std(mean_boot))}

    def z(key: str, se: str) -> float | None:
        x, y = out["authors"][key], out["package"][key]
        spread = math.hypot(out["authors"][se], out["package"][se])
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(spread)) or spread == 0:
            return None
        return (x - y) / spread

    out["z_log10_median"] = z("log10_median", "se_log10_median")
    out["z_mean"] = z("mean", "se_mean")
    difference = boots["authors"] - boots["package"]
    finite = np.isfinite(difference)
    out["median_ratio"] = (10 ** (out["authors"]["log10_median"] - out["package"]["log10_median"])
                           if finite.all() else None)
    out["median_ratio_ci"] = (10 ** np.percentile(difference, [2.5, 97.5])).tolist() if finite.all() else None
    return out


def classes(depths, ratios: np.ndarray, betas, seed: int) -> dict[str, Any]:
    """Per β: the slope of log median r on log L and its class; the critical β (zero of the slope)."""
    slopes = [fit_slope(list(depths), ratios[:, j], seed=seed)["slope"] for j in range(len(betas))]
    return {"slopes": slopes, "classes": [classify(s, TAU) for s in slopes],
            "critical_beta": critical_beta(list(betas), slopes)}


#: the committed result file: overwritten only with ``--force``
COMMITTED_JSON = ROOT / "benchmarks" / "results" / "against_authors.json"
#: the largest network count per cell a run may ask for (the default full run uses 100; 10⁶ is hours per cell)
MAX_NETWORKS = 1_000_000


class _OneLineParser(argparse.ArgumentParser):
    """argparse, with a bad flag reported in one line (exit 2), like the studies' command lines."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _interpreter(text: str) -> str:
    """``--authors-python`` as an absolute path: the authors' side runs in their folder, where a relative path
    (which the probe here still found) means something else."""
    if os.sep in text or (os.altsep and os.altsep in text):
        return str(Path(text).resolve())
    found = shutil.which(text)
    return found if found is not None else text


def _argument_problem(args: argparse.Namespace) -> str | None:
    """The first bad argument, in one line (None: all can run) — checked before the authors' side starts."""
    wanted = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = sorted(set(wanted) - {"fig1", "fig4", "fig7", "covariance"})
    if unknown or not wanted:
        return f"--cells: {unknown or wanted} (allowed: fig1, fig4, fig7, covariance)"
    sizes = {"--iid-samples": args.iid_samples, "--smooth-samples": args.smooth_samples,
             "--fig7-networks": args.fig7_networks, "--fbm-paths": args.fbm_paths}
    for flag, value in sizes.items():
        if not 2 <= value <= MAX_NETWORKS:
            return f"{flag}: {value} is out of range (allowed: 2 to {MAX_NETWORKS})"
    if not 0 <= args.seed <= 2**63 - 1:
        return f"--seed: {args.seed} is out of range (allowed: 0 to 2^63 − 1)"
    if not 0 < args.exact_generator_at < 1:
        return f"--exact-generator-at: {args.exact_generator_at:g} is out of range (allowed: 0 < H < 1)"
    target = args.json.resolve()
    if not target.parent.is_dir():
        return f"--json {args.json}: the folder {target.parent} does not exist"
    if target == COMMITTED_JSON and not args.force:
        return (f"--json {args.json} is the committed result: give another path, or --force to replace it")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = _OneLineParser(prog="python benchmarks/against_authors.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors-dir", type=Path, required=True, help="a checkout of PierreMarion23/scaling-resnets")
    parser.add_argument("--authors-python", default=sys.executable,
                        help="the interpreter with the authors' dependencies (default: this one)")
    parser.add_argument("--cells", default="fig1,fig4,fig7,covariance",
                        help="which comparisons, comma-separated from fig1, fig4, fig7, covariance (default: all)")
    parser.add_argument("--iid-samples", type=int, default=100, help="networks per (β, L) cell for fig1 (default 100)")
    parser.add_argument("--smooth-samples", type=int, default=20, help="networks per (β, L) cell for fig4 (default 20)")
    parser.add_argument("--fig7-networks", type=int, default=4, help="networks per H for fig7, 8 inputs each (default 4)")
    parser.add_argument("--exact-generator-at", type=float, default=0.9,
                        help="the H at which fig7 also runs the authors' code with an exact fGn generator (default 0.9)")
    parser.add_argument("--fbm-paths", type=int, default=2000, help="paths for the covariance evidence (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of both sides (default 0)")
    parser.add_argument("--json", type=Path, default=COMMITTED_JSON,
                        help="where to write the result (default benchmarks/results/against_authors.json, the "
                             "committed file: replacing it needs --force)")
    parser.add_argument("--force", action="store_true", help="allow --json to replace the committed result")
    args = parser.parse_args(argv)
    problem = _argument_problem(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    wanted = [c.strip() for c in args.cells.split(",") if c.strip()]
    args.authors_python = _interpreter(args.authors_python)
    try:
        authors = check_authors(args.authors_dir.resolve(), args.authors_python)
    except Missing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    started = datetime.now(timezone.utc)
    clock = time.perf_counter()
    cells: list[dict[str, Any]] = []
    common = {"width": 40}
    if "fig1" in wanted:
        cells += [{"name": f"fig1/beta{b}/L{L}", "kind": "iid", "beta": b, "depth": L, "networks": args.iid_samples,
                   **common} for b in FIG1["betas"] for L in FIG1["depths"]]
    if "fig4" in wanted:
        cells += [{"name": f"fig4/beta{b}/L{L}", "kind": "smooth", "beta": b, "depth": L,
                   "networks": args.smooth_samples, **common} for b in FIG4["betas"] for L in FIG4["depths"]]
    if "fig7" in wanted:
        for hurst in FIG7["hursts"]:
            for exact in (False, True) if abs(hurst - args.exact_generator_at) < 1e-12 else (False,):
                cells.append({"name": f"fig7/H{hurst}" + ("/exact-generator" if exact else ""), "kind": "fbm",
                              "hurst": hurst, "betas": list(FIG7["betas"]), "depth": FIG7["depth"],
                              "networks": args.fig7_networks, "inputs": FIG7["inputs"], "exact_generator": exact,
                              **common})
    if "covariance" in wanted:
        cells.append({"name": "covariance", "kind": "covariance", "hurst": 0.9, "n": 1000, "paths": args.fbm_paths,
                      "lags": list(LAGS)})
    job = {"authors_dir": authors["dir"], "package_dir": str(ROOT), "seed": args.seed, "cells": cells}
    print(f"authors' side: {len(cells)} cells in {args.authors_python} (one thread) …", flush=True)
    cache = args.json.with_name(args.json.name + ".authors-cells.jsonl")
    try:
        records = run_authors(job, args.authors_python, cache, lambda r: print(
            f"  {r['name']}: {r['seconds']:.1f} s" + (" (from the cache of an interrupted run)" if r.get("cached") else ""),
            flush=True))
    except (RuntimeError, json.JSONDecodeError) as exc:
        print(f"error: {' '.join(str(exc).split())[:600]}", file=sys.stderr)
        return 3
    missing = [cell["name"] for cell in cells if cell["name"] not in records]
    if missing:
        print(f"error: the authors' side returned no result for {len(missing)} of {len(cells)} cells (first: "
              f"{missing[0]}); nothing was written", file=sys.stderr)
        return 3
    rng = np.random.default_rng(args.seed)
    result: dict[str, Any] = {}

    def sweep(figure: str, regime_for, conventions, betas, depths, networks) -> dict[str, Any]:
        table: dict[str, Any] = {"cells": [], "classes": {}}
        authors_r = {k: np.empty((len(depths), len(betas), networks)) for k in ("r_h", "r_p")}
        package_r = {c: {k: np.empty((len(depths), len(betas), networks)) for k in ("r_h", "r_p")} for c in conventions}
        for i, L in enumerate(depths):
            timings = {}
            for c in conventions:
                ratios, timings[c] = package_ratios(regime_for(c), L, betas, networks, 1, args.seed,
                                                    ("against-authors", figure), torch.float64)
                _, timings[f"{c}, float32"] = package_ratios(regime_for(c), L, betas, networks, 1, args.seed,
                                                             ("against-authors", figure), torch.float32)
                for k in ("r_h", "r_p"):
                    package_r[c][k][i] = ratios[k][:, :, 0]
            for j, beta in enumerate(betas):
                record = records[f"{figure}/beta{beta}/L{L}"]
                rows = np.array(record["rows"], dtype=float)
                for index, k in ((1, "r_h"), (2, "r_p")):
                    authors_r[k][i, j] = rows[:, index]
                table["cells"].append({
                    "beta": beta, "depth": L, "seconds": {"authors": record["seconds"],
                                                          **{f"package ({c})": t / len(betas) for c, t in timings.items()}},
                    **{f"{k} ({c})": compare(authors_r[k][i, j][:, None], package_r[c][k][i, j][:, None], rng)
                       for c in conventions for k in ("r_h", "r_p")}})
        for k in ("r_h", "r_p"):
            table["classes"][k] = {"authors": classes(depths, authors_r[k], betas, args.seed),
                                   **{f"package ({c})": classes(depths, package_r[c][k], betas, args.seed)
                                      for c in conventions}}
        return table

    if "fig1" in wanted:
        result["fig1"] = sweep("fig1", lambda c: IIDRegime("uniform"), ("iid",), FIG1["betas"], FIG1["depths"],
                               args.iid_samples)
    if "fig4" in wanted:
        result["fig4"] = sweep("fig4", lambda c: SmoothRegime(0.1, c), ("values", "increments"), FIG4["betas"],
                               FIG4["depths"], args.smooth_samples)
    if "fig7" in wanted:
        rows_out = []
        for hurst in FIG7["hursts"]:
            ratios, seconds = package_ratios(FractionalRegime(hurst), FIG7["depth"], FIG7["betas"], args.fig7_networks,
                                             FIG7["inputs"], args.seed, ("against-authors", "fig7"), torch.float64)
            _, seconds32 = package_ratios(FractionalRegime(hurst), FIG7["depth"], FIG7["betas"], args.fig7_networks,
                                          FIG7["inputs"], args.seed, ("against-authors", "fig7"), torch.float32)
            for suffix in ("", "/exact-generator"):
                record = records.get(f"fig7/H{hurst}{suffix}")
                if record is None:
                    continue
                rows = np.array(record["rows"], dtype=float)
                for j, beta in enumerate(FIG7["betas"]):
                    mine = rows[rows[:, 0] == beta]           # network by network, its inputs in order
                    theirs = {k: mine[:, index].reshape(args.fig7_networks, FIG7["inputs"])
                              for index, k in ((1, "r_h"), (2, "r_p"))}
                    rows_out.append({"hurst": hurst, "beta": beta, "authors_generator": "exact" if suffix else "theirs",
                                     "seconds": {"authors": record["seconds"] / len(FIG7["betas"]),
                                                 "package (float64)": seconds / len(FIG7["betas"]),
                                                 "package (float32)": seconds32 / len(FIG7["betas"])},
                                     **{k: compare(theirs[k], ratios[k][j], rng) for k in ("r_h", "r_p")}})
        result["fig7"] = rows_out
    if "covariance" in wanted:
        n, hurst = 1000, 0.9
        first_row = fgn_autocovariance(hurst, n)
        circulant = np.concatenate([first_row, [0.0], first_row[1:][::-1]])
        eigen = np.fft.fft(circulant).real
        noise = FractionalNoise(hurst, n, dtype=torch.float64).sample(args.fbm_paths,
                                                                      generator(args.seed, "against-authors")).numpy()
        result["covariance"] = {
            "hurst": hurst, "n": n, "paths": args.fbm_paths, "lags": list(LAGS),
            "exact": fgn_autocovariance(hurst, np.array(LAGS)).tolist(),
            "authors": records["covariance"]["covariance"],
            "package": [float(np.mean(noise[:, : n - lag] * noise[:, lag:])) for lag in LAGS],
            "lambda_0": float(eigen[0]), "lambda_n": float(eigen[n]),
            "alternating_variance": float((eigen[0] - eigen[n]) / (2 * n)),
            "note": "the authors' wk[N] = sqrt(lk[0]/(2N)) V_N: with lk[N] the embedding is exact; the difference adds "
                    "(-1)^k xi of variance (lambda_0 - lambda_N)/2N to every sequence",
        }
    seconds = time.perf_counter() - clock
    info = RunInfo.capture(seed=args.seed, dtype="float64", device="cpu", started=started, wall_time_s=seconds,
                           command="python benchmarks/against_authors.py " + " ".join(argv or sys.argv[1:]))
    payload = {"benchmark": "against_authors", "run": info.to_dict(), "authors": authors,
               "sizes": {"fig1": {**FIG1, "networks": args.iid_samples},
                         "fig4": {**FIG4, "networks": args.smooth_samples, "lengthscale": 0.1},
                         "fig7": {**FIG7, "networks": args.fig7_networks,
                                  "exact_generator_at": args.exact_generator_at}},
               "bootstrap": BOOTSTRAP, **result}
    write_json(args.json, payload)
    cache.unlink(missing_ok=True)
    _print_summary(payload)
    print(f"wrote {args.json} ({seconds:.0f} s)")
    return 0


def _fmt(value: float | None, spec: str = ".2f") -> str:
    return "—" if value is None else format(value, spec)


def _print_summary(payload: dict[str, Any]) -> None:
    """One line per cell: the log₁₀ medians of both sides and their z."""
    for figure in ("fig1", "fig4"):
        if figure not in payload:
            continue
        print(f"\n{figure}: log10 median r_h, r_p (authors | package) and z")
        for cell in payload[figure]["cells"]:
            parts = []
            for key, value in cell.items():
                if key.startswith("r_"):
                    parts.append(f"{key}: {value['authors']['log10_median']:+.2f} | {value['package']['log10_median']:+.2f}"
                                 f" z {_fmt(value['z_log10_median'], '+.1f')}")
            print(f"  β {cell['beta']:<5g} L {cell['depth']:<5d} " + "; ".join(parts))
        for key, sides in payload[figure]["classes"].items():
            print(f"  classes {key}: " + "; ".join(f"{side} {c['classes']} β_c {_fmt(c['critical_beta'], '.3f')}"
                                                   for side, c in sides.items()))
    for row in payload.get("fig7", []):
        print(f"fig7 H {row['hurst']} β {row['beta']:<5g} ({row['authors_generator']:>5} generator): " + "; ".join(
            f"{k}: {row[k]['authors']['log10_median']:+.2f} | {row[k]['package']['log10_median']:+.2f} "
            f"z {_fmt(row[k]['z_log10_median'], '+.1f')}" for k in ("r_h", "r_p")))
    if "covariance" in payload:
        c = payload["covariance"]
        print("covariance at H 0.9, lags", c["lags"])
        for side in ("exact", "authors", "package"):
            print(f"  {side:>8}: " + " ".join(f"{v:.3f}" for v in c[side]))
        print(f"  (λ0 − λN)/2N = {c['alternating_variance']:.3f}")


if __name__ == "__main__":
    raise SystemExit(main())
