"""One results layer for every study: the result object, its JSON layout and schema, and atomic output files.

Every study's ``run`` returns a :class:`StudyResult`. Its JSON form (``to_dict()``, ``save()``) has one
layout for all studies, checked against the JSON Schema shipped in ``validation/core/schemas/result.schema.json``
(``schema_version`` 2):

* ``study`` — ``convergence``, ``ablation``, ``solvers``, ``weak``, ``regimes``, ``phase``, ``figures`` or
  ``training``;
* ``schema_version`` — 2 (since 0.4: a verdict may be ``INCONCLUSIVE``);
* ``settings`` — every setting of the run, resolved (``run(model, **settings)`` repeats it);
* ``result`` — the study's numbers, always with ``verdict`` (``PASS``, ``FAIL`` or ``INCONCLUSIVE``); every rate fit has
  one form (:meth:`validation.core.rate_fit.RateFit.to_dict`);
* ``run`` — provenance (:class:`RunInfo`): seed, dtype of each part, device, threads, the command as typed
  (``null`` from the Python API), wall time, the package version and git commit (installed from a wheel, outside
  any checkout: the commit it was built from, ``build_commit``), library versions.

NaN and ±inf have no JSON form: they are written as ``null``, and every place where one can occur also
carries a count or flag saying so (never a silent number).

Files are written atomically and as a set (:func:`write_outputs`): each is rendered to a temporary file
in its own folder, and only when all are ready are they renamed into place, with SIGINT and SIGTERM held
back during the renames. An interrupted or failed run leaves the previous set as it was.
"""

from __future__ import annotations

import abc
import csv
import dataclasses
import datetime as _dt
import errno
import fcntl
import io
import time
import json
import math
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable

import numpy as np
import torch

from .checks import EXIT_STATUS
from .runtime import utc_now
from .settings import UsageError, settings_dict

__all__ = [
    "SCHEMA_VERSION", "RunInfo", "StudyResult", "to_jsonable", "schema", "validate", "OutputPlan", "plan_outputs",
    "write_outputs", "FigureNotWritten", "write_text", "write_json", "save_figure", "FIGURE_SUFFIXES", "utc_now", "rows_from_columns", "git_commit",
    "build_commit", "long_rows", "LONG_COLUMNS", "LONG_CSV_HELP", "csv_columns",
]

#: 2 since 0.4: a verdict may be INCONCLUSIVE, and verdicts judged with a margin carry their check
SCHEMA_VERSION = 2
_PACKAGES = ("torch", "torchsde", "torchdiffeq", "numpy", "scipy", "matplotlib")
#: the figure formats the package writes (matplotlib's Agg-backed vector and raster formats)
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


