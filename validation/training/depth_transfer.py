"""Depth-wise hyperparameter transfer: does the optimal learning rate stop moving with depth?

The package's β (the residual branch's multiplier α_L = L^-β) is also a *parametrisation* of a trained network, and
each parametrisation comes with a learning-rate rule for the hidden weights. With Adam:

* β = 0 — standard parametrisation (SP): every learning rate is η;
* β = ½ — Depth-μP (Yang, Yu, Zhu & Hayou, Tensor Programs VI; Bordelon et al., ICLR 2024): the hidden weights'
  rate is η L^{-1/2};
* β = 1 — CompleteP (Dey et al., NeurIPS 2025): the hidden weights' rate is η L^{β−1} = η.

(For β > 0 the rule is η L^{β−1}, :func:`hidden_rate_exponent`; the input and output layers keep η.) A
parametrisation **transfers** when the best base rate η* does not depend on L: then a rate tuned on a shallow
network serves a deep one.

**depth-transfer.** For each β and each depth L, res-1 networks (:class:`~validation.training.networks.Res1Net`,
i.i.d. N(0, 1/d) hidden weights) are trained with Adam at every base rate η of a log-spaced grid, with R replicates
per rate (each its own initialisation and data order); the measure is the final training loss. Per (β, L):

* η*(L): the vertex of the parabola through the replicates' mean log loss at the best grid rate and its two
  neighbours, in log η (clipped to that bracket); a best rate at the grid's edge is flagged, not extrapolated;
* its exponent γ in η* ∝ L^γ: the least-squares slope of log η* on log L;
* intervals: a bootstrap over replicates (each (L, η) cell resampled on its own — replicates at different rates
  are different networks), η* and γ recomputed on every resample; percentile intervals.

**Checks** (three-valued): a parametrisation transfers when the interval of γ lies within ±0.1 of 0, does not when it
lies wholly outside, and more replicates would tell otherwise. The verdict combines the parametrisations claimed to
transfer (β > 0); SP's check is reported beside them, as is, for every β, whether the interval contains −3/2 (the
claim of Zhang et al., arXiv 2602.07494, that the optimal rate falls as depth^-3/2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.checks import INCONCLUSIVE, Check, check_line, combine, interval_check
from ..core.settings import SettingsError
from ..core.stats import slope_fit
from .experiment import Experiment, NetworkSize, depth_axis, grid_learning_rates, number
from .networks import Res1Net, weight_regime
from .sweep import Configuration
from .trainer import train

__all__ = ["DepthTransfer", "hidden_rate_exponent", "optimal_log_rate", "PARAMETRISATIONS", "TRANSFER_MARGIN",
           "ZHANG_EXPONENT"]

#: the named parametrisations among the scalings β
PARAMETRISATIONS = {0.0: "SP", 0.5: "Depth-μP", 1.0: "CompleteP"}
#: γ within this of 0: the optimal rate transfers
TRANSFER_MARGIN = 0.1
#: Zhang et al.'s claimed exponent of η*(L)
ZHANG_EXPONENT = -1.5


def hidden_rate_exponent(beta: float) -> float:
    """The exponent e of the hidden weights' learning rate η L^e under scaling β (Adam): 0 for SP (β = 0), β − 1
    otherwise (Depth-μP at β = ½: −½; CompleteP at β = 1: 0)."""
    return 0.0 if beta == 0 else beta - 1.0


def _name(beta: float) -> str:
    return PARAMETRISATIONS.get(float(beta), f"β = {beta:g}")


def optimal_log_rate(log_rates: np.ndarray, mean_log_loss: np.ndarray) -> tuple[float, bool]:
    """(log η*, at the edge): the vertex of the parabola through the best grid point of ``mean_log_loss`` (non-finite
    entries: diverged) and its two neighbours, clipped to their bracket; at a grid edge, the edge rate and True.
    NaN when no rate is finite."""
    finite = np.isfinite(mean_log_loss)
    if not finite.any():
        return math.nan, True
    g = int(np.argmin(np.where(finite, mean_log_loss, np.inf)))
    if g == 0 or g == len(log_rates) - 1 or not (finite[g - 1] and finite[g + 1]):
        return float(log_rates[g]), True
    x0, x1, x2 = log_rates[g - 1:g + 2]
    y0, y1, y2 = mean_log_loss[g - 1:g + 2]
    denominator = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0)
    if denominator == 0:
        return float(x1), False
    vertex = x1 - 0.5 * ((x1 - x0) ** 2 * (y1 - y2) - (x1 - x2) ** 2 * (y1 - y0)) / denominator
    return float(min(max(vertex, x0), x2)), False


def _optimal_log_rates(log_loss: np.ndarray, log_rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log η* and the edge flags per depth, from log losses (D depths, G rates, R replicates)."""
    with np.errstate(invalid="ignore"):
        means = log_loss.mean(axis=2)
    pairs = [optimal_log_rate(log_rates, means[i]) for i in range(len(means))]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def transfer_fit(depths: list[int], learning_rates: list[float], losses: np.ndarray, *, confidence: float,
                 resamples: int, seed: int) -> dict[str, Any]:
    """η*(L) and its exponent γ with bootstrap intervals (module docstring) from final losses (D, G, R): the package's
    slope fit (:func:`validation.core.stats.slope_fit`), independent across depths and, within a depth, across the
    (L, η) cells (``cells``: replicates at different rates are different networks)."""
    log_rates = np.log(np.asarray(learning_rates, dtype=float))
    log_depths = np.log(np.asarray(depths, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_loss = np.where(np.isfinite(losses) & (losses > 0), np.log(np.maximum(losses, 1e-300)), np.inf)
    optimum, edge = _optimal_log_rates(log_loss, log_rates)

    def optimal(rows: np.ndarray) -> Any:
        """log η* of replicate rows (…, R, G): the vertex of the mean log loss over the rates."""
        with np.errstate(invalid="ignore"):
            means = rows.mean(axis=-2)
        if means.ndim == 1:
            return optimal_log_rate(log_rates, means)[0]
        return np.array([optimal_log_rate(log_rates, row)[0] for row in means])

    fit = slope_fit(log_depths, [log_loss[i].T for i in range(len(depths))], optimal, resamples=resamples,
                    confidence=confidence, rng=np.random.default_rng(seed), cells=True)
    interval = (fit.low, fit.high) if fit.finite >= 0.5 else (math.nan, math.nan)
    return {"optimal_rate": np.exp(optimum).tolist(), "optimal_rate_ci": np.exp(np.array(fit.intervals)).tolist(),
            "at_edge": edge.tolist(), "exponent": fit.slope, "exponent_ci": list(interval),
            "mean_loss": np.exp(np.where(np.isfinite(log_loss), log_loss, np.nan).mean(axis=2)).tolist()}


class DepthTransfer(Experiment):
    name = "depth-transfer"
    rate_grid = True
    title = "the optimal learning rate against depth, per parametrisation (SP, Depth-μP, CompleteP)"
    paper = ("Yang et al. (Tensor Programs VI), Bordelon et al. (ICLR 2024), Dey et al. (NeurIPS 2025); "
             "Zhang et al. (arXiv 2602.07494)")
    claim = ("with the Depth-μP (β = 1/2) and CompleteP (β = 1) learning-rate rules the optimal learning rate does "
             "not move with depth: η* ∝ L^γ with γ within ±0.1 of 0")
    smoke = dict(depths=(4, 8, 16), width=8, betas=(0.0, 0.5), epochs=1, replicates=2,
                 learning_rates=(1e-3, 1e-2, 1e-1), train_size=256, batch_size=64, resamples=200)
    rejects = {
        "CompleteP's learning rates on a residual branch without its depth scaling L^-β (an SP network), whose "
        "optimal rate moves with depth":
            "tests/test_training_plants.py::test_depth_transfer_fails_when_the_branch_loses_its_depth_scaling",
    }
    defaults = dict(dataset="digits", depths=(4, 8, 16, 32, 64, 128), width=32, activation="tanh", betas=(0.0, 0.5, 1.0),
                  epochs=4, batch_size=64, optimizer="adam",
                  learning_rates=tuple(float(f"{10 ** e:.3g}") for e in np.arange(-3.5, 0.01, 0.5)), replicates=6)
    # on the bundled digits 24 replicates settle the check (measured 2026-11-29: at 6, CompleteP's interval straddled
    # the margin's edge, −0.092 [−0.140, −0.026]; at 24 it lies within it, −0.024 [−0.063, 0.026]; 277 s on 2 cores)
    per_dataset = {"digits": {"replicates": 24}}

    def largest_network(self, settings):
        return NetworkSize(settings.replicates * len(settings.learning_rates), max(settings.depths), settings.width,
                           settings.batch_size)

    def configurations(self, settings):
        if len(settings.depths) < 3 or len(settings.learning_rates) < 3:
            name = "depths" if len(settings.depths) < 3 else "learning_rates"
            raise SettingsError(name, f"depth-transfer needs at least 3 {name.replace('_', ' ')} (an optimum between "
                                      f"two neighbours, an exponent over several depths); got "
                                      f"{list(getattr(settings, name))}")
        return [Configuration(f"beta{b:g}-L{L}", {"beta": b, "depth": L}) for b in settings.betas
                for L in settings.depths]

    def estimate_seconds(self, settings):
        updates = settings.epochs * (settings.train_size or 1438) // settings.batch_size
        return 4e-5 * settings.replicates * len(settings.learning_rates) * sum(settings.depths) * updates * len(
            settings.betas)

    def train_one(self, settings, configuration, data, device, progress):
        beta, depth = configuration.params["beta"], configuration.params["depth"]
        dataset = data[settings.dataset]
        label = (self.name, configuration.key)
        net = Res1Net(replicates=len(settings.learning_rates) * settings.replicates, depth=depth, width=settings.width,
                      n_in=dataset.n_in, n_out=dataset.n_out, beta=beta, regime=weight_regime("iid"),
                      activation=settings.activation, seed=settings.seed, label=label, dtype=settings.torch_dtype,
                      device=device)
        history = train(net, dataset, epochs=settings.epochs, batch_size=settings.batch_size,
                        optimizer=settings.optimizer, lrs=grid_learning_rates(settings, settings.replicates, device),
                        seed=settings.seed, label=label, on_epoch=progress,
                        lr_scales={"V": float(depth) ** hidden_rate_exponent(beta)})
        shape = (settings.replicates, len(settings.learning_rates))
        loss = [[v if v is not None and math.isfinite(v) else None for v in row]
                for row in np.asarray(history.final_train_loss, dtype=float).reshape(shape).tolist()]
        return {"beta": beta, "depth": depth, "hidden_rate_exponent": hidden_rate_exponent(beta),
                "learning_rates": list(settings.learning_rates), "train_loss": loss,
                "test_accuracy": np.asarray(history.test_accuracy[-1]).reshape(shape).tolist(),
                "diverged": np.asarray(history.diverged).reshape(shape).tolist()}

    def summarise(self, settings, records):
        depths, rates = list(settings.depths), list(settings.learning_rates)
        fits, checks, zhang = {}, [], {}
        for b in settings.betas:
            losses = np.array([[[np.inf if v is None else v for v in row] for row in
                                records[f"beta{b:g}-L{L}"]["train_loss"]] for L in depths], dtype=float)
            fit = transfer_fit(depths, rates, losses.transpose(0, 2, 1), confidence=settings.confidence,
                               resamples=settings.resamples, seed=settings.seed)
            name = f"{_name(b)} (β = {b:g}, hidden rate η·L^{hidden_rate_exponent(b):g}): η* transfers across depth"
            edges = [L for L, e in zip(depths, fit["at_edge"]) if e]
            low, high = fit["exponent_ci"]
            if edges:
                check = Check(name, INCONCLUSIVE, f"the best rate lies at the grid's edge at L = "
                                                    f"{', '.join(map(str, edges))}: widen --learning-rates")
            elif not (math.isfinite(low) and math.isfinite(high)):
                check = Check(name, INCONCLUSIVE, "no interval: too many resamples without a finite optimum")
            else:
                check = interval_check(name, fit["exponent"], (low, high), (-TRANSFER_MARGIN, TRANSFER_MARGIN),
                                       settings.replicates, what=f"γ = {fit['exponent']:.3f}, the interval",
                                       confidence=settings.confidence)
            fits[f"{b:g}"] = fit
            checks.append((b, check))
            zhang[f"{b:g}"] = (None if edges or not math.isfinite(low) else
                               "consistent with −3/2" if low <= ZHANG_EXPONENT <= high else "excludes −3/2")
        judged = [c for b, c in checks if b > 0] or [c for _, c in checks]
        return {"dataset": settings.dataset, "depths": depths, "betas": list(settings.betas), "learning_rates": rates,
                "fits": fits, "zhang": zhang, "checks": [c.to_dict() for _, c in checks],
                "judged": [c.name for c in judged], "verdict": combine(judged)}

    def table(self, result):
        s, n = result.settings, result.numbers
        lines = [f"res-1, d = {s.width}, σ = {s.activation}, {s.dataset}, {s.optimizer}, {s.epochs} epochs, batch "
                 f"{s.batch_size}, {s.replicates} replicates per rate; base rates "
                 f"{', '.join(f'{r:g}' for r in s.learning_rates)}; η* by the final training loss", ""]
        for b in n["betas"]:
            fit = n["fits"][f"{b:g}"]
            lines.append(f"{_name(b)}: β = {b:g}, branch L^-{b:g}, hidden-weight rate η·L^{hidden_rate_exponent(b):g}")
            lines.append(f"  {'L':>5}  {'η*':>9}  {'95% interval':>21}  {'best grid loss':>15}")
            for i, L in enumerate(n["depths"]):
                low, high = fit["optimal_rate_ci"][i]
                g = int(np.nanargmin(fit["mean_loss"][i])) if np.isfinite(fit["mean_loss"][i]).any() else None
                lines.append(f"  {L:>5}  {fit['optimal_rate'][i]:>9.3g}  [{low:>8.3g}, {high:>8.3g}]  "
                             f"{number(fit['mean_loss'][i][g] if g is not None else None, 4):>15}"
                             f"{'  (grid edge)' if fit['at_edge'][i] else ''}")
            low, high = fit["exponent_ci"]
            lines.append(f"  exponent γ of η* ∝ L^γ: {number(fit['exponent'])} [{number(low)}, {number(high)}]; "
                         f"−3/2 (Zhang et al.): {n['zhang'][f'{b:g}'] or '—'}")
            lines.append("")
        lines += [check_line(c) + ("" if c["check"] in n["judged"] else "  (reported, not judged)") for c in n["checks"]]
        return lines

    def plot(self, result, figure):
        n = result.numbers
        betas, depths = n["betas"], n["depths"]
        axes = figure.subplots(1, len(betas) + 1)
        colours = [f"C{i}" for i in range(len(depths))]
        for ax, b in zip(axes, betas):
            fit = n["fits"][f"{b:g}"]
            for i, L in enumerate(depths):
                ax.plot(n["learning_rates"], fit["mean_loss"][i], "o-", ms=3, color=colours[i], label=f"L = {L}")
                ax.axvline(fit["optimal_rate"][i], color=colours[i], lw=0.8, ls=":")
            ax.set(xscale="log", yscale="log", xlabel="base learning rate η", title=f"{_name(b)} (β = {b:g})")
        axes[0].set_ylabel("final training loss (mean over replicates)")
        axes[0].legend(fontsize=7)
        ax = axes[-1]
        for j, b in enumerate(betas):
            fit = n["fits"][f"{b:g}"]
            rate = np.array(fit["optimal_rate"])
            ci = np.array(fit["optimal_rate_ci"])
            ax.errorbar(depths, rate, yerr=[rate - ci[:, 0], ci[:, 1] - rate], fmt="o-", ms=4, capsize=3,
                        color=f"C{j}", label=f"{_name(b)}: γ = {number(fit['exponent'], 2)}")
        anchor = np.array(n["fits"][f"{betas[0]:g}"]["optimal_rate"])[0]
        ax.plot(depths, anchor * (np.array(depths) / depths[0]) ** ZHANG_EXPONENT, "k--", lw=0.8, label="slope −3/2")
        depth_axis(ax, depths)
        ax.yaxis.set_label_position("right")
        ax.yaxis.tick_right()
        ax.set(yscale="log", xlabel="depth L", ylabel="optimal base rate η*", title=f"η*(L); verdict {n['verdict']}")
        ax.legend(fontsize=7)
