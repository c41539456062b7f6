"""What every study of a pair shares: its settings, building the pair, and its errors in blocks of samples.

A *pair study* takes one pair (``--model``: a shipped name, ``package.module:ClassName``, a
:class:`~limits.Pair` subclass or instance) and measures something on the network and the limit driven by the
same weights. The convergence, ablation and solver studies stand on this layer side by side; none imports
another study's names. It holds

* the settings, as small frozen mixins, each checked once by its own ``check()``:
  :class:`PairSettings` (the model and the study's size), :class:`RateFitSettings` (the rate fit, the
  equivalence test and the bootstrap's ``resamples``, the name the figures and training studies use too) and :class:`ShardingSettings` (blocks of samples on local processes or Dask);
* :func:`resolve_settings` / :func:`build_pair`: the model-dependent defaults (:data:`KIND_DEFAULTS`, then the
  pair's ``default_study``) and every check that needs the model, before anything is computed;
* :func:`study_errors_in_blocks`: the per-sample errors of the one-pass engine, computed block by block of
  samples (block k from the streams of ``block_seed(seed, k)``), here or on workers, merged in block order;
* the run's time and memory estimates (:func:`estimate_mb`, :func:`estimate_seconds`) and ``--list``
  (:func:`list_models`).

A new pair study declares ``class MySettings(ShardingSettings, RateFitSettings, PairSettings)`` (only the mixins
it uses), calls :func:`build_pair`, then :func:`study_errors_in_blocks` or its own pass, and returns a
:class:`~validation.core.results.StudyResult` (docs/design.md, "Adding a study").
"""

from __future__ import annotations

import dataclasses
import math
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

import torch
from tqdm.auto import tqdm

from limits.activations import ACTIVATION_NAMES, ActivationError, get_activation
from limits.closed_form_probe import check_pair
from limits.closed_forms import ClosedFormError
from limits.pairs import ModelConfig, Pair, PairError
from limits.registry import PAIRS, get_pair, pair_names
from limits.smooth import LENGTHSCALE_RANGE

from validation.core.one_pass import CHUNK_BUDGET, SAMPLE_BLOCK, StudyErrors, block_seed, merge_errors, sample_blocks, study_errors
from validation.core.settings import (MIN_CONFIDENCE,
    CommonSettings, SettingsError, check_choice, check_depths, check_float, check_int, check_power_of_two,
    defaults_by_value, optional_torch_dtype, parse_name_value, parse_power_of_two_list, resolve_device, setting,
    torch_dtype,
)
from validation.core.stats import load_fit_libraries
from validation.core.workers import LEAN_PROCESS_MB, check_workers, default_workers, run_memory_mb, run_tasks

if TYPE_CHECKING:
    from validation.core.cli import ArgumentGroup

__all__ = [
    "PairSettings", "ReferenceSettings", "RateFitSettings", "ShardingSettings", "KIND_DEFAULTS", "FIT_MODELS",
    "MAX_SAMPLES", "MAX_REFERENCE_STEPS", "FLOAT32_TOLERANCE", "FLOAT64_TOLERANCE", "FLOAT64_MIN_TOLERANCE",
    "pair_class", "fit_processes", "resolve_settings", "resolve_sizes", "build_pair", "model_spec", "add_model_arguments", "list_models", "estimate_mb",
    "estimate_seconds", "SampleBlock", "block_errors", "study_errors_in_blocks", "run_sample_blocks",
    "check_instance_runs_here", "block_fields",
]

#: study size when neither the settings nor the pair's ``default_study`` say otherwise. No depth is dropped
#: by hand: the corrected fit (docs/theory.md §6) models the pre-asymptotic bend, and drops a shallow depth
#: only when the model does not fit it (``fit_from`` stays available as an explicit override).
KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "sde": {"depths": (4, 8, 16, 32, 64, 128, 256), "samples": 500, "reference_factor": 32, "width": 10},
    "ode": {"depths": (8, 16, 32, 64, 128, 256, 512, 1024), "samples": 200, "width": 10},
}
#: the rate models of ``--fit-model``
FIT_MODELS = ("corrected", "power-law")
#: the tightest ODE tolerance an adaptive solver can meet in float32 (machine epsilon 1.2e-7), and the default
#: in float64
FLOAT32_TOLERANCE = 1e-6
FLOAT64_TOLERANCE = 1e-10
#: the tightest tolerance allowed in float64: below it dopri5 needs more steps than it can finish
FLOAT64_MIN_TOLERANCE = 1e-13
MAX_REFERENCE_STEPS = 1 << 24
MAX_SAMPLES = 10_000_000

