"""Depths trained in lockstep with a reference: how far each depth's trained weights are from the limit's, over
training time, and the rate of that distance in L.

The shape shared by the experiments that ask whether a *trained* ResNet stays a discretisation of its continuous
limit (``marion2024-fig1``, ``sander2022-linear``): networks of depths L₁ < … < L_D and a reference depth L_ref (the
last of ``--depths``), all started from discretisations of the same functions of t = k/L and trained side by side,
one step each in turn. At each measured iteration τ the distance of weight 𝒱 of depth L to the reference is

    ‖𝒱^L(·, τ) − 𝒱(·, τ)‖ = ( (1/L) Σ_k ‖V_k^L(τ) − V^ref_{k·L_ref/L}(τ)‖_F² )^{1/2}       (:func:`layer_distance`)

(layer k of depth L against the left end of its interval in the reference), and the successive difference
‖𝒱^L − 𝒱^{2L}‖ is measured beside it: it needs no reference, and is not biased by the reference's own error (a
factor 1 − L/L_ref on the distance when the error is O(1/L)). Training in lockstep takes every distance at every
measured iteration without storing a trajectory.

**The rate** at iteration τ is the exponent r of ‖𝒱^L − 𝒱‖ ∝ L^{−r}: the least-squares slope of the replicates'
mean log distance on log L over the depths ≥ :data:`FIT_FROM` (the shallowest carry the O(1/L²) term), with a
paired bootstrap interval over replicates (:func:`~validation.training.experiment.power_fit`). The check at each of
the experiment's check iterations is three-valued: PASS when the interval lies within 1 ± :data:`MARGIN`, FAIL when
it lies outside, INCONCLUSIVE otherwise. An experiment whose claim is uniform in training time (``uniform``) also
checks the rate of sup_τ ‖𝒱^L(·, τ) − 𝒱(·, τ)‖, the supremum over the measured iterations, per replicate. An
experiment whose reference cannot be made deep enough to leave the rate unbiased checks the successive differences
instead (``checked = "successive"``: the rate of ‖𝒱^L − 𝒱^{2L}‖ over the pairs of fitted depths, and of its supremum).

**Side by side.** The networks of one step are independent, so they are stepped on several threads at once
(:class:`SideBySide`: one per core this process may use, each network always on the same thread, the networks
shared out by depth so that the threads' work is even). Each thread runs torch on one intra-op thread with the
caller's flushing of subnormals, so every operation computes what it computes serially: the records do not depend
on the number of threads (tested). Measured on 2 cores, ``marion2024-fig2``'s step: 165 ms serially, 107 ms side by
side (its deepest network alone takes 107 ms); ``sander2022-linear``, whose steps are a few large float64 products,
ran slower side by side (149 s against 126 s in one thread) and keeps one thread (``side_by_side = False``) unless
``--workers`` says otherwise.

An experiment supplies its networks (:class:`LockstepNetwork`: ``step``, ``loss`` and its weights as attributes
named in ``weights``), the iterations it measures and checks, and the first line of its table.
"""

from __future__ import annotations

import abc
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Protocol

import numpy as np
import torch

from ..core.checks import INCONCLUSIVE, Check, check_line, combine, interval_check
from ..core.settings import SettingsError
from ..core.workers import PROCESS_MB, default_workers
from .experiment import Experiment, depth_axis, number, power_fit
from .sweep import Configuration

__all__ = ["LockstepExperiment", "LockstepNetwork", "SideBySide", "share_out", "side_by_side_threads",
           "layer_distance", "MARGIN", "FIT_FROM"]

#: the rate's interval must lie within 1 ± this
MARGIN = 0.1
#: depths below this are not fitted (their error carries the O(1/L²) term)
FIT_FROM = 8


def layer_distance(coarse: torch.Tensor, fine: torch.Tensor) -> torch.Tensor:
    """( (1/L) Σ_k ‖coarse_k − fine_{k·L'/L}‖_F² )^{1/2} per replicate, for weights (R, L, …) and (R, L', …) with L
    dividing L': layer k of the coarse network against layer k·L'/L of the fine one (the left end of its interval,
    as Marion et al. index it)."""
    stride = fine.shape[1] // coarse.shape[1]
    difference = coarse - fine[:, ::stride]
    return difference.square().flatten(1).sum(1).div(coarse.shape[1]).sqrt()


