"""Marion, Wu, Sander & Biau (ICLR 2024), Fig. 1: trained ResNets stay discretisations of a neural ODE.

**The model and its training**, as in the authors' ``finite_training_time_convergence.py``: a residual network of
depth L on inputs x ∈ R^d,

    h_{k+1} = h_k + (1/L) σ(h_k W_k) V_k,   k = 0 … L − 1,   W_k ∈ R^{d×M}, V_k ∈ R^{M×d},

initialised as the discretisation of a smooth (here constant) function of t = k/L — V_k = 0, W_k = W⁰ with N(0, 1)
entries, the same for every layer — and trained by full-batch gradient descent on the mean squared error of h_L
against targets Y, with learning rate η·L (the 1/L branch scale makes each layer's gradient O(1/L)). X, Y ∈ R^{n×d}
have N(0, 1) entries. Replicate r draws its own X, Y and W⁰ from streams labelled by r.

**What converges** (their Theorem 4.2, finite training time): the weights after τ steps are, layer by layer, a
discretisation of the trained neural ODE's weight functions 𝒱(·, τ), 𝒲(·, τ), with error O(1/L). The distance
measured is the authors':

    ‖𝒱^L(·, τ) − 𝒱(·, τ)‖ = ( (1/L) Σ_k ‖V_k^L(τ) − V^ref_{k·L_ref/L}(τ)‖_F² )^{1/2},

the reference being the deepest network trained alongside (the authors' L_ref = 2^14; the preset's 2^12, below),
and likewise for 𝒲. Every depth is trained in lockstep with the reference, so the distances are taken at every
iteration without storing any trajectory.

**The rate** at training time τ: the exponent r of ‖𝒱^L − 𝒱‖ ∝ L^{−r}, the least-squares slope of the replicates'
mean log distance on log L over the depths ≥ ``FIT_FROM`` (the shallowest depths carry the O(1/L²) term), with a
paired bootstrap interval over replicates (:func:`~validation.training.experiment.power_fit`). The check at each of
``CHECK_TIMES`` (three training times) is three-valued: PASS when the interval of r lies within 1 ± ``MARGIN``,
FAIL when it lies outside, INCONCLUSIVE otherwise; the verdict combines them. The reference's own error biases the
deepest depths by the factor 1 − L/L_ref (at most 1/16 in the preset); the successive differences
‖𝒱^L − 𝒱^{2L}‖, which need no reference, are fitted and reported beside it.

**Sizes.** The authors' d = 16, M = 32, n = 100, 50 steps, η = 0.01, GELU, float32, depths 2 … 2^10 against 2^14.
The preset keeps all of it but the depths: 2 … 2^8 against 2^12 (the same factor 16 between the deepest depth and
the reference) and 8 replicates, so that it runs in a few minutes on 2 cores; ``--depths 2,4,…,1024,16384`` is
the paper's (not run here: its reference costs about 4 times the preset's, extrapolated from 1.1 s per step for
4 replicates at 4096 layers on one core).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from limits.activations import get_activation
from limits.seeding import generator

from ..checks import INCONCLUSIVE, Check, check_line, combine, interval_check
from ..settings import SettingsError
from .experiment import Experiment, depth_axis, number, power_fit
from .networks import layers
from .sweep import Configuration

__all__ = ["MarionFig1", "CHECK_TIMES", "MARGIN", "FIT_FROM", "layer_distance"]

#: the training times (iterations, as fractions of ``epochs``) at which the rate is checked
CHECK_TIMES = (0.2, 0.5, 1.0)
#: the rate's interval must lie within 1 ± this
MARGIN = 0.1
#: depths below this are not fitted (their error carries the O(1/L²) term)
FIT_FROM = 8


def layer_distance(coarse: torch.Tensor, fine: torch.Tensor) -> torch.Tensor:
    """( (1/L) Σ_k ‖coarse_k − fine_{k·L'/L}‖_F² )^{1/2} per replicate, for weights (R, L, …) and (R, L', …) with L
    dividing L': layer k of the coarse network against layer k·L'/L of the fine one (the left end of its interval,
    as the authors index it)."""
    stride = fine.shape[1] // coarse.shape[1]
    difference = coarse - fine[:, ::stride]
    return difference.square().flatten(1).sum(1).div(coarse.shape[1]).sqrt()


class _Network:
    """R replicates of the depth-L network (module docstring), V (R, L, M, d) and W (R, L, d, M)."""

    def __init__(self, depth: int, initial_w: torch.Tensor, hidden: int, activation: str) -> None:
        replicates, width = initial_w.shape[0], initial_w.shape[1]
        self.depth = depth
        self.sigma = get_activation(activation)
        self.V = torch.zeros(replicates, depth, hidden, width, dtype=initial_w.dtype, device=initial_w.device,
                             requires_grad=True)
        self.W = initial_w[:, None].repeat(1, depth, 1, 1).requires_grad_(True)

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The mean squared error of each replicate, (R,)."""
        h = x
        for W_k, V_k in zip(layers(self.W), layers(self.V)):
            h = h + torch.bmm(self.sigma(torch.bmm(h, W_k)), V_k) / self.depth
        return (h - y).square().mean(dim=(1, 2))

    def step(self, x: torch.Tensor, y: torch.Tensor, learning_rate: float) -> torch.Tensor:
        """One full-batch gradient step at rate η·L on every replicate; returns the losses before it."""
        loss = self.loss(x, y)
        grad_v, grad_w = torch.autograd.grad(loss.sum(), (self.V, self.W))
        with torch.no_grad():
            self.V -= learning_rate * self.depth * grad_v
            self.W -= learning_rate * self.depth * grad_w
        return loss.detach()


def _check_times(epochs: int) -> list[int]:
    return sorted({max(1, round(f * epochs)) for f in CHECK_TIMES})


class MarionFig1(Experiment):
    name = "marion2024-fig1"
    title = "trained weights of depth L against the trained neural ODE's, over training time"
    paper = "Marion, Wu, Sander & Biau (ICLR 2024), Fig. 1 (right)"
    claim = ("a ResNet initialised as the discretisation of a smooth function and trained by gradient descent (rate "
             "η·L) stays its discretisation: ‖𝒱^L(·, τ) − 𝒱(·, τ)‖ = O(1/L) at every finite training time τ")
    smoke = dict(depths=(2, 4, 8, 16, 32, 128), width=4, hidden=6, epochs=10, replicates=3, train_size=10,
                 resamples=200)
    preset = dict(depths=(2, 4, 8, 16, 32, 64, 128, 256, 4096), width=16, hidden=32, activation="gelu", epochs=50,
                  learning_rates=(0.01,), replicates=8, train_size=100, dtype="float32")

    def datasets(self, settings):
        return []  # the authors' Gaussian inputs and targets, drawn per replicate (train_one)

    def configurations(self, settings):
        depths = list(settings.depths)
        if len(depths) < 3:
            raise SettingsError("depths", f"{depths}: give at least two depths and the reference (the last)")
        reference = depths[-1]
        bad = [L for L in depths[:-1] if reference % L or L & (L - 1)]
        if bad:
            raise SettingsError("depths", f"{bad}: every depth must be a power of two dividing the reference "
                                          f"depth {reference} (the last)")
        if sum(L >= FIT_FROM for L in depths[:-1]) < 2:
            raise SettingsError("depths", f"{depths}: give at least two depths ≥ {FIT_FROM} below the reference")
        return [Configuration("all-depths", {"depths": depths})]

    def estimate_seconds(self, settings):
        return 3e-5 * settings.epochs * sum(settings.depths) * (1 + settings.replicates / 4)

    def train_one(self, settings, configuration, data, device, progress):
        depths = list(configuration.params["depths"])
        d, m, n, R = settings.width, settings.hidden, settings.train_size, settings.replicates
        dtype = settings.torch_dtype

        def normal(shape, *labels):
            return torch.stack([torch.randn(shape, generator=generator(settings.seed, self.name, *labels, r,
                                                                        device=device), dtype=dtype, device=device)
                                for r in range(R)])

        x, y, initial_w = normal((n, d), "X"), normal((n, d), "Y"), normal((d, m), "W0")
        networks = [_Network(L, initial_w, m, settings.activation) for L in depths]
        reference, compared = networks[-1], networks[:-1]
        rate = settings.learning_rates[0]
        distance = {"V": [], "W": []}
        successive = {"V": [], "W": []}
        losses = []

        def measure() -> None:
            with torch.no_grad():
                for name in ("V", "W"):
                    distance[name].append([layer_distance(getattr(net, name), getattr(reference, name)).tolist()
                                           for net in compared])
                    successive[name].append([layer_distance(getattr(a, name), getattr(b, name)).tolist()
                                             for a, b in zip(compared, compared[1:])])

        measure()
        for _ in range(settings.epochs):
            losses.append([net.step(x, y, rate).tolist() for net in networks])
            measure()
            progress()
        final = [net.loss(x, y).detach().tolist() for net in networks]
        return {"depths": depths, "distance": distance, "successive": successive, "loss": losses + [final]}

    def summarise(self, settings, records):
        record = records["all-depths"]
        depths = record["depths"][:-1]
        keep = [i for i, L in enumerate(depths) if L >= FIT_FROM]  # increasing: the successive pairs are keep[:-1]
        fitted, pairs = [depths[i] for i in keep], keep[:-1]
        times = _check_times(settings.epochs)
        options = dict(confidence=settings.confidence, resamples=settings.resamples, seed=settings.seed)

        def fit(at: list[int], values: list[list[float]], t: int) -> dict[str, Any]:
            if len(at) < 2:
                return {"iteration": t, "slope": None, "ci": [None, None]}
            return {"iteration": t, **power_fit([depths[i] for i in at], np.asarray(values, dtype=float)[at], **options)}

        steps = range(1, settings.epochs + 1)
        rates = {name: [fit(keep, record["distance"][name][t], t) for t in steps] for name in ("V", "W")}
        successive_rates = {name: [fit(pairs, record["successive"][name][t], t) for t in steps] for name in ("V", "W")}
        checks = []
        for t in times:
            fit = rates["V"][t - 1]
            name = f"rate of ‖𝒱^L − 𝒱‖ at iteration {t} within 1 ± {MARGIN:g}"
            if fit["slope"] is None or None in fit["ci"]:
                checks.append(Check(name, INCONCLUSIVE, "no finite positive distances to fit"))
            else:
                checks.append(interval_check(name, -fit["slope"], (-fit["ci"][1], -fit["ci"][0]),
                                             (1 - MARGIN, 1 + MARGIN), settings.replicates,
                                             what=f"r = {-fit['slope']:.3f}, the interval",
                                             confidence=settings.confidence))
        return {"depths": depths, "reference_depth": record["depths"][-1], "fitted_depths": fitted,
                "check_iterations": times, "rates": rates, "successive_rates": successive_rates,
                "checks": [c.to_dict() for c in checks], "verdict": combine(checks)}

    def table(self, result):
        s, n = result.settings, result.numbers
        lines = [f"h ← h + σ(h W_k) V_k / L, d = {s.width}, M = {s.hidden}, σ = {s.activation}, n = {s.train_size} "
                 f"Gaussian inputs and targets, full-batch GD at rate {s.learning_rates[0]:g}·L, {s.epochs} steps, "
                 f"{s.replicates} replicates; reference depth {n['reference_depth']}; rates fitted on L ≥ {FIT_FROM}",
                 "", f"  {'iteration':>9}  {'rate of ‖𝒱^L − 𝒱‖':>28}  {'of ‖𝒲^L − 𝒲‖':>28}  "
                     f"{'successive ‖𝒱^L − 𝒱^2L‖':>28}"]
        shown = sorted(set(n["check_iterations"]) | {1, max(1, s.epochs // 10)})
        for t in shown:
            cells = []
            for fit in (n["rates"]["V"][t - 1], n["rates"]["W"][t - 1], n["successive_rates"]["V"][t - 1]):
                slope, (low, high) = fit["slope"], fit["ci"]
                cells.append("—" if slope is None else
                             f"{-slope:.3f} [{number(None if high is None else -high)}, "
                             f"{number(None if low is None else -low)}]")
            lines.append(f"  {t:>9}  {cells[0]:>28}  {cells[1]:>28}  {cells[2]:>28}")
        lines.append("")
        lines += [check_line(c) for c in n["checks"]]
        return lines

    def plot(self, result, figure):
        n, record = result.numbers, result.records["all-depths"]
        depths = n["depths"]
        from matplotlib.colors import LogNorm

        axes = figure.subplots(1, 3)
        for ax, name, symbol in zip(axes[:2], ("V", "W"), (r"\mathcal{V}", r"\mathcal{W}")):
            # the authors' heatmap: the distance (mean over replicates) over (iteration, L), log colour scale
            grid = np.asarray(record["distance"][name], dtype=float).mean(axis=2)[1:]  # (iterations, depths)
            positive = grid[grid > 0]
            image = ax.imshow(grid.T, aspect="auto", interpolation="nearest", cmap="BuPu", origin="lower",
                              norm=LogNorm(vmin=positive.min(), vmax=positive.max()) if positive.size else None,
                              extent=(0.5, grid.shape[0] + 0.5, -0.5, len(depths) - 0.5))
            ax.set_yticks(range(len(depths)), [str(L) for L in depths])
            ax.set(xlabel="training iteration", ylabel="depth L" if name == "V" else "",
                   title=f"$\\|{symbol}^L(\\cdot, \\tau) - {symbol}(\\cdot, \\tau)\\|$, reference L = {n['reference_depth']}")
            figure.colorbar(image, ax=ax)
        ax = axes[2]
        for j, t in enumerate(n["check_iterations"]):
            values = np.asarray(record["distance"]["V"][t], dtype=float).mean(axis=1)
            ax.plot(depths, values, "o-", ms=4, color=f"C{j}",
                    label=f"iteration {t}: r = {number(-n['rates']['V'][t - 1]['slope'] if n['rates']['V'][t - 1]['slope'] is not None else None, 2)}")
        anchor = np.asarray(record["distance"]["V"][n["check_iterations"][-1]], dtype=float).mean(axis=1)[0]
        ax.plot(depths, anchor * depths[0] / np.asarray(depths, dtype=float), "k--", lw=0.8, label="slope −1")
        depth_axis(ax, depths)
        ax.yaxis.set_label_position("right")
        ax.yaxis.tick_right()
        ax.set(yscale="log", xlabel="depth L", ylabel=r"$\|\mathcal{V}^L - \mathcal{V}\|$ (mean over replicates)",
               title=f"rate in L; verdict {n['verdict']}")
        ax.legend(fontsize=7)