S = TypeVar("S", bound="PairSettings")


# ------------------------------------------------------------------------------------------------ settings
def _defaults(cls: type[Pair]) -> dict[str, Any]:
    return {**KIND_DEFAULTS[cls.kind], **cls.default_study}


def shipped_default_text(key: str) -> str:
    """How ``--help`` states a size the model chooses (``width``): "the model's: " and each value the shipped
    pairs' ``default_study`` (or their kind's :data:`KIND_DEFAULTS`) give, with its models — from the registry, so
    it cannot drift from them (a user's pair brings its own)."""
    values = [(name, str(_defaults(get_pair(name))[key])) for name in pair_names()]
    stated = defaults_by_value("model", values) or ""
    return stated if stated.startswith("the model's") else f"the model's: {stated}"


@dataclass(frozen=True)
class PairSettings(CommonSettings):
    """The model and the size of a pair study; ``None`` means the model's default (see ``--list``)."""

    width: int | None = setting(None, "width d of the hidden state", parse=int, group="model",
                                default_text=shipped_default_text("width"))
    activation: str | None = setting(None, f"activation σ: {', '.join(ACTIVATION_NAMES)} (prelu:SLOPE)",
                                     group="model", default_text="the model's")
    weight_var: float | None = setting(None, "s²: i.i.d. weight entries have variance s²/d, ≥ 1e-6 (res1: 2 "
                                             "is He initialisation, the paper's choice); for the models that read it",
                                       parse=float, group="model", default_text="1")
    lengthscale: float | None = setting(None, "length-scale ℓ of the RBF kernel of smooth weights, 0.01 to "
                                              "1000 (ODE pairs, Cohen's smooth trend)", parse=float, group="model",
                                        default_text="0.1")
    input_dim: int | None = setting(None, "add an input layer h_0 = A x with x in R^n (A entries N(0, 1/n))",
                                    parse=int, group="model", default_text="none: h_0 = x ~ N(0, I_d)")
    beta: float | None = setting(None, "β of Cohen et al.'s scaling, per model: cohen-ode 0 ≤ β < 1 (0: the neural "
                                       "ODE of their §4.2), cohen-ode-noise 0 < β < 1, cohen-sde and cohen-sde-naive "
                                       "β ≥ 1", parse=float, group="model",
                                 default_text="the model's: 0.3 for cohen-ode, 0.7 for cohen-ode-noise, 1 for cohen-sde")
    options: Mapping[str, Any] = setting((), "a model-specific setting (repeatable); python -m validation.convergence --list "
                                                 "shows each model's",
                                         parse=parse_name_value, flag="--set", metavar="NAME=VALUE",
                                         action="append", group="model", default_text="none")
    depths: tuple[int, ...] | None = setting(None, "depths L: powers of two, increasing, as '4,8,16' or a range "
                                                   "'4:256'", parse=parse_power_of_two_list,
                                             default_text="the model's; SDE 4:256, ODE 8:1024")
    samples: int | None = setting(None, "number N of independent weight draws (paths)", parse=int,
                                  default_text="the model's; SDE 500, ODE 200")
    noise_dtype: str | None = setting(None, "SDE pairs: the type the Brownian path's normals are drawn in; then cast "
                                            "to --dtype; float32 draws them ~4× faster and leaves the strong error "
                                            "unaffected (network and limit read the same increments), but it is "
                                            "another path: the seed's numbers change (docs/theory.md §6)",
                                      choices=("float32", "float64"),
                                      default_text="float32")

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for a worker process) with the options as a plain dict: their read-only view cannot be."""
        return {**self.__dict__, "options": dict(self.options)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({**state, "options": types.MappingProxyType(dict(state["options"]))})

    def check(self) -> None:
        super().check()
        if self.width is not None:
            self._set("width", check_int("width", self.width, 1))
        if self.activation is not None:
            if not isinstance(self.activation, str):
                raise SettingsError("activation", f"{self.activation!r} is not an activation name")
            try:
                get_activation(self.activation)  # the name is checked here; the model checks what it needs
            except ActivationError as exc:
                raise SettingsError("activation", str(exc)) from None
        if self.weight_var is not None:
            # 0 makes every network the identity and every error 0 (no rate: it read FAIL); below 1e-6 the squared
            # errors reach the subnormals that the runs flush to zero (a large s² overflows: reported as NaN/inf)
            self._set("weight_var", check_float("weight_var", self.weight_var, 1e-6))
        if self.lengthscale is not None:
            self._set("lengthscale", check_float("lengthscale", self.lengthscale, *LENGTHSCALE_RANGE))
        if self.input_dim is not None:
            self._set("input_dim", check_int("input_dim", self.input_dim, 1))
        if self.beta is not None:
            self._set("beta", check_float("beta", self.beta))
        try:
            options = dict(self.options)
        except (TypeError, ValueError):
            raise SettingsError("options", f"{self.options!r} is not a mapping NAME → VALUE") from None
        self._set("options", types.MappingProxyType(options))
        if self.depths is not None:
            self._set("depths", check_depths("depths", self.depths, powers_of_two=True, maximum=MAX_REFERENCE_STEPS))
        if self.samples is not None:
            self._set("samples", check_int("samples", self.samples, 2, MAX_SAMPLES))
        if self.noise_dtype is not None:
            check_choice("noise_dtype", self.noise_dtype, ("float32", "float64"))

    @property
    def torch_noise_dtype(self) -> torch.dtype | None:
        """The torch type the path's normals are drawn in (None: the study's dtype)."""
        return optional_torch_dtype(self.noise_dtype)


@dataclass(frozen=True)
class ReferenceSettings(CommonSettings):
    """The limit's reference of a strong-error study: an SDE pair's fine Euler steps on the same path, an ODE pair's
    tolerances. A study that measures against no reference (the multilevel study's levels compare depth L with
    L/2) does not declare this mixin, so it has none of these flags."""

    reference_steps: int | None = setting(None, "SDE pairs: steps of the fine Euler reference on the same path; a "
                                                "power of two finer than the deepest depth; a second reference "
                                                "uses half", parse=int, default_text="32 × the deepest depth")
    rtol: float | None = setting(None, "ODE pairs: relative tolerance of the adaptive dopri5 reference (second "
                                       "reference: 100× looser)", parse=float,
                                 default_text="1e-10 in float64, 1e-6 in float32")
    atol: float | None = setting(None, "ODE pairs: absolute tolerance of the reference", parse=float,
                                 default_text="as --rtol")

    def check(self) -> None:
        super().check()
        if self.reference_steps is not None:
            self._set("reference_steps", check_power_of_two("reference_steps", self.reference_steps, 2))
            check_int("reference_steps", self.reference_steps, 2, MAX_REFERENCE_STEPS)
        minimum = FLOAT32_TOLERANCE if self.dtype == "float32" else FLOAT64_MIN_TOLERANCE
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if value is not None:
                value = check_float(name, value, 0, 1, strict_min=True)
                if value < minimum:
                    raise SettingsError(name, f"{value:g} is below what {self.dtype} can resolve (must be ≥ "
                                              f"{minimum:g} with --dtype {self.dtype})"
                                              + ("; use --dtype float64" if self.dtype == "float32" else ""))
                self._set(name, value)


@dataclass(frozen=True)
class RateFitSettings(CommonSettings):
    """How a rate is fitted and judged: the rate model, the fitted depths, the equivalence test's tolerance and
    the bootstrap interval."""

    fit_model: str = setting("corrected", "rate model: corrected = C L^-r (1 + c L^-q) with q the pair's next order, "
                                          "above the reference floor (docs/theory.md §6); power-law = a straight "
                                          "line in log–log", choices=FIT_MODELS, group="fit and verdict")
    fit_from: int | None = setting(None, "fit only depths ≥ this (pre-asymptotic depths dropped by hand, still "
                                         "shown in the table)", parse=int, group="fit and verdict",
                                   default_text="the model's; none: every depth above the reference floor")
    tolerance: float = setting(0.05, "δ of the equivalence test: PASS iff the whole rate interval lies in "
                                     "[theory − δ, theory + δ], FAIL iff it lies wholly outside, INCONCLUSIVE when "
                                     "it straddles an edge (more samples would settle it)", parse=float,
                               group="fit and verdict")
    confidence: float = setting(0.95, "level of the bootstrap intervals, 0.5 ≤ c < 1", parse=float,
                                group="fit and verdict")
    resamples: int = setting(2000, "bootstrap resamples of every interval (100 to 100000); --bootstrap is the same "
                                   "flag", parse=int, group="fit and verdict",
                             aliases=("--bootstrap",))

    def check(self) -> None:
        super().check()
        check_choice("fit_model", self.fit_model, FIT_MODELS)
        if self.fit_from is not None:
            self._set("fit_from", check_int("fit_from", self.fit_from, 1))
        self._set("tolerance", check_float("tolerance", self.tolerance, 0, strict_min=True))
        self._set("confidence", check_float("confidence", self.confidence, MIN_CONFIDENCE, 1, strict_max=True))
        self._set("resamples", check_int("resamples", self.resamples, 100, 100_000))


@dataclass(frozen=True)
class ShardingSettings(CommonSettings):
    """Blocks of samples, shared out to local processes or a Dask cluster with the numbers of one process."""

    sample_block: int = setting(SAMPLE_BLOCK, "samples per block: block k draws from its own streams (block 0 from the "
                                              "seed's), so the numbers depend on this, never on --workers or "
                                              "--scheduler", parse=int, group="run and output")
    workers: int | None = setting(None, "processes (each single-threaded) sharing the blocks of samples; the numbers "
                                        "never depend on it", parse=int, group="run and output",
                                  default_text=f"every core this process may use, {default_workers()} here; at most "
                                               "one per block, 1 on a GPU or for a Pair instance")
    scheduler: str | None = setting(None, "run the blocks of samples on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler)",
                                    group="run and output", default_text="none: --workers local processes")

    def check(self) -> None:
        super().check()
        self._set("sample_block", check_int("sample_block", self.sample_block, 1, MAX_SAMPLES))
        check_workers(self)


# ------------------------------------------------------------------------------------------------ the pair
def pair_class(model: str | type[Pair] | Pair) -> type[Pair]:
    """The pair class of ``model``: a Pair instance's class, or :func:`limits.get_pair` of a name, path or class."""
    return type(model) if isinstance(model, Pair) else get_pair(model)


