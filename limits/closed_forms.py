"""Closed forms and shortcuts that restate a pair's primary methods, kept only while they restate the methods in force.

A limit is defined by its drift ``f`` and its diffusion product ``g_prod``; a network by its ``network_step``. A
class may add, beside them, faster forms of the same maths — the diffusion matrix in closed form, the Stratonovich
correction, the tangents, the flag ``drift_free`` that lets a scheme skip the drift. Each restates certain primary
methods (:data:`limits.ito.ItoLimit.closed_forms`, :data:`limits.pairs.SDEPair.closed_forms`). A subclass that
overrides a primary method and not its closed forms (a user's limit built on res-1 with a drift of its own) would
inherit forms of *another* model: a scheme that reads them steps the parent's SDE, not the user's, and a check on it
passes against the wrong limit.

Two rules close that door:

* **Structural, at class definition** (:func:`withdraw_stale`): a closed form is in force only where the class that
  defines it is the class that defines each method it restates, or a subclass of it. Otherwise the class gets the
  generic form back (assembled from the primary methods, or automatic differentiation, or "no shortcut"), and the
  withdrawn names are listed in ``closed_forms_withdrawn``. Checked once, when the class is created, as torchsde's
  methods check their declared abilities.
* **Numerical, at the start of a run** (:func:`limits.closed_form_probe.check_pair`, with :func:`disagreements`): every
  closed form still in force is compared with the generic form on a probe state; a form that disagrees is named in one line (:class:`ClosedFormError`) and the run is
  refused. This catches a class written from scratch whose closed form is simply wrong. ``exact_solution`` is not
  probed (it needs a path); the structural rule alone guards it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import torch

__all__ = ["ClosedFormError", "owner", "withdraw_stale", "disagreements"]


class ClosedFormError(ValueError):
    """A closed form disagrees with the primary methods it restates (the message names both)."""


def owner(cls: type, name: str) -> type | None:
    """The class in ``cls``'s method resolution order that defines ``name`` (None where none does)."""
    return next((klass for klass in cls.__mro__ if name in vars(klass)), None)


def withdraw_stale(cls: type, closed_forms: Mapping[str, tuple[str, ...]], generic: Mapping[str, Any]) -> tuple[str, ...]:
    """Give ``cls`` the generic form of every closed form that is older than a method it restates.

    ``closed_forms`` maps each closed form to the methods it restates, in an order where a closed form comes after
    the closed forms it restates (a withdrawn form is set on ``cls``, so the forms built on it are withdrawn too);
    ``generic`` maps each to its generic value. Returns the names withdrawn."""
    withdrawn = []
    for name, restated in closed_forms.items():
        defines_form = owner(cls, name)
        if defines_form is None or vars(defines_form)[name] is generic[name]:
            continue   # no form, or the generic one: nothing to withdraw
        for method in restated:
            defines_method = owner(cls, method)
            if defines_method is not None and defines_method not in defines_form.__mro__:
                setattr(cls, name, generic[name])
                withdrawn.append(name)
                break
    return tuple(withdrawn)


def _relative_gap(closed: torch.Tensor, generic: torch.Tensor) -> float:
    scale = max(float(generic.abs().max()), float(closed.abs().max()), 1e-30)
    return float((closed - generic).abs().max()) / scale


def disagreements(forms: Mapping[str, Callable[[], tuple[torch.Tensor, torch.Tensor]]], tolerance: float
                  ) -> list[str]:
    """The closed forms (``forms``: name → a function giving the closed form's value and the generic one's on a probe
    state) whose values differ by more than ``tolerance`` relative to their size, each as a phrase naming the form
    and the gap."""
    found = []
    for name, values in forms.items():
        closed, generic = values()
        if closed.shape != generic.shape:
            found.append(f"{name} has shape {tuple(closed.shape)}, the generic form {tuple(generic.shape)}")
            continue
        finite = bool(torch.isfinite(closed).all() and torch.isfinite(generic).all())
        gap = _relative_gap(closed, generic) if finite else float("inf")
        if not gap <= tolerance:
            found.append(f"{name} differs from the form assembled from the methods it restates by {gap:.2g} "
                         f"(relative; at most {tolerance:g} allowed)")
    return found

