"""``python -m validation.training``: the papers' trained-network experiments, on data that ships offline.

    python -m validation.training --list
    python -m validation.training --experiment marion-fig8      # regularity of trained weights
    python -m validation.training --experiment marion-fig9      # accuracy over (H, β) after training
    python -m validation.training --experiment cohen-scaling    # β̂ of trained weights, Hypothesis 1 vs 2
    python -m validation.training --experiment pf-sgd           # reparametrised against standard SGD

Each experiment's preset is its paper setting reduced to run in at most 10 minutes on 2 CPU cores (the
measured times are in docs/howto/training.md); every preset value can be changed by its flag, and a flag
the experiment does not use is refused. Data: scikit-learn's bundled digits stand in for MNIST, and
Cohen et al.'s synthetic set is generated; MNIST, Fashion-MNIST and CIFAR-10 are read only from local
files (``--data-dir``), never downloaded.

**Sweeps are checkpointed**: each finished configuration is written to ``--checkpoint-dir`` at once;
after an interruption (Ctrl-C, SIGTERM, kill) the same command with ``--resume`` continues without
training a finished configuration again, and gives the same numbers as an uninterrupted run.

Every run is seeded: the same seed gives the same numbers on the same device and dtype (float32 by
default here: training is not a strong-error measurement, and float32 is about 2.7× faster). Subnormal
numbers are flushed to zero during training (a saturated tanh's derivative underflows to them, and a CPU
computes them far slower).

Python: ``validation.training.run("cohen-scaling", depths=(8, 16, 32))`` returns a :class:`TrainingResult`.

Exit status: 0 PASS, 1 FAIL, 2 bad input, 3 internal error, 130/143 interrupted (finished configurations
stay checkpointed).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch
from tqdm.auto import tqdm

from ..core import cli, runtime
from ..core.results import RunInfo, StudyResult, git_commit, LONG_CSV_HELP, long_rows, to_jsonable
from ..core.settings import (MIN_CONFIDENCE, CommonSettings, SettingsError, check_choice, check_float, check_int,
                             distinct_names, make_settings, parse_float_list, parse_grid, parse_int_list,
                             refuse_inapplicable, resolve_device, setting, settings_dict, settings_given)
from ..core.workers import PROCESS_MB, check_workers, default_workers, run_memory_mb, run_tasks
from .data import DATASETS, SYSTEM_FOLDERS, Dataset, find_images, load_dataset
from .catalogue import EXPERIMENTS
from .experiment import Experiment
from .networks import PF_STANDARD_INITS
from .sweep import CheckpointStore, Configuration, fingerprint

__all__ = ["TrainingSettings", "TrainingResult", "run", "main", "EXPERIMENTS", "listing", "COMMAND"]

#: the floating-point type of an experiment whose preset names none (training is not a strong-error measurement)
DEFAULT_DTYPE = "float32"
#: settings that never enter the checkpoint fingerprint (they do not change the numbers)
_RUN_ONLY = ("checkpoint_dir", "resume", "resume_any", "data_dir", "workers", "scheduler")


def _parse_names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _parse_layouts(text: str) -> tuple[tuple[int, ...], ...]:
    """``2-2-2-2,3-4-6-3``: layouts n₁-n₂-n₃-n₄, comma separated."""
    try:
        return tuple(tuple(int(n) for n in part.strip().split("-")) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not a comma list of layouts n1-n2-n3-n4 such as 2-2-2-2,3-4-6-3") from None


def _parse_inits(text: str) -> tuple[str, ...]:
    """A comma list of names; ``none`` is the empty list."""
    return () if text.strip() == "none" else _parse_names(text)


@dataclass(frozen=True)
class TrainingSettings(CommonSettings):
    """Settings of the training experiments; ``None`` means the experiment's preset value."""

    dtype: str | None = setting(None, "floating-point type of training: float32 or float64",
                                choices=("float32", "float64"), group="run and output", default_text=DEFAULT_DTYPE)
    dataset: str | None = setting(None, "data set: " + "; ".join(f"{k} ({v})" for k, v in DATASETS.items())
                                  + "; auto (CIFAR-10 if --data-dir holds it, else Fashion-MNIST from --data-dir or "
                                  f"{SYSTEM_FOLDERS['fashion-mnist']}, else digits)",
                                  choices=(*DATASETS, "auto"), group="model")
    datasets: tuple[str, ...] | None = setting(None, "cohen-scaling: data sets, comma list", parse=_parse_names,
                                               group="model")
    depths: tuple[int, ...] | None = setting(None, "depths L, increasing comma list", parse=parse_int_list,
                                             group="model")
    width: int | None = setting(None, "width d (cohen-conv: the channels of the first stage; the stages have 1, 2, 4, "
                                      "8 times as many)", parse=int, group="model")
    stages: tuple[tuple[int, ...], ...] | None = setting(
        None, "cohen-conv: the stage repeats n1-n2-n3-n4 of each network (depth L = n1+n2+n3+n4, every n ≥ 2), comma "
              "list, e.g. 2-2-2-2,3-4-6-3; replaces --depths", parse=_parse_layouts, group="model",
        default_text="the authors' layouts of --depths")
    hidden: int | None = setting(None, "marion2024-fig1, chaintron2026-linear: hidden width M of each residual block",
                                 parse=int, group="model")
    hiddens: tuple[int, ...] | None = setting(None, "chaintron2026-linear: hidden widths M of the width sweep; "
                                                    "chaintron2026-grid: the grid's M; increasing comma list", parse=parse_int_list, group="model")
    depth: int | None = setting(None, "chaintron2026-linear: the depth L of the width and embedding sweeps",
                                parse=int, group="model")
    widths: tuple[int, ...] | None = setting(None, "pf-sgd: widths D; chaintron2026-linear, -nonlinear: embedding "
                                                   "dimensions D of the embedding sweep; chaintron2026-grid: the grid's D; comma "
                                                   "list", parse=parse_int_list,
                                             group="model")
    activation: str | None = setting(None, "σ of the residual blocks (marion: relu, tanh, …)", group="model")
    activations: tuple[str, ...] | None = setting(None, "cohen-scaling: set-ups, comma list of tanh (shared "
                                                        "δ ≥ 0) and relu (one δ_k per layer); "
                                                        "trained-ode-convergence: relu, sigmoid, tanh",
                                                  parse=_parse_names, group="model")
    inits: tuple[str, ...] | None = setting(None, "marion-fig8: initialisations, comma list of iid (i.i.d., β = 1/2), "
                                                  "smooth (β = 1) and iid-beta1 (i.i.d., β = 1); "
                                                  "trained-ode-convergence: iid, smooth (each at every --betas)", parse=_parse_names,
                                            group="model")
    standard_inits: tuple[str, ...] | None = setting(
        None, "pf-sgd: also train the standard-gradient network from these commonly used initialisations of ΔW "
              "(biases 0), each with its own common learning rate, and check it against the reparametrised one; "
              "comma list of glorot (N(0, 2/(fan_in+fan_out))), glorot-uniform (U(±√(6/(fan_in+fan_out)))) and he "
              "(N(0, 2/fan_in)), or none", parse=_parse_inits, group="model")
    hursts: tuple[float, ...] | None = setting(None, "marion-fig9: Hurst indices H of the fBm initialisation "
                                                     "('a:b:n' or a comma list)", parse=parse_grid, group="model")
    betas: tuple[float, ...] | None = setting(None, "marion-fig9, depth-transfer, trained-ode-convergence: scalings β (α_L = L^-β; 'a:b:n' "
                                                    "or a comma list)", parse=parse_grid,
                                              group="model")
    alpha_exponents: tuple[float, ...] | None = setting(None, "chizat2025-alpha: exponents a of the residual scale's "
                                                              "α = (M/M₀)^a, M₀ the smallest of --hiddens (comma list, "
                                                              "each in [0, 1])", parse=parse_float_list,
                                                        group="model")
    init: str | None = setting(None, "cohen-scaling: initialisation of A, b (xavier: std s/d; xavier-depth: "
                                     "std s/(L d))", choices=("xavier", "xavier-depth"), group="model")
    init_scale: float | None = setting(None, "cohen-scaling: s in the initial standard deviations",
                                       parse=float, group="model")
    epochs: int | None = setting(None, "passes over the training set (cohen-scaling: at most, with early stopping; "
                                       "given, it replaces the per-data-set values)", parse=int, group="training",
                                 default_text="5 on cohen-synthetic, 10 on digits-25, the paper's")
    batch_size: int | None = setting(None, "examples per update (cohen-scaling: given, it replaces the per-data-set "
                                           "values)", parse=int, group="training",
                                     default_text="32 on cohen-synthetic, 50 on digits-25, the paper's")
    optimizer: str | None = setting(None, "sgd or adam", choices=("sgd", "adam"), group="training")
    momentum: float | None = setting(None, "cohen-conv: SGD's momentum", parse=float, group="training")
    weight_decay: float | None = setting(None, "cohen-conv: SGD's weight decay (L2 penalty added to the gradient)",
                                         parse=float, group="training")
    lr_schedule: str | None = setting(None, "cohen-conv: learning-rate schedule over the epochs: constant, or cosine "
                                            "(lr·½(1 + cos(π e/epochs)) in epoch e)", choices=("constant", "cosine"),
                                      group="training")
    learning_rates: tuple[float, ...] | None = setting(None, "learning rate(s), comma list (a grid: the best "
                                                             "is kept per configuration where the experiment "
                                                             "says so)", parse=parse_float_list,
                                                       group="training")
    replicates: int | None = setting(None, "independent networks per configuration (own initialisation and data "
                                           "order; the unit of every interval)", parse=int, group="training")
    max_updates: int | None = setting(None, "cohen-scaling: at most this many updates (T_max)", parse=int,
                                      group="training", default_text="no limit")
    stop_loss: float | None = setting(None, "cohen-scaling: ε, a replicate stops when its training loss is below "
                                            "this (which loss, and when: --stop-rule)",
                                      parse=float, group="training")
    stop_rule: str | None = setting(None, "cohen-scaling: early stopping of each replicate. epoch (the authors' code): "
                                          "at the end of each epoch, stop when the mean of that epoch's mini-batch "
                                          "losses is below --stop-loss, or after --plateau-patience epochs in a row "
                                          "whose mean is not below 0.99 × the best epoch mean so far; batch: stop right after the "
                                          "first mini-batch whose loss is below --stop-loss, even mid-epoch",
                                    choices=("epoch", "batch"), group="training")
    plateau_patience: int | None = setting(None, "cohen-scaling, --stop-rule epoch: stop a replicate after this many "
                                                 "epochs in a row whose mean loss is not below 0.99 × its best epoch mean "
                                                 "(0: never; ignored by --stop-rule batch)", parse=int, group="training")
    input_norm: str | None = setting(None, "cohen-scaling: the inputs x of cohen-synthetic and digits-25: unit (each "
                                           "scaled to unit norm after its target is computed, the authors' code) or "
                                           "none (as generated)", choices=("unit", "none"), group="training")
    train_size: int | None = setting(None, "use only this many training examples", parse=int, group="training",
                                     default_text="all")
    confidence: float = setting(0.95, "level of every interval, 0.5 ≤ c < 1", parse=float, group="fit and verdict")
    resamples: int = setting(2000, "bootstrap resamples", parse=int, group="fit and verdict")
    checkpoint_dir: str | None = setting(".checkpoints", "folder of the per-configuration checkpoints ('none': "
                                                         "keep none)", group="run and output")
    resume: bool = setting(False, "reuse the finished configurations checkpointed by an earlier run of the same "
                                  "settings (nothing finished is trained again)", action="store_true",
                           group="run and output")
    resume_any: bool = setting(False, "with --resume, reuse checkpoints written by another commit of the code too "
                                      "(refused by default, naming both commits: other code may give other numbers)",
                               action="store_true", group="run and output")
    data_dir: str | None = setting(None, "folder of the files of --dataset mnist / fashion-mnist (the four IDX "
                                         "files train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], "
                                         "t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz], or "
                                         "mnist.npz / fashion-mnist.npz) or cifar10 (cifar10.npz, or the binary "
                                         "version's data_batch_1.bin … data_batch_5.bin and test_batch.bin, there or "
                                         "in cifar-10-batches-bin/; the pickled version is refused); nothing is ever "
                                         "downloaded", group="run and output")
    workers: int | None = setting(None, "processes (each single-threaded) training the configurations side by side; "
                                        "an experiment of one configuration (the lockstep ones) steps its networks "
                                        "on this many threads instead; the numbers never depend on it", parse=int,
                                  group="run and output",
                                  default_text=f"every core this process may use, {default_workers()} here; 1 on a GPU")
    scheduler: str | None = setting(None, "train the configurations on Dask instead: local:N (a local cluster of N "
                                          "single-threaded workers) or tcp://HOST:PORT (a running scheduler, whose "
                                          "workers read --data-dir at the same path); checkpoints are written here, "
                                          "so --resume works the same", group="run and output",
                                    default_text="none: --workers local processes")
    experiment: str = setting("marion-fig8", "the experiment (resolved)", cli=False)

    def check(self) -> None:
        super().check()
        check_workers(self)
        if self.checkpoint_dir in ("none", ""):
            self._set("checkpoint_dir", None)
        if self.resume_any and not self.resume:
            raise SettingsError("resume_any", "applies with --resume only (it says which checkpoints --resume reuses)")
        positive_ints = {"width": (1, 4096), "hidden": (1, 4096), "depth": (1, 100_000), "epochs": (1, 100_000), "batch_size": (1, 1_000_000),
                         "replicates": (1, 1024), "max_updates": (1, 10**9), "train_size": (1, 10**9),
                         "plateau_patience": (0, 100_000)}
        for name, (low, high) in positive_ints.items():
            if getattr(self, name) is not None:
                self._set(name, check_int(name, getattr(self, name), low, high))
        self._set("resamples", check_int("resamples", self.resamples, 100, 1_000_000))
        self._set("confidence", check_float("confidence", self.confidence, MIN_CONFIDENCE, 1, strict_max=True))
        if self.stop_loss is not None:
            self._set("stop_loss", check_float("stop_loss", self.stop_loss, 0, strict_min=True))
        if self.init_scale is not None:
            self._set("init_scale", check_float("init_scale", self.init_scale, 0))
        if self.momentum is not None:
            self._set("momentum", check_float("momentum", self.momentum, 0, 1, strict_max=True))
        if self.weight_decay is not None:
            self._set("weight_decay", check_float("weight_decay", self.weight_decay, 0, 1))
        if self.stages is not None:
            self._check_stages()
        if self.depths is not None:
            depths = tuple(check_int("depths", d, 1, 100_000) for d in self.depths)
            if not depths or any(b <= a for a, b in zip(depths, depths[1:])):
                raise SettingsError("depths", f"{list(depths)}: give increasing depths, each ≥ 1")
            self._set("depths", depths)
        if self.widths is not None:
            self._set("widths", tuple(check_int("widths", w, 1, 1_000_000) for w in self.widths))
        if self.hiddens is not None:
            self._set("hiddens", tuple(check_int("hiddens", m, 1, 1_000_000) for m in self.hiddens))
        for name, low, high in (("hursts", 0, 1), ("betas", 0, 5)):
            values = getattr(self, name)
            if values is not None:
                values = tuple(check_float(name, v, low, high, strict_min=name == "hursts",
                                           strict_max=name == "hursts") for v in values)
                if not values:
                    raise SettingsError(name, "give at least one value")
                self._set(name, values)
        if self.learning_rates is not None:
            rates = tuple(check_float("learning_rates", v, 0, strict_min=True) for v in self.learning_rates)
            if not rates:
                raise SettingsError("learning_rates", "give at least one learning rate")
            self._set("learning_rates", rates)
        for name, allowed in (("datasets", tuple(DATASETS)), ("activations", ("tanh", "relu", "sigmoid")),
                              ("inits", ("iid", "smooth", "iid-beta1"))):
            values = getattr(self, name)
            if values is not None:
                if not values:
                    raise SettingsError(name, f"give at least one of {', '.join(allowed)}")
                self._set(name, distinct_names(name, [check_choice(name, v, allowed) for v in values]))
        if self.standard_inits is not None:
            inits = tuple(check_choice("standard_inits", v, PF_STANDARD_INITS) for v in self.standard_inits)
            if len(set(inits)) != len(inits):
                raise SettingsError("standard_inits", f"{list(inits)}: give each initialisation once")
            self._set("standard_inits", inits)
        if self.activation is not None:
            from limits.activations import get_activation

            try:
                get_activation(self.activation)
            except ValueError as exc:
                raise SettingsError("activation", str(exc)) from None


    def _check_stages(self) -> None:
        layouts = self.stages
        if not layouts:
            raise SettingsError("stages", "give at least one layout n1-n2-n3-n4")
        for layout in layouts:
            if len(layout) != 4 or min(layout) < 2 or max(layout) > 10_000:
                raise SettingsError("stages", f"{'-'.join(map(str, layout))}: a layout is four stage repeats "
                                              "n1-n2-n3-n4, each from 2 to 10000")
        depths = tuple(sum(layout) for layout in layouts)
        if any(b <= a for a, b in zip(depths, depths[1:])):
            raise SettingsError("stages", f"depths {list(depths)}: give the layouts in increasing depth n1+n2+n3+n4")
        if self.depths is not None and self.depths != depths:
            raise SettingsError("stages", f"the layouts have depths {list(depths)} but --depths says "
                                          f"{list(self.depths)}; give one of the two")
        self._set("stages", tuple(tuple(layout) for layout in layouts))