# ------------------------------------------------------------------------------------------------ provenance
def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> dict[str, Any] | None:
    """The commit of the checkout the package runs from (and whether it has uncommitted changes), or None — where
    this file is not tracked by the git repository around it (an installed package; a virtual environment inside
    some other repository) or git is missing. Found from this module's own folder, wherever it sits in the package."""
    here = Path(__file__).resolve()
    try:
        tracked = subprocess.run(["git", "-C", str(here.parent), "ls-files", "--error-unmatch", here.name],
                                 capture_output=True, text=True, timeout=5)
        if tracked.returncode != 0:
            return None
        root = subprocess.run(["git", "-C", str(here.parent), "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, timeout=5, check=True).stdout.strip()
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip() != ""
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": dirty}


def build_commit() -> dict[str, Any] | None:
    """The commit the installed package was built from (its git hash, and whether that tree had uncommitted changes),
    as setuptools-scm wrote it into ``limits/_version.py`` at build time; None where it was built without git (a copy
    of the sources) or never built. Issue 67: a wheel installed outside any checkout has no git for
    :func:`git_commit` to read, so its result files named no code at all, and its version said "0.5.0"."""
    import limits

    node = getattr(limits, "__build_commit__", None)
    if not isinstance(node, str) or not node:
        return None
    # setuptools-scm writes git's node as in the version's local part: "g" and the hash
    commit = node[1:] if re.fullmatch(r"g[0-9a-f]{4,40}", node) else node
    return {"commit": commit, "dirty": bool(getattr(limits, "__build_dirty__", False))}


@dataclass(frozen=True)
class RunInfo:
    """Where a result came from: enough to reproduce it.

    Attributes:
        seed: the seed of every random draw.
        dtype: the dtype of the study's main computation.
        dtypes: the dtype of each part where they differ (e.g. the weak study's two parts).
        device: the device the run used (resolved: ``auto`` is recorded as what it chose).
        threads: torch's intra-op threads during the run.
        command: the command as typed (``python -m validation.… …``), or None for a Python API call.
        wall_time_s: the study's wall time (computing, not writing files).
        started_utc: when the run started.
        package_version: the version of this package; git: its commit and dirtiness when run from a checkout.
        versions: Python and the numerical libraries.
        platform: the operating system and processor.
        build_commit: where there is no checkout (an installed wheel), the commit the package was built from
            (:func:`build_commit`); None in a checkout, where ``git`` names the code, and then left out of
            :meth:`to_dict`, so that a checkout's result files record what they recorded before.
    """

    seed: int
    dtype: str
    device: str
    dtypes: dict[str, str]
    threads: int
    command: str | None
    wall_time_s: float
    started_utc: str
    package_version: str
    git: dict[str, Any] | None
    versions: dict[str, str | None]
    platform: str
    build_commit: dict[str, Any] | None = None

    @classmethod
    def capture(cls, *, seed: int, dtype: str, device: torch.device | str, started: _dt.datetime,
                wall_time_s: float, command: str | None = None, dtypes: dict[str, str] | None = None) -> "RunInfo":
        from limits import __version__

        # the build's commit only where no checkout names the code: in a checkout the generated file dates from the
        # last (editable) install and may name an older commit than the one running
        git = git_commit()
        return cls(
            seed=int(seed), dtype=str(dtype), device=str(device), dtypes=dict(dtypes or {"all": str(dtype)}),
            threads=torch.get_num_threads(), command=command, wall_time_s=float(wall_time_s),
            started_utc=started.isoformat(timespec="seconds"), package_version=__version__, git=git,
            versions={"python": platform.python_version(), **{name: _version(name) for name in _PACKAGES}},
            platform=platform.platform(), build_commit=build_commit() if git is None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        if data["build_commit"] is None:
            del data["build_commit"]
        return data


# ------------------------------------------------------------------------------------------------ JSON
def to_jsonable(value: Any) -> Any:
    """Tensors, numpy arrays and scalars, tuples, paths and dtypes as JSON values; NaN/inf as None."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, torch.Tensor):
        return to_jsonable(value.detach().cpu().tolist())
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, Path):
        return str(value)
    return value


def schema() -> dict[str, Any]:
    """The JSON Schema every result file follows."""
    text = resources.files("validation.core").joinpath("schemas/result.schema.json").read_text()
    return json.loads(text)


def validate(payload: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` if ``payload`` does not follow the shipped schema."""
    import jsonschema

    jsonschema.validate(payload, schema(), cls=jsonschema.Draft202012Validator)


# ------------------------------------------------------------------------------------------------ result
@dataclass
class StudyResult(abc.ABC):
    """What a study's ``run`` returns.

    Attributes:
        settings: the resolved settings of the run.
        run_info: provenance (:class:`RunInfo`).

    Subclasses hold the study's numbers and implement :attr:`verdict`, :meth:`summary` (the ``result``
    section of the JSON), :meth:`table` (the console report), :meth:`plot` and :meth:`csv_rows` (the study's main
    table, one row per depth, cell or number, read from the numbers :meth:`summary` reports; a catalogue study's is
    the long format of :func:`long_rows`), which :meth:`to_csv` writes and :meth:`to_frame` returns as a pandas
    DataFrame.
    """

    settings: Any
    run_info: RunInfo = field(repr=False)

    study: ClassVar[str]

    @property
    @abc.abstractmethod
    def verdict(self) -> str:
        """``"PASS"``, ``"FAIL"`` or ``"INCONCLUSIVE"`` (:mod:`validation.core.checks`)."""

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    def __repr__(self) -> str:
        """One line — the study, the verdict and where the rest is — not every number of the run (a study's result
        holds thousands: typing ``result`` at a prompt printed kilobytes). Subclasses are declared with
        ``@dataclass(repr=False)`` to keep it."""
        info = self.run_info
        return (f"<{type(self).__name__} {self.study}: {self.verdict}; seed {info.seed}, {info.dtype} on {info.device}, "
                f"{info.wall_time_s:.1f} s — print(result.table()) for the report, result.to_dict() for every number>")

    def _repr_html_(self) -> str:
        """Jupyter's view of a result: the report as the command line prints it (the one-line ``repr`` stays the
        plain-text view)."""
        import html

        return f"<pre>{html.escape(self.table())}</pre>"

    @property
    def exit_code(self) -> int:
        """The command line's exit status for this result: 0 PASS, 1 FAIL, 4 INCONCLUSIVE."""
        return EXIT_STATUS[self.verdict]

    @abc.abstractmethod
    def summary(self) -> dict[str, Any]:
        """The ``result`` section of the JSON (numbers, fits, checks and the verdict)."""

    @abc.abstractmethod
    def table(self) -> str:
        """The console report, as printed by the command line."""

    @abc.abstractmethod
    def plot(self, ax: Any = None) -> Any:
        """Draw the study's figure and return the matplotlib ``Figure``: on ``ax`` (an Axes, or a sequence
        of Axes for a figure with several panels) or, when ``ax`` is None, on a new figure."""

    def csv_rows(self) -> list[dict[str, Any]] | None:
        """The study's main table as rows for CSV, every row with the same keys (the columns); the subclass's
        docstring names them. None: this study writes no CSV (every study of the package writes one)."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """The result in the one JSON layout (see the module docstring); JSON-ready."""
        return to_jsonable({
            "study": self.study,
            "schema_version": SCHEMA_VERSION,
            "settings": settings_dict(self.settings),
            "result": {**self.summary(), "verdict": self.verdict},
            "run": self.run_info.to_dict(),
        })

    def to_json(self) -> str:
        payload = self.to_dict()
        validate(payload)
        return json.dumps(payload, indent=2, allow_nan=False) + "\n"

    def _table_rows(self) -> list[dict[str, Any]]:
        rows = self.csv_rows()
        if rows is None:
            raise ValueError(f"the {self.study} study has no table to write as CSV (its result class defines no "
                             "csv_rows)")
        return list(rows)

    def to_csv(self) -> str:
        """The table of :meth:`csv_rows` as CSV text: a header of the columns, then one line per row; a missing or
        non-finite number (None, NaN, ±inf: ``null`` in the JSON) is an empty cell."""
        rows = self._table_rows()
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=csv_columns(rows), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(v) for k, v in row.items()})
        return buffer.getvalue()

    def to_frame(self) -> Any:
        """The table of :meth:`csv_rows` as a pandas ``DataFrame``: the CSV's columns in its order, one row per CSV
        row (a missing number is NaN or None; a non-finite one, an empty cell in the CSV, keeps its value).

        pandas is not a dependency of the package: this raises ImportError (saying ``pip install pandas``) where it
        is not installed."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("StudyResult.to_frame() needs pandas, which this package does not install: "
                              "pip install pandas") from exc
        rows = self._table_rows()
        return pd.DataFrame(rows, columns=csv_columns(rows))

    def save(self, path: str | Path) -> Path:
        """Write the JSON (validated against the schema) atomically; returns the path."""
        return write_outputs(self, plan_outputs({"json": path}))[0]

    def save_csv(self, path: str | Path) -> Path:
        return write_outputs(self, plan_outputs({"csv": path}))[0]

    def save_plot(self, path: str | Path) -> Path:
        """Write the figure (format from the suffix: .png, .pdf or .svg; none: .png) atomically."""
        return write_outputs(self, plan_outputs({"plot": path}))[0]


# ------------------------------------------------------------------------------------------------ files
@dataclass(frozen=True)
class OutputPlan:
    """The checked output paths of a run, by kind (``json``, ``csv``, ``plot``)."""

    paths: dict[str, Path]


#: what the temporary file of an output adds to its name: ``.NAME.`` + 8 random characters + ``.part``
_STAGE_NAME_EXTRA = len(".") + len(".") + 8 + len(".part")


def _check_writable(kind: str, path: Path) -> None:
    try:
        _check_writable_path(kind, path)
    except OSError as exc:  # a path the system cannot look up (pathlib answers only "does not exist" itself)
        if exc.errno == errno.ENAMETOOLONG:
            raise UsageError(f"--{kind} {path}: a name in it is too long for the file system ({exc.strerror}); give a "
                             "shorter one") from None
        raise UsageError(f"--{kind} {path}: cannot be looked up ({exc.strerror or exc})") from None


def _check_writable_path(kind: str, path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"--{kind} {path}: is a folder; give a file name")
    if not parent.exists():
        raise UsageError(f"--{kind} {path}: the folder {parent} does not exist (create it first)")
    if not parent.is_dir():
        raise UsageError(f"--{kind} {path}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--{kind} {path}: the folder {parent} is not writable")
    if path.exists() and not path.is_file():
        raise UsageError(f"--{kind} {path}: exists and is not a regular file (it would be replaced); give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"--{kind} {path}: the file exists and is not writable")
    # os.access trusts the permission bits (always "writable" for root, even in /proc or on a read-only
    # mount): create and remove the kind of temporary file the run will write, so the check is the real one
    try:
        probe = tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".part", delete=False)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # the name fits, but not that of the temporary file written first
            raise UsageError(f"--{kind} {path}: the file name is too long: the run writes it first as "
                             f".{path.name}.XXXXXXXX.part, {_STAGE_NAME_EXTRA} characters longer, and the file system "
                             f"refuses that name ({exc.strerror}); give a shorter one") from None
        raise UsageError(f"--{kind} {path}: cannot create a file in the folder {parent} "
                         f"({exc.strerror or exc})") from None
    probe.close()
    with _suppress_oserror():
        os.unlink(probe.name)


def _check_plotting_backend() -> None:
    """Refuse a ``MPLBACKEND`` that matplotlib does not know before the run, when a figure is asked for: matplotlib
    reads it on its import and raises ValueError, which came after the whole study as an internal error (exit 3). The
    figures are drawn on Agg canvases whatever the backend; the check is the import itself (which --plot needs
    anyway), made once (an imported matplotlib has read it)."""
    value = os.environ.get("MPLBACKEND")
    if not value or "matplotlib" in sys.modules:
        return
    try:
        import matplotlib  # noqa: F401
    except ValueError:
        raise UsageError(f"MPLBACKEND={value!r} is not a backend matplotlib knows, and --plot needs matplotlib: unset "
                         "MPLBACKEND or set it to agg") from None


def plan_outputs(paths: dict[str, str | Path | None]) -> OutputPlan:
    """Check the output paths before anything is computed: the folder exists and is writable, and a figure
    has a suffix matplotlib writes (none: ``.png`` is added) and a ``MPLBACKEND`` matplotlib accepts. Raises
    ``UsageError`` (exit status 2)."""

    checked: dict[str, Path] = {}
    for kind, value in paths.items():
        if value is None:
            continue
        path = Path(value)
        if kind == "plot":
            if path.suffix == "":
                path = path.with_name(path.name + ".png")
            elif path.suffix.lower() not in FIGURE_SUFFIXES:
                raise UsageError(f"--plot {path}: the suffix {path.suffix!r} is not a figure format written here "
                                 f"(allowed: {', '.join(FIGURE_SUFFIXES)})")
        _check_writable(kind, path)
        checked[kind] = path
    if "plot" in checked:
        _check_plotting_backend()
    resolved = [p.resolve() for p in checked.values()]
    if len(set(resolved)) != len(resolved):
        raise UsageError("two outputs name the same file: " + ", ".join(f"--{k} {p}" for k, p in checked.items()))
    return OutputPlan(checked)


def _render(result: StudyResult, kind: str, path: Path, handle) -> None:
    if kind == "json":
        handle.write(result.to_json().encode())
    elif kind == "csv":
        handle.write(result.to_csv().encode())
    elif kind == "plot":
        result.plot().savefig(handle, format=path.suffix.lstrip(".").lower(), dpi=150, bbox_inches="tight")
    else:  # pragma: no cover - plan_outputs only makes the three kinds
        raise ValueError(kind)


#: a temporary file this young may be another process's that has not locked it yet: never removed as stale
STALE_AFTER_SECONDS = 5.0


def _remove_stale_parts(path: Path) -> None:
    """Remove the temporary files (``.NAME.XXXX.part``) that an earlier writer of ``path`` left behind when it was
    killed (SIGKILL, a power cut: no handler runs). A live writer holds an exclusive ``flock`` on its file for as long
    as it writes (:func:`_stage`), and the kernel drops the lock when the process dies; so a file that can be locked,
    and is older than :data:`STALE_AFTER_SECONDS` (not one being created this instant), has no writer left."""
    folder = path.parent if str(path.parent) else Path(".")
    now = time.time()
    for candidate in folder.glob(f".{path.name}.*.part"):
        with _suppress_oserror():
            if now - candidate.stat().st_mtime < STALE_AFTER_SECONDS:
                continue
            with open(candidate, "rb") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live writer's
                os.unlink(candidate)


def _stage(path: Path, fill: Callable[[Any], None]) -> tuple[str, int]:
    """Write a complete temporary file next to ``path`` with ``fill(binary handle)``; returns its name and a
    descriptor holding an exclusive lock on it (so that :func:`_remove_stale_parts` never takes a live writer's file
    for a dead one's). The caller renames the file into place, or removes it, then closes the descriptor. Stale
    temporaries of ``path`` are removed first."""
    _remove_stale_parts(path)
    handle = tempfile.NamedTemporaryFile(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.",
                                         suffix=".part", delete=False)
    lock = -1
    try:
        lock = os.open(handle.name, os.O_RDONLY)
        fcntl.flock(lock, fcntl.LOCK_EX)
        with handle:
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o644)
    except BaseException:
        with _suppress_oserror():
            os.unlink(handle.name)
        if lock >= 0:
            os.close(lock)
        raise
    return handle.name, lock


def _commit(staged: list[tuple[Callable[[], tuple[str, int]], Path]]) -> list[Path]:
    """Stage every file, then rename them all into place with SIGINT/SIGTERM blocked; on any failure the
    temporary files are removed and the old files stay. The temporaries stay locked until they are renamed or
    removed."""
    done: list[tuple[str, int, Path]] = []
    try:
        for stage, path in staged:
            done.append((*stage(), path))
        with _signals_blocked():
            for temporary, _, path in done:
                os.replace(temporary, path)
        return [path for _, _, path in done]
    except BaseException:
        for temporary, _, _ in done:
            with _suppress_oserror():
                os.unlink(temporary)
        raise
    finally:
        for _, lock, _ in done:
            with _suppress_oserror():
                os.close(lock)


class FigureNotWritten(Exception):
    """The figure failed after the data files were written (:func:`write_outputs`): ``written`` names those, kept;
    the cause is chained."""

    def __init__(self, path: Path, written: list[Path], cause: BaseException) -> None:
        super().__init__(f"the figure {path} could not be written ({type(cause).__name__}: {cause}); the data files "
                         f"were written: {', '.join(map(str, written))}")
        self.path, self.written = path, written


def write_outputs(result: StudyResult, plan: OutputPlan) -> list[Path]:
    """Write every planned output: the data files (JSON, CSV) as a set — both rendered to temporary files first, and
    only when both are complete renamed into place, with SIGINT/SIGTERM blocked during the renames — then the
    figure, alone in the same way. The figure comes last so that a failure drawing it (a matplotlib error) cannot
    cost the run's numbers: it raises :class:`FigureNotWritten` naming the data files written. Returns the paths
    written."""

    def staged(kinds: Iterable[str]) -> list[tuple[Callable[[], tuple[str, int]], Path]]:
        return [((lambda kind=kind, path=path: _stage(path, lambda h: _render(result, kind, path, h))), path)
                for kind, path in plan.paths.items() if kind in kinds]

    written = _commit(staged([kind for kind in plan.paths if kind != "plot"]))
    try:
        return written + _commit(staged(["plot"]))
    except Exception as exc:
        if not written:
            raise
        raise FigureNotWritten(plan.paths["plot"], written, exc) from exc


def save_figure(figure: Any, path: str | Path, dpi: int = 150) -> Path:
    """Save a matplotlib figure atomically (format from the suffix: .png, .pdf or .svg)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    return _commit([(lambda: _stage(path, lambda h: figure.savefig(h, format=fmt, dpi=dpi, bbox_inches="tight")),
                     path)])[0]


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) atomically, as the study outputs are: a temporary file next to ``path`` — the kind
    :func:`plan_outputs` checked could be created — renamed into place (for a page or file that is not a study
    result, e.g. the explorer's)."""
    path = Path(path)
    return _commit([(lambda: _stage(path, lambda h: h.write(text.encode("utf-8"))), path)])[0]


def write_json(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write any JSON-ready ``payload`` (tensors, arrays and NaN handled by :func:`to_jsonable`) atomically —
    for files that are not study results, e.g. the benchmarks'."""
    path = Path(path)
    text = json.dumps(to_jsonable(payload), indent=2, allow_nan=False) + "\n"
    return _commit([(lambda: _stage(path, lambda h: h.write(text.encode())), path)])[0]


class _suppress_oserror:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, OSError)


class _signals_blocked:
    """Hold SIGINT and SIGTERM back for a few renames (they are delivered right after)."""

    def __enter__(self):
        self.previous = None
        if hasattr(signal, "pthread_sigmask"):
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)
        return False


