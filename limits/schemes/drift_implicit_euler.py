"""Drift-implicit (backward) Euler: H_{k+1} = H_k + f(t_{k+1}, H_{k+1}) Δt + g(t_k, H_k) ΔB_k.

Each step solves the implicit equation for X = H_{k+1},

    F(X) = X − Δt f(t_{k+1}, X) − Y = 0,       Y = H_k + g(t_k, H_k) ΔB_k,

by Newton's method on the whole batch, X⁰ = Y, X^{i+1} = X^i − J(X^i)⁻¹ F(X^i) with J = I − Δt ∂f/∂X, the
Jacobian of f by automatic differentiation (d backward passes: f acts on each sample's row separately, so
the gradient of Σ_n f_j(X_n) is row j of every sample's Jacobian). Only ``f`` and ``g_prod`` are read.

**Stopping rule.** A sample's iteration stops at the first iterate with

    ‖F(X^i)‖_∞ ≤ tol · (1 + ‖X^i‖_∞ + ‖Y‖_∞ + Δt ‖f(t_{k+1}, X^i)‖_∞)

(tol = 1000 × the dtype's machine epsilon by default: 2.2e-13 in float64 — a residual at the rounding level
of the terms of F), and it is then frozen. A sample that has not stopped after ``max_iterations`` (50)
iterations, or whose iterate or Jacobian becomes non-finite or singular, has **no solution found**.

**Which root.** A nonlinear F can have several roots. The one the scheme means is the branch that tends to
X = Y as Δt → 0; on it det J = det(I − Δt ∂f) is 1 at Δt = 0 and stays positive until the branch ends in a
fold, where det J = 0 and two roots merge and disappear. A root with det J ≤ 0 is therefore not on that branch
(for the drifts below it is the second, far root) and is rejected: **wrong branch**.

**When there is no solution.** For a drift that grows quadratically the implicit equation can have no real
solution at all. For the Itô-corrected limits, f(X) = A X + a + c (α ‖X‖² + β) 1 (A, a the trend; c = ½σ''(0);
α, β from Q), write M = I − Δt A, u = M⁻¹(Y + Δt a), v = M⁻¹ 1: every root is X = u + λ v with the scalar λ
solving

    Δt c α ‖v‖² λ² + (2 Δt c α u·v − 1) λ + Δt c (α ‖u‖² + β) = 0,

which has a real root only if its discriminant is ≥ 0. In one dimension (x' = c x²) the discriminant is
1 − 4 Δt c y: the equation is unsolvable exactly when the solution of the ODE started from y blows up within
time 4 Δt. (Newton's iterates on X, after the first one, are exactly Newton's iterates on λ for this convex
quadratic, which converge monotonically to the near root from its side of the vertex; docs/investigations/blowup.py
checks the scheme's verdict against the discriminant at every step — docs/results/blowup.md: no root missed, no
wrong branch, in 19 416 unsolvable steps.) An unsolvable sample is informative — the step is too long for how fast that path is
growing — so it is never hidden: with ``on_failure="nan"`` (default) the sample becomes NaN from that step
on and is counted in :attr:`DriftImplicitEuler.log` (its own category, apart from paths that grow without
bound); with ``on_failure="raise"`` the step raises :class:`SchemeError` naming the count.

Strong order 1/2 for general noise (Higham, Mao & Stuart 2002, SIAM J. Numer. Anal. 40, for one-sided
Lipschitz drifts; the Itô-corrected drifts are not one-sided Lipschitz, docs/results/blowup.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .base import PathIncrement, SchemeError, SDEScheme

__all__ = ["DriftImplicitEuler", "ImplicitSolveLog"]

FAILURE_MODES = ("nan", "raise")


@dataclass
class ImplicitSolveLog:
    """What the implicit solves did over one :meth:`~DriftImplicitEuler.integrate` (or since ``init_state``).

    Attributes:
        no_solution: (N,) bool — at some step Newton found no root (not converged in ``max_iterations``, or a
            non-finite iterate or a singular Jacobian); the sample is NaN from that step on.
        wrong_branch: (N,) bool — at some step Newton converged to a root with det(I − Δt ∂f) ≤ 0 (not the
            branch through X = Y at Δt = 0); NaN from then on as well.
        first_failure_step: (N,) int64 — the step index of the first failure of either kind (−1: none).
        steps: steps taken; iterations: Newton iterations summed over steps (each costs one evaluation of f
            and d backward passes); drift_evaluations: evaluations of f in all.
        max_iterations_used: the most iterations one step needed.
        max_scaled_residual: the largest ‖F‖_∞ / (1 + ‖X‖_∞ + ‖Y‖_∞ + Δt‖f‖_∞) of an accepted root.
    """

    no_solution: torch.Tensor
    wrong_branch: torch.Tensor
    first_failure_step: torch.Tensor
    steps: int = 0
    iterations: int = 0
    drift_evaluations: int = 0
    max_iterations_used: int = 0
    max_scaled_residual: float = 0.0

    @property
    def failed(self) -> torch.Tensor:
        """(N,) bool: no solution found, or only a wrong-branch root, at some step."""
        return self.no_solution | self.wrong_branch

    def summary(self) -> dict[str, Any]:
        """JSON-ready counts."""
        return {"samples": int(self.no_solution.numel()), "no_solution": int(self.no_solution.sum()),
                "wrong_branch": int(self.wrong_branch.sum()), "steps": self.steps,
                "newton_iterations": self.iterations, "drift_evaluations": self.drift_evaluations,
                "max_iterations_in_a_step": self.max_iterations_used,
                "max_scaled_residual": self.max_scaled_residual}


class DriftImplicitEuler(SDEScheme):
    """Backward Euler in the drift, Euler–Maruyama in the noise (module docstring).

    Args:
        limit, noise_type: as for every :class:`~limits.schemes.base.SDEScheme`.
        tol: the stopping tolerance (> 0; None: 1000 × machine epsilon of the state's dtype).
        max_iterations: Newton iterations allowed per step (≥ 1).
        on_failure: ``"nan"`` (the sample becomes NaN and is logged) or ``"raise"``.

    After :meth:`integrate` (or steps from :meth:`init_state`), :attr:`log` holds the
    :class:`ImplicitSolveLog`.
    """

    name = "drift_implicit_euler"
    #: weak order 1: Kloeden & Platen (1992), §15.4: the implicit Euler scheme's weak order is 1
    weak_order = 1.0
    description = "drift-implicit Euler (Ito): H_{k+1} = H_k + f(t_{k+1}, H_{k+1}) dt + g dB, Newton per step"
    sde_type = "ito"
    strong_orders = {"general": 0.5}
    #: run only when named: the blow-up question (docs/results/blowup.md), not the order comparison
    on_request = True
    #: the least per step (the residual at X⁰ and at one Newton iterate); :attr:`log` counts the real number
    drift_evaluations = 2
    diffusion_evaluations = 1

    def __init__(self, limit, noise_type: str = "general", *, tol: float | None = None, max_iterations: int = 50,
                 on_failure: str = "nan") -> None:
        super().__init__(limit, noise_type)
        if tol is not None and not (isinstance(tol, (int, float)) and 0 < tol < 1):
            raise SchemeError(f"{self.name}: tol={tol!r} is out of range (allowed: 0 < tol < 1, or None)")
        if not (isinstance(max_iterations, int) and max_iterations >= 1):
            raise SchemeError(f"{self.name}: max_iterations={max_iterations!r} is out of range (allowed: an integer ≥ 1)")
        if on_failure not in FAILURE_MODES:
            raise SchemeError(f"{self.name}: on_failure={on_failure!r} unknown (allowed: {', '.join(FAILURE_MODES)})")
        self.tol, self.max_iterations, self.on_failure = tol, max_iterations, on_failure
        self.log: ImplicitSolveLog | None = None

    def init_state(self, t: float, h0: torch.Tensor) -> ImplicitSolveLog:
        if h0.dim() != 2:
            raise SchemeError(f"{self.name}: the state must have shape (N, d); got {tuple(h0.shape)}")
        n = h0.shape[0]
        self.log = ImplicitSolveLog(torch.zeros(n, dtype=torch.bool, device=h0.device),
                                    torch.zeros(n, dtype=torch.bool, device=h0.device),
                                    torch.full((n,), -1, dtype=torch.int64, device=h0.device))
        return self.log

    def _jacobian(self, t: float, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """f(t, x) and its per-sample Jacobian ∂f/∂x, shapes (N, d) and (N, d, d) (row j: ∂f_j/∂x)."""
        with torch.enable_grad():
            xg = x.detach().requires_grad_(True)
            fx = self.sde.f(t, xg)
            d = x.shape[1]
            rows = []
            for j in range(d):
                (grad,) = torch.autograd.grad(fx[:, j].sum(), xg, retain_graph=j < d - 1, allow_unused=True)
                rows.append(torch.zeros_like(x) if grad is None else grad)
        return fx.detach(), torch.stack(rows, dim=1)

    def solve(self, t1: float, dt: float, rhs: torch.Tensor, active: torch.Tensor
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, int, float]:
        """Newton on F(X) = X − Δt f(t1, X) − rhs for the samples in ``active`` (others are left as they are).

        Returns (X, no_solution, wrong_branch, iterations, evaluations of f, largest accepted scaled
        residual); X is NaN where a sample failed."""
        tol = self.tol if self.tol is not None else 1000.0 * torch.finfo(rhs.dtype).eps
        x = rhs.clone()
        eye = torch.eye(rhs.shape[1], dtype=rhs.dtype, device=rhs.device)
        pending = active.clone()
        accepted = torch.zeros_like(active)
        wrong = torch.zeros_like(active)
        rhs_size = rhs.abs().amax(dim=1)
        worst = 0.0
        iterations = 0
        evaluations = 0
        while True:
            fx, jac_f = self._jacobian(t1, x)
            evaluations += 1
            residual = x - dt * fx - rhs
            scale = 1.0 + x.abs().amax(dim=1) + rhs_size + dt * fx.abs().amax(dim=1)
            scaled = residual.abs().amax(dim=1) / scale
            jac = eye - dt * jac_f
            finite = torch.isfinite(scaled) & torch.isfinite(jac).flatten(1).all(dim=1)
            converged = pending & finite & (scaled <= tol)
            if converged.any():
                sign, _ = torch.linalg.slogdet(jac[converged])
                good = torch.zeros_like(active)
                good[converged] = sign > 0
                wrong |= converged & ~good
                accepted |= good
                worst = max(worst, float(scaled[good].max())) if good.any() else worst
            pending &= ~converged & finite
            if not pending.any() or iterations >= self.max_iterations:
                break
            delta, info = torch.linalg.solve_ex(jac[pending], -residual[pending])
            singular = info != 0
            step = torch.where(singular.unsqueeze(-1), torch.zeros_like(delta), delta)
            x[pending] = x[pending] + step
            still = pending.clone()
            still[pending] = ~singular
            pending = still
            iterations += 1
        no_solution = active & ~accepted & ~wrong
        x[no_solution | wrong] = float("nan")
        return x, no_solution, wrong, iterations, evaluations, worst

    def step(self, t: float, dt: float, h: torch.Tensor, increment: PathIncrement, state: Any
             ) -> tuple[torch.Tensor, Any]:
        if not dt > 0:
            raise SchemeError(f"{self.name}: step dt={dt} must be > 0")
        log = state if isinstance(state, ImplicitSolveLog) else self.init_state(t, h)
        rhs = h + self.sde.g_prod(t, h, increment.W)
        active = torch.isfinite(rhs).all(dim=1)
        x, no_solution, wrong, iterations, evaluations, worst = self.solve(t + dt, dt, rhs, active)
        failed_now = no_solution | wrong
        if failed_now.any() and self.on_failure == "raise":
            raise SchemeError(f"{self.name}: at t = {t + dt:g} (Δt = {dt:g}) the implicit equation has no solution "
                              f"on the admissible branch for {int(failed_now.sum())} of {h.shape[0]} samples "
                              f"({int(no_solution.sum())} without a root, {int(wrong.sum())} only on the wrong "
                              f"branch); use a smaller step, or on_failure='nan' to count them")
        new_failure = failed_now & (log.first_failure_step < 0)
        log.first_failure_step[new_failure] = log.steps
        log.no_solution |= no_solution
        log.wrong_branch |= wrong
        log.steps += 1
        log.iterations += iterations
        log.drift_evaluations += evaluations
        log.max_iterations_used = max(log.max_iterations_used, iterations)
        log.max_scaled_residual = max(log.max_scaled_residual, worst)
        x[~active] = rhs[~active]  # already non-finite: carried as is
        return x, log