def _reference(cls: type[Pair], settings: ReferenceSettings, defaults: dict[str, Any],
               depths: tuple[int, ...]) -> dict[str, Any]:
    """The reference's resolved settings: an SDE pair's Euler steps (its tolerances refused), an ODE pair's
    tolerances (its Euler steps refused)."""
    if cls.kind == "sde":
        for name in ("rtol", "atol"):
            if getattr(settings, name) is not None:
                raise SettingsError(name, f"applies to ODE pairs only; {cls.name} is an SDE pair (use "
                                          "--reference-steps)")
        reference = settings.reference_steps
        if reference is None:
            reference = defaults.get("reference_steps") or defaults["reference_factor"] * depths[-1]
            reference = max(reference, 2 * depths[-1])
            if reference > MAX_REFERENCE_STEPS:
                raise SettingsError("depths", f"the deepest depth {depths[-1]} needs a reference of {reference} Euler "
                                              f"steps by default, more than {MAX_REFERENCE_STEPS}; lower the depths "
                                              f"or give --reference-steps (≤ {MAX_REFERENCE_STEPS})")
        if reference <= depths[-1]:
            raise SettingsError("reference_steps", f"{reference} must be a power of two finer than the deepest "
                                                   f"depth {depths[-1]}")
        return {"reference_steps": reference}
    if settings.reference_steps is not None:
        raise SettingsError("reference_steps", f"applies to SDE pairs only; {cls.name} is an ODE pair (use "
                                               "--rtol)")
    floor = FLOAT32_TOLERANCE if settings.dtype == "float32" else FLOAT64_TOLERANCE
    if settings.dtype != "float32" and defaults.get("rtol") is not None:
        floor = defaults["rtol"]  # a pair whose errors fall fast asks for a tighter reference (float64 only)
    rtol = settings.rtol if settings.rtol is not None else floor
    return {"rtol": rtol, "atol": settings.atol if settings.atol is not None else rtol}


