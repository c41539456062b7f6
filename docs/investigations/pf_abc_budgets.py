"""pf-abc over seeds, simulation budgets and data sets: when does SR_tanh's ABC posterior beat EO_tanh's?

**What.** ``python -m validation.figures --figure pf-abc`` (Peluchetti & Favaro 2020, App. B.1) runs ABC
rejection with two priors over functions z ↦ x_{T,1}(z): SR_tanh (stable ResNet, σ_w² = σ_b² = 10, D = 32,
L = 64, x_0 = W_I z) and EO_tanh (edge-of-chaos net, 48 × 100). Its docs drew a claim about the simulation budget
from one data set and one seed. This script measures the figure's own statistic and verdict for several seeds,
budgets N and data sets:

* A: the figure's default bump (−1.5, −1), (0, 1), (1.5, −1) — targets small against SR's prior SD (≈ 6 at the
  data) and comparable to EO's (≈ 0.71);
* B: the same bump scaled to ±5, (−1.5, −5), (0, 5), (1.5, −5) — inside SR's prior range, far outside EO's;
* C: the constant 0.5 at the same inputs — a function EO's nearly constant draws can fit (a control).

**The draws.** Each prior is simulated once per seed, ``max(--budgets)`` draws, with the package's own
:func:`validation.figures.pf_models.resnet_outputs` and :func:`~validation.figures.pf_models.eoc_outputs` and the figure's resolved
settings (:func:`validation.figures._resolve`), so draw i is network i of ``python -m validation.figures --figure
pf-abc --seed S --draws N`` for every N > i: each draw reads its own stream (seed, "figures", "pf-resnet" or
"pf-eoc", "tanh", i), so its value does not depend on how many are drawn, and budget N is evaluated on the first N
draws. The script checks this (``prefix_check`` in the JSON: a separate run of the smallest budget equals the
prefix bit for bit). The networks are evaluated at the data's inputs z = −1.5, 0, 1.5 only; the figure also
evaluates them on its 100-point plotting grid in the same batch, which changes the floating-point values by about
1e-14 (matrix products of another shape), not the statistic's printed digits (``figure_check`` in the JSON, against
the figure command's own JSON, when ``--figure-json`` is given); ``--full-grid`` evaluates on the figure's inputs
exactly, at about 2–3× the time.

**The decision rule** (exactly :func:`validation.figures.catalogue.pf_abc.abc_figure`'s). Data (z_j, y_j), j = 1…3; draw i of
model M gives f_i^M, with distance d_i^M = (Σ_j (f_i^M(z_j) − y_j)²)^{1/2} (+∞ when not finite). With budget N
and k = 10 accepted, m_M = the mean of the k smallest of d_0^M … d_{N−1}^M (the mean accepted l2 distance), and

    T_N = log(m_SR / m_EO).

Its 95% interval is the percentile bootstrap of :func:`validation.core.stats.resampled_interval`: 1000 resamples of N
row indices drawn with replacement (the same rows for both models: draw i of SR and of EO are independent, so
pairing them changes nothing) from the generator ``stream_seed(seed, "figures", "bootstrap", "pf-abc")``, T
recomputed on each, the 2.5% and 97.5% quantiles. Verdict (:func:`validation.core.checks.bound_check`): PASS when the
upper end is ≤ 0 (SR's posterior is closer to the data), FAIL when the lower end is > 0, INCONCLUSIVE when the
interval contains 0. The bootstrap of a mean of extreme order statistics is only a guide; the spread over seeds
(independent replications) is the check on it.

**Run** (from the repository root, with the package's virtual environment)::

    python docs/investigations/pf_abc_budgets.py                       # seeds 0-4, N = 400 … 10 000
    python docs/investigations/pf_abc_budgets.py --seeds 0,1,2 --budgets 400,2000,10000
    python docs/investigations/pf_abc_budgets.py --quick                # seed 0, N = 100, 200, 400 (a smoke test)
    python -m validation.figures --figure pf-abc --seed 0 --draws 2000 --json fig.json
    python docs/investigations/pf_abc_budgets.py --figure-json fig.json # and compare seed 0, N = 2000, data A

It prints progress, a table (data set × budget: verdicts over seeds, median T), and writes
``benchmarks/results/pf_abc_budgets.json`` (``--json``; written whole, through a temporary file; ``--quick`` writes
nothing unless ``--json`` is given). ``--cache DIR``
keeps each seed's draws (an .npz per seed) so that a rerun with other data sets or budgets does not simulate again.

**How long.** One thread, float64, CPU: about 140 CPU-seconds per seed at 10 000 draws of both priors at three
inputs (EO's 100 layers are most of it), 3–7 min of wall time per seed on a loaded 2-core machine; the bootstraps
(1000 resamples × 15 cells per seed) and the prefix check add about 30 s in all. Seeds 0–4 took 12 CPU-minutes.
``--quick`` takes about 20 s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from limits.seeding import stream_seed  # noqa: E402
from validation.core.checks import bound_check  # noqa: E402
from validation.figures.study import FiguresSettings, _resolve  # noqa: E402
from validation.figures.catalogue.pf_abc import DEFAULT_DATA, _accept  # noqa: E402
from validation.figures.pf_models import eoc_outputs, resnet_outputs  # noqa: E402
from validation.core.results import RunInfo, to_jsonable, utc_now  # noqa: E402
from validation.core.settings import make_settings  # noqa: E402
from validation.core.stats import resampled_interval  # noqa: E402

INPUTS = (-1.5, 0.0, 1.5)
DATA_SETS = {
    "A": {"label": "default bump, ±1", "y": tuple(y for _, y in DEFAULT_DATA)},
    "B": {"label": "bump scaled to ±5 (inside SR's prior range)", "y": (-5.0, 5.0, -5.0)},
    "C": {"label": "constant 0.5 (EO can fit it)", "y": (0.5, 0.5, 0.5)},
}
MODELS = ("SR_tanh", "EO_tanh")


class _NoBar:
    def update(self, n: int) -> None:
        pass


def settings(seed: int, draws: int):
    """The figure's resolved settings, as ``python -m validation.figures --figure pf-abc --seed S --draws N``."""
    return _resolve("pf-abc", make_settings(FiguresSettings, None, {"seed": seed, "draws": draws}))


