"""Pairs: a discrete ResNet and its continuous-depth limit, driven by one sampled weight process.

A *pair* binds (DESIGN.md):

* a **driver** — one realisation per sample of the weights as a process on [0, 1]: a Brownian path
  (:class:`~limits.brownian.BrownianGrid`, owned by the study so that every depth reads one path) or
  smooth functions (:class:`~limits.smooth.SmoothGaussianProcess`, owned by the pair);
* the **discrete reader** — one residual block ``network_step(h, t_k, 1/L, …)`` mapping h_k to h_{k+1},
  reading the driver on the grid t_k = k/L;
* the **continuous reader** — the limit, an Itô SDE for torchsde (``limit_sde()``, ``g_prod`` only) or
  a vector field for torchdiffeq (``limit_field``);
* the **predicted strong rate** with its source in THEORY.md.

Studies only ever ask a pair for "h at depth L" and "H at t = 1" on the same samples, so a new model is
a new subclass registered with :func:`register`, never new validation code.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import torch

from .activations import Activation, get_activation
from .seeding import generator

__all__ = [
    "ModelConfig", "OptionSpec", "number_option", "Pair", "SDEPair", "ODEPair", "register", "get_pair", "pair_names", "PairError",
    "run_network",
]


class PairError(ValueError):
    """A bad model name or configuration (the message names the value and what is allowed)."""


@dataclass(frozen=True)
class ModelConfig:
    """Every knob a pair may read; each pair uses the ones it documents and checks them.

    Attributes:
        width: d, the width of the hidden state (≥ 1).
        activation: name for :func:`~limits.activations.get_activation`; None means the pair's default.
        weight_var: s², the variance scale of i.i.d. weights (entries N(0, s²/d)); ≥ 0.
        lengthscale: ℓ of the RBF kernel of smooth weights (> 0).
        input_dim: n_in for an input layer h_0 = A x (A entries N(0, 1/n_in)); None means h_0 = x ~ N(0, I_d).
        beta: the exponent β of Cohen et al.'s ODE regime, when a pair uses it.
        options: pair-specific extra settings (documented by each pair).
    """

    width: int = 10
    activation: str | None = None
    weight_var: float = 1.0
    lengthscale: float = 0.1
    input_dim: int | None = None
    beta: float | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def replace(self, **changes: Any) -> "ModelConfig":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class OptionSpec:
    """A pair-specific setting, given on the command line as ``--set NAME=VALUE``.

    ``parse`` turns the text into a value and raises ``ValueError`` naming the allowed range.
    """

    default: Any
    help: str
    parse: Callable[[str], Any] = float


def number_option(name: str, minimum: float | None = None) -> Callable[[str], float]:
    """An ``OptionSpec.parse`` for a finite number (≥ ``minimum`` if given); its ValueError names the
    setting, the bad value and the allowed range."""
    allowed = "a finite number" + (f" ≥ {minimum:g}" if minimum is not None else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{name}={text!r} is not a number (allowed: {allowed})") from None
        if not math.isfinite(value) or (minimum is not None and value < minimum):
            raise ValueError(f"{name}={value} is out of range (allowed: {allowed})")
        return value

    parse.__name__ = f"{name}: {allowed}"
    return parse


class Pair(abc.ABC):
    """A discrete ResNet and its limit on ``samples`` independent weight draws.

    Subclasses set ``name``, ``kind`` (``"sde"`` or ``"ode"``), ``default_activation``,
    ``description`` and ``theory_source``, list their extra settings in ``option_specs`` (read them
    with :meth:`option`), and implement :attr:`theory_rate`.
    """

    name: ClassVar[str]
    kind: ClassVar[str]
    description: ClassVar[str]
    theory_source: ClassVar[str]
    default_activation: ClassVar[str] = "tanh"
    option_specs: ClassVar[dict[str, OptionSpec]] = {}
    #: False for a deliberately wrong limit (an ablation): its check is that the error does *not* decay,
    #: i.e. the whole rate interval lies below ``excluded_rate`` − tolerance.
    converges: ClassVar[bool] = True
    excluded_rate: ClassVar[float | None] = None
    #: the pair's recommended study size for ``validation.convergence`` where the generic one does not
    #: suit it; optional keys: depths, samples, reference_steps, fit_from, width
    default_study: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        config: ModelConfig,
        samples: int,
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
    ) -> None:
        if config.width < 1:
            raise PairError(f"width={config.width} must be ≥ 1")
        if samples < 1:
            raise PairError(f"samples={samples} must be ≥ 1")
        if not config.weight_var >= 0:
            raise PairError(f"weight variance {config.weight_var} must be ≥ 0")
        if not config.lengthscale > 0:
            raise PairError(f"lengthscale {config.lengthscale} must be > 0")
        if config.input_dim is not None and config.input_dim < 1:
            raise PairError(f"input dimension {config.input_dim} must be ≥ 1")
        self.config = config
        self.samples = int(samples)
        self.seed = int(seed)
        self.dtype = dtype
        self.device = torch.device(device)
        self.width = int(config.width)
        self.activation: Activation = get_activation(config.activation or self.default_activation)
        unknown = sorted(set(config.options) - set(self.option_specs))
        if unknown:
            allowed = ", ".join(sorted(self.option_specs)) or "none"
            raise PairError(f"model {self.name!r} has no setting {unknown[0]!r} (its settings: {allowed})")

    def option(self, key: str) -> Any:
        """The value of pair-specific setting ``key`` (parsed from text if given as text)."""
        spec = self.option_specs[key]
        value = self.config.options.get(key, spec.default)
        if isinstance(value, str):
            try:
                value = spec.parse(value)
            except ValueError as exc:
                raise PairError(f"{self.name}: bad value for {key}: {exc}") from None
        return value

    @property
    @abc.abstractmethod
    def theory_rate(self) -> float:
        """The predicted strong rate r in e(L) ≍ L^-r (THEORY.md)."""

    def describe(self) -> dict[str, Any]:
        """JSON-ready description of the model and its settings."""
        return {
            "name": self.name,
            "kind": self.kind,
            "converges": self.converges,
            "description": self.description,
            "theory_source": self.theory_source,
            "width": self.width,
            "activation": self.activation.name,
            "weight_var": self.config.weight_var,
            "input_dim": self.config.input_dim,
            "options": {key: self.option(key) for key in self.option_specs},
        }

    def initial_state(self) -> torch.Tensor:
        """h_0 for every sample, shape (N, d): x ~ N(0, I_d), or A x with an input layer
        (x ~ N(0, I_{n_in}), A entries N(0, 1/n_in), one A per sample). Seeded by (seed, "input")."""
        gen = generator(self.seed, "input", device=self.device)
        options = dict(generator=gen, dtype=self.dtype, device=self.device)
        n_in = self.config.input_dim
        if n_in is None:
            return torch.randn((self.samples, self.width), **options)
        x = torch.randn((self.samples, n_in, 1), **options)
        a = torch.randn((self.samples, self.width, n_in), **options) / n_in**0.5
        return (a @ x).squeeze(-1)


class SDEPair(Pair):
    """A pair whose weights are increments of a Brownian path in R^m (m = ``noise_dim``).

    The study hands the network the increment ΔB_k = B_{(k+1)/L} − B_{k/L} of the shared path, shape
    (N, m), and solves ``limit_sde()`` with ``torchsde.sdeint(..., bm=path, method="euler")`` on a much
    finer grid of the same path.
    """

    kind = "sde"

    @property
    @abc.abstractmethod
    def noise_dim(self) -> int:
        """m, the number of Brownian channels per sample."""

    @abc.abstractmethod
    def network_step(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor) -> torch.Tensor:
        """One residual block: h_{k+1} from h_k at t = t_k, with dt = 1/L and the path increment dW."""

    @abc.abstractmethod
    def limit_sde(self) -> Any:
        """A torchsde SDE (``sde_type="ito"``, ``noise_type="general"``, ``f`` and ``g_prod``)."""


class ODEPair(Pair):
    """A pair whose weights are smooth (or constant) functions of t, known at any t."""

    kind = "ode"

    @abc.abstractmethod
    def weights(self, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The weight functions at a 1-D tensor of T times; each tensor has leading shape (T, N)."""

    @abc.abstractmethod
    def network_step(
        self, h: torch.Tensor, t: float, dt: float, weights: tuple[torch.Tensor, ...]
    ) -> torch.Tensor:
        """One residual block h_k → h_{k+1}, given the weights at t_k (as sliced from :meth:`weights`)."""

    @abc.abstractmethod
    def limit_field(self, t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The right-hand side of dH/dt, for torchdiffeq."""

    def solve_limit(
        self, h0: torch.Tensor, times: torch.Tensor, rtol: float, atol: float, method: str = "dopri5"
    ) -> torch.Tensor:
        """H at ``times`` (the first being the time of h0), shape (T, N, d); torchdiffeq by default."""
        from torchdiffeq import odeint

        return odeint(self.limit_field, h0, times, rtol=rtol, atol=atol, method=method)


_REGISTRY: dict[str, type[Pair]] = {}


def register(cls: type[Pair]) -> type[Pair]:
    """Class decorator adding a pair to the registry under ``cls.name``."""
    if cls.name in _REGISTRY:
        raise RuntimeError(f"pair {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def pair_names() -> list[str]:
    from . import registry  # noqa: F401  (imports every pair module)

    return sorted(_REGISTRY)


def get_pair(name: str) -> type[Pair]:
    """The pair class registered as ``name``; :class:`PairError` listing the known names otherwise."""
    names = pair_names()
    if name not in _REGISTRY:
        raise PairError(f"unknown model {name!r}; known models: {', '.join(names)}")
    return _REGISTRY[name]


def run_network(
    pair: Pair,
    depth: int,
    driver: Callable[[float, float], torch.Tensor] | None = None,
    h0: torch.Tensor | None = None,
) -> torch.Tensor:
    """The plain depth-L network, layer by layer: returns h_L, shape (N, d).

    For an :class:`SDEPair`, ``driver`` is the Brownian path (anything callable as ``driver(ta, tb)``,
    e.g. :class:`~limits.brownian.BrownianGrid`); for an :class:`ODEPair` it is unused. This is the
    reference implementation the one-pass study engine is tested against.
    """
    h = pair.initial_state() if h0 is None else h0
    dt = 1.0 / depth
    for k in range(depth):
        t = k * dt
        if isinstance(pair, SDEPair):
            if driver is None:
                raise ValueError("an SDE pair needs its Brownian driver")
            h = pair.network_step(h, t, dt, driver(t, t + dt))
        else:
            w = pair.weights(torch.tensor([t], dtype=pair.dtype, device=pair.device))
            h = pair.network_step(h, t, dt, tuple(x[0] for x in w))
    return h