def resolve(name: str, settings: TrainingSettings) -> TrainingSettings:
    """The experiment's preset where a setting is None, after refusing settings it does not use."""
    experiment = EXPERIMENTS[name]
    uses = experiment.takes()
    refuse_inapplicable(settings_given(settings, against_defaults=True), uses, f"the {name} experiment",
                        takes=", ".join("--" + n.replace("_", "-") for n in sorted(uses - {"resume", "resume_any"}))
                        + ", --resume, --resume-any")
    values = {k: v for k, v in experiment.defaults.items() if getattr(settings, k) is None}
    if settings.stages is not None and settings.depths is None:  # the layouts give the depths
        values["depths"] = tuple(sum(layout) for layout in settings.stages)
    if settings.dtype is None:
        values.setdefault("dtype", DEFAULT_DTYPE)
    resolved = dataclasses.replace(settings, **values, experiment=name)
    if resolved.dataset == "auto":
        dataset, folder = find_images(resolved.data_dir)
        resolved = dataclasses.replace(resolved, dataset=dataset, data_dir=folder)
    if "dataset" in experiment.defaults:  # a one-data-set experiment's preset values that depend on the data set
        by_dataset = experiment.per_dataset.get(resolved.dataset, {})
        resolved = dataclasses.replace(resolved, **{k: v for k, v in by_dataset.items() if getattr(settings, k) is None})
    if not experiment.rate_grid and resolved.learning_rates is not None and len(resolved.learning_rates) != 1:
        raise SettingsError("learning_rates", f"{list(resolved.learning_rates)}: the {name} experiment trains with one "
                                              "learning rate (give one value)")
    return resolved