def simulate(seed: int, draws: int, full_grid: bool, device: torch.device) -> dict[str, np.ndarray]:
    """Both priors' values at the data inputs, (draws, 3) each: the package's functions, the figure's settings."""
    s = settings(seed, draws)
    z = np.asarray(INPUTS)
    if full_grid:  # the figure's own input vector: its plotting grid, then the data's inputs
        z = np.concatenate([np.linspace(-2.0, 2.0, s.inputs), z])
    sr, _ = resnet_outputs(s, "tanh", z, draws, None, device, _NoBar())
    eo, _ = eoc_outputs(s, "tanh", z, draws, device, _NoBar())
    return {"SR_tanh": sr[:, -len(INPUTS):], "EO_tanh": eo[:, -len(INPUTS):]}


def statistic(values: dict[str, np.ndarray], targets: np.ndarray, seed: int, n: int) -> dict:
    """abc_figure's log ratio, interval and verdict on the first ``n`` draws."""
    s = settings(seed, n)
    distances = {name: _accept(values[name][:n], targets, s.accepted)[0] for name in MODELS}
    accepted_means = {}
    for name in MODELS:
        order = np.argsort(distances[name], kind="stable")[: s.accepted]
        accepted_means[name] = float(distances[name][order].mean())
    rng = np.random.default_rng(stream_seed(s.seed, "figures", "bootstrap", "pf-abc"))

    def log_ratio(rows: np.ndarray) -> float:  # as in abc_figure
        means = [np.sort(distances[name][rows])[: s.accepted].mean() for name in MODELS]
        return float(math.log(means[0] / means[1])) if means[1] > 0 and np.isfinite(means).all() else math.nan

    point = log_ratio(np.arange(n))
    low, high = resampled_interval(log_ratio, n, s.resamples, rng)
    check = bound_check("SR_tanh's accepted draws lie closer to the data than EO_tanh's", (low, high), 0.0,
                        at_most=True, detail="")
    return {"draws": n, "log_ratio": point, "ci95": [low, high], "verdict": check.verdict,
            "mean_accepted_distance": accepted_means,
            "nonfinite_draws": {name: int((~np.isfinite(distances[name])).sum()) for name in MODELS}}


