"""Pairs: a discrete ResNet and its continuous-depth limit, driven by one sampled weight process.

A *pair* binds

* a **driver** — one realisation per sample of the weights as a process on [0, 1]: a Brownian path
  (:class:`~limits.brownian.BrownianGrid`, owned by the study so that every depth reads one path) or
  smooth functions (:class:`~limits.smooth.SmoothGaussianProcess`, owned by the pair);
* the **discrete reader** — one residual block ``network_step(h, t_k, 1/L, …)`` mapping h_k to h_{k+1},
  reading the driver on the grid t_k = k/L;
* the **continuous reader** — the limit, an Itô SDE for torchsde (``limit_sde()``, ``f`` and ``g_prod``
  only) or a vector field for torchdiffeq (``limit_field``);
* the **predicted strong rate** with its source in docs/theory.md.

Studies only ever ask a pair for "h at depth L" and "H at t = 1" on the same samples, so a new model is
a new subclass, never new validation code: register it in :mod:`limits.registry`, or hand the class (or
``"package.module:ClassName"``) to a study directly.

A pair *declares* what it needs as class attributes — the :class:`ModelConfig` fields it reads
(``config_fields``), whether its activation must be C³ with σ(0) = 0 (``requires_smooth_activation``),
its settings (``option_specs``) — and :class:`Pair` checks them once, at construction, with errors that
name the bad value and what is allowed.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import torch

from .activations import Activation, get_activation
from .closed_forms import withdraw_stale
from .seeding import generator
from .smooth import LENGTHSCALE_RANGE

__all__ = [
    "ModelConfig", "OptionSpec", "number_option", "Pair", "SDEPair", "ODEPair", "PairError", "run_network",
    "CONFIG_FIELDS",
]

#: the optional ModelConfig fields a pair may declare in ``config_fields`` (``width`` applies to every pair)
CONFIG_FIELDS: tuple[str, ...] = ("activation", "weight_var", "lengthscale", "input_dim", "beta")

class PairError(ValueError):
    """A bad model name or configuration (the message names the value and what is allowed)."""


@dataclass(frozen=True)
class ModelConfig:
    """The model's settings. ``None`` means "the pair's default"; a field given (not None) to a pair that
    does not read it is an error (see :attr:`Pair.config_fields`), never silently ignored.

    Attributes:
        width: d, the width of the hidden state (≥ 1).
        activation: a name for :func:`~limits.activations.get_activation`; None: the pair's default.
        weight_var: s², the variance scale of i.i.d. weights (entries N(0, s²/d)), ≥ 0; None: 1.
        lengthscale: ℓ > 0 of the RBF kernel of smooth weights; None: 0.1.
        input_dim: n_in for an input layer h_0 = A x (A entries N(0, 1/n_in)); None: h_0 = x ~ N(0, I_d).
        beta: the exponent β of Cohen et al.'s ODE regime, for the pairs that read it.
        options: pair-specific settings by name (text or values; see the pair's ``option_specs``).
    """

    width: int = 10
    activation: str | None = None
    weight_var: float | None = None
    lengthscale: float | None = None
    input_dim: int | None = None
    beta: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def replace(self, **changes: Any) -> "ModelConfig":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class OptionSpec:
    """A pair-specific setting, given on the command line as ``--set NAME=VALUE``.

    ``parse`` turns the text (or a value given through the Python API) into the checked value and raises
    ``ValueError`` naming the setting, the bad value and the allowed range.
    """

    default: Any
    help: str
    parse: Callable[[Any], Any] = float


def number_option(name: str, minimum: float | None = None) -> Callable[[Any], float]:
    """An ``OptionSpec.parse`` for a finite number (≥ ``minimum`` if given); its ValueError names the
    setting, the bad value and the allowed range."""
    allowed = "a finite number" + (f" ≥ {minimum:g}" if minimum is not None else "")

    def parse(text: Any) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise ValueError(f"{name}={text!r} is not a number (allowed: {allowed})") from None
        if not math.isfinite(value) or (minimum is not None and value < minimum):
            raise ValueError(f"{name}={value} is out of range (allowed: {allowed})")
        return value

    parse.__name__ = f"{name}: {allowed}"
    return parse


_SMOOTH_ACTIVATIONS = "tanh, swish, shifted-softplus, identity"


class Pair(abc.ABC):
    """A discrete ResNet and its limit on ``samples`` independent weight draws.

    Subclasses set ``name``, ``kind`` (``"sde"`` or ``"ode"``), ``description`` and ``theory_source``;
    declare what they read and require (``config_fields``, ``requires_smooth_activation``,
    ``default_activation``, ``option_specs``, with ``config_hints`` for a better error message when a
    field they do not read is given); and implement :attr:`theory_rate`. The constructor checks all of it
    once and resolves the values: ``self.width``, ``self.activation``, ``self.weight_var``,
    ``self.lengthscale``, ``self.beta`` and every option (read with :meth:`option`).
    """

    name: ClassVar[str]
    kind: ClassVar[str]
    description: ClassVar[str]
    theory_source: ClassVar[str]
    default_activation: ClassVar[str] = "tanh"
    #: the optional :class:`ModelConfig` fields this pair reads (from :data:`CONFIG_FIELDS`)
    config_fields: ClassVar[frozenset[str]] = frozenset({"activation", "input_dim"})
    #: why a field outside ``config_fields`` does not apply, and what to use instead (error messages)
    config_hints: ClassVar[dict[str, str]] = {}
    #: the activation must be C³ near 0 with σ(0) = 0 (the Itô-corrected limits, docs/theory.md §3–4)
    requires_smooth_activation: ClassVar[bool] = False
    option_specs: ClassVar[dict[str, OptionSpec]] = {}
    #: False for a deliberately wrong limit (an ablation): its check is that the error does *not* decay.
    converges: ClassVar[bool] = True
    excluded_rate: ClassVar[float | None] = None
    #: the pair's recommended study size for ``validation.convergence`` where the generic one does not
    #: suit it; optional keys: depths, samples, reference_steps, rtol (ODE pairs, float64), fit_from, width
    default_study: ClassVar[dict[str, Any]] = {}
    #: evaluations of the block's residual branch per layer: the cost unit of validation.solvers (1 for an Euler
    #: block; a Runge–Kutta block of s stages, limits.rk_resnets, makes s)
    evaluations_per_layer: ClassVar[int] = 1
    #: q of the next term of the RMS error's expansion e(L) = C L^-r (1 + c L^-q + …), which the convergence
    #: study's corrected rate fit uses (docs/theory.md §6)
    next_order: ClassVar[float] = 1.0

    def __init__(
        self,
        config: ModelConfig,
        samples: int,
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
    ) -> None:
        self._check_config(config)
        if not isinstance(samples, int) or samples < 1:
            raise PairError(f"samples={samples!r} is out of range (allowed: an integer ≥ 1)")
        self.config = config
        self.samples = int(samples)
        self.seed = int(seed)
        self.dtype = dtype
        self.device = torch.device(device)
        self.width = int(config.width)
        self.weight_var = 1.0 if config.weight_var is None else float(config.weight_var)
        self.lengthscale = 0.1 if config.lengthscale is None else float(config.lengthscale)
        self.beta = config.beta
        unknown = sorted(set(config.options) - set(self.option_specs))
        if unknown:
            allowed = ", ".join(sorted(self.option_specs)) or "none"
            raise PairError(f"model {self.name!r} has no setting {unknown[0]!r} (its settings: {allowed})")
        self._options = {key: self._parse_option(key, config.options.get(key, spec.default))
                         for key, spec in self.option_specs.items()}
        self.activation: Activation = get_activation(self._activation_spec())
        if self.requires_smooth_activation and not (self.activation.smooth and self.activation.zero_at_zero):
            raise PairError(f"{self.name} needs a C³ activation with σ(0) = 0 ({_SMOOTH_ACTIVATIONS}); got "
                            f"{self.activation.name}")

    @classmethod
    def _check_config(cls, config: ModelConfig) -> None:
        """The checks every pair shares: ranges, and no field given that this pair does not read."""
        if not isinstance(config.width, int) or config.width < 1:
            raise PairError(f"width={config.width!r} is out of range (allowed: an integer ≥ 1)")
        for name in CONFIG_FIELDS:
            if getattr(config, name) is not None and name not in cls.config_fields:
                reads = ", ".join(["width", *sorted(cls.config_fields)])
                hint = cls.config_hints.get(name, "")
                raise PairError(f"{cls.name} does not use {name} (--{name.replace('_', '-')}); it reads "
                                f"{reads}{'; ' + hint if hint else ''}")
        if config.weight_var is not None and not (math.isfinite(config.weight_var) and config.weight_var >= 0):
            raise PairError(f"weight_var={config.weight_var} is out of range (allowed: a finite number ≥ 0)")
        low, high = LENGTHSCALE_RANGE
        if config.lengthscale is not None and not low <= config.lengthscale <= high:
            raise PairError(f"lengthscale={config.lengthscale} is out of range (allowed: {low:g} ≤ ℓ ≤ {high:g})")
        if config.input_dim is not None and (not isinstance(config.input_dim, int) or config.input_dim < 1):
            raise PairError(f"input_dim={config.input_dim!r} is out of range (allowed: an integer ≥ 1)")
        if config.beta is not None and not math.isfinite(config.beta):
            raise PairError(f"beta={config.beta} is out of range (allowed: a finite number)")

    def _parse_option(self, key: str, value: Any) -> Any:
        try:
            return self.option_specs[key].parse(value)
        except ValueError as exc:
            raise PairError(f"{self.name}: bad value for {key}: {exc}") from None

    def _activation_spec(self) -> str:
        """The activation's name: the config's, else the pair's default (a pair may also read a setting)."""
        return self.config.activation or self.default_activation

    def option(self, key: str) -> Any:
        """The checked value of the pair-specific setting ``key``."""
        return self._options[key]

    @property
    @abc.abstractmethod
    def theory_rate(self) -> float:
        """The predicted strong rate r in e(L) ≍ L^-r (docs/theory.md)."""

    def describe(self) -> dict[str, Any]:
        """JSON-ready description of the model and its settings."""
        return {
            "name": self.name,
            "kind": self.kind,
            "converges": self.converges,
            "description": self.description,
            "theory_source": self.theory_source,
            "width": self.width,
            "activation": self.activation.name if "activation" in self.config_fields else None,  # not read: none
            "weight_var": self.weight_var if "weight_var" in self.config_fields else None,
            "input_dim": self.config.input_dim,
            "options": dict(self._options),
            "options_given": {key: self._options[key] for key in dict(self.config.options or {})},
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
    #: 1, not 1/2: the mean-square error is a series in whole powers of 1/L (odd moments of the Brownian
    #: increments vanish), E‖h_L − H_1‖² = a/L + b/L² + …, so e = (a/L)^½ (1 + (b/2a)/L + …) (docs/theory.md §6)
    next_order: ClassVar[float] = 1.0

    @property
    @abc.abstractmethod
    def noise_dim(self) -> int:
        """m, the number of Brownian channels per sample."""

    @property
    def noise_type(self) -> str:
        """The limit's noise structure in torchsde's terms (``general``; a pair with commutative noise says
        so, e.g. res-1 at width 1 is ``scalar``): it decides which schemes apply and at which order."""
        return "general"

    @abc.abstractmethod
    def network_step(self, h: torch.Tensor, t: float, dt: float, dW: torch.Tensor) -> torch.Tensor:
        """One residual block: h_{k+1} from h_k at t = t_k, with dt = 1/L and the path increment dW."""

    #: optional: the block's tangent map in closed form, ``network_tangent(h, t, dt, dW, tangents)`` =
    #: ∂_h(network_step − h)(h) · T for tangents T of shape (N, d, C), returning (N, d, C). None: the gradient study
    #: differentiates :meth:`network_step` by forward-mode autodiff (``torch.func.jvp`` under ``vmap``, an order of
    #: magnitude slower at the default sizes); tests/test_gradient_pass.py checks every closed form against it.
    network_tangent: ClassVar[Callable[..., torch.Tensor] | None] = None

    #: the closed forms beside :meth:`network_step`, each with the methods it restates: one older than a method it
    #: restates is withdrawn when a subclass is defined (:mod:`limits.closed_forms`)
    closed_forms: ClassVar[dict[str, tuple[str, ...]]] = {"network_tangent": ("network_step",)}
    #: the closed forms withdrawn from this class when it was defined
    closed_forms_withdrawn: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.closed_forms_withdrawn = withdraw_stale(cls, SDEPair.closed_forms, {"network_tangent": None})

    @abc.abstractmethod
    def limit_sde(self) -> Any:
        """A torchsde SDE (``sde_type="ito"``, ``noise_type="general"``, ``f`` and ``g_prod``)."""


class ODEPair(Pair):
    """A pair whose weights are smooth (or constant) functions of t, known at any t."""

    kind = "ode"
    #: Euler's global error is C₁/L + C₂/L² + …: relative correction of order 1/L (also for a higher-order
    #: scheme of order p: C_p L^-p + C_{p+1} L^-p-1 + …)
    next_order: ClassVar[float] = 1.0
    #: the limit's reference in a strong-error study (:func:`validation.core.one_pass.ode_pass`). None: the adaptive
    #: :meth:`solve_limit` at the study's rtol/atol, the second reference 100× looser. An even integer k:
    #: torchdiffeq's fixed-step ``reference_method`` with k steps per layer of the deepest network, the second
    #: reference with k/2 — for a pair whose errors fall below what a float64 adaptive solver reaches (res2-rk4:
    #: dopri5 at rtol = 1e-13 stays ~1e-9 away, above the network's 2.3e-10 at L = 512)
    reference_refinement: ClassVar[int | None] = None
    #: torchdiffeq's method for the reference: adaptive (``dopri5``) or, with ``reference_refinement``, fixed-step
    reference_method: ClassVar[str] = "dopri5"

    #: the closed forms beside :meth:`limit_field` (an exact :meth:`solve_limit`), each with the methods it restates:
    #: one older than a method it restates is withdrawn when a subclass is defined (:mod:`limits.closed_forms`)
    closed_forms: ClassVar[dict[str, tuple[str, ...]]] = {"solve_limit": ("limit_field",)}
    #: the closed forms withdrawn from this class when it was defined
    closed_forms_withdrawn: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """The declared reference is checked once, when a pair class is defined (as torchsde's methods check
        their declared abilities in the base class), and closed forms older than what they restate withdrawn."""
        super().__init_subclass__(**kwargs)
        cls.closed_forms_withdrawn = withdraw_stale(cls, ODEPair.closed_forms,
                                                    {"solve_limit": vars(ODEPair)["solve_limit"]})
        k = cls.reference_refinement
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 2 or k % 2):
            raise TypeError(f"{cls.__name__}.reference_refinement={k!r} must be None or an even integer ≥ 2")
        fixed = ("euler", "midpoint", "heun3", "rk4", "explicit_adams", "implicit_adams")
        if k is not None and cls.reference_method not in fixed:
            raise TypeError(f"{cls.__name__}.reference_method={cls.reference_method!r} with a reference_refinement "
                            f"must be a fixed-step torchdiffeq method ({', '.join(fixed)})")

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
        self, h0: torch.Tensor, times: torch.Tensor, rtol: float, atol: float, method: str = "dopri5",
        options: Mapping[str, Any] | None = None,
    ) -> torch.Tensor:
        """H at ``times`` (the first being the time of h0), shape (T, N, d); torchdiffeq by default, ``options`` being
        its solver options (``{"step_size": …}`` for a fixed-step ``method``)."""
        from torchdiffeq import odeint

        return odeint(self.limit_field, h0, times, rtol=rtol, atol=atol, method=method,
                      options=None if options is None else dict(options))


