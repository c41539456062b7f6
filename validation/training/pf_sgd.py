"""Peluchetti & Favaro (2020) §4.3, Fig. 5: reparametrised against standard gradients, on digits.

The ResNet is theirs (:class:`~validation.training.networks.PFNet`): x_0 = W_I z, x_{t+1} = x_t +
tanh(ΔW_t x_t + Δb_t), ŷ = W_O x_T with ΔW_t = σ_w √(Δt/D) ε^W_t, Δb_t = σ_b √Δt ε^b_t, σ_w = σ_b = 1,
T = 1, fixed random W_I, W_O ~ N(0, 1), tanh, cross-entropy, plain SGD. The same initial network is
trained two ways, over a grid of widths D and depths L:

* **reparametrised**: the gradient is taken with respect to ε (their eq. 16);
* **standard**: with respect to ΔW, Δb themselves (their eq. 15). Since ∂/∂ε = σ_w√(Δt/D) ∂/∂ΔW, a
  step of size η on ε moves ΔW by η Δt/D times the standard step: the reparametrisation rescales the
  learning rate with L and D.

Every learning rate of the grid is tried on every (D, L), each with several replicates; then, for each
parametrisation, the **one common learning rate** is chosen — the one whose worst (D, L) cell has the
lowest mean final *training* loss (never by test accuracy) — and each cell's test accuracy at that rate
is reported with its learning curve (loss of every update, mean over replicates).

**Checks.** (1) The paper's Fig. 5, which shows training losses: with one common learning rate each, the
standard network's worst cell ends with a higher training loss than the reparametrised network's — the
interval of log(worst standard loss / worst reparametrised loss) lies above 0 (paired bootstrap over
replicates: replicate r starts from the same network in both parametrisations). (2) The text's claim, which is
about test accuracy (87.1–90.6% reparametrised, never uniformly above 72.4% standard, on MNIST), is **reported, not
judged** (:meth:`~validation.core.checks.Check.reported`): its percentages are MNIST's and do not transfer to
another data set, and the form that was once judged in their place — the reparametrised network's worst cell more
accurate than the standard network's, by the paired-bootstrap interval of the difference of the worst cells' mean
accuracies — was chosen after the percentages failed on digits (where the standard network is above 72.4% in every
cell and the more accurate in most), so it cannot count as a test. The report gives both arms' accuracy ranges,
the cells each wins and that interval. The verdict is the losses' check alone: Fig. 5's own quantity.

**Commonly used initialisations** (``standard_inits``; none in the preset): §4.3 adds that "similar results
(not shown) are obtained for commonly used initializations (Glorot and Bengio (2010); He et al. (2015))".
Each initialisation given adds a standard-gradient arm ``standard-<init>`` whose ΔW_t starts from it
(:func:`~validation.training.networks.pf_init_weights`: glorot N(0, 2/(2D)), glorot-uniform U(±√(6/(2D))),
he N(0, 2/D); Δb_t = 0; replicate r rescales the same draws ε and sees the same data order), trained on
the same learning-rate grid, with its own common learning rate chosen by the same rule, and checked the
same way: the interval of log(its worst-cell loss / the reparametrised worst-cell loss) must lie above 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..core.checks import Check, bound_check, check_line, combine
from ..core.stats import paired_bootstrap
from .experiment import Experiment, NetworkSize, mean_interval, number
from .networks import PFNet
from .sweep import Configuration
from .trainer import train

__all__ = ["PFSGD"]

PARAMETRISATIONS = ("reparametrised", "standard")
#: the initialisations' names in words (checks and plots)
INIT_NAMES = {"glorot": "Glorot (normal)", "glorot-uniform": "Glorot (uniform)", "he": "He"}


def arms(settings) -> list[tuple[str, str]]:
    """(arm, initialisation) of every trained arm: the paper's two, then ``standard-<init>`` per ``standard_inits``."""
    return [(p, "pf") for p in PARAMETRISATIONS] + [(f"standard-{i}", i) for i in settings.standard_inits or ()]


