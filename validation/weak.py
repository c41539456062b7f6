"""``python -m validation.weak``: convergence in law of Peluchetti–Favaro ResNets (docs/theory.md §4).

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

Python: ``validation.weak.run(draws=2000, width=100, depth=100)`` returns a :class:`WeakResult`.

Exit status: 0 PASS (every two-sample test passes, and no statistic is NaN), 1 FAIL, 2 bad input,
3 internal error, 4 INCONCLUSIVE (only with --strict-weak). The weak rates are reported with their intervals
and their own three-valued check against rate 1 (``--weak-tolerance``), which is printed and stored but does
not decide the exit status unless ``--strict-weak`` is given.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from scipy import stats as _stats
from tqdm.auto import tqdm

from limits.activations import get_activation
from limits.pairs import ModelConfig
from limits.peluchetti_favaro import PFPair, simulate_gram
from limits.schemes import EulerMaruyama, PathIncrement
from limits.seeding import stream_seed
from validation.core import cli, runtime
from validation.core.checks import Check, combine, rate_check
from validation.core.one_pass import sample_blocks, sde_pass
from validation.core.plots import new_grid
from validation.core.results import RunInfo, StudyResult, to_jsonable, utc_now
from validation.core.settings import (
    CommonSettings, SettingsError, check_depths, check_float, check_int, check_power_of_two, distinct_names,
    make_settings, parse_float_list, parse_power_of_two_list, resolve_device, setting,
)
from validation.core.observables import TEST_FUNCTIONS
from validation.core.stats import depth_intervals
from validation.core.rate_fit import RateFit, fit_rate
from validation.core.workers import check_workers, default_workers, run_memory_mb, run_tasks

__all__ = ["WeakSettings", "WeakResult", "run", "main", "energy_test", "coupled_outputs", "weak_batch", "WeakTask",
           "weak_task", "weak_tasks", "WEAK_BATCH", "WEAK_FUNCTIONS", "SC_MODELS"]

SC_MODELS = ("tanh", "swish")

#: test functions of the weak error: name → (f on a (N, D) tensor → (N,), label); the multilevel study's too
WEAK_FUNCTIONS = TEST_FUNCTIONS


# ----------------------------------------------------------------------------------------------- statistics
def energy_test(x: np.ndarray, y: np.ndarray, permutations: int = 500, max_points: int = 2000,
                seed: int = 0) -> tuple[float, float]:
    """Two-sample energy-distance test (Székely–Rizzo) with a permutation p-value.

    E = 2 E‖X − Y‖ − E‖X − X'‖ − E‖Y − Y'‖ (V-statistic) on at most ``max_points`` points of each sample
    (a random subsample, so the pairwise distance matrix stays small); p = (1 + #{E_perm ≥ E}) / (1 + P), so
    that no p-value is below 1/(1 + P) (:data:`TESTS_PER_MODEL` and the settings' check keep it under the
    Bonferroni threshold). The permutations are drawn one by one in one order and evaluated
    :data:`PERMUTATION_BATCH` at a time as one matrix product (the distance matrix read once per batch, not twice
    per permutation: 500 permutations of 2 × 3000 points took 9.2 s, now 2.0 s). Returns (E, p).
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
    row_sums = dist.sum(axis=1)
    exceed = 0
    for start in range(0, permutations, PERMUTATION_BATCH):
        a = np.stack([rng.permutation(labels) for _ in range(min(PERMUTATION_BATCH, permutations - start))],
                     axis=1).astype(float)                          # (n + m, batch): one permutation a column
        da = dist @ a
        cross = np.einsum("ib,ib->b", 1.0 - a, da)                  # aᵀ D b = bᵀ D a, D symmetric
        within_a = np.einsum("ib,ib->b", a, da)
        within_b = (row_sums @ (1.0 - a)) - cross                   # bᵀ D b = 1ᵀ D b − aᵀ D b
        exceed += int(np.count_nonzero(2 * cross / (n * m) - within_a / n**2 - within_b / m**2 >= observed))
    return float(observed), float((1 + exceed) / (1 + permutations))


#: :func:`energy_test`'s permutations evaluated at once (a (n + m) × 64 block of labels beside the distance matrix)
PERMUTATION_BATCH = 64
#: part 1's tests of each model (Kolmogorov–Smirnov at each input, the joint energy test): the Bonferroni count
TESTS_PER_MODEL = 3


# ----------------------------------------------------------------------------------------------- coupled pass
def coupled_outputs(pair: PFPair, depths: Sequence[int], reference_steps: int, seed: int,
                    block_steps: int = 64) -> dict[str, Any]:
    """Final states on ONE Brownian path per sample: the network at every depth, Euler–Maruyama of the
    limit with step 1/L at every depth, and Euler references with n and n/2 steps.

    One pass over the path (:func:`validation.core.one_pass.sde_pass`, memory: one block of ``block_steps`` fine
    increments); Euler of the limit rides along as a second scheme on the same increments, with the
    pair's own drift and diffusion (``limit_sde().f`` / ``g_prod``): the step of
    :class:`limits.schemes.EulerMaruyama`.
    """
    scheme = EulerMaruyama(pair.limit_sde(), "general")

    def euler(y: torch.Tensor, t: float, dt: float, dw: torch.Tensor) -> torch.Tensor:
        return scheme.step(t, dt, y, PathIncrement(dw), None)[0]

    budget = min(block_steps, reference_steps) * pair.samples * pair.noise_dim
    result = sde_pass(pair, list(depths), reference_steps, seed,
                      schemes={"network": pair.network_step, "euler": euler}, block_budget=budget)
    return {
        "network": dict(zip(depths, result.states["network"])),
        "euler": dict(zip(depths, result.states["euler"])),
        "reference": result.reference,
        "second": result.second,
    }


#: paths of the weak-error study simulated at once (one task; the batch b draws its path from stream b)
WEAK_BATCH = 2000


def weak_batch(phi: str, z: float, width: int, size: int, depths: Sequence[int], reference_steps: int, seed: int,
               index: int, device: torch.device | str = "cpu") -> dict[str, dict[str, np.ndarray]]:
    """Batch ``index`` of the weak-error study: per-sample f(·) − f(H_ref) for the network and Euler at every depth,
    and for the second reference, on the SC_φ model at width ``width`` (float64), ``size`` paths drawn from the
    stream (seed, "weak-path", φ, index). Returns {kind: {f name: array}} with kinds ``network`` / ``euler``
    ((size, depths)) and ``second`` ((size,))."""
    config = ModelConfig(width=width, activation=phi,
                         options={"psi": "identity", "sigma_w": 1.0, "sigma_b": 1.0, "x0": float(z)})
    pair = PFPair(config, size, seed=seed, device=device)
    res = coupled_outputs(pair, depths, reference_steps, stream_seed(seed, "weak-path", phi, index))
    out: dict[str, dict[str, np.ndarray]] = {k: {} for k in ("network", "euler", "second")}
    for name, (f, _) in WEAK_FUNCTIONS.items():
        f_ref = f(res["reference"])
        for kind in ("network", "euler"):
            out[kind][name] = torch.stack([f(res[kind][L]) - f_ref for L in depths], 1).cpu().numpy()
        out["second"][name] = (f(res["second"]) - f_ref).cpu().numpy()
    return out


@dataclass(frozen=True)
class WeakTask:
    """One unit of the weak study, for :func:`validation.core.workers.run_tasks`: chunk ``index`` of part 1's network
    or SDE draws (``part`` ``network`` / ``sde``), or batch ``index`` of part 2 (``weak``), for SC model ``phi``."""

    part: str
    phi: str
    index: int
    size: int
    settings: "WeakSettings"


def weak_task(task: WeakTask) -> tuple[Any, float]:
    """Run one :class:`WeakTask`; returns (its output, seconds). Each task draws from its own streams, so the
    numbers do not depend on where or in which order the tasks run."""
    s, clock = task.settings, time.perf_counter()
    device = resolve_device(s.device)
    if task.part == "weak":
        out: Any = weak_batch(task.phi, s.weak_z, s.weak_width, task.size, list(s.weak_depths), s.weak_reference,
                              s.seed, task.index, device=device)
    else:
        steps = s.depth if task.part == "network" else s.sde_steps
        out = simulate_gram(get_activation(task.phi), list(s.inputs), s.width, steps, task.size, mode=task.part,
                            seed=s.seed, stream=task.phi, dtype=s.torch_dtype, device=device, chunk=task.size,
                            keep=1, first_chunk=task.index)[:, 0, :].cpu().double().numpy()
    return out, time.perf_counter() - clock


def weak_tasks(settings: "WeakSettings") -> list[WeakTask]:
    """Every task of a run, model by model: part 1's network chunks, its SDE chunks, then part 2's batches."""
    tasks = []
    for phi in settings.models:
        for part in ("network", "sde"):
            tasks += [WeakTask(part, phi, index, size, settings) for index, size in sample_blocks(settings.draws, settings.chunk)]
        if settings.weak:
            tasks += [WeakTask("weak", phi, index, size, settings)
                      for index, size in sample_blocks(settings.weak_draws, WEAK_BATCH)]
    return tasks


# ----------------------------------------------------------------------------------------------- settings
def _parse_models(text: str) -> tuple[str, ...]:
    return tuple(v.strip().lower() for v in text.split(",") if v.strip())


@dataclass(frozen=True)
class WeakSettings(CommonSettings):
    """Settings of the weak (in-law) study. ``dtype`` is that of part 1; part 2 always runs in float64."""

    dtype: str = setting("float32", "dtype of part 1, the paper's check (float32 is far below its statistical "
                                    "resolution); part 2 always runs in float64", choices=("float64", "float32"),
                         group="run and output")
    models: tuple[str, ...] = setting(("tanh", "swish"), "SC models to run: φ = tanh and/or swish (ψ = id, "
                                                          "σ_w² = σ_b² = 1), comma-separated", parse=_parse_models,
                                      group="the paper's check (convergence in law)")
    draws: int = setting(10000, "independent draws of the ResNet and (separately) of the SDE (20 to 10⁷)", parse=int,
                         group="the paper's check (convergence in law)")
    width: int = setting(500, "D, the width (the paper's 500)", parse=int, group="the paper's check (convergence in law)")
    depth: int = setting(500, "L, the ResNet depth (the paper's 500)", parse=int,
                         group="the paper's check (convergence in law)")
    sde_steps: int = setting(500, "Euler–Maruyama steps of the limit SDE (its weak bias is O(1/steps), measured in "
                                  "part 2)", parse=int, group="the paper's check (convergence in law)")
    inputs: tuple[float, float] = setting((0.0, 1.0), "the two inputs z, copied to every coordinate", parse=parse_float_list,
                                          group="the paper's check (convergence in law)")
    alpha: float = setting(0.01, "family-wise level: every test must have p > alpha / (number of tests) to PASS",
                           parse=float, group="the paper's check (convergence in law)")
    permutations: int = setting(1000, "permutations of the energy-distance test of the joint law (19 to 10⁵, and "
                                      "enough that its smallest p-value 1/(1 + P) is below alpha / (3 × models))",
                                parse=int, group="the paper's check (convergence in law)")
    energy_points: int = setting(2000, "points per sample used by the energy test (a random subsample, 10 to 20000)",
                                 parse=int, group="the paper's check (convergence in law)")
    chunk: int = setting(250, "draws simulated at once (memory; each chunk draws from its own stream, so the numbers "
                              "depend on it)", parse=int, group="the paper's check (convergence in law)")
    weak: bool = setting(True, "skip the weak-error study (part 2)", flag="--no-weak", action="store_false",
                         group="weak error versus depth")
    weak_width: int = setting(4, "D of the weak-error study (the shared path needs D² + D channels)", parse=int,
                              group="weak error versus depth")
    weak_draws: int = setting(10000, "paths of the weak-error study (20 to 10⁷)", parse=int, group="weak error versus depth")
    weak_depths: tuple[int, ...] = setting((4, 8, 16, 32, 64, 128), "depths L (powers of two, '4:128' or '4,8,16')",
                                           parse=parse_power_of_two_list, group="weak error versus depth")
    weak_reference: int = setting(2048, "Euler steps of the reference (a power of two finer than the deepest weak "
                                        "depth; ≥ 16 × recommended)", parse=int, group="weak error versus depth")
    weak_z: float = setting(1.0, "input z of the weak-error study (finite)", parse=float, group="weak error versus depth")
    weak_fit_from: int = setting(16, "fit the weak rate on depths ≥ this", parse=int, group="weak error versus depth")
    weak_tolerance: float = setting(0.25, "the weak-rate check: the interval must lie within 1 ± this", parse=float,
                                    group="weak error versus depth")
    strict_weak: bool = setting(False, "let the weak-rate check decide the exit status too", action="store_true",
                                group="weak error versus depth")
    workers: int | None = setting(None, f"processes (each single-threaded) sharing the chunks of part 1 and the "
                                        f"batches of {WEAK_BATCH} paths of part 2; the numbers do not depend on it",
                                  parse=int, group="run and output",
                                  default_text=f"every core this process may use, {default_workers()} here; 1 on a GPU")
    scheduler: str | None = setting(None, "run the chunks and batches on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler)",
                                    group="run and output", default_text="none: --workers local processes")

    def check(self) -> None:
        super().check()
        models = distinct_names("models", self.models)
        bad = [m for m in models if m not in SC_MODELS]
        if not models or bad:
            raise SettingsError("models", f"{','.join(self.models)!r}: allowed {', '.join(SC_MODELS)} (comma-separated)")
        self._set("models", models)
        self._set("draws", check_int("draws", self.draws, 20, 10_000_000))
        self._set("width", check_int("width", self.width, 1, 100_000))
        self._set("depth", check_int("depth", self.depth, 1, 1_000_000))
        self._set("sde_steps", check_int("sde_steps", self.sde_steps, 1, 1_000_000))
        inputs = tuple(check_float("inputs", v) for v in self.inputs)
        if len(inputs) != 2:
            raise SettingsError("inputs", f"{list(inputs)} must be exactly two finite numbers like 0,1")
        self._set("inputs", inputs)
        self._set("alpha", check_float("alpha", self.alpha, 0, 1, strict_min=True, strict_max=True))
        self._set("permutations", check_int("permutations", self.permutations, 19, 100_000))
        threshold = self.alpha / (TESTS_PER_MODEL * len(models))
        if 1 / (1 + self.permutations) >= threshold:  # the energy test could never reject: a check nothing can FAIL
            least = math.floor(1 / threshold)
            while 1 / (1 + least) >= threshold:
                least += 1
            raise SettingsError("permutations", f"{self.permutations}: the energy test's smallest p-value 1/(1 + P) = "
                                                f"{1 / (1 + self.permutations):.5f} is not below the threshold alpha / "
                                                f"{TESTS_PER_MODEL * len(models)} = {threshold:.5f}, so it could never "
                                                f"reject; use at least {least} (allowed: {least} to 100000)")
        self._set("energy_points", check_int("energy_points", self.energy_points, 10, 20_000))
        self._set("chunk", check_int("chunk", self.chunk, 1, 10_000_000))
        self._set("weak_width", check_int("weak_width", self.weak_width, 1, 1000))
        self._set("weak_draws", check_int("weak_draws", self.weak_draws, 20, 10_000_000))
        depths = check_depths("weak_depths", self.weak_depths, powers_of_two=True, maximum=1 << 20)
        self._set("weak_depths", depths)
        reference = check_power_of_two("weak_reference", self.weak_reference, 2)
        check_int("weak_reference", reference, 2, 1 << 24)
        if reference <= depths[-1]:
            raise SettingsError("weak_reference", f"{reference} must be a power of two finer than the deepest weak "
                                                  f"depth {depths[-1]}")
        self._set("weak_z", check_float("weak_z", self.weak_z))
        self._set("weak_fit_from", check_int("weak_fit_from", self.weak_fit_from, 1))
        if sum(L >= self.weak_fit_from for L in depths) < 2:
            raise SettingsError("weak_fit_from", f"{self.weak_fit_from} leaves fewer than two of {list(depths)}")
        self._set("weak_tolerance", check_float("weak_tolerance", self.weak_tolerance, 0, strict_min=True))
        check_workers(self, default_to_cores=True)
        if not self.weak:  # part 2 is skipped: a flag of part 2 would be ignored silently
            given = [f.name for f in dataclasses.fields(self) if (f.name.startswith("weak_") or f.name == "strict_weak")
                     and getattr(self, f.name) != f.default]
            if given:
                raise SettingsError(given[0], "applies to the weak-error study (part 2), which --no-weak skips")


def estimate_mb(settings: WeakSettings) -> float:
    """A rough upper estimate of the run's peak memory in MiB (one chunk or batch per local worker)."""
    item = 4 if settings.dtype == "float32" else 8
    part1 = 12 * min(settings.chunk, settings.draws) * settings.width * 2 * item + 2 * settings.draws * 2 * 8
    energy = 8 * (2 * min(settings.energy_points, settings.draws)) ** 2 * 2
    channels = settings.weak_width ** 2 + settings.weak_width
    part2 = 8 * (64 * 2000 * channels * 3 + settings.weak_draws * len(settings.weak_depths) * 2 * 3) if settings.weak else 0
    # the interpreter once (forked workers share it), each process's chunk: 720 MiB for a measured 659 at the defaults
    return run_memory_mb((part1 + part2) / 2**20, settings.workers, settings.scheduler) + energy / 2**20


def estimate_seconds(settings: WeakSettings) -> float:
    """A rough estimate of the run time: part 1 costs ~8 ns per draw, step and coordinate of one state (the
    default, 10⁴ draws at D = L = 500, took about 150 s on 2 cores), part 2 is bound by its random numbers."""
    part1 = 8e-9 * settings.draws * (settings.depth + settings.sde_steps) * settings.width * 2
    channels = settings.weak_width ** 2 + settings.weak_width
    part2 = 4e-8 * settings.weak_draws * settings.weak_reference * channels if settings.weak else 0.0
    parallel = settings.workers if settings.scheduler is None else 1  # measured: 2 workers, 148.5 s → 79.4 s
    return len(settings.models) * (part1 + part2) / parallel


# ----------------------------------------------------------------------------------------------- result
@dataclass(repr=False)  # StudyResult's short repr
class WeakResult(StudyResult):
    """The weak study's result.

    Attributes:
        models: per SC model (``tanh``, ``swish``): ``tests`` (statistic and p-value of each two-sample test),
            ``moments`` (mean, std and correlation of network and SDE outputs), ``samples`` (the outputs,
            not written to JSON), ``simulation_seconds`` and, with part 2, ``weak`` (the weak errors and their
            rate fits per test function, for the ResNet and for Euler with step 1/L).
        fits: the weak-rate fits, ``fits[model][function][kind]`` with kind ``network`` or ``euler``.
    """

    models: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    fits: dict[str, dict[str, dict[str, RateFit]]] = dataclasses.field(default_factory=dict)

    study = "weak"

    @property
    def p_values(self) -> dict[str, float]:
        return {f"SC_{phi} {key}": test["p_value"] for phi, entry in self.models.items()
                for key, test in entry["tests"].items()}

    @property
    def threshold(self) -> float:
        """The Bonferroni threshold every p-value must exceed."""
        return self.settings.alpha / len(self.p_values)

    @property
    def sc_passed(self) -> bool:
        return all(np.isfinite(p) and p > self.threshold for p in self.p_values.values())

    @property
    def weak_rate_checks(self) -> list[Check]:
        """Per (model, function): the equivalence test of the ResNet's weak-rate interval against 1 ± tolerance
        (:func:`validation.core.checks.rate_check`: PASS, FAIL or INCONCLUSIVE with the draws that would settle it)."""
        tol = self.settings.weak_tolerance
        return [rate_check(f"SC_{phi} {name}", fits["network"], (1 - tol, 1 + tol), self.settings.weak_draws)
                for phi, functions in self.fits.items() for name, fits in functions.items()]

    @property
    def weak_checks(self) -> dict[str, bool]:
        """Per (model, function): the ResNet's weak-rate interval lies within 1 ± tolerance (:attr:`weak_rate_checks`
        passed)."""
        return {check.name: check.passed for check in self.weak_rate_checks}

    @property
    def weak_finite(self) -> bool:
        """Every weak-error statistic is finite (a NaN is a FAIL, never a silent number)."""
        return all(fit.finite for functions in self.fits.values() for fits in functions.values()
                   for fit in fits.values())

    @property
    def checks(self) -> list[Check]:
        """What the verdict combines: the two-sample tests (no margin: PASS or FAIL), the weak statistics being
        finite, and with ``--strict-weak`` the weak-rate checks."""
        checks = [Check.of("two-sample tests", self.sc_passed, f"every p-value > {self.threshold:.4g}"),
                  Check.of("weak statistics finite", self.weak_finite)]
        return checks + (self.weak_rate_checks if self.settings.strict_weak else [])

    @property
    def verdict(self) -> str:
        """PASS, FAIL or INCONCLUSIVE (:func:`validation.core.checks.combine` of :attr:`checks`)."""
        return combine(self.checks)

    def summary(self) -> dict[str, Any]:
        models = {}
        for phi, entry in self.models.items():
            out = {k: v for k, v in entry.items() if k not in ("samples", "weak")}
            if "weak" in entry:
                weak = dict(entry["weak"])
                weak["functions"] = {
                    name: {**{kind: {**self.fits[phi][name][kind].to_dict(), **extra}
                              for kind, extra in values.items() if kind in ("network", "euler")},
                           "reference_bias_check": values["reference_bias_check"]}
                    for name, values in weak["functions"].items()}
                out["weak"] = weak
            models[phi] = out
        return {"simulation": "exact-in-law Gram reduction (limits.peluchetti_favaro.simulate_gram); SDE: "
                              "Euler-Maruyama with its own independent noise",
                "models": models, "p_values": self.p_values, "bonferroni_threshold": self.threshold,
                "sc_verdict": "PASS" if self.sc_passed else "FAIL", "weak_checks": self.weak_checks,
                "weak_rate_checks": [check.to_dict() for check in self.weak_rate_checks],
                "weak_finite": self.weak_finite}

    def csv_rows(self) -> list[dict[str, Any]]:
        """The CSV: the two-sample tests of part 1, one row each, then (with part 2) the weak errors, one row per
        (model, test function, scheme, depth) — the numbers of the JSON's ``models`` section. Columns:

        * ``model`` — ``tanh`` or ``swish`` (SC_tanh, SC_swish);
        * ``part`` — ``two-sample test`` or ``weak error``;
        * ``name`` — the test (``ks_z0``, ``ks_z1``, ``energy_joint``) or the test function (``sqnorm``, ``cos``);
        * ``scheme`` — ``network`` (the ResNet) or ``euler`` (Euler with step 1/L); empty for a test;
        * ``depth`` — the depth L (a test: ``--depth``, the network's);
        * ``statistic``, ``p_value`` — a test's statistic and p-value (empty for a weak error);
        * ``weak_error``, ``signed_error``, ``standard_error`` — |E f(h_L) − E f(H_1)|, its sign kept, and its
          standard error (empty for a test);
        * ``fitted`` — whether the depth enters the rate fit;
        * ``rate``, ``rate_ci_low``, ``rate_ci_high`` — the weak-rate fit of the (model, function, scheme) and its
          95% interval, repeated on each of its depths.

        NaN and ±inf are empty cells, as they are ``null`` in the JSON."""
        columns = ("model", "part", "name", "scheme", "depth", "statistic", "p_value", "weak_error", "signed_error",
                   "standard_error", "fitted", "rate", "rate_ci_low", "rate_ci_high")
        models = to_jsonable(self.summary()["models"])
        rows: list[dict[str, Any]] = []
        for phi, entry in models.items():
            for key, test in entry["tests"].items():
                rows.append(dict.fromkeys(columns) | {"model": phi, "part": "two-sample test", "name": key,
                                                       "depth": self.settings.depth, "statistic": test["statistic"],
                                                       "p_value": test["p_value"]})
        for phi, entry in models.items():
            for name, functions in entry.get("weak", {}).get("functions", {}).items():
                for kind in ("network", "euler"):
                    fit = functions[kind]
                    low, high = fit["ci"]
                    for i, depth in enumerate(fit["depths"]):
                        rows.append(dict.fromkeys(columns) | {
                            "model": phi, "part": "weak error", "name": name, "scheme": kind, "depth": depth,
                            "weak_error": fit["errors"][i], "signed_error": fit["signed_errors"][i],
                            "standard_error": fit["standard_errors"][i], "fitted": fit["fitted"][i],
                            "rate": fit["rate"], "rate_ci_low": low, "rate_ci_high": high})
        return rows

    def table(self) -> str:
        s = self.settings
        lines = [f"Peluchetti-Favaro SC checks: D = {s.width}, L = {s.depth}, SDE Euler {s.sde_steps} steps, "
                 f"{s.draws} draws each, inputs z = {list(s.inputs)}, seed {s.seed}, {s.dtype}", "",
                 f"{'model':10s} {'test':58s} {'statistic':>10s} {'p-value':>9s}"]
        for phi, entry in self.models.items():
            for test in entry["tests"].values():
                lines.append(f"SC_{phi:7s} {test['test']:58s} {test['statistic']:10.4g} {test['p_value']:9.4f}")
        lines += ["", f"{'model':10s} {'z':>4s} {'mean net':>9s} {'mean sde':>9s} {'std net':>8s} {'std sde':>8s}   "
                      "corr(z0,z1) net / sde"]
        for phi, entry in self.models.items():
            m = entry["moments"]
            for col, z in enumerate(s.inputs):
                lines.append(f"SC_{phi:7s} {z:4g} {m['network']['mean'][col]:9.4f} {m['sde']['mean'][col]:9.4f} "
                             f"{m['network']['std'][col]:8.4f} {m['sde']['std'][col]:8.4f}" +
                             (f"   {m['network']['corr']:.4f} / {m['sde']['corr']:.4f}" if col == 0 else ""))
        lines.append(f"verdict (two-sample tests): {'PASS' if self.sc_passed else 'FAIL'} — every p-value must exceed "
                     f"alpha/{len(self.p_values)} = {self.threshold:.4g}")
        if s.weak:
            lines += ["", f"weak error |E f(h_L) - E f(H_1)| (shared path, D = {s.weak_width}, z = {s.weak_z:g}, "
                          f"N = {s.weak_draws}, Euler reference {s.weak_reference} steps; ± = 1 standard error)"]
            for phi, entry in self.models.items():
                weak = entry["weak"]
                for name, values in weak["functions"].items():
                    lines.append(f"  SC_{phi} {WEAK_FUNCTIONS[name][1]}")
                    for kind in ("network", "euler"):
                        fit, extra = self.fits[phi][name][kind], values[kind]
                        row = "  ".join(f"{e:+.2e}±{se:.0e}" for e, se in zip(extra["signed_errors"],
                                                                             extra["standard_errors"]))
                        who = "ResNet   " if kind == "network" else "Euler 1/L"
                        lines.append(f"    {who} L={list(s.weak_depths)}: {row}")
                        lines.append(f"              rate {fit.rate:.3f}  95% CI [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}] "
                                     f"(depths ≥ {s.weak_fit_from})")
                    bias = values["reference_bias_check"]
                    lines.append(f"    reference check: E f(H with n/2 steps) - E f(H with n steps) = "
                                 f"{bias['second_minus_first']:+.2e} ± {bias['standard_error']:.0e}")
            if not self.weak_finite:
                lines.append("weak errors contain NaN/inf: no rate is fitted through them (FAIL)")
            lines.append(f"weak-rate check (ResNet interval within 1 ± {s.weak_tolerance:g}): "
                         + ", ".join(f"{c.name} {c.verdict}" for c in self.weak_rate_checks)
                         + ("" if s.strict_weak else "  [informational; --strict-weak makes it count]"))
            lines += [f"  {c.name}: {c.detail}" for c in self.weak_rate_checks if c.verdict == "INCONCLUSIVE"]
        lines.append(f"verdict: {self.verdict}")
        lines.append(f"time {self.run_info.wall_time_s:.1f} s (" + ", ".join(
            f"SC_{k}: simulation {v['simulation_seconds']:.0f} s" + (f", weak {v['weak']['seconds']:.0f} s"
                                                                     if "weak" in v else "")
            for k, v in self.models.items()) + ")")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Per model: the two densities, the joint scatter and (with part 2) the weak errors; ``ax`` may be a
        (models × 3 or 4) array of Axes."""
        s = self.settings
        models = list(self.models)
        with_weak = s.weak
        columns = 4 if with_weak else 3
        fig, axes = new_grid(len(models), columns, ax, figsize=(4.25 * columns, 4.1 * len(models)))
        for row, phi in enumerate(models):
            res = self.models[phi]
            net, sde = res["samples"]["network"], res["samples"]["sde"]
            for col, z in enumerate(s.inputs):
                a = axes[row, col]
                lo = np.quantile(np.r_[net[:, col], sde[:, col]], 0.001)
                hi = np.quantile(np.r_[net[:, col], sde[:, col]], 0.999)
                grid = np.linspace(lo, hi, 300)
                bins = np.linspace(lo, hi, 60)
                for data, colour, label in ((net[:, col], "C0", f"ResNet, L = {s.depth}"),
                                            (sde[:, col], "C1", f"SDE (Euler, {s.sde_steps} steps)")):
                    a.hist(data, bins=bins, density=True, alpha=0.25, color=colour)
                    a.plot(grid, _stats.gaussian_kde(data)(grid), color=colour, lw=1.6, label=label)
                test = res["tests"][f"ks_z{col}"]
                a.set_title(f"SC_{phi}: density of x_1(T), input z = {z:g}\nKS D = {test['statistic']:.4f}, "
                            f"p = {test['p_value']:.3f}", fontsize=9)
                a.set_xlabel("first output coordinate x_1(T)")
                a.set_ylabel("density")
                a.legend(fontsize=7)
            a = axes[row, 2]
            show = min(3000, len(net))
            a.scatter(net[:show, 0], net[:show, 1], s=2, alpha=0.35, color="C0", label="ResNet")
            a.scatter(sde[:show, 0], sde[:show, 1], s=2, alpha=0.35, color="C1", label="SDE")
            test = res["tests"]["energy_joint"]
            a.set_title(f"SC_{phi}: joint law ({show} draws each shown)\nenergy distance {test['statistic']:.2e}, "
                        f"p = {test['p_value']:.3f}", fontsize=9)
            a.set_xlabel(f"x_1(T) for z = {s.inputs[0]:g}")
            a.set_ylabel(f"x_1(T) for z = {s.inputs[1]:g}")
            a.legend(fontsize=7, markerscale=4)
            if not with_weak:
                continue
            a = axes[row, 3]
            weak = res["weak"]
            depths = np.asarray(s.weak_depths, float)
            for k, (name, (_, label)) in enumerate(WEAK_FUNCTIONS.items()):
                for kind, style in (("network", "o-"), ("euler", "s:")):
                    fit, extra = self.fits[phi][name][kind], weak["functions"][name][kind]
                    err = np.asarray(fit.errors, float)
                    lo_b, hi_b = np.asarray(extra["band"][0]), np.asarray(extra["band"][1])
                    who = "ResNet" if kind == "network" else "Euler SDE"
                    text = f"{who}, {label}: rate {fit.rate:.2f} [{fit.ci[0]:.2f}, {fit.ci[1]:.2f}]"
                    a.errorbar(depths, err, yerr=[np.clip(err - lo_b, 0, None), np.clip(hi_b - err, 0, None)],
                               fmt=style, color=f"C{2 * k + (kind == 'euler')}", ms=4, lw=1.2, capsize=2, label=text)
            ref = np.asarray(self.fits[phi]["sqnorm"]["network"].errors, float)
            a.plot(depths, ref[0] * depths[0] / depths * 0.5, "k--", lw=1, label="slope -1")
            a.set_xscale("log", base=2)
            a.set_yscale("log")
            a.set_xlabel("depth L (Euler: steps)")
            a.set_ylabel("weak error |E f(h_L) - E f(H_1)|")
            a.set_title(f"SC_{phi}: weak error, D = {s.weak_width}, z = {s.weak_z:g}, N = {s.weak_draws}\n"
                        f"(shared path, Euler reference {s.weak_reference} steps; bars: 95% bootstrap)", fontsize=9)
            a.grid(True, which="both", alpha=0.3)
            a.legend(fontsize=6.5, loc="lower left")
        fig.suptitle(f"Peluchetti-Favaro SC checks: ResNet vs limit SDE with independent noise "
                     f"(D = {s.width}, L = {s.depth}, {s.draws} draws, seed {s.seed})", fontsize=11)
        return fig


# ----------------------------------------------------------------------------------------------- run
def _sc_check(phi_name: str, settings: WeakSettings, net: np.ndarray, sde: np.ndarray, seconds: float) -> dict[str, Any]:
    """Part 1 for one model, from its network and SDE draws: the two-sample tests, the moments."""
    tests: dict[str, Any] = {}
    for col, z in enumerate(settings.inputs):
        res = _stats.ks_2samp(net[:, col], sde[:, col])
        tests[f"ks_z{col}"] = {"test": f"Kolmogorov-Smirnov, x_1(T) for z = {z:g}", "statistic": float(res.statistic),
                               "p_value": float(res.pvalue)}
    e_stat, e_p = energy_test(net, sde, permutations=settings.permutations, max_points=settings.energy_points,
                              seed=stream_seed(settings.seed, "energy", phi_name) % 2**32)
    tests["energy_joint"] = {"test": "energy distance, joint (x_1(z0), x_1(z1)), permutation p-value",
                             "statistic": e_stat, "p_value": e_p, "points": min(settings.energy_points, settings.draws),
                             "permutations": settings.permutations}
    moments = {kind: {"mean": data.mean(0), "std": data.std(0, ddof=1), "corr": np.corrcoef(data.T)[0, 1]}
               for kind, data in (("network", net), ("sde", sde))}
    return {"tests": tests, "moments": moments, "simulation_seconds": seconds,
            "samples": {"network": net, "sde": sde}}


def _weak_part(settings: WeakSettings, batches: list[dict[str, dict[str, np.ndarray]]], seconds: float
               ) -> tuple[dict[str, Any], dict[str, dict[str, RateFit]]]:
    """Part 2 for one model, from its batches: the weak errors and their rates, for the ResNet and for Euler with
    step 1/L."""
    depths = list(settings.weak_depths)
    diffs = {kind: {name: np.concatenate([batch[kind][name] for batch in batches]) for name in WEAK_FUNCTIONS}
             for kind in ("network", "euler", "second")}
    functions, fits = {}, {}
    for name in WEAK_FUNCTIONS:
        functions[name], fits[name] = {}, {}
        for kind in ("network", "euler"):
            values = diffs[kind][name]
            fits[name][kind] = fit_rate(depths, values, "abs-mean", fit_from=settings.weak_fit_from,
                                        seed=settings.seed, method="percentile")
            n = values.shape[0]
            functions[name][kind] = {"signed_errors": values.mean(axis=0),
                                     "standard_errors": values.std(axis=0, ddof=1) / math.sqrt(n),
                                     "band": list(depth_intervals(values, "abs-mean", 0.95, resamples=500,
                                                                  seed=settings.seed))}
        second = diffs["second"][name]
        functions[name]["reference_bias_check"] = {
            "second_minus_first": float(second.mean()), "standard_error": float(second.std(ddof=1) / math.sqrt(len(second)))}
    weak = {"width": settings.weak_width, "draws": settings.weak_draws, "depths": depths,
            "reference_steps": settings.weak_reference, "z": settings.weak_z, "fit_from": settings.weak_fit_from,
            "functions": functions, "seconds": seconds}
    return weak, fits


def run(settings: WeakSettings | None = None, /, *, progress: bool = False, threads: int | None = 1,
        command_line: str | None = None, **overrides: Any) -> WeakResult:
    """Peluchetti & Favaro's SC checks (convergence in law) and the weak error against depth.

    Args:
        settings: a :class:`WeakSettings`; None for the defaults (the command line's: the paper's size).
        progress, threads, command_line: as for :func:`validation.convergence.run`.
        **overrides: settings by name, e.g. ``draws=2000, width=100, depth=100, sde_steps=100``.
    """
    settings = make_settings(WeakSettings, settings, overrides)
    device = resolve_device(settings.device)
    models: dict[str, dict[str, Any]] = {}
    fits: dict[str, dict[str, dict[str, RateFit]]] = {}
    tasks = weak_tasks(settings)
    with runtime.threads(threads):
        started, clock = utc_now(), time.perf_counter()
        with tqdm(total=len(tasks), desc="weak study", unit="task", disable=not progress, leave=False) as bar:
            outputs = run_tasks(weak_task, tasks, settings.workers, on_result=lambda _: bar.update(1),
                                scheduler=settings.scheduler)
        for phi_name in settings.models:
            done = {part: [(out, sec) for task, (out, sec) in zip(tasks, outputs) if task.phi == phi_name
                           and task.part == part] for part in ("network", "sde", "weak")}
            net, sde = (np.concatenate([out for out, _ in done[part]]) for part in ("network", "sde"))
            seconds = sum(sec for part in ("network", "sde") for _, sec in done[part])
            models[phi_name] = _sc_check(phi_name, settings, net, sde, seconds)
            if settings.weak:
                models[phi_name]["weak"], fits[phi_name] = _weak_part(
                    settings, [out for out, _ in done["weak"]], sum(sec for _, sec in done["weak"]))
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=device, started=started,
                               wall_time_s=time.perf_counter() - clock, command=command_line,
                               dtypes={"sc_checks": settings.dtype, **({"weak_error": "float64"} if settings.weak else {})})
    return WeakResult(settings=settings, run_info=info, models=models, fits=fits)


# ----------------------------------------------------------------------------------------------- CLI
EPILOG = """\
examples:
  python -m validation.weak                                   # the paper's size: D = L = 500, 10 000 draws
  python -m validation.weak --width 250 --depth 250 --sde-steps 250   # half the depth, a quarter of the time
  python -m validation.weak --models tanh --draws 2000 --width 100 --depth 100 --plot weak.png --json weak.json
"""

COMMAND = cli.Command(
    prog="python -m validation.weak",
    description=__doc__.split("\n\n", 1)[1].rsplit("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=WeakSettings,
    run=run,
    estimate_mb=estimate_mb,
    estimate_seconds=estimate_seconds,
    csv_help="write the two-sample tests and the weak errors per depth, with their rate fits, as CSV to this file "
             "(one row each)",
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)


if __name__ == "__main__":
    cli.run_command_line(main)
