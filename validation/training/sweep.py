"""Checkpointed sweeps: every finished configuration is written to disk at once, so an interrupted run
(Ctrl-C, SIGTERM, a killed process, a full disk) loses at most the configuration it was training.

A run's checkpoints live in ``<checkpoint_dir>/<experiment>-<fingerprint>/``, one JSON file per
configuration (written atomically: a temporary file renamed into place), with a digest of its record: a record
edited or damaged inside valid JSON is refused on ``--resume``, naming the file. The fingerprint is a hash of
everything that determines the numbers (the experiment, every setting except the run-only ones, the
package and torch versions, dtype and device). Each checkpoint also records the git commit of the code that wrote
it (and whether it had uncommitted changes): ``--resume`` refuses a checkpoint of another commit, naming both,
unless ``--resume-any`` (uncommitted edits are not seen: commit before resuming across a code change). With ``resume`` a finished configuration is read back instead of trained again; without it
every configuration is trained (and its checkpoint rewritten). A complete run's checkpoints are kept:
``--resume`` then redraws the figure and rewrites the JSON without training.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..core.results import to_jsonable, write_json
from ..core.settings import SettingsError

__all__ = ["Configuration", "CheckpointStore", "fingerprint"]


@dataclass(frozen=True)
class Configuration:
    """One unit of a sweep: ``key`` names it (and its checkpoint file), ``params`` are its values."""

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def filename(self) -> str:
        safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in self.key)
        return f"{safe}.json"


def fingerprint(payload: Mapping[str, Any]) -> str:
    """A short, stable hash of a JSON-ready mapping."""
    text = json.dumps(to_jsonable(dict(payload)), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class CheckpointStore:
    """The checkpoints of one run (module docstring); ``folder=None`` keeps nothing."""

    def __init__(self, folder: str | Path | None, experiment: str, stamp: str, resume: bool,
                 code: Mapping[str, Any] | None = None, any_code: bool = False) -> None:
        """``code``: the commit (and dirtiness) of the code running (:func:`validation.core.results.git_commit`),
        written into each checkpoint; on resuming, a checkpoint from another commit is refused naming both, unless
        ``any_code``."""
        self.resume = resume
        self.stamp = stamp
        self.code = None if code is None else dict(code)
        self.any_code = any_code
        self.path: Path | None = None
        if folder is None:
            if resume:
                raise SettingsError("resume", "needs a checkpoint folder (--checkpoint-dir is none)")
            return
        self.path = Path(folder) / f"{experiment}-{stamp}"
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SettingsError("checkpoint_dir", f"cannot create {self.path} ({exc.strerror or exc})") from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise SettingsError("checkpoint_dir", f"{self.path} is not writable")

    def load(self, config: Configuration) -> dict[str, Any] | None:
        """The finished record of ``config`` when resuming and its checkpoint matches, else None."""
        if not self.resume or self.path is None:
            return None
        file = self.path / config.filename
        if not file.exists():
            return None
        if not file.is_file():  # a folder in its place: training again could not write the checkpoint (exit 3)
            raise SettingsError("resume", f"{file}: a folder, not a checkpoint file; delete the folder, or run "
                                          "without --resume")
        try:
            payload = json.loads(file.read_text())
        except (OSError, ValueError):
            return None  # a damaged file is trained again
        # valid JSON of another shape ([], null, a number; a fingerprint or key not a string) was not written by
        # save(): reading on would fail as an internal error, and training again would overwrite the evidence
        if not isinstance(payload, dict):
            raise SettingsError("resume", f"{file}: a damaged checkpoint (it holds {_json_kind(payload)}, not a "
                                          "JSON object); delete the file, or run without --resume")
        for name in ("fingerprint", "key"):
            if not isinstance(payload.get(name), str):
                found = _json_kind(payload[name]) if name in payload else "missing"
                raise SettingsError("resume", f"{file}: a damaged checkpoint (its {name} is {found}, not a string); "
                                              "delete the file, or run without --resume")
        if payload["fingerprint"] != self.stamp or payload["key"] != config.key:
            return None
        if not isinstance(payload.get("record"), dict) or payload.get("digest") != fingerprint(payload["record"]):
            raise SettingsError("resume", f"{file}: a damaged or edited checkpoint (its record does not match the "
                                          "digest written with it); delete the file, or run without --resume")
        written = payload.get("code")
        if not self.any_code and _commit(written) != _commit(self.code):
            raise SettingsError("resume", f"{file} was written by {_describe(written)} and this is "
                                          f"{_describe(self.code)}: other code may give other numbers; run without "
                                          "--resume, or add --resume-any to reuse it")
        return payload["record"]

    def save(self, config: Configuration, record: dict[str, Any], seconds: float) -> None:
        if self.path is not None:
            write_json(self.path / config.filename, {"fingerprint": self.stamp, "key": config.key, "seconds": seconds,
                                                     "code": self.code, "digest": fingerprint(record),
                                                     "record": record})


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (for a message naming a damaged checkpoint's content, never the content:
    it may be long)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return {list: "an array", dict: "an object", str: "a string"}.get(type(value), type(value).__name__)


def _commit(code: Any) -> str | None:
    """The commit of a ``code`` record (None: not known, e.g. written outside a checkout)."""
    return code.get("commit") if isinstance(code, dict) else None


def _describe(code: Any) -> str:
    """The code that wrote a checkpoint, in words."""
    commit = _commit(code)
    if commit is None:
        return "code of no known commit"
    return f"commit {commit[:12]}" + (" (with uncommitted changes)" if code.get("dirty") else "")