def resolve_settings(cls: type[Pair], settings: S) -> S:
    """The settings with every model-dependent default filled in (depths, samples, width, fit start, the
    reference), and the checks that need the model (an SDE flag on an ODE pair and the reverse)."""
    defaults = _defaults(cls)
    depths = tuple(settings.depths or defaults["depths"])
    changes: dict[str, Any] = {
        "depths": depths,
        "samples": settings.samples or defaults["samples"],
        "width": settings.width or defaults["width"],
    }
    if isinstance(settings, RateFitSettings):
        # a recommended fit_from belongs to the recommended depths: with depths of one's own, the window rule decides
        changes["fit_from"] = (settings.fit_from if settings.fit_from is not None else
                               (defaults.get("fit_from") if not settings.depths else None))
    if isinstance(settings, ReferenceSettings):
        changes.update(_reference(cls, settings, defaults, depths))
    if cls.kind == "sde":
        # drawn in float32 unless asked otherwise: every reader reads the same increments (docs/theory.md §6)
        changes["noise_dtype"] = settings.noise_dtype or "float32"
    elif settings.noise_dtype is not None:
        raise SettingsError("noise_dtype", f"applies to SDE pairs only; {cls.name} is an ODE pair (its smooth "
                                           "weights are drawn in --dtype)")
    elif getattr(settings, "compile_steps", False):  # the ODE pass (study_errors) never compiles: it was ignored
        raise SettingsError("compile_steps", f"applies to SDE pairs only; {cls.name} is an ODE pair (its pass is "
                                             "never compiled)")
    fit_from = changes.get("fit_from")
    if fit_from is not None and sum(L >= fit_from for L in depths) < 2:
        raise SettingsError("fit_from", f"{fit_from} leaves fewer than two of the depths {list(depths)}")
    return dataclasses.replace(settings, **changes)