def _csv_cell(value: Any) -> Any:
    """A CSV cell: a missing or non-finite number is empty; numpy scalars as Python numbers."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return value


def csv_columns(rows: Iterable[dict[str, Any]]) -> list[str]:
    """The columns of a table's rows: every key, in the order of first appearance."""
    return list(dict.fromkeys(key for row in rows for key in row))


#: the columns of the long format (:func:`long_rows`) of a catalogue study's CSV
LONG_COLUMNS = ("entry", "section", "record", "quantity", "index", "value")
#: the ``--help`` of a catalogue study's ``--csv`` (the long format)
LONG_CSV_HELP = ("write every number of the result as CSV to this file, one row each, in the columns "
                 + ", ".join(LONG_COLUMNS))
#: the keys whose values name an element of a list of records (``per_beta[0](beta=0.25)``), in this order
_LABEL_KEYS = ("check", "quantity", "bound_kind", "dataset", "activation", "init", "hurst", "beta", "gamma", "kappa",
               "hidden", "width", "depth", "delta")


def long_rows(entry: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every number of a ``result`` section, one row each: the CSV of a catalogue study (regimes presets, training
    experiments, figures), whose entries' results differ in shape. ``result`` is made JSON-ready first
    (:func:`to_jsonable`), so each number is the one the JSON holds (NaN and ±inf: None, an empty cell).

    Columns (:data:`LONG_COLUMNS`):

    * ``entry`` — the preset, experiment or figure;
    * ``section`` — the top-level key of the JSON's ``result`` holding the number (``per_beta``, ``groups``,
      ``checks``, …);
    * ``record`` — the path below the section to the object holding it, ``/``-separated: a key, or a list
      position ``[i]`` followed, for an element that is an object, by its naming fields, e.g.
      ``[0](beta=0.25)/r_h``; empty for a number directly in the section;
    * ``quantity`` — the number's key (``slope``, ``median``, …); a list within a list adds the outer position
      (``band[1]``);
    * ``index`` — the position in a list of numbers (``median`` per depth), empty for a single number;
    * ``value`` — the number (None where the JSON has ``null``).

    Text, flags and verdicts are left out (the JSON has them).
    """
    rows: list[dict[str, Any]] = []

    def label(position: int, node: dict[str, Any]) -> str:
        names = [f"{key}={node[key]}" for key in _LABEL_KEYS
                 if key in node and isinstance(node[key], (str, int, float)) and not isinstance(node[key], bool)]
        return f"[{position}]" + (f"({', '.join(names)})" if names else "")

    def visit(node: Any, section: str, record: tuple[str, ...], quantity: str, index: int | None) -> None:
        if isinstance(node, dict):
            if index is not None:
                record = record + ((quantity if quantity != section or record else "") + label(index, node),)
            elif quantity != section or record:
                record = record + (quantity,)
            for key, value in node.items():
                visit(value, section, record, str(key), None)
        elif isinstance(node, list):
            name = quantity if index is None else f"{quantity}[{index}]"
            for position, item in enumerate(node):
                visit(item, section, record, name, position)
        elif node is None or (isinstance(node, (int, float)) and not isinstance(node, bool)):
            rows.append({"entry": entry, "section": section, "record": "/".join(record), "quantity": quantity,
                         "index": index, "value": node})

    for key, value in to_jsonable(result).items():
        visit(value, str(key), (), str(key), None)
    return rows


def rows_from_columns(columns: dict[str, Iterable[Any]]) -> list[dict[str, Any]]:
    """CSV rows from equal-length columns (shorter columns are padded with None)."""
    lists = {k: list(v) for k, v in columns.items()}
    length = max(len(v) for v in lists.values())
    return [{k: (v[i] if i < len(v) else None) for k, v in lists.items()} for i in range(length)]
