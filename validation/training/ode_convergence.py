"""The seed authors' "ODE convergence" experiment (``PierreMarion23/scaling-resnets``,
``experiment_ODE_convergence_non_linear.py``): trained depth-N against trained depth-2N weights, over scaling ×
initialisation × activation.

**The model** is their ``FullResNet`` (res-3): an input layer h_0 = x A (x ∈ R^64, A ∈ R^{64×d}), L residual
blocks and a linear read-out ŷ = h_L w (w ∈ R^{d×1}),

    h_{k+1} = h_k + s_L σ(h_k W_kᵀ) V_kᵀ,      V_k, W_k ∈ R^{d×d},   d = 40,

A, w with N(0, 1/fan-in) entries. **The coupling of the two depths** is theirs: the depth-2N network has s = (2N)^{−β};
the depth-N network starts from its even layers, V_k^N = V_{2k}^{2N}, W_k^N = W_{2k}^{2N} (and the same A, w), with
s = 2·(2N)^{−β}, so that each of its layers carries the mass of two of the deeper network's (a Riemann-sum coupling:
at β = 1 this is the standard 1/N; at β = ½ it is √2·N^{−½}, not the standard N^{−½}). At initialisation the two
networks' weights agree exactly; the question is whether *training* keeps them together as N grows.

**Initialisations**: ``iid`` — V_k, W_k with i.i.d. N(0, 1/d) entries; ``smooth`` — every entry of V and W an
independent Gaussian process with the RBF kernel exp(−(s − t)²/(2ℓ²)), ℓ = 0.1 (the authors' bandwidth), variance 1/d,
read at t = k/(2N) (:class:`limits.smooth.SmoothGaussianProcess`; the authors draw V and W from one seed, so that
their V_k = W_k — here they are independent). Replicate r draws its own weights and data, the same for every β and
σ (so the cells are paired comparisons).

**Training** as theirs: Adam at learning rate 0.01 on the squared error of one Gaussian example (x, y), 5 steps, all
parameters (A, w, V, W) trained; both depths take the same steps on the same example.

**Measured**, per replicate, the authors' weight distance over the N network's layers,

    D_N = ( ½ (1/N) Σ_k (‖V_k^N − V_{2k}^{2N}‖_F² + ‖W_k^N − W_{2k}^{2N}‖_F²) )^{1/2},

its maximum over layers max_k max(‖ΔV_k‖_F, ‖ΔW_k‖_F), and how far training moved the N network's V,
M_N = ((1/N) Σ_k ‖V_k^N(after) − V_k^N(before)‖_F²)^{1/2}, the scale D_N is measured against. **The rate** of D_N in
N per cell is the slope of the replicates' mean log D_N on log N with a paired bootstrap interval
(:func:`~validation.training.experiment.power_fit`).

**Checks** (what the regimes at initialisation predict; the authors' repository states no rate):

* β = 1 (an ODE limit for smooth weights; the identity-like limit for i.i.d. weights, whose 2N network's extra layers
  add only O(N^{−½}) to the hidden states): the trained networks converge to each other — the rate's interval lies
  above 0 (:func:`~validation.core.checks.bound_check`);
* i.i.d. weights at β = ½ (an SDE limit): the 2N network's odd layers are an independent half of the noise, so the two
  networks differ at order 1 and training does not bring them together — the rate's interval lies within 0 ± 0.1;
* smooth weights at β = ½ (the explosion side of the smooth regime) are measured and reported, not checked.

A reader expecting Marion et al. (2024)'s rate 1 for smooth β = 1 weights should note the optimiser: their O(1/L) is
for gradient descent at rate η·L; Adam's first steps are close to η·sign(gradient), and the sign of a gradient entry
that is O(1/N) from 0 differs between the two depths, so the measured rate under Adam can be below 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from limits.seeding import generator
from limits.smooth import SmoothGaussianProcess

from ..core.checks import INCONCLUSIVE, Check, bound_check, check_line, combine, interval_check
from ..core.settings import SettingsError
from ..core.workers import PROCESS_MB
from .experiment import Experiment, depth_axis, number, power_fit
from .networks import layers
from .sweep import Configuration

__all__ = ["TrainedODEConvergence", "ACTIVATIONS", "INPUT_DIMENSION", "LENGTHSCALE", "MARGIN"]

#: the authors' activations (torch.nn's ReLU, Sigmoid, Tanh)
ACTIVATIONS = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}
#: dimension of the Gaussian input (the authors' dim_input)
INPUT_DIMENSION = 64
#: RBF length-scale of the smooth initialisation (the authors' bandwidth)
LENGTHSCALE = 0.1
#: i.i.d. weights at β = ½: the rate's interval must lie within 0 ± this
MARGIN = 0.1


class _PairedNetworks:
    """The depth-2N network and the depth-N network started from its even layers, R replicates each (module
    docstring); parameters A (R, 64, d), w (R, d, 1), V, W (R, L, d, d)."""

    def __init__(self, V: torch.Tensor, W: torch.Tensor, A: torch.Tensor, w: torch.Tensor, beta: float,
                 activation: str) -> None:
        deep = V.shape[1]
        self.sigma = ACTIVATIONS[activation]
        self.parameters = []
        for stride, scale in ((2, 2 * deep ** -beta), (1, deep ** -beta)):  # depth N first, then 2N
            self.parameters.append({"A": A.clone().requires_grad_(True), "w": w.clone().requires_grad_(True),
                                    "V": V[:, ::stride].clone().requires_grad_(True),
                                    "W": W[:, ::stride].clone().requires_grad_(True), "scale": scale})
        self.initial_v = V[:, ::2].clone()

    def losses(self, parameters: dict[str, Any], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The squared error of each replicate, (R,)."""
        h = x @ parameters["A"]
        for W_k, V_k in zip(layers(parameters["W"]), layers(parameters["V"])):
            h = h + parameters["scale"] * self.sigma(h @ W_k.transpose(1, 2)) @ V_k.transpose(1, 2)
        return (h @ parameters["w"] - y).square().mean(dim=(1, 2))

    def train(self, x: torch.Tensor, y: torch.Tensor, optimizer: str, learning_rate: float, steps: int
              ) -> list[list[list[float]]]:
        """Train both networks; the losses (network, [first, last], R). Replicates are independent: the summed loss
        gives each its own gradient, and Adam's and SGD's updates are elementwise."""
        out = []
        for parameters in self.parameters:
            tensors = [parameters[k] for k in ("A", "w", "V", "W")]
            make = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
            step_rule = make(tensors, lr=learning_rate)
            first = None
            for _ in range(steps):
                loss = self.losses(parameters, x, y)
                first = loss.detach().tolist() if first is None else first
                step_rule.zero_grad()
                loss.sum().backward()
                step_rule.step()
            with torch.no_grad():
                out.append([first, self.losses(parameters, x, y).tolist()])
        return out

    def distances(self) -> dict[str, list[float]]:
        """D_N, its maximum over layers, and M_N, per replicate (module docstring)."""
        shallow, deep = self.parameters
        with torch.no_grad():
            norms = [(shallow[k] - deep[k][:, ::2]).flatten(2).norm(dim=2).double() for k in ("V", "W")]  # (R, N)
            moved = (shallow["V"] - self.initial_v).flatten(2).norm(dim=2).double()
        return {"mean": (0.5 * (norms[0].square().mean(1) + norms[1].square().mean(1))).sqrt().tolist(),
                "max": torch.maximum(norms[0], norms[1]).amax(1).tolist(),
                "moved": moved.square().mean(1).sqrt().tolist()}