def resolve_sizes(model: str | type[Pair] | Pair, settings: S) -> tuple[type[Pair], S]:
    """The pair class and the settings resolved for it (every study-level check made; nothing built)."""
    cls = pair_class(model)
    if isinstance(model, Pair):
        settings = dataclasses.replace(settings, samples=model.samples, width=model.width)
    return cls, resolve_settings(cls, dataclasses.replace(settings, width=settings.width or _defaults(cls)["width"]))


def build_pair(model: str | type[Pair] | Pair, settings: S, *, first_block: bool = False) -> tuple[Pair, S]:
    """The pair and the resolved settings, with every check that needs the model made — nothing is computed.

    A Pair instance brings its own samples, width, seed, dtype and device (settings that contradict it are an
    error). A pair the package does not ship has its closed forms probed against its primary methods
    (:func:`limits.closed_form_probe.check_pair`; PairError naming the one that disagrees). The resolved settings name the values the model chose for the fields it reads (activation, weight
    variance, length-scale, β), so that ``run(model_spec, **settings)`` repeats the run. With ``first_block``
    the pair built is that of the first block of samples (at most ``sample_block`` of them).
    """
    if isinstance(model, Pair):
        pair = model
        fixed = {"samples": pair.samples, "width": pair.width, "seed": pair.seed,
                 "dtype": str(pair.dtype).replace("torch.", ""), "device": str(pair.device)}
        defaults = type(settings)()
        for name, value in fixed.items():
            given = getattr(settings, name)
            if given not in (None, getattr(defaults, name), value):
                raise SettingsError(name, f"{given!r} conflicts with the pair object's {name}={value!r} (a Pair "
                                          "instance fixes it; pass the class or its name to choose it here)")
        resolved = resolve_settings(type(pair), dataclasses.replace(settings, **fixed))
    else:
        cls = get_pair(model)
        config = _config(cls, settings)
        resolved = resolve_settings(cls, dataclasses.replace(settings, width=config.width))
        block = getattr(resolved, "sample_block", resolved.samples)
        samples = min(resolved.samples, block) if first_block else resolved.samples
        pair = cls(config, samples, seed=resolved.seed, dtype=resolved.torch_dtype,
                   device=resolve_device(resolved.device))
    if type(pair) not in PAIRS.values():   # a user's pair: its closed forms must restate its methods (the shipped
        try:                               # pairs' are checked by tests/test_closed_forms.py)
            check_pair(pair)
        except ClosedFormError as exc:
            raise PairError(str(exc)) from None
    _check_theory_rate(pair)
    chosen = {"activation": pair.activation.name, "weight_var": pair.weight_var, "lengthscale": pair.lengthscale,
              "beta": pair.beta}
    resolved = dataclasses.replace(resolved, **{k: v for k, v in chosen.items() if k in pair.config_fields})
    return pair, resolved


def _check_theory_rate(pair: Pair) -> None:
    """A pair's predicted rate must be a finite number: every verdict is read against it, and a NaN one ran the whole
    study to an INCONCLUSIVE that no sample count could settle."""
    rate = pair.theory_rate
    try:
        finite = math.isfinite(float(rate))
    except (TypeError, ValueError):
        finite = False
    if not finite:
        raise PairError(f"{pair.name}: theory_rate {rate!r}: must be a finite number")


def _config(cls: type[Pair], settings: Any) -> ModelConfig:
    """The model configuration the settings ask of pair class ``cls`` (its default width where they give none)."""
    return ModelConfig(width=settings.width or _defaults(cls)["width"], activation=settings.activation,
                       weight_var=settings.weight_var, lengthscale=settings.lengthscale, input_dim=settings.input_dim,
                       beta=settings.beta, options=dict(settings.options))


