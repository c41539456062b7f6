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

**The rate** at each of three training times (``CHECK_TIMES``, fractions of the steps) and its check are the
lockstep experiments' (:mod:`validation.training.lockstep`): PASS when the interval of r lies within 1 ± 0.1. The
reference's own error biases the deepest depths by the factor 1 − L/L_ref (at most 1/16 in the preset); the
successive differences ‖𝒱^L − 𝒱^{2L}‖, which need no reference, are fitted and reported beside it.

**Sizes.** The authors' d = 16, M = 32, n = 100, 50 steps, η = 0.01, GELU, float32, depths 2 … 2^10 against 2^14.
The preset keeps all of it but the depths: 2 … 2^8 against 2^12 (the same factor 16 between the deepest depth and
the reference) and 8 replicates, so that it runs in a few minutes on 2 cores; ``--depths 2,4,…,1024,16384`` is
the paper's (not run here: its reference costs about 4 times the preset's, extrapolated from 1.1 s per step for
4 replicates at 4096 layers on one core).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from limits.activations import get_activation
from limits.seeding import generator

from .experiment import mean_interval, number
from .lockstep import FIT_FROM, MARGIN, LockstepExperiment, layer_distance
from .networks import layers

__all__ = ["MarionFig1", "MarionFig2", "CHECK_TIMES", "LONG_CHECK_TIMES", "MARGIN", "FIT_FROM", "layer_distance"]

#: the training times (iterations, as fractions of ``epochs``) at which the rate is checked
CHECK_TIMES = (0.2, 0.5, 1.0)


class _Network:
    """R replicates of the depth-L network (module docstring), V (R, L, M, d) and W (R, L, d, M), trained on
    inputs x and targets y (R, n, d)."""

    def __init__(self, depth: int, initial_w: torch.Tensor, hidden: int, activation: str, x: torch.Tensor,
                 y: torch.Tensor) -> None:
        replicates, width = initial_w.shape[0], initial_w.shape[1]
        self.depth, self.x, self.y = depth, x, y
        self.sigma = get_activation(activation)
        self.V = torch.zeros(replicates, depth, hidden, width, dtype=initial_w.dtype, device=initial_w.device,
                             requires_grad=True)
        self.W = initial_w[:, None].repeat(1, depth, 1, 1).requires_grad_(True)

    def loss(self) -> torch.Tensor:
        """The mean squared error of each replicate, (R,)."""
        h = self.x
        for W_k, V_k in zip(layers(self.W), layers(self.V)):
            h = h + torch.bmm(self.sigma(torch.bmm(h, W_k)), V_k) / self.depth
        return (h - self.y).square().mean(dim=(1, 2))

    def step(self, learning_rate: float) -> torch.Tensor:
        """One full-batch gradient step at rate η·L on every replicate; returns the losses before it."""
        loss = self.loss()
        grad_v, grad_w = torch.autograd.grad(loss.sum(), (self.V, self.W))
        with torch.no_grad():
            self.V -= learning_rate * self.depth * grad_v
            self.W -= learning_rate * self.depth * grad_w
        return loss.detach()


class MarionFig1(LockstepExperiment):
    name = "marion2024-fig1"
    title = "trained weights of depth L against the trained neural ODE's, over training time"
    paper = "Marion, Wu, Sander & Biau (ICLR 2024), Fig. 1 (right)"
    claim = ("a ResNet initialised as the discretisation of a smooth function and trained by gradient descent (rate "
             "η·L) stays its discretisation: ‖𝒱^L(·, τ) − 𝒱(·, τ)‖ = O(1/L) at every finite training time τ")
    smoke = dict(depths=(2, 4, 8, 16, 32, 128), width=4, hidden=6, epochs=10, replicates=3, train_size=10,
                 resamples=200)
    rejects = {
        "depths started from independent initial weights W⁰, with no common function of t = k/L to discretise":
            "tests/test_marion2024.py::test_fig1_fails_when_the_depths_do_not_share_their_initial_function",
    }
    defaults = dict(depths=(2, 4, 8, 16, 32, 64, 128, 256, 4096), width=16, hidden=32, activation="gelu", epochs=50,
                  learning_rates=(0.01,), replicates=8, train_size=100, dtype="float32")

    weights = ("V", "W")
    symbols = {"V": ("𝒱", r"\mathcal{V}"), "W": ("𝒲", r"\mathcal{W}")}

    def datasets(self, settings):
        return []  # the authors' Gaussian inputs and targets, drawn per replicate (networks)

    def networks(self, settings, depths, device):
        d, m, n, R = settings.width, settings.hidden, settings.train_size, settings.replicates
        dtype = settings.torch_dtype

        def normal(shape, *labels):
            return torch.stack([torch.randn(shape, generator=generator(settings.seed, self.name, *labels, r,
                                                                        device=device), dtype=dtype, device=device)
                                for r in range(R)])

        x, y, initial_w = normal((n, d), "X"), normal((n, d), "Y"), normal((d, m), "W0")
        return [_Network(L, initial_w, m, settings.activation, x, y) for L in depths]

    def check_iterations(self, settings):
        return sorted({max(1, round(f * settings.epochs)) for f in CHECK_TIMES})

    def describe(self, settings, numbers):
        s = settings
        return (f"h ← h + σ(h W_k) V_k / L, d = {s.width}, M = {s.hidden}, σ = {s.activation}, n = {s.train_size} "
                f"Gaussian inputs and targets, full-batch GD at rate {s.learning_rates[0]:g}·L, {s.epochs} steps, "
                f"{s.replicates} replicates")


