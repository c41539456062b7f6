"""What a command line sets before torch is imported: torch reads some of its allocator's settings from the
environment once, at its first allocation, so they must be in place before ``import torch``.

:func:`prepare_environment` is called by ``validation/__init__.py`` when the package is imported by ``python -m``
(the first thing such a process imports of ours), with the study's module name from the command line.
"""

from __future__ import annotations

import os
import sys

__all__ = ["prepare_environment", "HUGE_PAGE_STUDIES", "study_of_command_line"]

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