def _noise_channels(model: str | type[Pair] | Pair, cls: type[Pair], settings: Any) -> int:
    """m, the Brownian channels per sample of an SDE pair with these settings (a pair of one sample is built: the
    count is the instance's ``noise_dim``); d² + d where it cannot be built (the run will say why)."""
    fallback = settings.width * settings.width + settings.width
    try:
        pair = model if isinstance(model, Pair) else cls(_config(cls, settings), 1, seed=settings.seed,
                                                        dtype=settings.torch_dtype)
        return max(fallback, int(pair.noise_dim))
    except Exception:  # noqa: BLE001 (an estimate: a pair that cannot be built is reported by the run itself)
        return fallback


def model_spec(model: str | type[Pair] | Pair) -> str:
    """A text naming the model that :func:`limits.get_pair` accepts: the name or path given, else
    ``module:ClassName`` of its class."""
    if isinstance(model, str):
        return model
    cls = model if isinstance(model, type) else type(model)
    return cls.name if cls.name in pair_names() and get_pair(cls.name) is cls else f"{cls.__module__}:{cls.__qualname__}"


def add_model_arguments(group: ArgumentGroup) -> None:
    """The ``--model`` and ``--list`` flags of a study of one pair (an argparse group; ``cli.Command.add_arguments``)."""
    group.add_argument("--model", default="res1",
                       help="the pair: a name from --list, or your own, module:Class or file.py:Class (default: res1)")
    group.add_argument("--list", action="store_true", help="list the models, their rates and settings, and exit")


def list_models() -> str:
    """Every shipped model with its kind, theory source, default activation and settings (``--list``)."""
    lines = []
    for name in pair_names():
        cls = get_pair(name)
        lines.append(f"{name:18s} [{cls.kind}] {cls.description}")
        reads = ", ".join(["width", *sorted(cls.config_fields)])
        lines.append(f"{'':18s} theory: {cls.theory_source}; default activation {cls.default_activation}; "
                     f"reads {reads}")
        for key, spec in cls.option_specs.items():
            default = "default: none" if spec.default in ("", None) else f"default {spec.default!r}"
            lines.append(f"{'':18s} --set {key}=… ({default}): {spec.help}")
    lines.append("your own pair: --model package.module:ClassName or path/to/file.py:ClassName "
                 "(a subclass of limits.SDEPair or limits.ODEPair; see docs/howto/own_model.md)")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ estimates
def _sharding(settings: PairSettings) -> tuple[int, int, str | None]:
    """(sample block, workers, scheduler) of a study, one block in one process when it does not shard; workers not
    given: :func:`validation.core.workers.default_workers`, at most one per block."""
    if isinstance(settings, ShardingSettings):
        workers = settings.workers
        if workers is None:
            workers = min(default_workers(settings.device), len(sample_blocks(settings.samples, settings.sample_block)))
        return settings.sample_block, workers, settings.scheduler
    return MAX_SAMPLES, 1, None


#: the working memory of a block over the arrays an estimate counts (torch's allocator, the temporaries between them)
WORKING_FACTOR = 1.15


def fit_processes(settings: PairSettings, fits: int) -> int:
    """The local processes a study's ``fits`` independent rate fits run in side by side: one per fit, at most the
    study's ``workers`` (every core when not given, :func:`validation.core.workers.default_workers`)."""
    return min(fits, getattr(settings, "workers", None) or default_workers(settings.device))


#: what a forked worker of a pair study holds beyond its arrays: its own copies of the pages of the study's process
#: that it writes to (the reference counts of the objects it reads, its first allocations). Measured with
#: ``benchmarks/bench_memory.py --sizes``: the convergence study with two workers peaked at 423 MiB, against
#: 265 MiB for the process and 2 × 45 MiB of arrays
FORKED_WORKER_MB = 35.0


#: a rate fit's memory over its bootstrap's batch of resampled data: the statistic's temporaries (the corrected fit's
#: profile over its grid, the per-depth errors). Measured: the convergence study in one process (its fits after its
#: blocks) peaked at 342 MiB, 260 for the process and 56 MiB of resampled data
BOOTSTRAP_FACTOR = 1.45