class TrainedODEConvergence(Experiment):
    name = "trained-ode-convergence"
    title = "trained depth-N against trained depth-2N weights, over scaling × initialisation × activation"
    paper = ("Marion et al.'s repository (PierreMarion23/scaling-resnets, experiment_ODE_convergence_non_linear.py), "
             "on the regimes of Marion et al. (2022)")
    claim = ("the depth-N network started from every other layer of the depth-2N one and trained alike converges to "
             "it as N grows at β = 1, and stays at distance of order 1 from it for i.i.d. weights at β = ½")
    smoke = dict(depths=(4, 8, 16), width=6, epochs=2, replicates=3, betas=(0.5, 1.0), inits=("iid", "smooth"),
                 activations=("tanh",), resamples=200)
    rejects = {
        "i.i.d. weights at β = ½ whose depth-2N layers come in equal pairs (no independent half of the noise), so "
        "that the trained depths converge":
            "tests/test_training_plants.py::"
            "test_ode_convergence_fails_when_the_iid_deep_network_repeats_its_layers_in_pairs",
    }
    defaults = dict(depths=(8, 16, 32, 64, 128, 256), width=40, epochs=5, optimizer="adam", learning_rates=(0.01,),
                  replicates=8, betas=(0.5, 1.0), inits=("iid", "smooth"), activations=("relu", "sigmoid", "tanh"),
                  train_size=1)

    def datasets(self, settings):
        return []  # one Gaussian example per replicate and depth (train_one), as the authors'

    def estimate_mb(self, settings):
        """One process: the paired networks of the deepest N (2N and N layers, V and W of d × d each, R replicates),
        seven copies of their weights (the weights, gradients, Adam's two moments, its temporaries, the drawn weights
        and the initial copy), and 100 MiB measured beyond the interpreter at small depths (436 MiB at N ≤ 32, 931 at
        N ≤ 256, one process)."""
        weights = settings.replicates * 3 * max(settings.depths) * 2 * settings.width ** 2
        return PROCESS_MB + 100.0 + 7 * weights * settings.torch_dtype.itemsize / 2**20

    def configurations(self, settings):
        bad = [a for a in settings.activations if a not in ACTIVATIONS]
        if bad:
            raise SettingsError("activations", f"{bad}: {self.name} takes {', '.join(ACTIVATIONS)}")
        bad = [i for i in settings.inits if i not in ("iid", "smooth")]
        if bad:
            raise SettingsError("inits", f"{bad}: {self.name} takes iid, smooth")
        if len(settings.depths) < 2:
            raise SettingsError("depths", f"{list(settings.depths)}: give at least two depths N to fit a rate")
        return [Configuration(_key(b, i, a), {"beta": b, "init": i, "activation": a})
                for b in settings.betas for i in settings.inits for a in settings.activations]

    def estimate_seconds(self, settings):
        # measured: 73 s for the preset's 12 cells on one core (depths summing to 504, 5 steps, 8 replicates, d = 40)
        cells = len(settings.betas) * len(settings.inits) * len(settings.activations)
        return (73 / 12 * cells * sum(settings.depths) / 504 * settings.epochs / 5 * settings.replicates / 8
                * (settings.width / 40) ** 2)

    def train_one(self, settings, configuration, data, device, progress):
        p = configuration.params
        d, R, n, dtype = settings.width, settings.replicates, settings.train_size, settings.torch_dtype
        out: dict[str, Any] = {"depths": list(settings.depths), "mean": [], "max": [], "moved": [], "loss": []}
        for N in settings.depths:
            streams = [generator(settings.seed, self.name, p["init"], N, r, device=device) for r in range(R)]

            def normal(shape, scale, streams=streams):
                return torch.stack([torch.randn(shape, generator=g, dtype=dtype, device=device) for g in streams]) * scale

            x, y = normal((n, INPUT_DIMENSION), 1.0), normal((n, 1), 1.0)
            A, w = normal((INPUT_DIMENSION, d), INPUT_DIMENSION ** -0.5), normal((d, 1), d ** -0.5)
            if p["init"] == "iid":
                V, W = normal((2 * N, d, d), d ** -0.5), normal((2 * N, d, d), d ** -0.5)
            else:
                gp = SmoothGaussianProcess(samples=R, shape=(2, d, d), variance=1.0 / d, lengthscale=LENGTHSCALE,
                                           seed=settings.seed, stream=f"{self.name}/N{N}", dtype=dtype, device=device)
                values = gp(torch.arange(2 * N, dtype=dtype, device=device) / (2 * N)).transpose(0, 1)  # (R, 2N, 2, d, d)
                V, W = values[:, :, 0].contiguous(), values[:, :, 1].contiguous()
            pair = _PairedNetworks(V, W, A, w, p["beta"], p["activation"])
            out["loss"].append(pair.train(x, y, settings.optimizer, settings.learning_rates[0], settings.epochs))
            for name, values in pair.distances().items():
                out[name].append(values)
            progress()
        return out

    def summarise(self, settings, records):
        options = dict(confidence=settings.confidence, resamples=settings.resamples, seed=settings.seed)
        cells, checks = [], []
        for key, record in records.items():
            beta, init, activation = _parse_key(key)
            fits = {name: power_fit(record["depths"], np.asarray(record[name], dtype=float), **options)
                    for name in ("mean", "max", "moved")}
            cell = {"key": key, "beta": beta, "init": init, "activation": activation,
                    "rate": _rate(fits["mean"]), "rate_max": _rate(fits["max"]), "rate_moved": _rate(fits["moved"]),
                    "distance": fits["mean"]["geometric_mean"], "moved": fits["moved"]["geometric_mean"]}
            rate, (low, high) = cell["rate"]["value"], cell["rate"]["ci"]
            label = f"β = {beta:g}, {init}, {activation}"
            check = None
            if low is None or high is None or rate is None:
                check = Check(f"{label}: rate of D_N", INCONCLUSIVE, "no finite positive distances to fit")
            elif beta == 1.0:
                check = bound_check(f"{label}: the trained depths converge (rate of D_N > 0)", (low, high), 0.0,
                                    at_most=False, detail=f"rate {rate:.3f} [{low:.3f}, {high:.3f}]")
            elif beta == 0.5 and init == "iid":
                check = interval_check(f"{label}: the trained depths stay apart (rate of D_N within 0 ± {MARGIN:g})",
                                       rate, (low, high), (-MARGIN, MARGIN), settings.replicates,
                                       what=f"rate {rate:.3f}, the interval", confidence=settings.confidence)
            cell["check"] = None if check is None else check.to_dict()
            checks += [check] if check is not None else []
            cells.append(cell)
        if not checks:
            checks.append(Check("a checked cell (β = 1, or i.i.d. weights at β = ½)", INCONCLUSIVE,
                                "no cell of the given --betas and --inits has a prediction to check"))
        return {"cells": cells, "checks": [c.to_dict() for c in checks], "verdict": combine(checks)}

    def table(self, result):
        s, n = result.settings, result.numbers
        largest = s.depths[-1]
        lines = [f"res-3, d = {s.width}, input R^{INPUT_DIMENSION}, depth N from every other layer of depth 2N, "
                 f"{s.optimizer} at {s.learning_rates[0]:g}, {s.epochs} steps on {s.train_size} Gaussian example(s), "
                 f"{s.replicates} replicates, N = {', '.join(map(str, s.depths))}", "",
                 f"  {'β':>4}  {'init':<7} {'σ':<8} {'rate of D_N':>24}  {'rate of max':>8}  "
                 f"{f'D_N at N={largest}':>14}  {'moved M_N':>10}  check"]
        for cell in n["cells"]:
            rate = cell["rate"]
            interval = "—" if rate["value"] is None else \
                f"{rate['value']:.3f} [{number(rate['ci'][0])}, {number(rate['ci'][1])}]"
            distance = cell["distance"][-1] if cell["distance"] else None
            moved = cell["moved"][-1] if cell["moved"] else None
            verdict = cell["check"]["verdict"] if cell["check"] else "reported"
            lines.append(f"  {cell['beta']:>4g}  {cell['init']:<7} {cell['activation']:<8} {interval:>24}  "
                         f"{number(cell['rate_max']['value']):>11}  {number(distance, 4):>14}  {number(moved, 3):>10}  "
                         f"{verdict}")
        lines.append("")
        lines += [check_line(c) for c in n["checks"]]
        return lines

    def plot(self, result, figure):
        s, n, records = result.settings, result.numbers, result.records
        figure.set_layout_engine("constrained")
        axes = np.atleast_2d(figure.subplots(len(s.betas), len(s.activations), squeeze=False))
        styles = {"iid": ("C0", "o"), "smooth": ("C3", "s")}
        cells = {cell["key"]: cell for cell in n["cells"]}
        for i, beta in enumerate(s.betas):
            for j, activation in enumerate(s.activations):
                ax = axes[i, j]
                for init in s.inits:
                    key = _key(beta, init, activation)
                    if key not in records:
                        continue
                    color, marker = styles.get(init, ("C2", "^"))
                    depths = records[key]["depths"]
                    cell = cells[key]
                    ax.plot(depths, cell["distance"], marker=marker, color=color, ms=4,
                            label=f"{init}: $D_N$, rate {number(cell['rate']['value'], 2)}")
                    ax.plot(depths, cell["moved"], ls="--", color=color, lw=0.9, label=f"{init}: moved $M_N$")
                depth_axis(ax, s.depths)
                ax.set(yscale="log", title=f"β = {beta:g}, σ = {activation}",
                       xlabel="depth N (against 2N)" if i == len(s.betas) - 1 else "",
                       ylabel="$D_N$ (—), $M_N$ (- -)" if j == 0 else "")
                ax.legend(fontsize=6)
        figure.suptitle(f"trained depth N against depth 2N ({s.optimizer}, {s.epochs} steps); verdict {n['verdict']}")


def _key(beta: float, init: str, activation: str) -> str:
    return f"beta{beta:g}-{init}-{activation}"


def _parse_key(key: str) -> tuple[float, str, str]:
    beta, init, activation = key.split("-", 2)
    return float(beta[len("beta"):]), init, activation


def _rate(fit: dict[str, Any]) -> dict[str, Any]:
    """The exponent r of D ∝ N^{−r} from a power fit (a decreasing distance has a positive rate)."""
    if fit["slope"] is None:
        return {"value": None, "ci": [None, None]}
    low, high = fit["ci"]
    return {"value": -fit["slope"], "ci": [None if high is None else -high, None if low is None else -low]}