@dataclass(repr=False)  # StudyResult's short repr
class TrainingResult(StudyResult):
    """One experiment's result: ``numbers`` (the ``result`` section of the JSON, from the experiment's
    ``summarise``) and ``records`` (one JSON-ready record per configuration, as checkpointed)."""

    numbers: dict[str, Any] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    resumed: int = 0
    checkpoint: str | None = None

    study = "training"

    @property
    def experiment(self) -> Experiment:
        return EXPERIMENTS[self.settings.experiment]

    @property
    def verdict(self) -> str:
        return self.numbers["verdict"]

    def summary(self) -> dict[str, Any]:
        e = self.experiment
        return {"experiment": e.name, "title": e.title, "paper": e.paper, "claim": e.claim,
                "configurations": len(self.records), "resumed": self.resumed, "checkpoint": self.checkpoint,
                **{k: v for k, v in self.numbers.items() if k != "verdict"}, "records": self.records}

    def csv_rows(self) -> list[dict[str, Any]]:
        """The CSV, in the long format every experiment shares: one row per number of the JSON's ``result`` (the
        experiments' results differ in shape), the per-configuration ``records`` included.

        Columns (:func:`validation.core.results.long_rows`): ``entry`` (the experiment), ``section`` (the top-level
        key of the JSON's ``result``: ``groups``, ``checks``, ``records``, …), ``record`` (the path below it to the
        object holding the number, a list element as ``[i]`` with its naming fields, e.g. ``groups``,
        ``cohen-synthetic/tanh/A/max_norm``, quantity ``geometric_mean``, index 0: at the first depth), ``quantity``
        (the number's key), ``index`` (its position in a list of numbers, empty for a single number) and ``value``
        (empty where the JSON has ``null``).
        Text, flags and verdicts stay in the JSON."""
        return long_rows(self.settings.experiment, self.summary())

    def table(self) -> str:
        e, s = self.experiment, self.settings
        lines = [f"{e.name}: {e.title}", f"paper: {e.paper}", f"claim: {e.claim}",
                 f"{len(self.records)} configurations ({self.resumed} resumed from checkpoints), seed {s.seed}, "
                 f"{s.dtype}, {self.run_info.device}", ""]
        lines += e.table(self)
        lines += ["", f"verdict: {self.verdict}", f"time {self.run_info.wall_time_s:.1f} s"]
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Draw the experiment's figure (several panels) on ``ax`` if it is a matplotlib Figure, else on a new
        figure; returns the Figure."""
        from ..core.plots import new_figure

        figure = ax if ax is not None and hasattr(ax, "add_subplot") else new_figure(figsize=(12, 4.6), layout=None)
        self.experiment.plot(self, figure)
        return figure


def _train(spec: Experiment, settings: TrainingSettings, configuration: Configuration, data: dict[str, Dataset],
           device: torch.device, progress: Any) -> tuple[Configuration, dict[str, Any], float]:
    """One configuration trained: (configuration, its record as JSON gives it back, seconds)."""
    tick = time.perf_counter()
    record = _normalise(spec.train_one(settings, configuration, data, device, progress))
    return configuration, record, time.perf_counter() - tick


def _dataset(name: str, settings: TrainingSettings, device: torch.device) -> Dataset:
    """A data set as the run's settings ask for it."""
    return load_dataset(name, settings.seed, dtype=settings.torch_dtype, device=device, data_dir=settings.data_dir,
                        train_size=settings.train_size, unit_norm=settings.input_norm == "unit")


