"""Ctrl-C and SIGTERM at any moment of a command line: the same line and exit status whether they come during the
imports, the start-up, the run or the teardown — never a traceback.

A command line's run is guarded by :func:`validation.core.cli.execute` (Ctrl-C unwinds as ``KeyboardInterrupt``,
SIGTERM as :class:`~validation.core.cli.Terminated`; nothing is written, and the outputs of an earlier run are left
as they were). Before it, ``python -m validation.<study>`` spends seconds importing torch, where no handler of the
package ran yet and Python's default printed a traceback; after it, the interpreter's teardown (a fraction of a
second). This module covers the two ends:

* :func:`guard_start_up`, called by ``validation/__init__.py`` when the package is imported by ``python -m`` (the
  first thing such a process imports of ours): a signal ends the process with ``interrupted: no output was
  written`` (status 130) or ``terminated: …`` (143) at once (``os._exit``: nothing has been opened for writing, and
  an exception raised in the handler could surface inside one of torch's C++ import hooks — pybind11 turns it into
  a C++ exception and the process aborts with ``terminate called …``, seen once in four runs of
  ``tests/test_interruption.py`` under load);
* :func:`after_the_run`, called once the run's outputs are written: the two signals are ignored for the
  teardown, which then ends with the run's own status.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

__all__ = ["guard_start_up", "after_the_run", "EXIT_BY_SIGNAL"]

#: what each signal ends a command line with: its word and exit status (128 + the signal's number)
EXIT_BY_SIGNAL: dict[int, tuple[str, int]] = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated", 143)}


def _before_the_run(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001
    word, code = EXIT_BY_SIGNAL[signum]
    print(f"{word}: no output was written", file=sys.stderr, flush=True)
    os._exit(code)


def _set(handler: object) -> None:
    try:
        for signum in EXIT_BY_SIGNAL:
            signal.signal(signum, handler)
    except ValueError:  # not the main thread: signals are the main thread's
        pass


def guard_start_up() -> None:
    """Until the run installs its own handling: a signal ends the process with its line and status."""
    _set(_before_the_run)


def after_the_run() -> None:
    """Once the run's outputs are written: ignore the two signals for the interpreter's teardown."""
    _set(signal.SIG_IGN)