def estimate_mb(model: str | type[Pair] | Pair, settings: PairSettings, working_factor: float = WORKING_FACTOR,
                fits_in_workers: bool = False) -> float:
    """An estimate of the run's peak memory in MiB (before anything is allocated): the larger of two phases — the blocks
    (per process its block's arrays: states, Brownian steps, weights, times ``working_factor``; the interpreter once,
    :func:`validation.core.workers.run_memory_mb`) and the rate fits (each fit's bootstrap batch, in every process
    that fits: ``fits_in_workers``, the convergence study's five fits side by side in local workers) — and the
    per-sample results in the study's process.
    ``benchmarks/bench_memory.py`` measures it within 25 % of the peak (tests/test_memory_estimates.py)."""
    cls, s = resolve_sizes(model, settings)
    block, workers, scheduler = _sharding(s)
    # one block of samples is in memory per process; the per-sample results of all of them in the parent
    samples, width, depths = min(s.samples, block), s.width, s.depths
    item = s.torch_dtype.itemsize
    state = samples * width * item * (4 * len(depths) + 8)
    if cls.kind == "sde":
        # the one pass (validation.core.one_pass): a block of the path's normals as drawn, and a chunk's increments,
        # dyadic levels and temporaries in the study's dtype
        per_step = samples * _noise_channels(model, cls, s)   # d² + d for the shipped pairs; a user pair's own m
        block_numbers = max(2 * per_step, min(1 << 23, per_step * s.reference_steps))
        chunk_numbers = min(block_numbers, max(2 * per_step, CHUNK_BUDGET))
        noise_item = 4 if s.noise_dtype == "float32" else item
        work = block_numbers * noise_item + 3 * chunk_numbers * item
    else:
        terms = 40  # Karhunen–Loève terms of the smooth weights (29 at ℓ = 0.1; more for shorter ℓ)
        per_time = 2 * samples * width * width
        work = (terms + 8) * per_time * item + min(1 << 22, per_time * depths[-1]) * item
    # the arrays counted, times 1.15 for torch's allocator and the temporaries between them (measured 1.03 of them in
    # a forked worker, 1.25 in the study's own process: res1's defaults); the interpreter once (forked workers share it),
    # without scipy.stats and matplotlib (a --plot's matplotlib, about 35 MiB, is not counted)
    forked = FORKED_WORKER_MB * workers if workers > 1 and scheduler is None else 0.0
    blocks = run_memory_mb(working_factor * (state + work) / 2**20, workers, scheduler, process_mb=LEAN_PROCESS_MB)
    # then the rate fits, in this process or side by side in forked workers (validation.convergence): each holds a
    # batch of its bootstrap's resampled data (at most 2^23 numbers) and the statistic's temporaries
    resamples = getattr(s, "resamples", 2000)
    fit = BOOTSTRAP_FACTOR * 8 * min(1 << 23, resamples * s.samples * len(depths)) / 2**20
    fitters = fit_processes(s, 5) if fits_in_workers else 1
    fits = LEAN_PROCESS_MB + fitters * fit + (FORKED_WORKER_MB * fitters if fitters > 1 else 0.0)
    results = 5 * 8 * s.samples * len(depths) / 2**20  # the per-sample errors, in the study's process throughout
    return max(blocks + forked, fits) + results


#: seconds per Brownian normal of an SDE study drawn and computed in float64 (the random-number floor, 35 M
#: normals/s, times the engine's measured 1.3 and the fits' share)
SECONDS_PER_NORMAL = 4e-8


def estimate_seconds(model: str | type[Pair] | Pair, settings: PairSettings) -> float:
    """A rough estimate of an SDE study's run time (its random numbers); ODE studies are not estimated (0)."""
    cls, s = resolve_sizes(model, settings)
    if cls.kind != "sde":
        return 0.0
    block, workers, scheduler = _sharding(s)
    normals = s.samples * s.reference_steps * (s.width * s.width + s.width)
    parallel = min(workers, len(sample_blocks(s.samples, block))) if scheduler is None else 1
    # float32 throughout: a quarter; a float32 path read in float64 (the default): 0.45 (res1: 4.1 s against 9.4 s)
    share = 0.25 if s.dtype == "float32" else 0.45 if s.noise_dtype == "float32" else 1.0
    return normals * SECONDS_PER_NORMAL * share / parallel


# ------------------------------------------------------------------------------------------------ blocks
@dataclass(frozen=True)
class SampleBlock:
    """Block ``index`` of a study: ``size`` samples of the model (a pair name or ``module:Class`` text, or the
    class itself in this process) with ``config``, drawn from the streams of ``block_seed(seed, index)``."""

    model: str | type[Pair]
    config: ModelConfig
    index: int
    size: int
    seed: int
    dtype: str
    device: str
    depths: tuple[int, ...]
    reference_steps: int
    rtol: float
    atol: float
    noise_dtype: str | None
    progress: bool = False
    compile_steps: bool = False


