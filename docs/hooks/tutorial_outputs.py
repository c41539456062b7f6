"""What each tutorial prints, recorded from a run at full size, so that its page can show it.

A tutorial (``docs/tutorial/<stem>.py``, jupytext percent format) runs cell by cell in one namespace
(:func:`run_cells`); the text each code cell prints goes into ``docs/tutorial/outputs/<stem>.json``
(:func:`record`) together with a fingerprint of the cell's code. ``docs/make_figures.py`` records every tutorial
at full size (``python docs/make_figures.py --only tutorial``); the page (``docs/hooks/notebooks.py``) shows a cell's
recorded output under its code only while the fingerprint matches — a cell edited since the recording makes
the build fail and names the command that re-records. The test suite checks the same at the test size and,
marked ``slow``, that a full-size run prints the recorded text again (wall times aside).

This module imports nothing from mkdocs or the package: the figure command, the build hook and the tests share it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

#: where the recorded outputs live, relative to docs/
OUTPUTS_DIR = Path("tutorial") / "outputs"
#: the command that records them
RECORD_COMMAND = "python docs/make_figures.py --only tutorial"
#: wall times differ from run to run: "time 12.3 s", "(0.42 s)", "in 3 s" — masked when two runs are compared
_SECONDS = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)? ?(?:ms|s)\b")


def fingerprint(source: str) -> str:
    """A short hash of a code cell's text (surrounding blank lines ignored)."""
    return hashlib.sha256(source.strip("\n").encode()).hexdigest()[:16]


def code_cells(text: str) -> list[str]:
    """The code cells of a percent-format tutorial, in order."""
    import jupytext

    return [cell.source for cell in jupytext.reads(text, fmt="py:percent").cells if cell.cell_type == "code"]


class _Tee(io.TextIOBase):
    """Writes to the real stdout and keeps a copy."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.stream.write(text)
        return self.copy.write(text)

    def flush(self) -> None:
        self.stream.flush()


def run_cells(path: Path, quick: bool) -> tuple[dict[str, Any], list[str]]:
    """Run the tutorial at ``path`` cell by cell (``TUTORIAL_QUICK`` set for the run: the test size when ``quick``)
    and return its namespace and what each code cell printed (echoed as it runs)."""
    previous = os.environ.get("TUTORIAL_QUICK")
    os.environ["TUTORIAL_QUICK"] = "1" if quick else "0"
    namespace: dict[str, Any] = {"__name__": "__tutorial__", "__file__": str(path)}
    printed = []
    try:
        for index, source in enumerate(code_cells(path.read_text())):
            tee = _Tee(sys.stdout)
            with contextlib.redirect_stdout(tee):
                exec(compile(source, f"{path.name} (code cell {index + 1})", "exec"), namespace)
            printed.append(tee.copy.getvalue())
    finally:
        if previous is None:
            os.environ.pop("TUTORIAL_QUICK", None)
        else:
            os.environ["TUTORIAL_QUICK"] = previous
    return namespace, printed


def record(path: Path, printed: list[str], docs_dir: Path, provenance: dict[str, Any]) -> Path:
    """Write what the tutorial at ``path`` printed (one entry per code cell) to ``docs_dir/tutorial/outputs``."""
    cells = code_cells(path.read_text())
    if len(cells) != len(printed):
        raise ValueError(f"{path.name}: {len(cells)} code cells, {len(printed)} outputs")
    payload = {"tutorial": path.name, "recorded_with": RECORD_COMMAND, **provenance,
               "cells": [{"code": fingerprint(source), "stdout": text} for source, text in zip(cells, printed)]}
    target = docs_dir / OUTPUTS_DIR / f"{path.stem}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_suffix(".json.partial")
    staged.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    staged.replace(target)      # whole or not at all
    return target


def recorded(stem: str, docs_dir: Path) -> dict[str, Any] | None:
    """The recorded outputs of tutorial ``stem`` (None when none were recorded)."""
    target = docs_dir / OUTPUTS_DIR / f"{stem}.json"
    return json.loads(target.read_text()) if target.exists() else None


def stale_cells(cells: list[str], outputs: dict[str, Any]) -> list[int]:
    """The 1-based numbers of the code cells whose code differs from the recording's (all, if the count differs)."""
    if len(cells) != len(outputs["cells"]):
        return list(range(1, len(cells) + 1))
    return [i + 1 for i, (source, entry) in enumerate(zip(cells, outputs["cells"]))
            if fingerprint(source) != entry["code"]]


def without_wall_times(text: str) -> str:
    """``text`` with every wall time ("12.3 s", "40 ms") masked, for comparing two runs."""
    return _SECONDS.sub("… s", text)
