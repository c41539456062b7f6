"""Sander, Ablin & Peyré (NeurIPS 2022), Fig. 2: linear residual networks converge to their limit ODE at rate
1/L, uniformly over training time.

**The model and its training**, as in the authors' ``experiments/expe_linear_weights.py``: the linear residual
network of depth L maps X ∈ R^{d×d} to

    X_L = X Π_{k=0}^{L−1} (I + A_k / L),      A_k ∈ R^{d×d},

applied to X = I_d, and is trained by full-batch gradient descent on ℓ = (1/d²) ‖X_L − B‖_F² from A_k = 0 (every
layer the same: the discretisation of the zero function), with learning rate η·L (each layer's gradient is
O(1/L)). The target B = I + G, G with N(0, 1) entries, is drawn per replicate and kept only when det B > 0 (the
product of matrices I + A_k/L that gradient descent can reach stays in the component det > 0, so a target with
det B < 0 is unreachable and its weights grow without bound).

**The gradient** is computed in closed form: with M_k = I + A_k/L, P = M_0 M_1 ⋯ M_{L−1} and G = (2/d²)(P − B),

    ∂ℓ/∂A_k = (1/L) (M_0 ⋯ M_{k−1})ᵀ G (M_{k+1} ⋯ M_{L−1})ᵀ,

and every prefix product M_0 ⋯ M_k and suffix product M_k ⋯ M_{L−1} comes from a parallel scan (Hillis & Steele:
⌈log₂ L⌉ batched products, :func:`prefix_products`), so that a step of the 4096-layer reference costs a dozen
batched products instead of 8192 small ones. Tested against autograd.

**What converges** (their §4, Fig. 2): the trained weights are, layer by layer, the discretisation of the weight
function 𝒜(·, τ) of the limit ODE's gradient flow, with error O(1/L) *uniformly in training time* τ — including
the end of training, when the loss has gone to 0. The distance, its rate at each training time and the checks are
the lockstep experiments' (:mod:`validation.training.lockstep`), measured on a logarithmic grid of iterations; the
uniformity is checked on the rate of sup_τ ‖𝒜^L(·, τ) − 𝒜(·, τ)‖ and shown by L·‖𝒜^L − 𝒜‖ over τ.

**Sizes.** The authors' d = 2, A⁰ = 0, learning rate 100 at depth 100 (η = 1), up to 10⁴ steps (until the loss is
below 10⁻⁵), one target. Measured on the preset's 8 random targets (seed 0): at η = 1 five of them do not converge
(losses 0.64–3.55 after 3000 steps; the rate is then 0.34 with an interval down to −0.1); at η = 0.3 one oscillates
with period 2 (loss 0.047 / 0.081) and widens the intervals; at η = 0.2 every replicate converges (largest final loss
2.3·10⁻⁵). So the preset takes η = 0.2; depths 2 … 2^8 against 2^12, 3000 steps, 8 replicates, float64: in float32
the 4096-layer reference's rounding moves the distances by up to 1.1·10⁻⁴, a quarter of the smallest distance at
L = 256 early in training.
"""

from __future__ import annotations

import numpy as np
import torch

from limits.seeding import generator

from ..core.settings import SettingsError
from .lockstep import LockstepExperiment

__all__ = ["SanderLinear", "prefix_products", "suffix_products", "CHECK_FRACTIONS"]

#: the training times (as fractions of ``epochs``, on a log scale) at which the rate is checked
CHECK_FRACTIONS = (1 / 300, 1 / 30, 1 / 3, 1.0)
#: measured iterations per decade of training time
PER_DECADE = 12


def prefix_products(M: torch.Tensor) -> torch.Tensor:
    """The inclusive prefix products M_0 M_1 ⋯ M_k of M (R, L, d, d) along the layer axis, in ⌈log₂ L⌉ batched
    products: after the pass with offset s, entry k holds the product of the min(k + 1, 2s) matrices ending at k
    (Hillis & Steele's scan; matrix products are associative, so the order within each product is kept)."""
    products, offset = M, 1
    while offset < M.shape[1]:
        products = torch.cat([products[:, :offset], products[:, :-offset] @ products[:, offset:]], dim=1)
        offset *= 2
    return products


def suffix_products(M: torch.Tensor) -> torch.Tensor:
    """The inclusive suffix products M_k M_{k+1} ⋯ M_{L−1} of M (R, L, d, d), by the same scan from the right."""
    products, offset = M, 1
    while offset < M.shape[1]:
        products = torch.cat([products[:, :-offset] @ products[:, offset:], products[:, -offset:]], dim=1)
        offset *= 2
    return products