def block_errors(block: SampleBlock) -> StudyErrors:
    """The errors of one block of samples (a task of :func:`validation.core.workers.run_tasks`)."""
    cls = get_pair(block.model) if isinstance(block.model, str) else block.model
    pair = cls(block.config, block.size, seed=block_seed(block.seed, block.index), dtype=torch_dtype(block.dtype),
               device=resolve_device(block.device))
    return study_errors(pair, list(block.depths), reference_steps=block.reference_steps, seed=pair.seed,
                        rtol=block.rtol, atol=block.atol, progress=block.progress,
                        noise_dtype=optional_torch_dtype(block.noise_dtype), compile_steps=block.compile_steps)


def block_fields(settings: PairSettings) -> dict[str, Any]:
    """The fields every block of a study shares (a :class:`SampleBlock`'s, but its model, index, size, progress)."""
    return dict(seed=settings.seed, dtype=settings.dtype, device=settings.device, depths=tuple(settings.depths),
                reference_steps=settings.reference_steps or 0, rtol=settings.rtol or 0.0, atol=settings.atol or 0.0,
                noise_dtype=settings.noise_dtype, compile_steps=getattr(settings, "compile_steps", False))


def check_instance_runs_here(model: str | type[Pair] | Pair, settings: PairSettings) -> None:
    """A Pair instance is one block, run in this process: refuse workers or a scheduler for it."""
    _, _, scheduler = _sharding(settings)
    workers = getattr(settings, "workers", None) or 1  # as given: not given, a Pair instance runs here
    if isinstance(model, Pair) and (workers > 1 or scheduler is not None):
        raise SettingsError("workers", "a Pair instance runs here, as one block; pass its class or name to share "
                                       "blocks of samples out to workers")


def run_sample_blocks(model: str | type[Pair], pair: Pair, settings: PairSettings, function: Callable[[Any], Any],
                      make_task: Callable[[str | type[Pair], int, int, bool], Any], progress: bool = False) -> list[Any]:
    """``function(task)`` for every block of samples of the study (engine module docstring), in block order, here or
    on the workers of ``settings`` (a :class:`ShardingSettings`). ``make_task(model, index, size, progress)`` builds
    block ``index``'s task: ``model`` is the class itself here, on workers the name or path text given (a worker
    imports it); ``progress`` is on only when the block runs here."""
    block, workers, scheduler = _sharding(settings)
    blocks = sample_blocks(settings.samples, block)
    local = scheduler is None and (workers <= 1 or len(blocks) == 1)
    reference = model if isinstance(model, str) and not local else type(pair)
    tasks = [make_task(reference, index, size, progress and local) for index, size in blocks]
    with tqdm(total=len(tasks), desc=f"{pair.name}: blocks of samples", unit="block",
              disable=not progress or len(tasks) == 1, leave=False) as bar:
        # this process fits the rates after: it imports the fits' scipy while the workers compute
        return run_tasks(function, tasks, 1 if local else workers, on_result=lambda _: bar.update(1),
                         scheduler=scheduler, meanwhile=None if local else load_fit_libraries)


def study_errors_in_blocks(model: str | type[Pair] | Pair, pair: Pair, settings: PairSettings,
                           progress: bool = False) -> StudyErrors:
    """The study's per-sample errors at every depth (:func:`validation.core.one_pass.study_errors`), block by block of
    samples (:func:`run_sample_blocks`); a Pair instance is one block, run here. ``pair`` is :func:`build_pair`'s
    (the first block's)."""
    common = block_fields(settings)
    check_instance_runs_here(model, settings)
    if isinstance(model, Pair):
        errors = study_errors(pair, list(settings.depths), reference_steps=common["reference_steps"],
                              seed=settings.seed, rtol=common["rtol"], atol=common["atol"], progress=progress,
                              noise_dtype=settings.torch_noise_dtype, compile_steps=common["compile_steps"])
        errors.reference["sample_blocks"] = 1
        return errors
    parts = run_sample_blocks(model, pair, settings, block_errors,
                              lambda reference, index, size, shown: SampleBlock(reference, pair.config, index, size,
                                                                                progress=shown, **common),
                              progress)
    errors = merge_errors(parts)
    errors.reference["sample_blocks"] = len(parts)
    return errors
