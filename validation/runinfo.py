"""What every result file records: seed, versions, device, dtype, command line, time.

:func:`run_metadata` returns a JSON-ready dict; :func:`write_json` writes a result with it, turning
tensors, numpy scalars and non-finite floats into JSON (NaN/inf become ``null`` with the fact kept in
the data, never a silent number).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = ["run_metadata", "write_json", "to_jsonable"]

_PACKAGES = ("torch", "torchsde", "torchdiffeq", "numpy", "scipy", "matplotlib")


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def run_metadata(seed: int, dtype: torch.dtype, device: torch.device | str) -> dict[str, Any]:
    """Seed, dtype, device, versions of Python and the numerical packages, command line and time."""
    from limits import __version__

    return {
        "seed": int(seed),
        "dtype": str(dtype).replace("torch.", ""),
        "device": str(device),
        "versions": {
            "python": platform.python_version(),
            "limits": __version__,
            **{name: _version(name) for name in _PACKAGES},
        },
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        "command": " ".join(sys.argv),
        "time_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def to_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, torch.Tensor):
        return to_jsonable(value.detach().cpu().tolist())
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, Path):
        return str(value)
    return value


def write_json(path: str | Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` as indented JSON (parent folders created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_jsonable(payload), indent=2, allow_nan=False) + "\n")
