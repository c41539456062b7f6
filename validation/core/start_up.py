"""What a command line sets before torch is imported: torch reads some of its allocator's settings from the
environment once, at its first allocation, so they must be in place before ``import torch``.

:func:`prepare_environment` is called by ``validation/__init__.py`` when the package is imported by ``python -m``
(the first thing such a process imports of ours), with the study's module name from the command line.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["prepare_environment", "HUGE_PAGE_STUDIES", "study_of_command_line", "refuse_shadowing_files"]

#: the studies whose large arrays are allocated afresh for each batch and unmapped when freed
#: (:func:`validation.core.runtime.large_blocks_unmapped`): torch asks the kernel for transparent huge pages for
#: each array of 2 MiB or more (``THP_MEM_ALLOC_ENABLE``), which makes a new array's first touch one fault per
#: 2 MiB instead of per 4 KiB. Measured on 2 cores, ``python -m validation.multilevel --model res1 --schemes network
#: --accuracies 0.05 --width 6``: 26–27 s with 4-KiB pages, 15–17 s with huge pages (21–23 s for the reused heap
#: before, whose peak varied 370–643 MiB; now 314 every time). The phase study's columns likewise
#: (``--networks 32 --hursts 0.3,0.7 --workers 2``: 1421–1660 MiB on the reused heap, 940–957 unmapped with huge
#: pages, 993–1132 without; the default run 91–97 s against 92–104 s before). Not the studies that reuse their heap
#: (the main study measured 6.4–7.1 s without, 7.2–7.6 s with). Where the kernel gives no huge pages it changes nothing; the
#: numbers computed never change.
HUGE_PAGE_STUDIES: frozenset[str] = frozenset({"validation.multilevel", "validation.phase"})


def study_of_command_line(argv: list[str]) -> str | None:
    """The module of ``python [options] -m MODULE …`` from the interpreter's full command line (``sys.orig_argv``),
    or None (a script, ``-c``, or no ``-m``)."""
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "-m":
            return argv[i + 1] if i + 1 < len(argv) else None
        if word.startswith("-m"):
            return word[2:]
        if word in ("-X", "-W", "--check-hash-based-pycs"):   # options that take the next word
            i += 2
            continue
        if not word.startswith("-") or word.startswith("-c"):
            return None
        i += 1
    return None


def prepare_environment(study: str | None = None) -> None:
    """Before torch's import: huge pages for the large arrays of :data:`HUGE_PAGE_STUDIES` (a value the user set is
    kept). ``study``: the module run by ``python -m`` (default: read from ``sys.orig_argv``)."""
    study = study if study is not None else study_of_command_line(getattr(sys, "orig_argv", []))
    if study in HUGE_PAGE_STUDIES and "torch" not in sys.modules:
        os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")


#: the modules a command line imports by their top-level names: the package's own ``limits``, and its dependencies
#: (a file of the same name in the folder ``python -m`` is started from is imported in their place)
IMPORTED_BY_NAME = ("limits", "torch", "numpy", "scipy", "matplotlib", "torchsde", "torchdiffeq", "tqdm", "jsonschema")


def refuse_shadowing_files() -> None:
    """End a command line in one line (exit status 2) when a file in the folder it was started from would be imported
    in place of ``limits`` or a dependency: ``python -m`` puts that folder first on ``sys.path``, and a ``limits.py``
    there ended every study in a traceback (``'limits' is not a package``). Only the package's own ``limits`` (this
    package's sibling: the checkout run from its root is fine) and dependencies that are never a single ``NAME.py`` are
    checked, by finding each module's file without importing it. (A ``validation.py`` there shadows the package
    itself: Python imports it instead of this code, which then never runs — docs/install.md says so.)"""
    first = sys.path[0] if sys.path else None
    if first is None or Path(first or ".").resolve() != Path.cwd().resolve():  # -P / PYTHONSAFEPATH: no folder first
        return
    here = Path.cwd().resolve()
    own = Path(__file__).resolve().parents[2] / "limits" / "__init__.py"
    for name in IMPORTED_BY_NAME:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin not in (None, "built-in") else None
        if origin is None or origin == own:
            continue
        in_folder = origin.parent == here or (origin.parent.parent == here and origin.parent.name == name)
        if in_folder and (name == "limits" or origin.parent == here):
            whose = "the package's own limits" if name == "limits" else f"{name}, which the package imports"
            print(f"error: {origin} shadows {whose} (python -m puts the current folder {here} first on the module path): "
                  "rename it, or run from another folder", file=sys.stderr, flush=True)
            raise SystemExit(2)
