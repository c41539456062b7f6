"""The interface of an exactly solvable SDE: its coefficients, noise structure and solution as a function of the path.

A :class:`Problem` is an Itô SDE dX = f(t, X) dt + g(t, X) dB on [0, T] in R^d driven by m Brownian channels, with

* its coefficients in closed form (``drift``, ``diffusion_matrix``; the form it is stated in by its source,
  ``stated_form``, is recorded — a Stratonovich problem is given here by its Itô drift f = f_S + ½ Σ_j (∂g_j) g_j);
* its noise structure ``noise_type`` (``scalar``, ``diagonal``, ``additive``, ``commutative`` or ``general``), which
  decides the schemes that apply and their orders (:mod:`limits.schemes`);
* its initial value and its **exact solution at T as a function of the path** (:meth:`Problem.exact`), read from
  the same :class:`~limits.brownian.DyadicPath` the schemes read: the increment W_T, the time integral ∫ W dt from
  the space-time areas, a stochastic integral of a deterministic function by quadrature on the recorded steps,
  or the Lévy area.

:meth:`Problem.limit_sde` hands the schemes an :class:`~limits.ito.ItoLimit`, exactly as a pair does.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import torch

from ..brownian import DyadicPath
from ..ito import ItoLimit

__all__ = ["Problem", "ScalarProblem", "ProblemLimit", "path_total", "path_time_integral", "elementwise_correction"]


def path_total(path: DyadicPath) -> torch.Tensor:
    """W_T − W_0 of the path, (N, m): the tree sum of its recorded steps."""
    return path.level(path.steps).increments[0]


def path_time_integral(path: DyadicPath) -> torch.Tensor:
    """∫_0^T (B_s − B_0) ds, (N, m), exact on the recorded steps: Σ_k Δt (B_{t_k} + ½ W_k + H_k), with H_k the
    step's space-time area (:class:`~limits.brownian.DyadicPath`; a path without areas is refused)."""
    if path.areas is None:
        raise ValueError("∫ B ds needs the path's space-time areas (record_path(..., areas='space-time'))")
    dt = path.t1 / path.steps
    before = torch.cumsum(path.increments, 0) - path.increments
    return dt * (before + 0.5 * path.increments + path.areas).sum(0)


class Problem(abc.ABC):
    """An exactly solvable Itô SDE (module docstring). Subclasses declare the class attributes and implement
    :meth:`drift`, :meth:`diffusion_matrix` and :meth:`exact`."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: where the problem comes from (the anchor's problem name and the book or paper)
    source: ClassVar[str]
    dimension: ClassVar[int]
    channels: ClassVar[int]
    noise_type: ClassVar[str]
    #: the form the source states the SDE in; the coefficients here are always the Itô ones
    stated_form: ClassVar[str] = "ito"
    t1: ClassVar[float] = 1.0
    #: what the exact solution reads of the path, and how exact it is there (shown by --list-problems)
    solution_reads: ClassVar[str] = "W_T"
    #: whether :meth:`exact` reads the path's Lévy area (the path must be recorded with areas="levy")
    needs_levy_area: ClassVar[bool] = False
    #: the solver study's default number of paths for this problem (None: the study's own default), where the
    #: problem's errors are so heavy-tailed that the default would not settle every verdict
    default_samples: ClassVar[int | None] = None

    @abc.abstractmethod
    def initial_value(self) -> torch.Tensor:
        """X_0, shape (d,)."""

    @abc.abstractmethod
    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        """The Itô drift f(t, x), (N, d)."""

    @abc.abstractmethod
    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        """g(t, x), (N, d, m)."""

    @abc.abstractmethod
    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        """X_T for each sample (N, d) from X_0 = ``x0`` (N, d) and the path over [0, T]."""

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor | None:
        """½ Σ_j (∂g_j) g_j in closed form, or None for the generic one (automatic differentiation, m columns)."""
        return None

    def initial_state(self, samples: int, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu"
                      ) -> torch.Tensor:
        """X_0 repeated for ``samples`` paths, (N, d)."""
        return self.initial_value().to(dtype=dtype, device=device).expand(samples, -1).clone()

    def limit_sde(self) -> "ProblemLimit":
        """The SDE as the schemes read it (an :class:`~limits.ito.ItoLimit`)."""
        return ProblemLimit(self)

    def describe(self) -> dict:
        """Name, description, source, sizes, noise, form, horizon and what the solution reads, for a result file."""
        return {"name": self.name, "description": self.description, "source": self.source, "width": self.dimension,
                "channels": self.channels, "noise_type": self.noise_type, "stated_form": self.stated_form,
                "t1": self.t1, "solution_reads": self.solution_reads}


class ProblemLimit(ItoLimit):
    """A :class:`Problem` as an :class:`~limits.ito.ItoLimit`: ``f``, ``g_prod`` and ``diffusion_matrix`` from its
    closed forms (the Stratonovich correction by automatic differentiation, as for any limit)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__()
        self.problem = problem
        self.noise_channels = problem.channels

    def f(self, t, y: torch.Tensor) -> torch.Tensor:
        return self.problem.drift(float(t), y)

    def g_prod(self, t, y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return (self.problem.diffusion_matrix(float(t), y) @ v.unsqueeze(-1)).squeeze(-1)

    def diffusion_matrix(self, t, y: torch.Tensor) -> torch.Tensor:
        return self.problem.diffusion_matrix(float(t), y)

    def stratonovich_correction(self, t, y: torch.Tensor) -> torch.Tensor:
        correction = self.problem.stratonovich_correction(float(t), y)
        return super().stratonovich_correction(t, y) if correction is None else correction


class ScalarProblem(Problem):
    """A scalar autonomous SDE dX = a(X) dt + b(X) dB whose solution is X_T = φ(T, W_T, X_0) (d = m = 1)."""

    dimension = 1
    channels = 1
    noise_type = "scalar"
    x0: ClassVar[float]

    @abc.abstractmethod
    def a(self, x: torch.Tensor) -> torch.Tensor:
        """The Itô drift, elementwise."""

    @abc.abstractmethod
    def b(self, x: torch.Tensor) -> torch.Tensor:
        """The diffusion, elementwise."""

    def solution(self, t: float, w: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
        """X_t from W_t and X_0, elementwise (a problem whose solution reads more of the path overrides
        :meth:`exact` instead)."""
        raise NotImplementedError(f"{self.name}'s solution is not a function of W_t: see its exact()")

    def initial_value(self) -> torch.Tensor:
        return torch.tensor([self.x0], dtype=torch.float64)

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return self.a(x)

    def diffusion_matrix(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return self.b(x).unsqueeze(-1)

    def exact(self, x0: torch.Tensor, path: DyadicPath) -> torch.Tensor:
        return self.solution(self.t1, path_total(path), x0)

    def stratonovich_correction(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return elementwise_correction(self.b, x)


def elementwise_correction(b, x: torch.Tensor) -> torch.Tensor:
    """½ b(x) b'(x) for a diffusion acting coordinate by coordinate (scalar or diagonal noise): one backward pass."""
    with torch.enable_grad():
        y = x.detach().requires_grad_(True)
        value = b(y)
        (derivative,) = torch.autograd.grad(value.sum(), y)
    return 0.5 * value.detach() * derivative