#: Fig. 2's training times at which the rate is checked, as fractions of ``epochs``
LONG_CHECK_TIMES = (0.02, 0.2, 1.0)
#: the measured iterations of Fig. 2: this many on a logarithmic grid from 1 to ``epochs`` (and 0)
LONG_GRID = 40


class MarionFig2(MarionFig1):
    """Marion, Wu, Sander & Biau (ICLR 2024), Fig. 2 and their §5: long training.

    The network, data and gradient descent of Fig. 1 (:class:`MarionFig1`), at the sizes of the authors'
    ``infinite_training_time.py`` — d = 16, M = 64, n = 50, GELU, V_k = 0 and W_k = W⁰ for every layer — trained for
    many steps. Their claim for a wide enough network (M large against n, where the loss satisfies a
    Polyak–Łojasiewicz inequality): gradient descent drives the training loss to 0 at a linear (exponential) rate,
    and the trained weights stay discretisations of the limit's weight functions *uniformly in training time* — the
    authors' figure shows the loss falling to 10⁻⁷ and V_k(τ), W_k(τ) as smooth curves in k at every τ.

    **Checked** (:mod:`validation.training.lockstep`, ``uniform`` and ``checked = "successive"``): the rate of the
    successive difference ‖𝒱^L(·, τ) − 𝒱^{2L}(·, τ)‖ in L at three training times (:data:`LONG_CHECK_TIMES`) and of
    its supremum over training, each within 1 ± 0.1. The successive differences, not the distance to a reference:
    a reference 16 times deeper than L = 64 costs 16 times the compared depths' 5000 steps, and a shallower one
    biases the rate (the distance to it carries the factor 1 − L/L_ref). **Reported:** the loss of every depth over
    training, and its exponential rate — the slope of log loss against the iteration over the second half of
    training, per replicate, with a Student-t interval (PL predicts a negative slope that stays bounded away from 0).

    **Sizes.** The authors: depth 64, 10 000 steps at rate 0.005·L, one network. The preset: depths 16 … 128 (and 256
    for the reference, whose distance is reported beside), 5000 steps at 0.02·L — the same gradient-flow time as
    20 000 steps at the authors' rate — 4 replicates (482 s on the 2-core machine with its depths stepped side by
    side, :class:`~validation.training.lockstep.SideBySide`; 995 s on one thread; measured).
    """

    name = "marion2024-fig2"
    title = "long training: the loss goes to 0 and the trained weights stay a discretisation, uniformly in time"
    paper = "Marion, Wu, Sander & Biau (ICLR 2024), Fig. 2 (long training, the PL regime)"
    claim = ("in the PL regime (M = 64 hidden units against n = 50 examples) gradient descent drives the loss to 0 at "
             "a linear rate and ‖𝒱^L(·, τ) − 𝒱^{2L}(·, τ)‖ = O(1/L) uniformly in the training time τ")
    smoke = dict(depths=(8, 16, 32, 64), width=4, hidden=8, epochs=100, replicates=3, train_size=10, resamples=200)
    rejects = {
        "depths started from independent initial weights, with no common function of t = k/L to discretise":
            "tests/test_marion2024.py::test_long_training_fails_when_the_depths_do_not_share_their_initial_function",
    }
    defaults = dict(depths=(16, 32, 64, 128, 256), width=16, hidden=64, activation="gelu", epochs=5000,
                  learning_rates=(0.02,), replicates=4, train_size=50, dtype="float32")
    uniform = True
    checked = "successive"

    def check_iterations(self, settings):
        # from iteration 2: after one step every layer of every depth holds the same V_k (h_k = x at V = 0)
        return sorted({max(2, round(f * settings.epochs)) for f in LONG_CHECK_TIMES})

    def measured_iterations(self, settings):
        grid = np.unique(np.round(np.logspace(0, math.log10(settings.epochs), LONG_GRID)).astype(int))
        return sorted({0, settings.epochs, *grid.tolist(), *self.check_iterations(settings)})

    def trace(self, networks):
        """Fig. 2's curves: the coordinate (0, 0) of V_k and W_k along k of the deepest compared depth, replicate 0."""
        deepest = networks[-2]
        return {"depth": deepest.depth, "V": deepest.V[0, :, 0, 0].double().tolist(),
                "W": deepest.W[0, :, 0, 0].double().tolist()}

    def summarise(self, settings, records):
        numbers = super().summarise(settings, records)
        record = records["all-depths"]
        iterations = np.asarray(record["iterations"], dtype=float)
        loss = np.asarray(record["loss"], dtype=float)                      # (iterations, networks, replicates)
        late = iterations >= settings.epochs / 2
        summary = []
        for j, L in enumerate(record["depths"]):
            slopes = [float(np.polyfit(iterations[late], np.log(loss[late, j, r]), 1)[0])
                      if np.all(loss[late, j, r] > 0) and late.sum() >= 2 else math.nan
                      for r in range(loss.shape[2])]
            mean, low, high = mean_interval(slopes, settings.confidence)
            summary.append({"depth": L, "initial": float(loss[0, j].mean()), "final": float(loss[-1, j].mean()),
                            "ratio": float(np.mean(loss[-1, j] / loss[0, j])),
                            "late_log_slope": {"value": mean, "ci": [low, high], "values": slopes}})
        numbers["loss"] = summary
        return numbers

    def table(self, result):
        lines = super().table(result)
        lines += ["", "the loss (mean over replicates), and its exponential rate: the slope of log loss per iteration "
                      "over the second half of training [interval over replicates]"]
        for entry in result.numbers["loss"]:
            slope = entry["late_log_slope"]
            lines.append(f"  L = {entry['depth']:>5}: {entry['initial']:.3g} → {entry['final']:.3g} "
                         f"(×{entry['ratio']:.2e}); slope {slope['value']:.2e} "
                         f"[{number(slope['ci'][0], 6)}, {number(slope['ci'][1], 6)}]")
        return lines

    def describe(self, settings, numbers):
        return "long training (Fig. 2): " + super().describe(settings, numbers)

    def plot(self, result, figure):
        figure.set_layout_engine("constrained")
        top, bottom = figure.subfigures(2, 1, height_ratios=(1, 1))
        super().plot(result, top)
        self._plot_fig2(result, bottom)
        figure.set_size_inches(17, 8.5)

    @staticmethod
    def _plot_fig2(result, figure: Any) -> None:
        """Marion et al. Fig. 2: the loss over training (left) and one coordinate of V_k(τ), W_k(τ) along k, one curve
        per measured iteration coloured by time (centre, right)."""
        import matplotlib.pyplot as plt

        record = result.records["all-depths"]
        iterations = np.asarray(record["iterations"], dtype=float)
        loss = np.asarray(record["loss"], dtype=float).mean(axis=2)
        axes = figure.subplots(1, 3)
        for j, L in enumerate(record["depths"]):
            axes[0].semilogy(iterations, loss[:, j], color=f"C{j % 10}", lw=1.2, label=f"L = {L}")
        axes[0].set(xlabel="training iteration", ylabel="training loss (mean over replicates)",
                    title="the loss (Fig. 2, left): a straight line is linear convergence")
        axes[0].legend(fontsize=6)
        traces = record.get("trace", [])
        colours = plt.cm.viridis(np.linspace(0, 1, max(1, len(traces))))
        for ax, name in zip(axes[1:], ("V", "W")):
            for colour, trace in zip(colours, traces):
                ax.plot(np.arange(len(trace[name])), trace[name], color=colour, lw=0.7)
            depth = traces[0]["depth"] if traces else "—"
            ax.set(xlabel="layer k", ylabel=f"coordinate (1, 1) of {name}_k",
                   title=f"{name}_k(τ) along k, L = {depth}, replicate 0 (dark: early, yellow: late)")
