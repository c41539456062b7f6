"""What a run needs from the machine: torch's thread count for the duration of a run, the memory available,
the time."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from typing import Iterator

import torch

__all__ = ["threads", "flush_denormal", "available_memory_mb", "utc_now"]


@contextlib.contextmanager
def threads(count: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``count`` for the block and restored after (None: unchanged)."""
    if count is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def flush_denormal() -> Iterator[None]:
    """Subnormal floats flushed to zero on the CPU for the block (restored after; a no-op where unsupported).

    A saturated tanh's derivative 1 − tanh² underflows to subnormal numbers, which x86 CPUs compute one to
    two orders of magnitude slower than normal ones; flushing them changes only values below 1.2e-38
    (float32) or 2.2e-308 (float64).
    """
    supported = torch.set_flush_denormal(True)
    try:
        yield
    finally:
        if supported:
            torch.set_flush_denormal(False)


def available_memory_mb() -> float:
    """MemAvailable from /proc/meminfo (Linux), else the physical memory, in MiB."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)