class _LinearNetwork:
    """R replicates of the depth-L linear network (module docstring): A (R, L, d, d), targets B (R, d, d)."""

    def __init__(self, depth: int, target: torch.Tensor) -> None:
        replicates, width = target.shape[0], target.shape[-1]
        self.depth, self.target = depth, target
        self.A = torch.zeros(replicates, depth, width, width, dtype=target.dtype, device=target.device)
        self.identity = torch.eye(width, dtype=target.dtype, device=target.device).expand(replicates, 1, width, width)

    def _products(self) -> tuple[torch.Tensor, torch.Tensor]:
        M = self.identity + self.A / self.depth
        return prefix_products(M), suffix_products(M)

    def loss(self) -> torch.Tensor:
        """ℓ = (1/d²) ‖X_L − B‖_F² of each replicate, (R,)."""
        prefix, _ = self._products()
        return (prefix[:, -1] - self.target).square().mean(dim=(1, 2))

    def step(self, learning_rate: float) -> torch.Tensor:
        """One gradient step at rate η·L with the closed-form gradient (module docstring); the losses before it."""
        prefix, suffix = self._products()
        residual = prefix[:, -1] - self.target
        outer = 2 * residual / residual.shape[-1] ** 2
        before = torch.cat([self.identity, prefix[:, :-1]], dim=1)  # M_0 ⋯ M_{k−1}
        after = torch.cat([suffix[:, 1:], self.identity], dim=1)  # M_{k+1} ⋯ M_{L−1}
        gradient = before.transpose(-1, -2) @ outer[:, None] @ after.transpose(-1, -2) / self.depth
        self.A -= learning_rate * self.depth * gradient
        return residual.square().mean(dim=(1, 2))


class SanderLinear(LockstepExperiment):
    name = "sander2022-linear"
    title = "trained linear ResNets of depth L against their limit ODE, uniformly over training time"
    paper = "Sander, Ablin & Peyré (NeurIPS 2022), Fig. 2 (linear residual functions)"
    claim = ("a linear ResNet X ↦ X Π(I + A_k/L) trained by gradient descent from A_k = 0 stays the discretisation "
             "of its limit: ‖𝒜^L(·, τ) − 𝒜(·, τ)‖ = O(1/L) uniformly in the training time τ")
    smoke = dict(depths=(2, 4, 8, 16, 32, 128), width=2, epochs=30, replicates=3, resamples=200)
    rejects = {
        "depths started from independent initial weights A⁰, with no common function of t = k/L to discretise":
            "tests/test_training_plants.py::test_sander_linear_fails_when_the_depths_do_not_share_their_initial_function",
    }
    defaults = dict(depths=(2, 4, 8, 16, 32, 64, 128, 256, 4096), width=2, epochs=3000, learning_rates=(0.2,),
                  replicates=8, dtype="float64")

    weights = ("A",)
    symbols = {"A": ("𝒜", r"\mathcal{A}")}
    uniform = True

    def datasets(self, settings):
        return []  # the identity input and a Gaussian target per replicate (networks)

    def configurations(self, settings):
        if settings.train_size is not None:
            raise SettingsError("train_size", f"{settings.train_size}: {self.name} trains on the one input X = I_d "
                                              "(no training set to subsample)")
        return super().configurations(settings)

    def networks(self, settings, depths, device):
        d, dtype = settings.width, settings.torch_dtype
        targets = []
        for r in range(settings.replicates):
            stream = generator(settings.seed, self.name, "B", r, device=device)
            while True:  # B = I + G conditioned on det B > 0 (module docstring)
                target = torch.eye(d, dtype=dtype, device=device) + torch.randn(d, d, generator=stream, dtype=dtype,
                                                                                device=device)
                if torch.linalg.det(target) > 0:
                    break
            targets.append(target)
        return [_LinearNetwork(L, torch.stack(targets)) for L in depths]

    # its step is a few large float64 products: on two threads beside the shallower depths it took 149 s against
    # 126 s on one (measured 2026-11-29, the preset on 2 cores)
    side_by_side = False

    def estimate_seconds(self, settings):
        # measured: 126 s for the preset (3000 steps, depths summing to 4606, 8 replicates) on one core (2026-11-29)
        return 9e-6 * settings.epochs * sum(settings.depths) * max(1.0, settings.replicates / 8)

    def check_iterations(self, settings):
        # from iteration 2: one step from A = 0 moves every layer alike (the gradient at A = 0 is the same for every
        # k), so every depth represents the limit exactly and the distances are 0
        return sorted({min(settings.epochs, max(2, round(f * settings.epochs))) for f in CHECK_FRACTIONS})

    def measured_iterations(self, settings):
        decades = np.log10(max(settings.epochs, 1))
        grid = np.rint(np.logspace(0, decades, int(np.ceil(decades * PER_DECADE)) + 1)).astype(int)
        return sorted({0, *grid.tolist(), *self.check_iterations(settings), settings.epochs})

    def summarise(self, settings, records):
        numbers = super().summarise(settings, records)
        final = np.asarray(records["all-depths"]["loss"][-1], dtype=float)  # (depths incl. the reference, replicates)
        return {**numbers, "largest_final_loss": float(final.max())}

    def table(self, result):
        lines = super().table(result)
        return lines[:1] + [f"largest loss after training, over depths and replicates: "
                            f"{result.numbers['largest_final_loss']:.2e}"] + lines[1:]

    def describe(self, settings, numbers):
        s = settings
        return (f"X_L = Π (I + A_k / L) from A_k = 0, d = {s.width}, loss ‖X_L − B‖²/d² with B = I + N(0, 1) "
                f"(det B > 0), full-batch GD at rate {s.learning_rates[0]:g}·L, {s.epochs} steps, {s.replicates} "
                "replicates")