#: a worker process loads each data set once for all the configurations it trains (the cache dies with the worker)
_worker_dataset = functools.lru_cache(maxsize=4)(_dataset)


def _train_configuration(task: tuple[str, TrainingSettings, Configuration, str]) -> tuple[Configuration,
                                                                                          dict[str, Any], float]:
    """A worker process's task: one configuration of ``experiment``, trained as :func:`run` trains it here (the
    data sets loaded by the same call, subnormals flushed; the worker runs one torch thread)."""
    experiment, settings, configuration, device_name = task
    spec, device = EXPERIMENTS[experiment], torch.device(device_name)
    with runtime.flush_denormal():
        data = {name: _worker_dataset(name, settings, device) for name in spec.datasets(settings)}
        return _train(spec, settings, configuration, data, device, lambda *_: None)


def _normalise(record: dict[str, Any]) -> dict[str, Any]:
    """The record as JSON gives it back (NaN/inf → None), so a fresh and a resumed run summarise the same."""
    import json

    return json.loads(json.dumps(to_jsonable(record), allow_nan=False))


def stamp(settings: TrainingSettings, device: torch.device) -> str:
    """The checkpoint fingerprint of a run (:mod:`validation.training.sweep`): its settings, device, package and torch
    versions. The commit of the code is not in it but in each checkpoint, so that ``--resume`` after a code change
    finds the checkpoints and refuses them by name (:class:`validation.training.sweep.CheckpointStore`)."""
    from limits import __version__

    numbers = {k: v for k, v in settings_dict(settings).items() if k not in _RUN_ONLY}
    return fingerprint({"settings": numbers, "device": str(device), "package": __version__,
                        "torch": torch.__version__})


