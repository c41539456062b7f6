"""The (H, β) phase diagram of Marion et al. Fig. 7: res-3 with fractional weights at initialisation.

    python -m validation.phase                       # paper resolution: 51 H × 70 β, L = 1000, d = 40
    python -m validation.phase --hursts 0.1,0.5,0.9 --betas 0.2:1.3:23 --networks 4   # a quick look

For each Hurst index H, every network draws its weights once (each entry's layer sequence an
independent unit-variance fGn, :class:`limits.initialisation.FractionalRegime`) and runs *every* β and
every input at once (batched columns), forward and backward: per cell the median over
networks × inputs of log10 r_h = log10(‖h_L − h_0‖/‖h_0‖) and log10 r_p = log10(‖p_0 − p_L‖/‖p_L‖).

**Critical β(H)**, two measurements, both drawn:

* *depth invariance* (the definition of the critical scaling: r neither grows nor vanishes with L):
  a second depth L' = L/4 is run with its own weights, and β_c(H) is the zero of the local slope
  s(β) = [log median r(L) − log median r(L')]/log(L/L'), interpolated linearly in β. For i.i.d.
  weights (H = ½) this is unbiased to O(1/L): E r_h² = (1 + L^{-2β}/2)^L − 1 is flat in L at β = ½.
* *level crossing*: the β at which median r(L) = 1 (the paper's "black zone" ‖h_L − h_0‖ ≈ ‖h_0‖).
  This depends on the O(1) constant in r ≈ c·L^{H−β} and is biased by log(c)/log(L) at finite L.

Predictions (docs/theory.md §5): β_c = H for H ∈ (½, 1), β_c = ½ for H < ½.

**Explosions.** float32 (the default here, for speed: the run is bound by small batched GEMMs and
random numbers, both ~2× faster than float64, and differences h_k − h_0 are accumulated so r ~ 1e-5
keeps ~6 digits) overflows at 3.4e38. Every non-finite sample is counted; it enters the median as +∞,
and a cell whose median is +∞ is drawn as "overflow", not as a number, so the colour scale (fixed,
clipped at ±``--vmax`` with arrows) is never set by explosions.

**Check**, three-valued as every check: the mean |β_c − prediction| of r_h's depth-invariance β_c(H), over the H
whose prediction lies inside the β grid, with its 95% interval over 200 resamples of the networks (each H column
and depth resampled on its own; a resample that cannot locate an H's β_c counts it as +∞). PASS when the interval
lies within ``--tolerance``, FAIL when it lies wholly above it and the mean deviation beyond noise (the mean over H
of the distance from the prediction to H's own 95% interval of β_c over the same resamples) exceeds it too (or no
resample locates β_c where the run does not), INCONCLUSIVE otherwise, with the number of networks that would settle
it: too few networks never read as a wrong β_c. (The mean |β̂_c − prediction| is biased upward by β̂_c's noise, and
the resamples add more: 2 networks × 2 inputs on the default H grid read 0.074 [0.067, 0.089], 0.016 beyond noise.) The gradient ratio r_p is reported, not checked: at finite depth and width its critical β lags H
for H ∈ (½, 0.75) (measured and explained in docs/results/regimes.md).

Workers are processes that end with their parent (and ignore Ctrl-C, which the parent handles).

Python: ``validation.phase.run(hursts=(0.3, 0.6, 0.9), networks=4)`` returns a :class:`PhaseResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 4 INCONCLUSIVE.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.fractional import check_hurst
from limits.initialisation import Block, FractionalRegime, measure_ratios, ratio_chunk
from limits.seeding import stream_seed
from validation.core import cli, runtime
from limits.regime_theory import fractional_critical_beta
from validation.core.regime_rule import critical_beta
from validation.core.workers import check_workers, default_workers, run_memory_mb, run_tasks
from validation.core.checks import FAIL, INCONCLUSIVE, Check, check_line, combine, interval_check
from validation.core.results import RunInfo, StudyResult, to_jsonable, utc_now
from validation.core.settings import (
    CommonSettings, SettingsError, check_choice, check_float, check_int, make_settings, parse_grid,
    optional_torch_dtype, resolve_device, setting,
)

__all__ = ["PhaseSettings", "PhaseResult", "run", "main", "phase_column"]

PAPER = dict(hursts=(0.05, 0.97, 51), betas=(0.2, 1.3, 70), depth=1000, width=40, n_in=64)


def _linspace(start: float, stop: float, count: int) -> tuple[float, ...]:
    return tuple(np.linspace(start, stop, count).tolist())


@dataclass(frozen=True)
class PhaseSettings(CommonSettings):
    """Settings of the phase diagram (defaults: the paper's Fig. 7 resolution)."""

    dtype: str = setting("float32", "float32 (the default here: see the module doc) or float64",
                         choices=("float64", "float32"), group="run and output")
    hursts: tuple[float, ...] = setting(_linspace(*PAPER["hursts"]), "Hurst indices: 'a:b:n' or a comma list, each "
                                                                     "in (0, 1)", parse=parse_grid,
                                        default_text="0.05:0.97:51")
    betas: tuple[float, ...] = setting(_linspace(*PAPER["betas"]), "scalings β: 'a:b:n' or a comma list, each ≥ 0",
                                       parse=parse_grid, default_text="0.2:1.3:70")
    depth: int = setting(PAPER["depth"], "depth L", parse=int)
    ref_depth: int | None = setting(None, "second depth L' < L for the depth-invariance critical β", parse=int,
                                    default_text="L/4")
    width: int = setting(PAPER["width"], "width d", parse=int)
    n_in: int = setting(PAPER["n_in"], "input dimension n_in", parse=int)
    networks: int = setting(8, "networks per H (weights drawn once, shared by every β)", parse=int)
    inputs: int = setting(8, "inputs per network; samples per cell = networks × inputs", parse=int)
    workers: int | None = setting(None, "processes (each single-threaded), split over H; the numbers do not depend "
                                        "on it", parse=int, group="run and output",
                                  default_text=f"every core this process may use, {default_workers()} here; 1 on a GPU")
    scheduler: str | None = setting(None, "run the H columns on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler); the "
                                          "numbers do not depend on it", group="run and output",
                                    default_text="none: --workers local processes")
    noise_dtype: str | None = setting(None, "the type the fractional weights are drawn in, then cast to --dtype "
                                            "(float32 draws faster; another draw for the seed); opt-in here, unlike "
                                            "the strong-error studies: the ratios are statistics of the draw itself",
                                      choices=("float32", "float64"), default_text="as --dtype")
    vmax: float = setting(4.0, "the figure's colour scale is clipped to [−vmax, vmax] in log10 r", parse=float,
                          group="run and output")
    tolerance: float = setting(0.05, "the check: the bootstrap interval (over resamples of the networks) of the mean "
                                     "|β_c(H) − prediction| of r_h over H must lie below this",
                               parse=float, group="check")

    def check(self) -> None:
        super().check()
        hursts = tuple(float(h) for h in self.hursts)
        if not hursts or len(hursts) > 10_000:
            raise SettingsError("hursts", f"{len(hursts)} values (allowed: 1 to 10000)")
        for h in hursts:
            try:
                check_hurst(h)
            except ValueError:
                raise SettingsError("hursts", f"H={h:g} is out of range (allowed: 0 < H < 1)") from None
        self._set("hursts", hursts)
        betas = tuple(float(b) for b in self.betas)
        if len(betas) < 2 or len(betas) > 10_000:
            raise SettingsError("betas", f"{len(betas)} values (allowed: 2 to 10000, to locate a critical β)")
        for b in betas:
            if not (math.isfinite(b) and b >= 0):
                raise SettingsError("betas", f"β={b:g} is out of range (allowed: β ≥ 0)")
        self._set("betas", betas)
        self._set("depth", check_int("depth", self.depth, 2, 20_000))
        if self.ref_depth is not None:
            self._set("ref_depth", check_int("ref_depth", self.ref_depth, 1, self.depth - 1))
        for name in ("width", "n_in", "networks", "inputs"):
            self._set(name, check_int(name, getattr(self, name), 1, 10_000))
        check_workers(self, default_to_cores=True)
        if self.noise_dtype is not None:
            check_choice("noise_dtype", self.noise_dtype, ("float32", "float64"))
        self._set("vmax", check_float("vmax", self.vmax, 0, strict_min=True))
        self._set("tolerance", check_float("tolerance", self.tolerance, 0, strict_min=True))

    @property
    def reference_depth(self) -> int:
        return self.ref_depth if self.ref_depth is not None else max(1, self.depth // 4)


def estimate_mb(settings: PhaseSettings) -> float:
    """A rough estimate of the run's peak memory in MiB: per process, 0.72 of the chunk of networks
    :func:`limits.initialisation.measure_ratios` holds at once (:func:`limits.initialisation.ratio_chunk`), the
    interpreter once (forked workers share it). Each column's arrays are unmapped when freed (:func:`phase_column`),
    so the peak is what is alive. Measured with ``benchmarks/bench_memory.py`` (float32, d = 40, 70 β × 8 inputs):
    L = 1000, 9 networks per 494-MiB chunk: 634 MiB in one process (16 networks per H), 940–957 with two workers (32);
    the default (8 networks, 439 MiB): 956–994 with two; L = 2000 (4 networks, 439 MiB): 893–900 with two. The
    factor 0.72 puts these at 0.97–1.11 of the estimate (when the heap was reused, the same runs varied by 25 %)."""
    item = 4 if settings.dtype == "float32" else 8
    columns = len(settings.betas) * settings.inputs
    chunk, per_net = ratio_chunk(settings.depth, settings.width, columns, settings.networks, item, Block("res3"))
    return run_memory_mb(0.72 * chunk * per_net / 2**20, min(settings.workers, len(settings.hursts)),
                         settings.scheduler)


def estimate_seconds(settings: PhaseSettings) -> float:
    """A rough estimate of the run time: ~2.5e-10 s per (H, network, layer, d², column) unit per worker (the
    paper-size diagram took about 60 s with 2 workers on 2 cores)."""
    units = (len(settings.hursts) * settings.networks * (settings.depth + settings.reference_depth)
             * settings.width ** 2 * len(settings.betas) * settings.inputs)
    return 2.5e-10 * units / min(settings.workers, len(settings.hursts))


def phase_column(task: dict[str, Any]) -> dict[str, Any]:
    """One Hurst index: per-cell medians of log10 r and overflow counts at L (and L')."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    regime = FractionalRegime(task["hurst"])
    out: dict[str, Any] = {"hurst": task["hurst"]}
    for tag, depth in (("main", task["depth"]), ("ref", task["ref_depth"])):
        with runtime.large_blocks_unmapped():  # a peak that does not depend on the heap's history (estimate_mb)
            res = measure_ratios(
                regime, depth, task["betas"], task["networks"], task["inputs"], task["width"], task["n_in"],
                Block("res3"), seed=task["seed"], label=("phase", tag), dtype=task["dtype"], device=task["device"],
                noise_dtype=task["noise_dtype"],
            )
        for key in ("r_h", "r_p"):
            r = getattr(res, key).double().reshape(len(task["betas"]), -1).numpy()
            bad = ~np.isfinite(r)
            logs = np.log10(np.where(bad, np.inf, r))
            out[f"{tag}_{key}_median_log10"] = np.median(logs, axis=1)
            out[f"{tag}_{key}_overflow"] = bad.sum(axis=1)
            if key == "r_h":  # every sample, for the check's bootstrap over networks (not part of the grid)
                out[f"{tag}_{key}{SAMPLES_SUFFIX}"] = logs.astype(np.float32)
    out["seconds"] = time.perf_counter() - start
    return out


def _columns(settings: PhaseSettings, device: torch.device, progress: bool) -> list[dict[str, Any]]:
    common = dict(betas=list(settings.betas), depth=settings.depth, ref_depth=settings.reference_depth,
                  width=settings.width, n_in=settings.n_in, networks=settings.networks, inputs=settings.inputs,
                  seed=settings.seed, dtype=settings.torch_dtype, device=str(device),
                  noise_dtype=optional_torch_dtype(settings.noise_dtype))
    tasks = [dict(common, hurst=h) for h in settings.hursts]
    with tqdm(total=len(tasks), desc="phase (H columns)", disable=not progress, leave=False) as bar:
        columns = run_tasks(phase_column, tasks, settings.workers, on_result=lambda _: bar.update(1),
                            scheduler=settings.scheduler)
    return columns


#: the per-sample log10 r_h of a column, kept for the check's bootstrap and not put in the grid or the JSON
SAMPLES_SUFFIX = "_samples_log10"
#: resamples of the networks in the check's bootstrap
PHASE_RESAMPLES = 200


def _deviation_interval(settings: PhaseSettings, columns: list[dict[str, Any]], predicted: list[float],
                        inside: list[bool], log_ratio: float) -> tuple[float, float, float]:
    """The 95% percentile interval of the mean |β_c(H) − prediction| over the H inside the β grid, by resampling the
    networks of every H column and depth on their own (each draws its own networks; the inputs stay with their
    network) and recomputing each cell's median, the depth-invariance slopes and β_c. An H whose β_c a resample
    cannot locate counts as +∞ in that resample's mean.

    Third, the mean deviation **beyond noise**: the mean over those H of the distance from the prediction to H's
    own 95% interval of β_c over the same resamples (0 where it contains the prediction). |β̂_c − p| is biased upward
    by the estimate's noise (E|X| ≥ |E X|), and the resamples add more, so the interval of the mean alone would read
    the noise of a few networks as a wrong β_c; this lower estimate does not."""
    rng = np.random.default_rng(stream_seed(settings.seed, "phase", "check-bootstrap"))
    betas, nets = list(settings.betas), settings.networks
    used = [(column, p) for column, p, ok in zip(columns, predicted, inside) if ok]
    if not used:
        return math.nan, math.nan, math.nan
    predicted_used = np.array([p for _, p in used])
    samples = [({tag: column[f"{tag}_r_h{SAMPLES_SUFFIX}"].astype(np.float64).reshape(len(betas), nets, -1)
                 for tag in ("main", "ref")}, p) for column, p in used]   # (β, network, input), converted once
    means = np.empty(PHASE_RESAMPLES)
    located = np.empty((PHASE_RESAMPLES, len(samples)))  # each resample's β_c per H (+∞: not located)
    for b in range(PHASE_RESAMPLES):
        deviations = []
        for h, (logs_by_tag, p) in enumerate(samples):
            medians = {}
            for tag in ("main", "ref"):
                logs = logs_by_tag[tag]
                medians[tag] = np.median(logs[:, rng.integers(0, nets, nets)].reshape(len(betas), -1), axis=1)
            with np.errstate(invalid="ignore"):
                slope = (medians["main"] - medians["ref"]) / log_ratio
            estimate = critical_beta(betas, np.where(np.isnan(slope), np.inf, slope).tolist())
            deviations.append(math.inf if estimate is None else abs(estimate - p))
            located[b, h] = math.inf if estimate is None else estimate
        means[b] = float(np.mean(deviations))
    low, high = np.quantile(means, [0.025, 0.975], method="inverted_cdf")  # order statistics: +∞ stays +∞
    each_low, each_high = np.quantile(located, [0.025, 0.975], axis=0, method="inverted_cdf")
    beyond = np.maximum(0.0, np.maximum(each_low - predicted_used, predicted_used - each_high))
    return float(low), float(high), float(np.mean(beyond))


def _critical_beta_check(settings: PhaseSettings, mean_dev: float, missing: int, counted: int,
                         interval: tuple[float, float], beyond: float, more: str) -> Check:
    """Three-valued, as every check: PASS when the interval of the mean |β_c − prediction| lies below the tolerance,
    FAIL when it lies wholly above it *and* the mean deviation beyond each H's own sampling interval (``beyond``,
    :func:`_deviation_interval`) exceeds the tolerance too (or the β grid never locates β_c, in the run and in almost
    every resample), INCONCLUSIVE otherwise — too few networks never read as a wrong β_c."""
    name = "critical β of r_h (depth invariance)"
    low, high = interval
    if counted == 0:
        return Check(name, INCONCLUSIVE, "no H's prediction lies inside the β grid: nothing to compare")
    if missing and math.isinf(low):
        return Check(name, FAIL, f"{missing} H without an estimate in the run and in ≥ 97.5% of the resamples of its "
                                 f"networks: the β grid never locates the critical β there ({more})")
    if missing or math.isinf(high):
        return Check(name, INCONCLUSIVE, f"mean |β_c − prediction| {mean_dev:.3f} over {counted - missing} H, but "
                                         f"{'the run' if missing else 'some resamples of the networks'} cannot locate "
                                         f"β_c at every H; more networks (--networks, now {settings.networks}) would "
                                         f"settle it ({more})")
    check = interval_check(name, mean_dev, interval, (0.0, settings.tolerance), settings.networks,
                           what=f"mean |β_c − prediction| {mean_dev:.3f} over {counted} H, its 95% interval over "
                                f"{PHASE_RESAMPLES} resamples of the networks")
    if check.verdict == FAIL and not beyond > settings.tolerance:
        return Check(name, INCONCLUSIVE, f"{check.detail}, but beyond each H's own 95% interval of β_c the mean "
                                         f"deviation is {beyond:.3f}, within the tolerance: the excess may be the noise "
                                         f"of {settings.networks} networks × {settings.inputs} inputs a cell (|β̂_c − "
                                         f"prediction| is biased upward by it); more would settle it ({more})")
    return dataclasses.replace(check, detail=f"{check.detail} ({more})")


def _analyse(settings: PhaseSettings, columns: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
    hursts, betas = list(settings.hursts), list(settings.betas)
    ref_depth = settings.reference_depth
    grid: dict[str, Any] = {}
    for key in columns[0]:
        if key not in ("hurst", "seconds") and not key.endswith(SAMPLES_SUFFIX):
            grid[key] = np.stack([c[key] for c in columns], axis=1)  # (β, H)
    log_ratio = math.log10(settings.depth / ref_depth)
    critical: dict[str, list[float | None]] = {}
    for key in ("r_h", "r_p"):
        main = grid[f"main_{key}_median_log10"]
        critical[f"level_{key}"] = [critical_beta(betas, [float(v) for v in main[:, j]]) for j in range(len(hursts))]
        ref = grid[f"ref_{key}_median_log10"]
        with np.errstate(invalid="ignore"):
            slope = (main - ref) / log_ratio
        slope = np.where(np.isnan(slope), np.inf, slope)  # inf − inf: exploded at both depths
        grid[f"slope_{key}"] = slope
        critical[f"depth_{key}"] = [critical_beta(betas, slope[:, j].tolist()) for j in range(len(hursts))]
    predicted = [fractional_critical_beta(h) for h in hursts]
    overflow = {k: int(v.sum()) for k, v in grid.items() if k.endswith("overflow")}
    inside = [min(betas) <= p <= max(betas) for p in predicted]
    estimates = [e for e, ok in zip(critical["depth_r_h"], inside) if ok]
    missing = sum(e is None for e in estimates)
    deviations = [abs(e - p) for e, p, ok in zip(critical["depth_r_h"], predicted, inside) if ok and e is not None]
    mean_dev = float(np.mean(deviations)) if deviations else math.nan
    *interval, beyond = _deviation_interval(settings, columns, predicted, inside, log_ratio)
    checks = [_critical_beta_check(settings, mean_dev, missing, len(estimates), tuple(interval), beyond,
                                   f"max {max(deviations) if deviations else math.nan:.3f}; {missing} H without an "
                                   f"estimate; {len(hursts) - len(estimates)} H whose prediction lies outside the β "
                                   "grid").to_dict()]
    return {
        "hursts": hursts, "betas": betas, "depth": settings.depth, "ref_depth": ref_depth,
        "width": settings.width, "n_in": settings.n_in, "networks": settings.networks, "inputs": settings.inputs,
        "samples_per_cell": settings.networks * settings.inputs, "grid": grid, "critical_beta": critical,
        "predicted_critical_beta": predicted, "overflow_samples": overflow,
        "overflow_cells": {k: int((np.isinf(grid[k.replace("overflow", "median_log10")])).sum()) for k in overflow},
        "wall_time_s": elapsed, "column_seconds": [c["seconds"] for c in columns], "workers": settings.workers,
        "tasks": len(columns), "scheduler": settings.scheduler,
        "checks": checks, "mean_deviation": mean_dev, "mean_deviation_ci95": list(interval),
        "mean_deviation_beyond_noise": beyond,
        "deviation_resamples": PHASE_RESAMPLES,
        "r_p_note": "r_p is reported, not checked: its critical β lags H for H in (1/2, 0.75) at finite depth and "
                    "width (docs/results/regimes.md)",
    }


@dataclass(repr=False)  # StudyResult's short repr
class PhaseResult(StudyResult):
    """The phase diagram: ``numbers`` is the ``result`` section of the JSON (medians per cell, critical β per H,
    overflow counts, the check)."""

    numbers: dict[str, Any] = dataclasses.field(default_factory=dict)

    study = "phase"

    @property
    def checks(self) -> list[dict[str, Any]]:
        """The checks of the run: ``{"check", "verdict", "passed", "detail", "samples_needed"}``."""
        return self.numbers["checks"]

    @property
    def critical_beta(self) -> dict[str, list[float | None]]:
        """β_c for every H, by estimator: ``depth_r_h``, ``depth_r_p`` (depth invariance), ``level_r_h``,
        ``level_r_p`` (median r = 1); None where the β grid does not locate it."""
        return self.numbers["critical_beta"]

    @property
    def verdict(self) -> str:
        return combine(self.checks)

    def summary(self) -> dict[str, Any]:
        return dict(self.numbers)

    def csv_rows(self) -> list[dict[str, Any]]:
        """The CSV: one row per (H, β) cell of the diagram, H by H — the JSON's ``grid``, with the critical β of the
        cell's H repeated on each of its rows. Columns:

        * ``hurst``, ``beta`` — the cell;
        * every array of the JSON's ``grid``, by its name: ``main_r_h_median_log10`` (the median of log10 r_h at
          depth L), ``main_r_h_overflow`` (its overflowed samples), the same for ``r_p`` and for the second depth
          L' (``ref_…``), and ``slope_r_h``, ``slope_r_p`` (the local slope in log L whose zero in β is the
          depth-invariance β_c);
        * ``predicted_critical_beta`` — the prediction β_c(H);
        * ``critical_beta_depth_r_h``, ``critical_beta_depth_r_p``, ``critical_beta_level_r_h``,
          ``critical_beta_level_r_p`` — the estimates of β_c(H) (empty where the β grid does not locate it).

        A median that overflowed (+∞) is an empty cell, as it is ``null`` in the JSON; its overflow count says so."""
        numbers = to_jsonable({key: self.numbers[key] for key in ("hursts", "betas", "grid", "critical_beta",
                                                                  "predicted_critical_beta")})
        rows: list[dict[str, Any]] = []
        for j, hurst in enumerate(numbers["hursts"]):
            for i, beta in enumerate(numbers["betas"]):
                row: dict[str, Any] = {"hurst": hurst, "beta": beta}
                row.update({key: values[i][j] for key, values in numbers["grid"].items()})
                row["predicted_critical_beta"] = numbers["predicted_critical_beta"][j]
                row.update({f"critical_beta_{key}": values[j] for key, values in numbers["critical_beta"].items()})
                rows.append(row)
        return rows

    def table(self) -> str:
        result = self.numbers
        h, b = result["hursts"], result["betas"]
        lines = [f"phase diagram: res-3, d = {result['width']}, L = {result['depth']} (L' = {result['ref_depth']}), "
                 f"{len(h)} H × {len(b)} β, {result['samples_per_cell']} samples per cell",
                 f"overflowed samples (counted as explosions, +∞ in medians): {result['overflow_samples']}",
                 f"cells whose median overflowed (drawn as 'overflow'): {result['overflow_cells']}"]
        crit = result["critical_beta"]
        cols = [k for k in ("depth_r_h", "depth_r_p", "level_r_h", "level_r_p") if k in crit]
        lines.append(f"{'H':>6} {'predicted':>9} | " + " ".join(f"{c:>10}" for c in cols))
        step = max(1, len(h) // 17)
        for j in range(0, len(h), step):
            vals = " ".join(f"{crit[c][j]:>10.3f}" if crit[c][j] is not None else f"{'—':>10}" for c in cols)
            lines.append(f"{h[j]:>6.3f} {result['predicted_critical_beta'][j]:>9.3f} | {vals}")

        def mean_abs(x: np.ndarray) -> str:
            return f"{x.mean():.3f}" if x.size else "—"

        for c in cols:
            est = np.array([np.nan if v is None else v for v in crit[c]], dtype=float)
            err = np.abs(est - np.array(result["predicted_critical_beta"]))
            ok, hs = np.isfinite(est), np.array(h)
            lines.append(f"{c}: mean |β_c − prediction| = {mean_abs(err[ok])} over {ok.sum()} H values "
                         f"(H > 0.5: {mean_abs(err[ok & (hs > 0.5)])}; H < 0.5: {mean_abs(err[ok & (hs < 0.5)])})")
        lines += [result["r_p_note"], "", "checks:"]
        lines += [check_line(c) for c in result["checks"]]
        lines += [f"verdict: {self.verdict}",
                  f"wall time {result['wall_time_s']:.1f} s with {result['workers']} worker(s)"]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        from validation.phase.plots import plot_phase

        return plot_phase(self.numbers, self.settings.vmax, ax)


def run(settings: PhaseSettings | None = None, /, *, progress: bool = False, threads: int | None = 1,
        command_line: str | None = None, **overrides: Any) -> PhaseResult:
    """The (H, β) phase diagram of res-3 with fractional weights (Marion et al. Fig. 7).

    Args:
        settings: a :class:`PhaseSettings`; None for the defaults (the paper's resolution).
        progress, threads, command_line: as for :func:`validation.convergence.run` (``threads`` applies to the
            main process; each worker uses one thread).
        **overrides: settings by name, e.g. ``hursts=(0.3, 0.6, 0.9), depth=256, networks=4``.
    """
    settings = make_settings(PhaseSettings, settings, overrides)
    device = resolve_device(settings.device)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        columns = _columns(settings, device, progress)
        elapsed = time.perf_counter() - clock
        numbers = _analyse(settings, columns, elapsed)
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=device, started=started,
                               wall_time_s=elapsed, command=command_line)
    return PhaseResult(settings=dataclasses.replace(settings, ref_depth=settings.reference_depth), run_info=info,
                       numbers=numbers)


EPILOG = """\
examples:
  python -m validation.phase --plot phase.png --json phase.json       # the paper's resolution, about a minute
  python -m validation.phase --hursts 0.1,0.5,0.9 --betas 0.2:1.3:23 --networks 4   # a quick look
"""

COMMAND = cli.Command(
    prog="python -m validation.phase",
    description=__doc__.split("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=PhaseSettings,
    run=run,
    estimate_mb=estimate_mb,
    estimate_seconds=estimate_seconds,
    csv_help="write one CSV row per H, β cell to this file: its medians, overflow counts and slopes, and the "
             "critical β of its H",
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
