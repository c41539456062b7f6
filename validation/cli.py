"""Shared command-line plumbing: argument types that fail with one clear line, and the entry wrapper.

Every study's ``main`` is wrapped by :func:`run_cli`: a :class:`UsageError` (bad input) prints
``error: <message>`` on stderr and exits with status 2, never a traceback. Argument types below raise
``argparse.ArgumentTypeError`` with the bad value and the allowed range, which argparse turns into the
same one-line error and status 2.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Callable, Sequence

import torch

__all__ = [
    "UsageError", "run_cli", "power_of_two_list", "positive_int", "int_at_least", "nonnegative_float",
    "positive_float", "probability", "dtype_arg", "device_arg", "resolve_device", "HelpFormatter",
    "parse_settings", "add_threads_argument",
]


class UsageError(ValueError):
    """Bad input from the user: reported as one line, exit status 2."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows defaults and keeps the description's line breaks."""


def run_cli(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Run ``main(argv)``; turn :class:`UsageError` and ``ValueError`` from argument checks into
    ``error: …`` on stderr with exit status 2."""
    try:
        return main(argv)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be finite")
    return value


def is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def power_of_two_list(text: str) -> list[int]:
    """Depths as a comma list ``4,8,16`` or a range ``4:1024`` (every power of two in between);
    each a power of two ≥ 1, strictly increasing."""
    text = text.strip()
    if ":" in text:
        low_text, _, high_text = text.partition(":")
        low, high = _int(low_text), _int(high_text)
        for n in (low, high):
            if not is_power_of_two(n):
                raise argparse.ArgumentTypeError(f"depth {n} is not a power of two (allowed: 1, 2, 4, 8, …)")
        if high <= low:
            raise argparse.ArgumentTypeError(f"depth range {text!r} must go from low to high")
        values = []
        n = low
        while n <= high:
            values.append(n)
            n *= 2
    else:
        values = [_int(part) for part in text.split(",") if part.strip()]
    if len(values) < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: at least two depths are needed to fit a rate")
    for n in values:
        if not is_power_of_two(n):
            raise argparse.ArgumentTypeError(f"depth {n} is not a power of two (allowed: 1, 2, 4, 8, …)")
    for a, b in zip(values, values[1:]):
        if b <= a:
            raise argparse.ArgumentTypeError(f"depths must be strictly increasing, got {a} then {b}")
    return values


def int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = _int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is out of range (must be ≥ {minimum})")
        return value

    parse.__name__ = f"integer ≥ {minimum}"
    return parse


positive_int = int_at_least(1)


def nonnegative_float(text: str) -> float:
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (must be ≥ 0)")
    return value


def positive_float(text: str) -> float:
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be > 0")
    return value


def probability(text: str) -> float:
    value = _float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} must lie in (0, 1)")
    return value


_DTYPES = {"float64": torch.float64, "float32": torch.float32}


def dtype_arg(text: str) -> torch.dtype:
    try:
        return _DTYPES[text]
    except KeyError:
        raise argparse.ArgumentTypeError(f"dtype {text!r} unknown (allowed: {', '.join(_DTYPES)})") from None


def device_arg(text: str) -> str:
    if text == "auto" or text == "cpu" or text.startswith("cuda"):
        return text
    raise argparse.ArgumentTypeError(f"device {text!r} unknown (allowed: auto, cpu, cuda, cuda:N)")


def resolve_device(text: str) -> torch.device:
    """``auto`` → cuda if available else cpu; a cuda device that is absent is a :class:`UsageError`."""
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(text)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"device {text!r} requested but CUDA is not available here (use --device cpu)")
    return device


THREADS_HELP = (
    "torch intra-op threads. The per-step tensors of these studies are small batched products, which gain "
    "little from a second thread on an idle 2-core machine (res1 default: 9.4 s with 2 threads, 10.3 s with 1) "
    "and lose 10–500× when the machine is busy; raise it for wide networks or big batches"
)


def add_threads_argument(group: argparse._ActionsContainer) -> None:
    """The shared ``--threads`` flag (default 1); apply it with ``torch.set_num_threads(args.threads)``."""
    group.add_argument("--threads", type=int_at_least(1), default=1, help=THREADS_HELP)


def parse_settings(items: Sequence[str]) -> dict[str, str]:
    """``--set NAME=VALUE`` items as a dict; a malformed item is a :class:`UsageError`."""
    settings: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r} must look like NAME=VALUE")
        settings[key.strip()] = value.strip()
    return settings
