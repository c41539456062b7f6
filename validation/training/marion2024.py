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

import torch

from limits.activations import get_activation
from limits.seeding import generator

from .lockstep import FIT_FROM, MARGIN, LockstepExperiment, layer_distance
from .networks import layers

__all__ = ["MarionFig1", "CHECK_TIMES", "MARGIN", "FIT_FROM", "layer_distance"]

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
    preset = dict(depths=(2, 4, 8, 16, 32, 64, 128, 256, 4096), width=16, hidden=32, activation="gelu", epochs=50,
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
