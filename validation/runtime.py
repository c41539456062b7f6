"""What a run needs from the machine: torch's thread count for the duration of a run, the memory available,
the time."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from typing import Iterator

import torch

__all__ = ["threads", "flush_denormal", "reuse_freed_memory", "available_memory_mb", "utc_now"]


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


def reuse_freed_memory() -> bool:
    """Ask the C allocator (glibc) to keep freed blocks of up to 1 GiB for reuse instead of unmapping them; returns
    whether it applied (False off glibc).

    glibc serves a large allocation with a fresh ``mmap`` and unmaps it when freed, so every large tensor torch
    allocates again — a block of Brownian increments, a cast, a chunk of weights — pays a page fault per 4 KiB
    page on first touch. Measured on 2 cores: res-1's study with float32 noise 5.3 s → 3.9 s, float64 10.4 s →
    9.4 s. The numbers computed do not change (only where memory comes from); the process keeps its peak memory
    instead of returning it between allocations. The command lines call this once at start, and each worker
    process does; from Python, call it yourself.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30)) and bool(libc.mallopt(m_trim_threshold, 1 << 30))
    except (OSError, AttributeError):
        return False


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
