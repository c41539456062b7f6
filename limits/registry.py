"""The pairs by name: a static table, and :func:`get_pair` for names, classes and ``module:ClassName``.

The table lists every pair class the package ships; a study accepts any of its names, a :class:`Pair`
subclass of the user's own, or a text ``"package.module:ClassName"`` (or ``"path/to/file.py:ClassName"``)
naming one — which is how ``--model`` reaches a user's pair from the command line.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .cohen import CohenODE, CohenODENoise, CohenSDE, CohenSDENaive
import torch

from .pairs import ModelConfig, Pair, PairError
from .peluchetti_favaro import PFPair
from .res_ode import Res1ODE, Res2ODE, Res3ODE
from .res_sde import Res1SDE
from .rk_resnets import Res2Midpoint, Res2RK4

__all__ = ["PAIRS", "pair_names", "get_pair", "make_pair"]

#: name → pair class, for every pair the package ships
PAIRS: Mapping[str, type[Pair]] = MappingProxyType({
    cls.name: cls for cls in (Res1SDE, Res1ODE, Res2ODE, Res3ODE, Res2Midpoint, Res2RK4, CohenSDE, CohenSDENaive,
                              CohenODE, CohenODENoise, PFPair)
})


def pair_names() -> list[str]:
    """The names of the shipped pairs, sorted."""
    return sorted(PAIRS)


def get_pair(model: str | type[Pair]) -> type[Pair]:
    """The pair class for ``model``: a shipped pair's name, a :class:`Pair` subclass (returned as it is),
    or ``"package.module:ClassName"`` / ``"path/to/file.py:ClassName"`` naming a subclass.

    Raises:
        PairError: an unknown name (the message lists the known ones), a module or class that cannot be
            found, or a class that is not a concrete :class:`Pair` subclass.
    """
    if isinstance(model, type):
        return _check_class(model, repr(model))
    text = str(model).strip()
    if text in PAIRS:
        return PAIRS[text]
    if ":" not in text:
        raise PairError(f"unknown model {text!r}; known models: {', '.join(pair_names())} "
                        "(or your own pair as package.module:ClassName)")
    where, _, class_name = text.rpartition(":")
    if not where or not class_name.isidentifier():
        raise PairError(f"model {text!r}: write your own pair as package.module:ClassName or "
                        f"path/to/file.py:ClassName; known models: {', '.join(pair_names())}")
    module = _import(where, text)
    try:
        cls = getattr(module, class_name)
    except AttributeError:
        raise PairError(f"model {text!r}: {where} has no class {class_name!r}") from None
    return _check_class(cls, text)


def make_pair(model: str | type[Pair], samples: int = 1, *, seed: int = 0, dtype: torch.dtype = torch.float64,
              device: torch.device | str = "cpu", **config) -> Pair:
    """A pair built in one call: ``make_pair("res1", samples=4, width=6, activation="relu")``.

    ``model`` is anything :func:`get_pair` accepts; the keywords besides samples, seed, dtype and device are
    :class:`~limits.pairs.ModelConfig` fields (width, activation, weight_var, lengthscale, input_dim, beta,
    options).
    """
    return get_pair(model)(ModelConfig(**config), samples, seed=seed, dtype=dtype, device=device)


def _import(where: str, text: str):
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise PairError(f"model {text!r}: no file {where}")
        name = f"_user_pair_{abs(hash(path.resolve()))}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: B036 (a file that fails or exits at import, sys.exit included, must not
            del sys.modules[name]     # forge a status: it is bad input, in one line)
            raise PairError(f"model {text!r}: importing {where} failed: {type(exc).__name__}: {exc}") from None
        return module
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise PairError(f"model {text!r}: cannot import {where} ({exc}); run from the folder that holds it, "
                        "or give a file as path/to/file.py:ClassName") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: B036 (a bad module name, or the user's module failed or exited: one line)
        raise PairError(f"model {text!r}: importing {where} failed: {type(exc).__name__}: {exc}") from None


def _check_class(cls: object, text: str) -> type[Pair]:
    if not (isinstance(cls, type) and issubclass(cls, Pair)):
        raise PairError(f"model {text}: {cls!r} is not a subclass of limits.Pair (SDEPair or ODEPair)")
    if getattr(cls, "__abstractmethods__", None):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise PairError(f"model {text}: {cls.__name__} does not implement {missing}")
    return cls