def run(experiment: str = "marion-fig8", settings: TrainingSettings | None = None, /, *, progress: bool = False,
        threads: int | None = 1, command_line: str | None = None, **overrides: Any) -> TrainingResult:
    """Run one training experiment (``validation.training.EXPERIMENTS`` lists them).

    Args:
        experiment: its name, e.g. ``"cohen-scaling"``.
        settings: a :class:`TrainingSettings`; None for the experiment's preset.
        progress: show progress bars (configurations, and epochs of the current one).
        threads: torch intra-op threads during the run (None: leave as is).
        command_line: the command as typed, recorded in the result (None from Python).
        **overrides: settings by name, e.g. ``depths=(8, 16), epochs=2, replicates=2``.

    Returns:
        A :class:`TrainingResult`; ``result.numbers`` holds the experiment's numbers and verdict.
    """
    settings = resolve(experiment, make_settings(TrainingSettings, settings, overrides))
    spec = EXPERIMENTS[experiment]
    device = resolve_device(settings.device)
    with runtime.threads(threads), runtime.flush_denormal():
        started, clock = runtime.utc_now(), time.perf_counter()
        data: dict[str, Dataset] = {name: _dataset(name, settings, device) for name in spec.datasets(settings)}
        configurations = spec.configurations(settings)
        store = CheckpointStore(settings.checkpoint_dir, experiment, stamp(settings, device), settings.resume,
                                code=git_commit(), any_code=settings.resume_any)
        finished = {c.key: record for c in configurations if (record := store.load(c)) is not None}
        pending = [c for c in configurations if c.key not in finished]
        workers = min(len(pending), settings.workers or default_workers(str(device)))
        with tqdm(total=len(configurations), desc=experiment, unit="config", disable=not progress) as outer, \
                tqdm(total=settings.epochs, desc="epochs", unit="epoch", leave=False, disable=not progress) as inner:
            outer.update(len(finished))

            def keep(trained: tuple[Configuration, dict[str, Any], float]) -> None:
                configuration, record, seconds = trained
                store.save(configuration, record, seconds)
                finished[configuration.key] = record
                outer.update()

            shared = bool(pending) and (workers > 1 or settings.scheduler is not None)
            if shared:  # the configurations side by side, each in a single-threaded process (or a Dask worker)
                run_tasks(_train_configuration, [(experiment, settings, c, str(device)) for c in pending], workers,
                          on_result=keep, scheduler=settings.scheduler)
            for configuration in pending if not shared else []:
                outer.set_postfix_str(configuration.key)
                inner.reset(total=spec.epochs_of(settings, configuration))
                keep(_train(spec, settings, configuration, data, device, inner.update))
        records = {c.key: finished[c.key] for c in configurations}
        resumed = len(configurations) - len(pending)
        numbers = spec.summarise(settings, records)
        info = RunInfo.capture(seed=settings.seed, dtype=settings.dtype, device=device, started=started,
                               wall_time_s=time.perf_counter() - clock, command=command_line)
    return TrainingResult(settings=settings, run_info=info, numbers=numbers, records=records, resumed=resumed,
                          checkpoint=None if store.path is None else str(store.path))