class PFSGD(Experiment):
    name = "pf-sgd"
    rate_grid = True
    title = "SGD with reparametrised against standard gradients over a (D, L) grid"
    paper = "Peluchetti & Favaro (2020) §4.3, Fig. 5 (MNIST there; digits here)"
    claim = ("with reparametrised gradients one common learning rate trains every (D, L) (stable loss decrease; test "
             "accuracy 87.1–90.6% on MNIST); with standard gradients a common learning rate is slow or diverges for "
             "some (D, L) (test accuracy at best 72.4% uniformly)")
    smoke = dict(widths=(4, 8), depths=(4, 8), epochs=1, replicates=2, learning_rates=(1e-2, 1e-1),
                 train_size=400, resamples=200)
    rejects = {
        "standard gradients reaching a lower worst-cell training loss than reparametrised ones (planted records)":
            "tests/test_training.py::test_pf_sgd_loss_check_fails_when_standard_gradients_train_better",
    }
    defaults = dict(dataset="digits", widths=(25, 50, 100), depths=(25, 50, 100), epochs=6, batch_size=200,
                  optimizer="sgd", learning_rates=(1e-3, 1e-2, 1e-1, 1.0), replicates=4, standard_inits=())

    def largest_network(self, settings):
        return NetworkSize(settings.replicates, max(settings.depths), max(settings.widths), settings.batch_size)

    def configurations(self, settings):
        return [Configuration(f"{arm}-D{D}-L{L}", {"parametrisation": arm.split("-", 1)[0], "width": D, "depth": L,
                                                    **({} if init == "pf" else {"init": init})})
                for arm, init in arms(settings) for D in settings.widths for L in settings.depths]

    def estimate_seconds(self, settings):
        replicates = len(settings.learning_rates) * settings.replicates
        updates = settings.epochs * max(1, 1438 // settings.batch_size)
        per_layer = sum(6e-10 * replicates * settings.batch_size * D * D + 2e-5 * replicates for D in settings.widths)
        return len(arms(settings)) * per_layer * sum(settings.depths) * updates

    def train_one(self, settings, configuration, data, device, progress):
        p = configuration.params
        dataset = data[settings.dataset]
        grid = len(settings.learning_rates)
        label = (self.name, f"D{p['width']}-L{p['depth']}")  # the same initial draws for every arm
        histories = []
        for rate in settings.learning_rates:  # one rate at a time: replicate r starts from the same network for
            # every rate, and a pass keeps its activations small (R·B·D·L numbers: at R = 16, D = L = 100 the
            # allocator's page faults made a layer 4× slower than four passes of R = 4)
            net = PFNet(replicates=settings.replicates, depth=p["depth"], width=p["width"], n_in=dataset.n_in,
                        n_out=dataset.n_out, reparametrised=p["parametrisation"] == "reparametrised", sigma_w=1.0,
                        sigma_b=1.0, seed=settings.seed, label=label, dtype=settings.torch_dtype, device=device,
                        init=p.get("init", "pf"))
            lrs = torch.full((settings.replicates,), rate, dtype=settings.torch_dtype, device=device)
            histories.append(train(net, dataset, epochs=settings.epochs, batch_size=settings.batch_size,
                                   optimizer=settings.optimizer, lrs=lrs, seed=settings.seed, label=label,
                                   record_steps=True, on_epoch=lambda: progress(1 / grid)))

        def by_rate(values: list[list[float | None]]) -> list[list[float | None]]:  # (grid, R) → (R, grid)
            return [list(row) for row in zip(*values)]

        steps = np.asarray([[[np.nan if v is None else v for v in step] for step in h.step_loss] for h in histories],
                           dtype=float)  # (grid, updates, R)
        return {**p, "learning_rates": list(settings.learning_rates),
                "train_loss": by_rate([h.final_train_loss for h in histories]),
                "test_accuracy": by_rate([h.test_accuracy[-1] for h in histories]),
                "diverged": by_rate([h.diverged for h in histories]),
                "step_loss": steps.transpose(1, 2, 0).tolist()}

    def summarise(self, settings, records):
        grid = len(settings.learning_rates)
        out: dict[str, Any] = {}
        for p, _ in arms(settings):
            cells = [(D, L) for D in settings.widths for L in settings.depths]
            rows = [records[f"{p}-D{D}-L{L}"] for D, L in cells]
            loss = np.array([[[np.inf if v is None or not math.isfinite(v) else v for v in rep] for rep in r["train_loss"]]
                             for r in rows])  # (cells, replicates, grid)
            worst = loss.mean(axis=1).max(axis=0)  # per learning rate: the worst cell's mean training loss
            g = int(np.argmin(worst)) if np.isfinite(worst).any() else 0
            per_cell = []
            for (D, L), r in zip(cells, rows):
                acc = [row[g] for row in r["test_accuracy"]]
                mean, low, high = mean_interval(acc, settings.confidence)
                curve = np.nanmean(np.array(r["step_loss"], dtype=float)[:, :, g], axis=1)
                per_cell.append({"width": D, "depth": L, "test_accuracy": mean, "ci": [low, high],
                                 "diverged": int(sum(row[g] for row in r["diverged"])),
                                 "learning_curve": curve.tolist()})
            accs = [c["test_accuracy"] for c in per_cell]
            out[p] = {"learning_rate": settings.learning_rates[g], "worst_loss_by_rate": worst.tolist(),
                      "cells": per_cell, "min_accuracy": float(np.nanmin(accs)), "max_accuracy": float(np.nanmax(accs))}
        point, low, high, method = _worst_loss_log_ratio(settings, records, out, "standard")
        checks = [bound_check("with one common learning rate each, the standard network's worst cell ends with a "
                              "higher training loss than the reparametrised network's", (low, high), 0.0,
                              at_most=False, detail=f"log(worst standard loss / worst reparametrised loss) = "
                                                    f"{number(point)} [{number(low)}, {number(high)}] ({method})"
                              ).to_dict()]
        a_point, a_low, a_high, a_method = _worst_accuracy_difference(settings, records, out)
        checks.append(Check.reported(
            "§4.3's accuracy claim (87.1–90.6% reparametrised, standard never uniformly above 72.4%, on MNIST): "
            "reported, not judged — its percentages are MNIST's, and the worst-cell form below was chosen after they "
            "failed to transfer", _accuracy_detail(out, a_point, a_low, a_high, a_method)).to_dict())
        comparisons = {}
        for arm, init in arms(settings)[len(PARAMETRISATIONS):]:  # the paper's "similar results (not shown)"
            point_i, low_i, high_i, method_i = _worst_loss_log_ratio(settings, records, out, arm)
            comparisons[init] = {"value": point_i, "ci": [low_i, high_i], "method": method_i}
            checks.append(bound_check(
                f"from the {INIT_NAMES[init]} initialisation too (§4.3's 'similar results'), the standard network's "
                "worst cell ends with a higher training loss than the reparametrised network's, one common learning "
                "rate each", (low_i, high_i), 0.0, at_most=False,
                detail=f"log(worst {arm} loss / worst reparametrised loss) = {number(point_i)} [{number(low_i)}, "
                       f"{number(high_i)}] ({method_i})").to_dict())
        return {"dataset": settings.dataset, "grid": grid, "parametrisations": out,
                "worst_loss_log_ratio": {"value": point, "ci": [low, high], "method": method},
                "worst_accuracy_difference": {"value": a_point, "ci": [a_low, a_high], "method": a_method},
                **({"init_log_ratios": comparisons} if comparisons else {}),
                "checks": checks, "verdict": combine(checks)}

    def table(self, result):
        s, n = result.settings, result.numbers
        level = int(round(100 * s.confidence))
        lines = [f"{s.dataset}, SGD, batch {s.batch_size}, {s.epochs} epochs, learning-rate grid "
                 f"{', '.join(f'{r:g}' for r in s.learning_rates)}, {s.replicates} replicates", ""]
        for p, e in n["parametrisations"].items():
            lines.append(f"{p}: common learning rate {e['learning_rate']:g} (worst-cell training loss by rate: "
                         + ", ".join(f"{r:g}: {number(w)}" for r, w in zip(s.learning_rates, e["worst_loss_by_rate"])) + ")")
            lines.append(f"  {'D':>5s} {'L':>5s}  test accuracy [{level}% CI]  diverged")
            for c in e["cells"]:
                lines.append(f"  {c['width']:>5d} {c['depth']:>5d}  {number(c['test_accuracy'])} [{number(c['ci'][0])}, "
                             f"{number(c['ci'][1])}]  {c['diverged']}")
            lines.append(f"  range {e['min_accuracy']:.3f} – {e['max_accuracy']:.3f}")
            lines.append("")
        lines += [check_line(c) for c in n["checks"]]
        return lines

    def plot(self, result, figure):
        s, n = result.settings, result.numbers
        panels = len(n["parametrisations"])
        if panels > 2:  # the standard arms from commonly used initialisations: one more panel each
            figure.set_size_inches(4.6 * panels, 5.0)
        axes = figure.subplots(1, panels, sharey=False)
        colours = {D: c for D, c in zip(s.widths, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"))}
        styles = {L: st for L, st in zip(s.depths, ("-", "--", ":", "-."))}
        for ax, (p, e) in zip(axes, n["parametrisations"].items()):
            for c in e["cells"]:
                ax.plot(np.arange(1, len(c["learning_curve"]) + 1), c["learning_curve"],
                        styles.get(c["depth"], "-"), color=colours.get(c["width"], "k"), lw=1,
                        label=f"D={c['width']}, L={c['depth']}: acc {number(c['test_accuracy'])}")
            ax.set(xlabel="SGD update", ylabel="training loss (batch mean, mean over replicates)", yscale="log")
            if panels == 2:
                ax.set_title(f"{p} gradients, common lr {e['learning_rate']:g}")
            else:
                init = "the paper's init" if p in PARAMETRISATIONS else INIT_NAMES[p.split("-", 1)[1]] + " init"
                ax.set_title(f"{p.split('-', 1)[0]} gradients, {init}\ncommon lr {e['learning_rate']:g}", fontsize=10)
            ax.legend(fontsize=6)
        figure.suptitle(f"Peluchetti & Favaro Fig. 5 on {s.dataset}: verdict {n['verdict']}", fontsize=10)
        figure.tight_layout()



def _compare_worst_cells(settings, records, out, first: str, second: str, key: str, clean,
                         compare) -> tuple[float, float, float, str]:
    """``compare(first's cell means, second's cell means)`` (each (…, cells), a record's ``key`` per replicate at the
    arm's common learning rate, ``clean`` applied to each value), with its interval: the same replicate r starts from
    the same draws and data order in every arm, so replicates are resampled together (paired bootstrap,
    percentile)."""
    columns = [np.array([[clean(v) for v in row] for row in records[f"{p}-D{D}-L{L}"][key]])
               [:, settings.learning_rates.index(out[p]["learning_rate"])]
               for p in (first, second) for D in settings.widths for L in settings.depths]
    cells = len(settings.widths) * len(settings.depths)

    def statistic(*cols: np.ndarray, axis: int = -1) -> np.ndarray:
        means = np.stack([np.mean(c, axis=axis) for c in cols], axis=-1)
        return compare(means[..., :cells], means[..., cells:])

    point = float(statistic(*columns))
    low, high, method = (paired_bootstrap(columns, statistic, resamples=settings.resamples,
                                          confidence=settings.confidence, seed=settings.seed, method="percentile")
                         if settings.replicates >= 2 and math.isfinite(point) else (math.nan, math.nan, "none"))
    return point, low, high, method


def _accuracy_detail(out: dict[str, Any], point: float, low: float, high: float, method: str) -> str:
    """The accuracy claim's numbers on the data used: each arm's range over the cells, the cells the
    reparametrised network wins, and the worst cells' difference."""
    mine, theirs = out["reparametrised"], out["standard"]
    wins = sum(a["test_accuracy"] > b["test_accuracy"] for a, b in zip(mine["cells"], theirs["cells"]))
    above = theirs["min_accuracy"] > 0.724
    return (f"test accuracy reparametrised {number(mine['min_accuracy'])}–{number(mine['max_accuracy'])}, standard "
            f"{number(theirs['min_accuracy'])}–{number(theirs['max_accuracy'])} (the paper: ≥ 0.871 against "
            f"< 0.724 somewhere); the standard network is {'above' if above else 'not above'} 0.724 in every cell"
            f"; the reparametrised one is the more accurate in {wins} of {len(mine['cells'])} "
            f"cells; worst cells' difference {number(point)} [{number(low)}, {number(high)}] ({method})")


def _worst_loss_log_ratio(settings, records, out, arm: str) -> tuple[float, float, float, str]:
    """log(worst-cell training loss of ``arm`` / that of the reparametrised arm), each at its common learning rate,
    with its paired interval (:func:`_compare_worst_cells`); a missing loss counts as +∞."""
    return _compare_worst_cells(settings, records, out, "reparametrised", arm, "train_loss",
                                lambda v: np.inf if v is None else v,
                                lambda first, other: np.log(other.max(axis=-1)) - np.log(first.max(axis=-1)))


def _worst_accuracy_difference(settings, records, out) -> tuple[float, float, float, str]:
    """(worst-cell mean test accuracy, reparametrised) − (the same, standard), each at its common learning rate, with
    its paired interval (:func:`_compare_worst_cells`); a diverged replicate counts as accuracy 0."""
    return _compare_worst_cells(settings, records, out, "reparametrised", "standard", "test_accuracy",
                                lambda v: 0.0 if v is None or not math.isfinite(v) else v,
                                lambda first, other: first.min(axis=-1) - other.min(axis=-1))
