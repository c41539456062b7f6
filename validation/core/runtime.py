"""What a run needs from the machine: torch's thread count for the duration of a run, the memory available,
the time."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from typing import Iterator

import torch

__all__ = ["threads", "flush_denormal", "reuse_freed_memory", "large_blocks_unmapped", "resident_mb", "available_memory_mb", "memory_limits_mb", "utc_now"]


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


#: glibc's ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
#: the mmap threshold :func:`reuse_freed_memory` sets (every block up to 1 GiB from the reused heap)
_REUSE_THRESHOLD = 1 << 30
#: glibc's initial mmap threshold (128 KiB), restored after :func:`large_blocks_unmapped` when nothing set another
_GLIBC_THRESHOLD = 128 << 10
#: the mmap threshold this process last set through this module (None: glibc's own), so that a block can restore it
_threshold_set: list[int | None] = [None]


def _mallopt(parameter: int, value: int) -> bool:
    """glibc's ``mallopt(parameter, value)``; False off glibc."""
    try:
        import ctypes

        return bool(ctypes.CDLL("libc.so.6").mallopt(parameter, value))
    except (OSError, AttributeError):
        return False


def reuse_freed_memory() -> bool:
    """Ask the C allocator (glibc) to keep freed blocks of up to 1 GiB for reuse instead of unmapping them; returns
    whether it applied (False off glibc).

    glibc serves a large allocation with a fresh ``mmap`` and unmaps it when freed, so every large tensor torch
    allocates again — a block of Brownian increments, a cast, a chunk of weights — pays a page fault per 4 KiB
    page on first touch. Measured on 2 cores: res-1's study with float32 noise 5.3 s → 3.9 s, float64 10.4 s →
    9.4 s. The numbers computed do not change (only where memory comes from); the process keeps its peak memory
    instead of returning it between allocations. The command lines call this once at start, and each worker
    process does; from Python, call it yourself.

    It also keeps one heap for every thread (``M_ARENA_MAX`` = 1): glibc gives each new thread a heap of its own,
    which keeps its own freed blocks beside the main one's. Measured with the training networks stepped on two
    threads (:class:`validation.training.lockstep.SideBySide`), ``marion2024-fig1``'s peak: 3.4 GB → 2.1 GB, the
    serial run's, and no slower.
    """
    applied = (_mallopt(_M_MMAP_THRESHOLD, _REUSE_THRESHOLD) and _mallopt(_M_TRIM_THRESHOLD, _REUSE_THRESHOLD)
               and _mallopt(_M_ARENA_MAX, 1))
    if applied:
        _threshold_set[0] = _REUSE_THRESHOLD
    return applied


@contextlib.contextmanager
def large_blocks_unmapped(threshold_mb: float = 4.0) -> Iterator[bool]:
    """Within the block, glibc serves every allocation of ``threshold_mb`` or more with a mapping of its own and
    unmaps it when freed (``M_MMAP_THRESHOLD``); after it, the threshold this process had (yields whether it applied;
    False off glibc).

    For a loop whose large arrays change shape from batch to batch (the multilevel study's paths: L steps × N
    samples, N halving as L doubles), the reused heap of :func:`reuse_freed_memory` fragments, and how far depends
    on the order in which blocks come free: measured, one command peaked at 370, 495 or 604 MiB from run to run.
    Unmapped, the resident size is the arrays alive (312 MiB every time), at the cost of the page faults of each
    new large array: +13–20 % time there with 4-KiB pages, and faster than the reused heap with the huge pages its
    command line asks torch for (:mod:`validation.core.start_up`). The numbers computed do not change.
    """
    applied = _mallopt(_M_MMAP_THRESHOLD, int(threshold_mb * 2**20))
    try:
        yield applied
    finally:
        if applied:
            _mallopt(_M_MMAP_THRESHOLD, _threshold_set[0] or _GLIBC_THRESHOLD)


def resident_mb() -> float | None:
    """The process's resident memory in MiB (``/proc/self/statm``; None where there is none)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


#: a memory limit at or above this is "no limit" (cgroup v1 writes 2^63 rounded down to a page)
_UNLIMITED = 1 << 60


def _read_number(path: str) -> int | None:
    """The integer in a one-line file ("max" or a missing file: None)."""
    try:
        with open(path) as handle:
            text = handle.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_free_mb(root: str = "/sys/fs/cgroup") -> float | None:
    """Memory left under this process's cgroup limit (v2: memory.max − memory.current; v1: memory.limit_in_bytes −
    memory.usage_in_bytes), in MiB; None when there is no limit or no cgroup to read."""
    paths = [""]
    try:
        with open("/proc/self/cgroup") as handle:
            for line in handle:
                parts = line.strip().split(":", 2)
                if len(parts) == 3 and (parts[1] == "" or "memory" in parts[1].split(",")) and parts[2] != "/":
                    paths.insert(0, parts[2])
    except OSError:
        pass
    for path in paths:
        for limit_file, usage_file in ((f"{root}{path}/memory.max", f"{root}{path}/memory.current"),
                                       (f"{root}/memory{path}/memory.limit_in_bytes",
                                        f"{root}/memory{path}/memory.usage_in_bytes")):
            limit, usage = _read_number(limit_file), _read_number(usage_file)
            if limit is not None and limit < _UNLIMITED:
                return max(0.0, (limit - (usage or 0)) / 2**20)
    return None


def _address_space_free_mb() -> float | None:
    """Address space left under RLIMIT_AS (soft limit − VmSize), in MiB; None when unlimited."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0 or soft >= _UNLIMITED:
        return None
    used = 0
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
    except OSError:
        pass
    return max(0.0, (soft - used) / 2**20)


def memory_limits_mb() -> dict[str, float]:
    """The memory this process may still use, by source, in MiB: ``machine`` (MemAvailable from /proc/meminfo on
    Linux, else the physical memory), and where set, ``cgroup`` (its memory limit less its usage) and ``address
    space`` (RLIMIT_AS less the address space already mapped) — a run that fits the machine but not a limit dies."""
    limits: dict[str, float] = {}
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    limits["machine"] = int(line.split()[1]) / 1024
    except OSError:
        pass
    if "machine" not in limits:
        limits["machine"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    for name, free in (("cgroup", _cgroup_free_mb()), ("address space", _address_space_free_mb())):
        if free is not None:
            limits[name] = free
    return limits


def available_memory_mb() -> float:
    """The least of :func:`memory_limits_mb`: what this process can still allocate, in MiB."""
    return min(memory_limits_mb().values())


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)