class LockstepNetwork(Protocol):
    """R replicates of one depth; its weights (R, L, …) are attributes named in the experiment's ``weights``."""

    depth: int

    def step(self, learning_rate: float) -> torch.Tensor:
        """One training step of every replicate; returns the losses (R,) before it."""

    def loss(self) -> torch.Tensor:
        """The current losses (R,)."""


def side_by_side_threads(device: torch.device, networks: int) -> int:
    """The threads that step the networks: the cores this process may use (:func:`default_workers`: one on a GPU)
    shared by torch's intra-op threads, at most one per network."""
    return max(1, min(networks, default_workers(str(device)) // max(1, torch.get_num_threads())))


def share_out(depths: list[int], threads: int) -> list[list[int]]:
    """The networks' indices in groups, one per thread (at most one per network): longest first, each to the group
    with the least depth so far (a step's cost grows with the depth)."""
    groups: list[list[int]] = [[] for _ in range(max(1, min(threads, len(depths))))]
    load = [0] * len(groups)
    for index in sorted(range(len(depths)), key=lambda i: -depths[i]):
        lightest = load.index(min(load))
        groups[lightest].append(index)
        load[lightest] += depths[index]
    return groups


def _subnormals_flushed() -> bool:
    """Whether this thread flushes subnormal floats to zero (:func:`validation.core.runtime.flush_denormal`)."""
    return float(torch.tensor([1e-39], dtype=torch.float32).mul(1.0)) == 0.0


class SideBySide:
    """Steps networks on ``threads`` threads at once (module docstring): ``step`` returns every network's losses in
    the networks' order. The networks are shared out longest first, each to the thread with the least depth so
    far; each thread runs torch as the calling thread does (intra-op threads, subnormals flushed or not). Use it
    as a context manager (the threads end with the block)."""

    def __init__(self, networks: list[LockstepNetwork], threads: int) -> None:
        self.networks = networks
        self.groups = share_out([net.depth for net in networks], threads)
        intra_op, flushed = torch.get_num_threads(), _subnormals_flushed()

        def start() -> None:
            torch.set_num_threads(intra_op)
            torch.set_flush_denormal(flushed)

        self.pool = ThreadPoolExecutor(len(self.groups), initializer=start) if len(self.groups) > 1 else None

    def _step_group(self, group: list[int], learning_rate: float) -> list[tuple[int, list[float]]]:
        return [(i, self.networks[i].step(learning_rate).tolist()) for i in group]

    def step(self, learning_rate: float) -> list[list[float]]:
        """One training step of every network; the losses (R,) of each before it, in the networks' order."""
        if self.pool is None:
            return [net.step(learning_rate).tolist() for net in self.networks]
        futures = [self.pool.submit(self._step_group, group, learning_rate) for group in self.groups]
        losses = dict(pair for future in futures for pair in future.result())
        return [losses[i] for i in range(len(self.networks))]

    def __enter__(self) -> "SideBySide":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


class LockstepExperiment(Experiment):
    """An experiment of depths trained in lockstep with a reference (module docstring)."""

    #: the weights compared, by attribute name; the first is the one checked
    weights: ClassVar[tuple[str, ...]]
    #: each weight's name in the report (unicode) and in the figure (LaTeX)
    symbols: ClassVar[dict[str, tuple[str, str]]]
    #: True when the claim is uniform in training time: the rate of the supremum over time is checked too
    uniform: ClassVar[bool] = False
    #: the distance whose rate is checked: to the ``reference``, or between ``successive`` depths L and 2L
    checked: ClassVar[str] = "reference"
    #: step the depths on one thread per core by default (:class:`SideBySide`); False where that was measured slower
    side_by_side: ClassVar[bool] = True

    @abc.abstractmethod
    def networks(self, settings: Any, depths: list[int], device: torch.device) -> list[LockstepNetwork]:
        """The networks of every depth (the reference last), initialised."""

    @abc.abstractmethod
    def check_iterations(self, settings: Any) -> list[int]:
        """The iterations at which the rate is checked (each measured)."""

    @abc.abstractmethod
    def describe(self, settings: Any, numbers: dict[str, Any]) -> str:
        """The first line of the table: the model, its training and its sizes."""

    def trace(self, networks: list[LockstepNetwork]) -> dict[str, Any] | None:
        """What else to record at each measured iteration (JSON-ready), or None: nothing (the default)."""
        return None

    def measured_iterations(self, settings: Any) -> list[int]:
        """The iterations at which the distances are measured (0 and the last among them): every one by default."""
        return list(range(settings.epochs + 1))

    # ---------------------------------------------------------------------------------------------------- sweep
    def configurations(self, settings):
        depths = list(settings.depths)
        if len(depths) < 3:
            raise SettingsError("depths", f"{depths}: give at least two depths and the reference (the last)")
        reference = depths[-1]
        bad = [L for L in depths[:-1] if reference % L or L & (L - 1)]
        if bad:
            raise SettingsError("depths", f"{bad}: every depth must be a power of two dividing the reference "
                                          f"depth {reference} (the last)")
        needed = 3 if self.checked == "successive" else 2  # successive differences: one pair fewer than depths
        if sum(L >= FIT_FROM for L in depths[:-1]) < needed:
            raise SettingsError("depths", f"{depths}: give at least {needed} depths ≥ {FIT_FROM} below the reference")
        return [Configuration("all-depths", {"depths": depths})]

    @staticmethod
    def heaviest_thread_layers(settings: Any) -> int:
        """The layers that the busiest thread of :class:`SideBySide` steps per iteration on the CPU, with one torch
        thread per network thread (the command line's default): what a step's time grows with."""
        groups = share_out(list(settings.depths), default_workers("cpu"))
        return max(sum(settings.depths[i] for i in group) for group in groups)

    def estimate_mb(self, settings):
        """Every depth's network at once (the layers of all depths, R replicates): per layer its weights three times
        (the weights, their gradient, the update) — W and V of d × M for two-layer blocks (``hidden`` M), A of d × d
        otherwise — and what the backward pass keeps per example (n = ``train_size`` examples; the d columns of a
        linear network): the pre-activation and its image (M each) and the state (d). Measured: marion2024-fig1
        2018 MiB (estimate 1886), marion2024-fig2 442 (431), sander2022-linear 302 (334)."""
        d, hidden = settings.width, getattr(settings, "hidden", None)
        weights = 2 * d * hidden if hidden else d * d
        examples = getattr(settings, "train_size", None) or d
        kept = examples * (2 * hidden + d if hidden else d)
        layers = sum(settings.depths)
        return PROCESS_MB + settings.replicates * layers * (3 * weights + kept) * settings.torch_dtype.itemsize / 2**20

    def estimate_seconds(self, settings):
        # measured 2026-11-29 on the 2-core machine, float32: marion2024-fig2 482 s (1.9e-4 s per layer-step of the
        # busiest thread at 4 replicates), marion2024-fig1 121 s (2.0e-4 at 8)
        return 1.9e-4 * settings.epochs * self.heaviest_thread_layers(settings) * (1 + settings.replicates / 4)

    def train_one(self, settings, configuration, data, device, progress):
        depths = list(configuration.params["depths"])
        networks = self.networks(settings, depths, device)
        reference, compared = networks[-1], networks[:-1]
        rate = settings.learning_rates[0]
        measured = set(self.measured_iterations(settings))
        distance: dict[str, list] = {name: [] for name in self.weights}
        successive: dict[str, list] = {name: [] for name in self.weights}
        losses, traces = [], []

        def measure() -> None:
            with torch.no_grad():
                extra = self.trace(networks)
                if extra is not None:
                    traces.append(extra)
                for name in self.weights:
                    distance[name].append([layer_distance(getattr(net, name), getattr(reference, name)).tolist()
                                           for net in compared])
                    successive[name].append([layer_distance(getattr(a, name), getattr(b, name)).tolist()
                                             for a, b in zip(compared, compared[1:])])

        measure()
        threads = settings.workers or (side_by_side_threads(device, len(networks)) if self.side_by_side else 1)
        with SideBySide(networks, threads) as stepper:
            for t in range(settings.epochs):
                step_losses = stepper.step(rate)
                if t in measured:
                    losses.append(step_losses)  # the losses at iteration t, before its step
                if t + 1 in measured:
                    measure()
                progress()
        losses.append([net.loss().detach().tolist() for net in networks])
        record = {"depths": depths, "iterations": sorted(measured), "distance": distance, "successive": successive,
                  "loss": losses}
        if traces:
            record["trace"] = traces
        return record

    # --------------------------------------------------------------------------------------------- statistics
    def summarise(self, settings, records):
        record = records["all-depths"]
        depths = record["depths"][:-1]
        iterations = record["iterations"]
        keep = [i for i, L in enumerate(depths) if L >= FIT_FROM]  # increasing: the successive pairs are keep[:-1]
        fitted, pairs = [depths[i] for i in keep], keep[:-1]
        times = self.check_iterations(settings)
        options = dict(confidence=settings.confidence, resamples=settings.resamples, seed=settings.seed)

        def fit(at: list[int], values: Any, t: int | None) -> dict[str, Any]:
            if len(at) < 2:
                return {"iteration": t, "slope": None, "ci": [None, None]}
            return {"iteration": t, **power_fit([depths[i] for i in at], np.asarray(values, dtype=float)[at], **options)}

        after = range(1, len(iterations))  # every measured iteration but 0 (where all distances are 0)
        rates = {name: [fit(keep, record["distance"][name][i], iterations[i]) for i in after] for name in self.weights}
        successive_rates = {name: [fit(pairs, record["successive"][name][i], iterations[i]) for i in after]
                            for name in self.weights}
        checked, (label, _) = self.weights[0], self.symbols[self.weights[0]]
        successive = self.checked == "successive"
        source, distances, at = ((successive_rates, record["successive"], pairs) if successive
                                 else (rates, record["distance"], keep))
        shown = f"‖{label}^L − {label}^2L‖" if successive else f"‖{label}^L − {label}‖"
        checks = [self._rate_check(f"rate of {shown} at iteration {t} within 1 ± {MARGIN:g}",
                                   source[checked][iterations.index(t) - 1], settings) for t in times]
        numbers: dict[str, Any] = {"depths": depths, "reference_depth": record["depths"][-1], "fitted_depths": fitted,
                                   "check_iterations": times, "checked_distance": self.checked}
        if self.uniform:
            supremum = np.asarray(distances[checked], dtype=float)[1:].max(axis=0)  # (depths or pairs, replicates)
            numbers["supremum_rate"] = fit(at, supremum, None)
            checks.append(self._rate_check(f"rate of sup over training of {shown} within 1 ± {MARGIN:g}",
                                           numbers["supremum_rate"], settings))
        return {**numbers, "rates": rates, "successive_rates": successive_rates,
                "checks": [c.to_dict() for c in checks], "verdict": combine(checks)}

    @staticmethod
    def _rate_check(name: str, fit: dict[str, Any], settings: Any) -> Check:
        if fit["slope"] is None or None in fit["ci"]:
            return Check(name, INCONCLUSIVE, "no finite positive distances to fit")
        return interval_check(name, -fit["slope"], (-fit["ci"][1], -fit["ci"][0]), (1 - MARGIN, 1 + MARGIN),
                              settings.replicates, what=f"r = {-fit['slope']:.3f}, the interval",
                              confidence=settings.confidence)

    # ------------------------------------------------------------------------------------------------- report
    def table(self, result):
        s, n = result.settings, result.numbers
        iterations = result.records["all-depths"]["iterations"]
        checked = self.weights[0]
        columns = [(n["rates"][name], f"{'rate of' if name == checked else 'of'} ‖{self.symbols[name][0]}^L − "
                                      f"{self.symbols[name][0]}‖") for name in self.weights]
        columns.append((n["successive_rates"][checked],
                        f"successive ‖{self.symbols[checked][0]}^L − {self.symbols[checked][0]}^2L‖"))
        lines = [f"{self.describe(s, n)}; reference depth {n['reference_depth']}; rates fitted on L ≥ {FIT_FROM}",
                 "", f"  {'iteration':>9}  " + "  ".join(f"{title:>28}" for _, title in columns)]
        tenth = min(iterations[1:], key=lambda t: abs(t - max(1, s.epochs // 10)))
        for t in sorted(set(n["check_iterations"]) | {iterations[1], tenth}):
            cells = [self._rate_cell(fits[iterations.index(t) - 1]) for fits, _ in columns]
            lines.append(f"  {t:>9}  " + "  ".join(f"{cell:>28}" for cell in cells))
        if self.uniform:
            lines.append(f"  {'sup':>9}  {self._rate_cell(n['supremum_rate']):>28}   (of the supremum over the "
                         f"{len(iterations) - 1} measured iterations)")
        lines.append("")
        lines += [check_line(c) for c in n["checks"]]
        return lines

    @staticmethod
    def _rate_cell(fit: dict[str, Any]) -> str:
        slope, (low, high) = fit["slope"], fit["ci"]
        return "—" if slope is None else (f"{-slope:.3f} [{number(None if high is None else -high)}, "
                                          f"{number(None if low is None else -low)}]")

    def plot(self, result, figure):
        from matplotlib.colors import LogNorm

        n, record = result.numbers, result.records["all-depths"]
        depths, iterations = n["depths"], np.asarray(record["iterations"], dtype=float)
        every = bool(np.all(np.diff(iterations) == 1))
        # cell edges along training time: ±½ around each iteration, or geometric midpoints on a log grid
        inner = (iterations[1:-1] + iterations[2:]) / 2 if every else np.sqrt(iterations[1:-1] * iterations[2:])
        edges = np.concatenate([[iterations[1] - 0.5 if every else iterations[1] / np.sqrt(iterations[2] / iterations[1])],
                                inner, [iterations[-1] + 0.5 if every else iterations[-1] * np.sqrt(iterations[-1] / iterations[-2])]])
        panels = len(self.weights) + 1 + int(self.uniform)
        if hasattr(figure, "set_layout_engine"):  # a SubFigure takes its parent's
            figure.set_layout_engine("constrained")
        axes = figure.subplots(1, panels)
        for ax, name in zip(axes, self.weights):
            symbol = self.symbols[name][1]
            # the heatmap of Marion et al. Fig. 1: the distance (mean over replicates) over (iteration, L), log colour
            grid = np.asarray(record["distance"][name], dtype=float).mean(axis=2)[1:]  # (iterations, depths)
            positive = grid[grid > 0]
            image = ax.pcolormesh(edges, np.arange(len(depths) + 1) - 0.5, grid.T, cmap="BuPu",
                                  norm=LogNorm(vmin=positive.min(), vmax=positive.max()) if positive.size else None)
            if not every:
                ax.set_xscale("log")
            ax.set_yticks(range(len(depths)), [str(L) for L in depths])
            ax.set(xlabel="training iteration", ylabel="depth L" if name == self.weights[0] else "",
                   title=f"$\\|{symbol}^L(\\cdot, \\tau) - {symbol}(\\cdot, \\tau)\\|$, reference L = {n['reference_depth']}")
            figure.colorbar(image, ax=ax)
        checked, symbol = self.weights[0], self.symbols[self.weights[0]][1]
        successive = self.checked == "successive"
        distances = record["successive" if successive else "distance"][checked]
        fits = n["successive_rates" if successive else "rates"][checked]
        shown = f"{symbol}^L - {symbol}^{{2L}}" if successive else f"{symbol}^L - {symbol}"
        ax = axes[len(self.weights)]
        index = {t: i for i, t in enumerate(record["iterations"])}
        at = depths[:len(distances[0])]  # successive differences: the coarse depth of each pair
        for j, t in enumerate(n["check_iterations"]):
            values = np.asarray(distances[index[t]], dtype=float).mean(axis=1)
            slope = fits[index[t] - 1]["slope"]
            ax.plot(at, values, "o-", ms=4, color=f"C{j}",
                    label=f"iteration {t}: r = {number(None if slope is None else -slope, 2)}")
        anchor = np.asarray(distances[index[n["check_iterations"][-1]]], dtype=float).mean(axis=1)[0]
        ax.plot(at, anchor * at[0] / np.asarray(at, dtype=float), "k--", lw=0.8, label="slope −1")
        depth_axis(ax, at)
        ax.set(yscale="log", xlabel="depth L", ylabel=f"$\\|{shown}\\|$ (mean over replicates)",
               title=f"rate in L; verdict {n['verdict']}")
        ax.legend(fontsize=7)
        if self.uniform:
            # L × distance over training time: flat curves that collapse onto one another = O(1/L) uniformly in τ
            ax = axes[-1]
            grid = np.asarray(distances, dtype=float).mean(axis=2)[1:]
            for j, L in enumerate(at):
                ax.plot(iterations[1:], L * grid[:, j], color=f"C{j % 10}", lw=1.2, label=f"L = {L}")
            ax.set(xscale="log", yscale="log", xlabel="training iteration",
                   ylabel=f"$L \\cdot \\|{shown}\\|$",
                   title="bounded in τ: O(1/L) uniformly")
            ax.legend(fontsize=6, ncol=2)
        axes[-1].yaxis.set_label_position("right")
        axes[-1].yaxis.tick_right()
