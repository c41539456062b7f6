"""The interface every figure implements (one file per figure in :mod:`validation.figures.catalogue`), and the
small helpers several figures share.

A :class:`Figure` is a catalogue entry (:class:`validation.core.catalogue.Entry`): its class attributes give its
name, title, paper, the defaults of every setting it takes and its smoke size; its methods are the study's steps,
called by :func:`validation.figures.run` with the resolved settings ``s`` (a
:class:`~validation.figures.FiguresSettings`, every setting the figure takes filled in):

1. ``check_values(values)`` — refuse combinations of its settings that cannot run (a :class:`SettingsError`);
2. ``compute(s, device, progress)`` — the numbers (JSON-ready, with a ``checks`` list) and the arrays behind the
   plot; the study adds the title and paper in front of the numbers;
3. ``table(numbers)`` and ``plot(numbers, data, ax)`` — the report and the figure;
4. ``estimate_mb(s)`` and ``estimate_seconds(s)`` — the guards of ``--max-memory`` and the time warning.

A figure whose work is independent draws in chunks with their own streams declares ``shares_draws = True``: it
then takes ``--workers`` and ``--scheduler``, and ``compute`` gets a fourth argument, ``runner`` (a
:data:`validation.core.workers.TaskRunner`, or None to compute here), which computes spans of the chunks on local
workers or a Dask cluster with the numbers of one process (:func:`validation.figures.pf_models.in_spans`).

Every random draw comes from streams labelled ``("figures", figure, …)`` (:func:`figure_rng`,
:func:`limits.seeding.generator`), so a figure's numbers depend on its seed and settings only.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np
import torch
from tqdm.auto import tqdm

from limits.seeding import stream_seed
from validation.core.catalogue import Entry

__all__ = ["Figure", "SHARING", "INPUT_RANGE", "figure_rng", "input_grid", "progress_bar", "finite_rows"]

#: the settings of a figure that shares its draws out (:attr:`Figure.shares_draws`)
SHARING = frozenset({"workers", "scheduler"})

#: the inputs z of the P&F function samples lie on this interval
INPUT_RANGE = (-2.0, 2.0)


class Figure(Entry):
    """One figure of ``python -m validation.figures`` (module docstring)."""

    #: its draws can be computed on workers (module docstring): it takes --workers and --scheduler
    shares_draws: ClassVar[bool] = False

    def takes(self) -> frozenset[str]:
        """The settings of :attr:`defaults`, and ``workers`` and ``scheduler`` when the figure shares its draws."""
        return super().takes() | (SHARING if self.shares_draws else frozenset())

    def check_values(self, values: dict[str, Any]) -> None:
        """Refuse settings that cannot run together (``values``: every setting the figure takes, resolved);
        may also fill a derived value in ``values``. Nothing to check by default."""

    @abc.abstractmethod
    def compute(self, s: Any, device: torch.device, progress: bool) -> tuple[dict[str, Any], dict[Any, Any]]:
        """The figure's numbers (with ``checks``) and the arrays behind its plot."""

    @abc.abstractmethod
    def table(self, numbers: dict[str, Any]) -> str:
        """The console table of the numbers (before the checks and the verdict)."""

    @abc.abstractmethod
    def plot(self, numbers: dict[str, Any], data: dict[Any, Any], ax: Any = None) -> Any:
        """Draw the figure on ``ax`` (a matplotlib Axes or Figure; None: a new figure); returns the Figure."""


def figure_rng(seed: int, *labels: object) -> np.random.Generator:
    """A numpy generator on the stream ``("figures", *labels)`` of ``seed``."""
    return np.random.default_rng(stream_seed(seed, "figures", *labels))


def input_grid(s: Any) -> np.ndarray:
    """``s.inputs`` inputs z equally spaced on :data:`INPUT_RANGE`."""
    return np.linspace(*INPUT_RANGE, s.inputs)


def progress_bar(total: int, desc: str, progress: bool) -> tqdm:
    """A bar that shows only when the run lasts (over 2 s)."""
    return tqdm(total=total, desc=desc, unit="draw", disable=not progress, leave=False, delay=2.0)


def finite_rows(x: np.ndarray) -> np.ndarray:
    """True for the rows of ``x`` whose every value is finite."""
    return np.all(np.isfinite(x), axis=1)