def listing() -> str:
    """The ``--list`` text: every experiment with its paper and claim."""
    lines = []
    for e in EXPERIMENTS.values():
        per_dataset = e.per_dataset    # settings whose preset value depends on the data set
        lines += [f"{e.name:15s} {e.title}", f"{'':15s} {e.paper}", f"{'':15s} claim: {e.claim}",
                  f"{'':15s} preset: " + ", ".join(f"{k}={_preset_text(per_dataset, k, v)}" for k, v in e.defaults.items()),
                  ""]
    return "\n".join(lines).rstrip()


def _preset_text(per_dataset: dict[str, dict[str, Any]], name: str, value: Any) -> str:
    """``name``'s preset value, by data set where it depends on it: ``5 (cohen-synthetic)/10 (digits-25)``, and
    ``33 (digits)/5 (other data sets)`` where a value stands for the data sets not listed."""
    if not any(name in values for values in per_dataset.values()):
        return _text(value)
    listed = [f"{values[name]} ({dataset})" for dataset, values in per_dataset.items() if name in values]
    return "/".join(listed + ([] if value is None else [f"{_text(value)} (other data sets)"]))


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value)) if value else "none"
    return str(value)


def estimate_seconds(experiment: str, settings: TrainingSettings) -> float:
    """The experiment's time estimate for these settings, in seconds on the 2-core machine (0: not estimated)."""
    return _estimate(experiment, settings, "estimate_seconds")