def write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        json.dump(to_jsonable(payload), handle, indent=1)
        handle.write("\n")
    os.chmod(tmp, 0o644)  # mkstemp's 0600 is not a results file's mode
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0,1,2,3,4", help="comma list (default 0,1,2,3,4)")
    p.add_argument("--budgets", default="400,1000,2000,5000,10000", help="comma list of draws N per prior")
    p.add_argument("--data-sets", default="A,B,C", help="comma list of A, B, C (module docstring)")
    p.add_argument("--quick", action="store_true", help="seed 0, budgets 100,200,400 (a smoke test)")
    p.add_argument("--full-grid", action="store_true", help="evaluate on the figure's grid + data inputs (bitwise)")
    p.add_argument("--figure-json", type=Path, help="the figure command's JSON for seed 0 (or --seeds' first), "
                                                    "2000 draws: compare data A's statistic with it")
    p.add_argument("--cache", type=Path, help="a folder for each seed's draws (.npz), reused when present")
    p.add_argument("--json", type=Path, default=None,
                   help="output (default benchmarks/results/pf_abc_budgets.json; --quick writes none unless given)")
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    seeds = [0] if a.quick else [int(v) for v in a.seeds.split(",")]
    budgets = sorted([100, 200, 400] if a.quick else [int(v) for v in a.budgets.split(",")])
    names = [v.strip() for v in a.data_sets.split(",")]
    torch.set_num_threads(a.threads)
    device = torch.device("cpu")
    largest = budgets[-1]
    started, clock = utc_now(), time.perf_counter()
    command = "python " + " ".join([os.path.relpath(__file__, ROOT)] + (sys.argv[1:] if argv is None else argv))

    rows, priors, timings = [], {}, {}
    for seed in seeds:
        t0 = time.perf_counter()
        cache = a.cache / f"pf_abc_seed{seed}_N{largest}{'_grid' if a.full_grid else ''}.npz" if a.cache else None
        if cache is not None and cache.exists():
            loaded = np.load(cache)
            values = {name: loaded[name] for name in MODELS}
            # the simulation's own wall time, recorded in the cache when it ran
            timings[seed] = float(loaded["seconds"]) if "seconds" in loaded else None
            print(f"seed {seed}: {largest} draws per prior from {cache}", flush=True)
        else:
            print(f"seed {seed}: simulating {largest} draws per prior ...", flush=True)
            values = simulate(seed, largest, a.full_grid, device)
            timings[seed] = time.perf_counter() - t0
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                np.savez(cache, seconds=timings[seed], **values)
        if seed == seeds[0]:
            first = values
        priors[seed] = {name: {"sd_at_data": np.std(values[name][np.all(np.isfinite(values[name]), 1)], 0).tolist(),
                               "mean_at_data": np.mean(values[name][np.all(np.isfinite(values[name]), 1)], 0).tolist()}
                        for name in MODELS}
        print(f"  simulation {timings[seed] or math.nan:.0f} s; prior SD at the data: "
              + "; ".join(f"{n} " + ", ".join(f"{v:.3g}" for v in priors[seed][n]["sd_at_data"]) for n in MODELS),
              flush=True)
        for key in names:
            targets = np.asarray(DATA_SETS[key]["y"])
            for n in budgets:
                r = statistic(values, targets, seed, n)
                rows.append({"data_set": key, "seed": seed, **r})
                print(f"  data {key} N={n:>6}: log(SR/EO) = {r['log_ratio']:+.3f} [{r['ci95'][0]:+.3f}, "
                      f"{r['ci95'][1]:+.3f}] {r['verdict']}", flush=True)

    # prefix check: a separate simulation of the smallest budget equals the first draws of the largest
    prefix = None
    if len(budgets) > 1:
        seed, n = seeds[0], budgets[0]
        print(f"prefix check: seed {seed}, a separate run of {n} draws ...", flush=True)
        again = simulate(seed, n, a.full_grid, device)
        prefix = {"seed": seed, "draws": n, "largest": largest,
                  "bitwise_equal": {name: bool(np.array_equal(again[name], first[name][:n])) for name in MODELS}}
        print(f"  prefix bitwise equal: {prefix['bitwise_equal']}", flush=True)

    figure_check = None
    if a.figure_json is not None:
        fig = json.loads(a.figure_json.read_text())
        numbers = fig.get("result", fig)
        ratio = numbers["log_distance_ratio"]
        fig_seed = fig.get("run", {}).get("seed", seeds[0])
        mine = next((r for r in rows if r["data_set"] == "A" and r["seed"] == fig_seed and r["draws"] == numbers["draws"]),
                    None)
        if mine is not None:
            figure_check = {"seed": fig_seed, "draws": numbers["draws"], "figure": [ratio["value"], *ratio["ci95"]],
                            "here": [mine["log_ratio"], *mine["ci95"]],
                            "max_abs_difference": max(abs(u - v) for u, v in zip([ratio["value"], *ratio["ci95"]],
                                                                                 [mine["log_ratio"], *mine["ci95"]]))}
            print(f"figure check (seed {fig_seed}, N {numbers['draws']}, data A): figure {figure_check['figure']}, "
                  f"here {figure_check['here']}, max |difference| {figure_check['max_abs_difference']:.2e}", flush=True)

    # summary: per data set and budget, the verdicts over seeds and the median statistic
    summary = []
    for key in names:
        for n in budgets:
            sel = [r for r in rows if r["data_set"] == key and r["draws"] == n]
            counts = {v: sum(r["verdict"] == v for r in sel) for v in ("PASS", "INCONCLUSIVE", "FAIL")}
            summary.append({"data_set": key, "draws": n, "seeds": len(sel), **{k.lower(): c for k, c in counts.items()},
                            "median_log_ratio": float(np.median([r["log_ratio"] for r in sel])),
                            "log_ratios": [r["log_ratio"] for r in sel]})
    wall = time.perf_counter() - clock
    print(f"\n{'data':<5}{'N':>7} | {'PASS/INC/FAIL over seeds':>25} | {'median log(SR/EO)':>18} | per seed")
    for r in summary:
        per = " ".join(f"{v:+.2f}" for v in r["log_ratios"])
        print(f"{r['data_set']:<5}{r['draws']:>7} | {r['pass']:>9} / {r['inconclusive']} / {r['fail']:<9} | "
              f"{r['median_log_ratio']:>+18.3f} | {per}")
    print(f"wall time {wall:.0f} s")

    info = RunInfo.capture(seed=seeds[0], dtype="float64", device=device, started=started, wall_time_s=wall,
                           command=command).to_dict()
    payload = {
        "what": "pf-abc (P&F 2020 App. B.1) ABC statistic log(mean accepted l2 distance SR_tanh / EO_tanh) over seeds, "
                "simulation budgets (the first N draws of one simulation per seed) and data sets",
        "rule": "k = 10 accepted; 95% percentile bootstrap, 1000 resamples, stream (seed, figures, bootstrap, pf-abc); "
                "PASS when the upper end <= 0, FAIL when the lower end > 0, else INCONCLUSIVE",
        "settings": {k: v for k, v in vars(settings(seeds[0], largest)).items()
                     if k in ("width", "depth", "sigma_w", "sigma_b", "input_layer", "eoc_width", "eoc_depth",
                              "eoc_sigma_b", "accepted", "resamples", "dtype")},
        "inputs": list(INPUTS), "full_grid": a.full_grid,
        "data_sets": {k: {"label": DATA_SETS[k]["label"], "points": [[z, y] for z, y in zip(INPUTS, DATA_SETS[k]["y"])]}
                      for k in names},
        "seeds": seeds, "budgets": budgets, "prior_at_data": priors, "simulate_seconds": timings,
        "prefix_check": prefix, "figure_check": figure_check, "summary": summary, "rows": rows, "run_info": info,
    }
    out = a.json if a.json is not None or a.quick else ROOT / "benchmarks/results/pf_abc_budgets.json"
    if out is not None:
        write_json(out, payload)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
