"""The interface every training experiment implements, and the helpers they share.

An :class:`Experiment` is a catalogue entry (:class:`validation.core.catalogue.Entry`, the interface the figures
and the regimes presets share): it declares its paper setting (``defaults``: a value for every setting it uses), the
data sets it needs, and four steps that the study runner (:mod:`validation.training.study`) calls:

1. ``configurations(settings)`` — the sweep, as a list of :class:`~validation.training.sweep.Configuration`;
2. ``train_one(settings, configuration, data, device, progress)`` — train one configuration's replicates
   and return a JSON-ready record (checkpointed at once; see :mod:`validation.training.sweep`);
3. ``summarise(settings, records)`` — the numbers, checks and verdict from every record;
4. ``table(result)`` and ``plot(result, figure)`` — the report and the figure.

Every random draw of configuration ``c`` comes from streams labelled ``(experiment, c.key, …)``, so a
configuration's numbers do not depend on the order of the sweep or on which configurations were
resumed from checkpoints.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Sequence

import numpy as np
import torch

from ..core.catalogue import Entry
from ..core.stats import slope_fit
from ..core.workers import PROCESS_MB
from .sweep import Configuration

if TYPE_CHECKING:  # pragma: no cover
    from .data import Dataset

#: the types an experiment is handed: ``validation.training.study.TrainingSettings`` and ``TrainingResult``. Named
#: here, not imported: the study imports this module, and this one stays below it (no import cycle)
TrainingSettings = Any
TrainingResult = Any

__all__ = ["Experiment", "NetworkSize", "training_mb", "ALWAYS", "grid_learning_rates", "power_fit", "mean_interval", "depth_axis", "number", "Progress"]

#: a progress callback: ``progress()`` after each epoch advances the inner bar
Progress = Callable[[], None]


#: settings every experiment takes (run-level: they do not change the numbers, or are common to all)
ALWAYS = frozenset({"checkpoint_dir", "resume", "resume_any", "data_dir", "confidence", "resamples", "train_size", "workers",
                    "scheduler"})


@dataclass(frozen=True)
class NetworkSize:
    """The largest network an experiment trains at once in one process: ``replicates`` networks side by side (every
    learning rate of a searched grid counts), of ``depth`` residual blocks of width d (``width``) — two-layer blocks
    when ``hidden`` M is given —, trained on mini-batches of ``batch`` examples."""

    replicates: int
    depth: int
    width: int
    batch: int
    hidden: int | None = None


#: activations per layer, example and unit that autograd keeps for the backward pass (the state, the pre-activation,
#: its image and the block's output)
SAVED_PER_LAYER = 4
#: rows of one evaluation chunk (:func:`validation.training.trainer.evaluate`)
EVALUATION_ROWS = 1024
#: a process's working memory over the arrays :func:`training_mb` counts: torch's allocator, the optimiser's
#: temporaries, the data set and the records (measured per worker at the presets: marion-fig8 121 MiB for 90
#: counted, marion-fig9 35 for 27, cohen-scaling 154 for 74)
TRAINING_FACTOR = 1.3


def training_mb(size: NetworkSize, itemsize: int) -> float:
    """The working memory (MiB) of training ``size``'s replicates in one batched pass: the weights with their
    gradients and Adam's two moments (4 copies), :data:`SAVED_PER_LAYER` activations per layer, example and unit kept
    for the backward pass, and an evaluation chunk (no graph: two states). Measured against the presets' peaks with
    ``benchmarks/bench_memory.py`` (the interpreter, :data:`~validation.core.workers.PROCESS_MB`, comes on top)."""
    units = size.hidden or size.width
    weights = size.depth * size.width * units * (2 if size.hidden else 1)
    numbers = (4 * size.replicates * weights + SAVED_PER_LAYER * size.replicates * size.batch * size.depth * units
               + 2 * size.replicates * EVALUATION_ROWS * units)
    return TRAINING_FACTOR * numbers * itemsize / 2**20


class Experiment(Entry):
    """One trained-network experiment (module docstring). Besides :class:`~validation.core.catalogue.Entry`'s
    ``name``, ``title``, ``paper``, ``defaults`` (the paper's preset: a value for every setting the experiment uses)
    and ``smoke``, it declares ``claim`` and ``rate_grid``."""

    #: the paper's claim that the verdict checks, in one sentence
    claim: ClassVar[str]
    #: True when ``learning_rates`` is a grid searched per configuration; otherwise exactly one rate is taken
    rate_grid: ClassVar[bool] = False
    #: default values that depend on the data set (data set → {setting: value}), over ``defaults``
    per_dataset: ClassVar[dict[str, dict[str, Any]]] = {}

    def takes(self) -> frozenset[str]:
        """Its defaults' settings and the run-level ones every experiment takes (:data:`ALWAYS`)."""
        return frozenset(self.defaults) | ALWAYS

    def largest_network(self, settings: TrainingSettings) -> NetworkSize | None:
        """The largest network one process trains at once (None: the experiment estimates its memory otherwise)."""
        return None

    def estimate_mb(self, settings: TrainingSettings) -> float:
        """The peak memory of one process (MiB): the interpreter and :func:`training_mb` of the largest network; an
        experiment that is not a batch of networks trained by :func:`validation.training.trainer.train` overrides
        it. The study multiplies the working part by the worker processes (``validation.training.study``)."""
        size = self.largest_network(settings)
        return 0.0 if size is None else PROCESS_MB + training_mb(size, settings.torch_dtype.itemsize)

    def epochs_of(self, settings: TrainingSettings, configuration: Configuration) -> int:
        """The epochs one configuration trains for (the progress bar's length): ``settings.epochs`` by default."""
        return settings.epochs

    def datasets(self, settings: TrainingSettings) -> list[str]:
        """The data sets to load (each once)."""
        return [settings.dataset]

    @abc.abstractmethod
    def configurations(self, settings: TrainingSettings) -> list[Configuration]:
        """The sweep."""

    @abc.abstractmethod
    def train_one(self, settings: TrainingSettings, configuration: Configuration, data: dict[str, "Dataset"],
                  device: torch.device, progress: Progress) -> dict[str, Any]:
        """Train one configuration and return its JSON-ready record."""

    @abc.abstractmethod
    def summarise(self, settings: TrainingSettings, records: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The ``result`` numbers: must contain ``verdict`` (PASS/FAIL) and ``checks``."""

    @abc.abstractmethod
    def table(self, result: TrainingResult) -> list[str]:
        """The console report's lines (after the common header)."""

    @abc.abstractmethod
    def plot(self, result: TrainingResult, figure: Any) -> None:
        """Draw the experiment's figure on ``figure`` (a matplotlib Figure)."""


def grid_learning_rates(settings: TrainingSettings, replicates: int, device: torch.device) -> torch.Tensor:
    """The learning-rate grid repeated for each replicate, for one batched network: replicate r·G + g has rate g."""
    rates = torch.tensor(settings.learning_rates, dtype=settings.torch_dtype, device=device)
    return rates.repeat(replicates)


# ----------------------------------------------------------------------------------------------- statistics
def power_fit(depths: Sequence[int], values: np.ndarray, *, confidence: float, resamples: int, seed: int
              ) -> dict[str, Any]:
    """The exponent p of v ≈ C L^p from per-replicate values (D depths × R replicates).

    The point estimate is the least-squares slope of the replicates' mean log v on log L; the interval is
    the package's slope fit (:func:`validation.core.stats.slope_fit`: paired bootstrap, BCa) resampling
    replicates, the same replicate indices at every depth. A value that is not finite and positive makes the fit
    undefined: slope and interval are then None, with ``defined`` False.
    """
    values = np.asarray(values, dtype=float)
    log_l = np.log(np.asarray(depths, dtype=float))
    defined = bool(np.all(np.isfinite(values)) and np.all(values > 0)) and values.shape[1] >= 2
    out: dict[str, Any] = {"depths": list(map(int, depths)), "geometric_mean": None, "slope": None,
                           "ci": [None, None], "method": None, "defined": defined}
    if not defined:
        return out
    logs = np.log(values)
    fit = slope_fit(log_l, list(logs), lambda c, axis: np.mean(c, axis=axis), resamples=resamples,
                    confidence=confidence, seed=seed)
    low, high = fit.low, fit.high
    out.update(geometric_mean=np.exp(logs.mean(axis=1)).tolist(), slope=fit.slope,
               ci=[low if math.isfinite(low) else None, high if math.isfinite(high) else None], method=fit.method)
    return out


def mean_interval(values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """Mean and Student-t interval of replicate values (finite ones)."""
    from scipy import stats

    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if len(x) < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, mean - half, mean + half


def depth_axis(ax: Any, depths: Sequence[int]) -> None:
    """A log depth axis labelled at the depths themselves."""
    ax.set_xscale("log")
    ax.set_xticks(list(depths), [str(L) for L in depths])
    ax.minorticks_off()


def number(value: float | None, digits: int = 3) -> str:
    """A table cell: the value to ``digits`` decimals, or — for None and non-finite values."""
    return "—" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.{digits}f}"