EPILOG = """\
examples:
  python -m validation.training --list
  python -m validation.training --experiment marion-fig8 --plot fig8.png --json fig8.json
  python -m validation.training --experiment cohen-scaling --datasets cohen-synthetic --depths 8,32,128,512
  python -m validation.training --experiment marion-fig9 --resume      # after an interruption
"""


def _add_arguments(group: cli.ArgumentGroup) -> None:
    group.add_argument("--experiment", default=None, choices=sorted(EXPERIMENTS),
                       help="the experiment (required unless --list): " + ", ".join(sorted(EXPERIMENTS)))
    group.add_argument("--list", action="store_true", help="list the experiments, their papers and presets, and exit")


def _run_command(experiment: str | None, settings: TrainingSettings, **kwargs: Any) -> TrainingResult:
    if experiment is None:
        raise SettingsError("experiment", "required (one of " + ", ".join(sorted(EXPERIMENTS)) + "; see --list)")
    return run(experiment, settings, **kwargs)


def _estimate(experiment: str | None, settings: TrainingSettings, which: str) -> float:
    """The experiment's ``estimate_mb`` or ``estimate_seconds`` of the resolved settings (0 when they are refused),
    for the run as a whole: with W worker processes training its configurations side by side, the interpreter once
    and W times the working memory of one (forked workers share the interpreter:
    :func:`validation.core.workers.run_memory_mb`), and a W-th of the time (the experiments estimate one process)."""
    if experiment is None:
        return 0.0
    try:
        spec, resolved = EXPERIMENTS[experiment], resolve(experiment, settings)
        value = getattr(spec, which)(resolved)
        workers = min(len(spec.configurations(resolved)), resolved.workers or default_workers(resolved.device))
    except (SettingsError, KeyError):
        return 0.0
    if which == "estimate_mb":
        return run_memory_mb(max(0.0, value - PROCESS_MB), workers, resolved.scheduler) if value else 0.0
    return value / workers


COMMAND = cli.Command(
    prog="python -m validation.training",
    description=__doc__.split("\n\nPython:", 1)[0],
    epilog=EPILOG,
    settings=TrainingSettings,
    run=_run_command,
    positional=("experiment",),
    catalogue=EXPERIMENTS,
    add_arguments=_add_arguments,
    listing=listing,
    estimate_mb=lambda experiment, settings: _estimate(experiment, settings, "estimate_mb"),
    estimate_seconds=lambda experiment, settings: _estimate(experiment, settings, "estimate_seconds"),
    csv_help=LONG_CSV_HELP,
)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, print, write (:func:`validation.core.cli.execute`)."""
    return cli.execute(COMMAND, argv)