def run_network(
    pair: Pair,
    depth: int,
    driver: Callable[[float, float], torch.Tensor] | None = None,
    h0: torch.Tensor | None = None,
    *,
    states: bool = False,
) -> torch.Tensor:
    """The plain depth-L network, layer by layer: returns h_L, shape (N, d), or with ``states=True`` every
    hidden state h_0, h_1, …, h_L, shape (L + 1, N, d) (memory grows with L: for plots, not for studies).

    For an :class:`SDEPair`, ``driver`` is the Brownian path (anything callable as ``driver(ta, tb)``, e.g.
    :class:`~limits.brownian.BrownianGrid`), required; an :class:`ODEPair` reads its own smooth weights and
    takes no driver. This is the reference implementation the one-pass study engine is tested against.
    """
    if isinstance(pair, SDEPair) and driver is None:
        raise ValueError(f"{pair.name} is an SDE pair: pass its Brownian path as driver (e.g. a BrownianGrid)")
    if isinstance(pair, ODEPair) and driver is not None:
        raise ValueError(f"{pair.name} is an ODE pair: it reads its own smooth weights, pass no driver")
    h = pair.initial_state() if h0 is None else h0
    path = [h] if states else None
    dt = 1.0 / depth
    for k in range(depth):
        t = k * dt
        if isinstance(pair, SDEPair):
            h = pair.network_step(h, t, dt, driver(t, t + dt))
        else:
            w = pair.weights(torch.tensor([t], dtype=pair.dtype, device=pair.device))
            h = pair.network_step(h, t, dt, tuple(x[0] for x in w))
        if path is not None:
            path.append(h)
    return torch.stack(path) if path is not None else h
