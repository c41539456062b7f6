"""Worker processes for the Monte-Carlo studies: tasks run in a pool of single-threaded processes, or on a Dask
cluster, and their results come back in task order.

* ``workers`` > 1 (no scheduler): a local process pool (below). On Linux its processes are **forked** from this one
  once the tasks are handed out: a worker starts in milliseconds with everything already imported (a spawned one
  imports torch again, about a second, which cost more than a second core gave at the default study's size). Where
  fork is not safe to rely on (macOS, Windows) they are spawned. :func:`default_workers` is what the studies use
  when ``--workers`` is not given: every core this process may run on.
* ``scheduler="local:N"``: a ``dask.distributed.LocalCluster`` of N single-threaded worker processes, started and
  stopped with the run; ``scheduler="tcp://HOST:PORT"``: an existing Dask scheduler (its workers must be able to
  import this package). Dask re-runs the tasks of a worker that dies (killed, out of memory) on another worker,
  so a run either returns every task's result or fails; it never returns part of them as if complete. Dask is
  used because it does exactly this — scheduling, retries of lost work, clusters across machines — with
  nothing to maintain here.

The workers are started with SIGINT blocked and then ignore it (the parent handles Ctrl-C and stops the pool),
and die with their parent (Linux ``PR_SET_PDEATHSIG``); when the parent leaves the pool by an exception
(Ctrl-C, SIGTERM, an error) the workers are terminated, not awaited, so none outlives it. A task's result
depends only on the task (every random draw comes from streams named by the task's own labels), so the
numbers do not depend on the number of workers.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import signal
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any, Callable, Iterator, Sequence

from .settings import SettingsError, UsageError, check_int

__all__ = ["run_tasks", "check_scheduler", "DASK_EXTRA", "check_workers", "default_workers", "MAX_WORKERS", "PROCESS_MB", "LEAN_PROCESS_MB", "run_memory_mb", "task_runner", "TaskRunner"]

#: the most local worker processes a run may ask for
MAX_WORKERS = 64


#: the memory one study process holds before its work (MiB): the interpreter with torch, numpy and scipy imported
#: (``python -c "import torch, scipy.stats, matplotlib.pyplot, validation.convergence"``: 313 MiB resident, measured
#: on the 2-core reference with torch 2.13), and the package's own modules and first allocations
PROCESS_MB = 330.0

#: the same for a process that imports neither ``scipy.stats`` nor matplotlib: the pair studies (convergence,
#: ablation, gradients, solvers) without ``--plot``, whose bootstrap needs only ``scipy.special``
#: (``python -c "import torch, scipy.special, validation.convergence"``: 240 MiB resident; the study's own first
#: allocations on top)
LEAN_PROCESS_MB = 260.0


def run_memory_mb(working_mb: float, processes: int = 1, scheduler: str | None = None,
                  process_mb: float = PROCESS_MB) -> float:
    """The peak memory of a run whose work is shared by ``processes`` processes that each hold ``working_mb`` of
    their own (MiB): the interpreter's ``process_mb`` (:data:`PROCESS_MB`, or :data:`LEAN_PROCESS_MB`) once, and each
    process's working memory. Workers forked from the study's
    process (Linux) share its imported pages copy-on-write, so the interpreter counts once — measured with
    ``benchmarks/bench_memory.py`` as the process's resident size and its workers' private pages (convergence's default:
    423 MiB with two workers, 344 with one); a spawned worker (macOS, Windows) imports torch again and holds its own.
    With a Dask ``scheduler`` the work runs in the cluster's processes: ``local:N`` starts N of them here, each
    importing torch anew; a remote cluster's (``tcp://``, ``tls://``) are not this machine's."""
    if scheduler is not None:
        local = scheduler.startswith("local:") and scheduler[6:].isdigit()
        return process_mb + (int(scheduler[6:]) * (process_mb + working_mb) if local else 0.0)
    spawned = 0 if processes <= 1 or _start_method() == "fork" else processes
    return process_mb * (1 + spawned) + max(1, processes) * working_mb


def default_workers(device: str = "cpu") -> int:
    """The local processes a study uses when not told: every core this process may run on (its CPU affinity, so a
    container's or ``taskset``'s limit is respected), at most :data:`MAX_WORKERS`. One on a GPU (processes cannot
    share it), and one where workers cannot be forked (macOS, Windows: a spawned worker imports torch again, and a
    script must guard its entry point with ``if __name__ == "__main__":``; ask for them with ``workers=N``). A run's
    numbers never depend on it."""
    name = str(device)
    if _start_method() != "fork" or name.startswith("cuda") or name == "auto" and _cuda_available():
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _start_method() -> str:
    """fork on Linux (the workers inherit the imports), spawn elsewhere."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


def _worker_init(parent: int) -> None:
    """A worker runs one torch thread, ignores Ctrl-C (the parent handles it and stops the pool) and dies with its
    parent (Linux).

    It is started with SIGINT blocked (see :func:`_pool`), so a Ctrl-C while it is still starting up (importing
    torch takes seconds) cannot print a traceback either. A parent killed before this runs (SIGKILL, while the
    worker was starting) cannot be caught by PR_SET_PDEATHSIG: the worker sees that it was re-parented and exits.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a forked worker inherits the parent's Python handlers: the command line's SIGTERM handler would turn the
    # death signal below into an exception that the pool reports to a parent already gone, and the worker would live
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)
    import torch

    from .runtime import reuse_freed_memory

    torch.set_num_threads(1)  # each worker single-threaded: the workers share the cores
    reuse_freed_memory()


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT held back in this thread for the block: processes started here inherit the blocked signal (it is
    delivered to this process right after the block)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers are terminated, not awaited, when the block is left by an exception (Ctrl-C,
    SIGTERM, an error): the parent reports it in one line, and no worker outlives it. Submit the tasks inside
    :func:`_sigint_blocked`: the workers are started then."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context(_start_method()),
                               initializer=_worker_init, initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()
        # not cancel_futures=True: the pool's manager thread then fails on the cancelled futures when it finds
        # the workers gone, and prints a traceback
        with contextlib.suppress(Exception):
            pool.shutdown(wait=False)
        raise
    else:
        pool.shutdown(wait=True)


#: ``tcp://HOST:PORT`` or ``tls://HOST:PORT``: a host name, an IPv4 address or a bracketed IPv6 one, and a port of ASCII
#: digits (``str.isdigit`` also takes other scripts' digits and superscripts, which ``int`` then refuses)
_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]+)")


#: what a scheduler needs that the package does not require: Dask's ``distributed`` (the ``dask`` extra)
DASK_EXTRA = "pip install 'resnet-limits[dask]' (or pip install 'dask[distributed]')"


def check_scheduler(value: str | None) -> str | None:
    """``None``, ``local:N`` (1 ≤ N ≤ 256), ``tcp://HOST:PORT`` or ``tls://HOST:PORT`` (a scheduler with TLS, the
    client's certificates from Dask's configuration; 1 ≤ PORT ≤ 65535); raises ``ValueError`` naming what is allowed,
    or naming the extra to install where Dask is missing (it is optional: :data:`DASK_EXTRA`). The port is checked
    here: a port of 20 digits passed this check and overflowed in the socket call (exit 3)."""
    if value is None:
        return None
    if importlib.util.find_spec("distributed") is None:
        raise ValueError(f"{value!r}: a scheduler needs Dask, which is not installed here: {DASK_EXTRA}; or leave "
                         "--scheduler out and use --workers")
    text = str(value).strip()
    if text.startswith("local:") and text[6:].isdigit() and 1 <= int(text[6:]) <= 256:
        return text
    address = _ADDRESS.fullmatch(text)
    if address is not None:
        if not 1 <= int(address.group(3)) <= 65535:
            raise ValueError(f"{value!r}: the port {address.group(3)} is out of range (must be ≥ 1 and ≤ 65535)")
        return text
    raise ValueError(f"{value!r} is not a scheduler (allowed: local:N with 1 ≤ N ≤ 256, tcp://HOST:PORT or "
                     "tls://HOST:PORT)")


def check_workers(settings: Any, default_to_cores: bool = False) -> None:
    """The checks of a study that shares its work out: ``workers`` (None or 1 … 64 local processes) and
    ``scheduler`` (None, ``local:N`` or ``tcp://HOST:PORT``, :func:`validation.core.workers.check_scheduler`); several
    processes cannot share one GPU. ``default_to_cores``: workers not given are set to
    :func:`default_workers` (every core this process may use; 1 on a GPU)."""
    if default_to_cores and settings.workers is None:
        settings._set("workers", default_workers(settings.device))

    try:
        if hasattr(settings, "scheduler"):  # a study without Dask has workers alone
            settings._set("scheduler", check_scheduler(settings.scheduler))
    except ValueError as exc:
        raise SettingsError("scheduler", str(exc)) from None
    if settings.workers is not None:
        settings._set("workers", check_int("workers", settings.workers, 1, MAX_WORKERS))
        if settings.device.startswith("cuda") and settings.workers > 1:
            raise SettingsError("workers", f"{settings.workers} with --device {settings.device}: use --workers 1 on a GPU")


#: seconds to wait for a tcp:// Dask scheduler to answer before the run is refused as bad input
CONNECT_TIMEOUT_S = 5


def _check_reachable(scheduler: str) -> None:
    """Refuse, in one line and within :data:`CONNECT_TIMEOUT_S` seconds, a tcp:// address where nothing listens
    (bad input: exit 2), before Dask's own connection attempts (about 30 s, then an internal error). The message
    says what happened: the connection refused at once, no answer within the timeout, or another socket error."""
    import socket

    host, port = scheduler[len("tcp://"):].rsplit(":", 1)  # tcp:// or tls://: the same length
    address = f"{host}:{port}"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except TimeoutError:
        what = f"no answer from {address} within {CONNECT_TIMEOUT_S} s"
    except ConnectionRefusedError:
        what = f"connection refused by {address}: nothing listens there"
    except OSError as exc:
        what = f"cannot connect to {address} ({exc.strerror or exc})"
    else:
        return
    raise UsageError(f"--scheduler {scheduler}: {what}; start a Dask scheduler there (dask scheduler --port {port}) "
                     "or use --scheduler local:N")


#: seconds a tcp:// or tls:// address that accepts the connection has to answer as a Dask scheduler: Dask's own
#: handshake waits for the first reply without a limit (its ``timeout`` bounds the connection only), so a web server
#: at the address held a run silent for 651 s
HANDSHAKE_TIMEOUT_S = 10


def _check_is_scheduler(scheduler: str) -> None:
    """Refuse, in one line and within :data:`HANDSHAKE_TIMEOUT_S` seconds, an address that accepts the connection but
    is not a Dask scheduler (a web server, a Dask worker): Dask's handshake and an ``identity`` request, whose reply
    must come from a scheduler, under one deadline — before Dask's client, which would wait for ever."""
    import asyncio

    from distributed.comm import connect

    async def identity() -> Any:
        options: dict[str, Any] = {}
        if scheduler.startswith("tls://"):
            from distributed.security import Security

            options = Security().get_connection_args("client")
        comm = await connect(scheduler, timeout=HANDSHAKE_TIMEOUT_S, **options)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        reply = asyncio.run(asyncio.wait_for(identity(), HANDSHAKE_TIMEOUT_S))
    except asyncio.TimeoutError:
        what = f"no Dask reply within {HANDSHAKE_TIMEOUT_S} s"
    except Exception as exc:  # noqa: BLE001 (what a foreign service's bytes make of Dask's reader: any error)
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    else:
        if isinstance(reply, dict) and reply.get("type") == "Scheduler":
            return
        what = (f"it says it is a Dask {reply['type']}" if isinstance(reply, dict) and isinstance(reply.get("type"), str)
                else "its reply is not a scheduler's")
    raise UsageError(f"--scheduler {scheduler}: the address answered but is not a Dask scheduler ({what[:200]}); give "
                     "the scheduler's address (dask scheduler prints it) or use --scheduler local:N")


#: where a ``local:N`` cluster listens (scheduler, workers, dashboard)
LOOPBACK = "127.0.0.1"


@contextlib.contextmanager
def _dask_client(scheduler: str) -> Iterator[Any]:
    """A Dask client of ``scheduler`` (``local:N``: a cluster started here and closed after the block)."""
    from dask.distributed import Client, LocalCluster

    cluster = None
    if scheduler.startswith("local:"):
        # the scheduler, the workers and the dashboard listen on the loopback interface only, on free ports (never a
        # clash): a local cluster is this machine's business, and Dask's dashboard would otherwise listen on every
        # interface
        cluster = LocalCluster(n_workers=int(scheduler[6:]), threads_per_worker=1, processes=True,
                               host=LOOPBACK, dashboard_address=f"{LOOPBACK}:0")
        client = Client(cluster)
    else:
        _check_reachable(scheduler)
        _check_is_scheduler(scheduler)
        client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _dask_map(client: Any, function: Callable[[Any], Any], tasks: Sequence[Any],
              on_result: Callable[[Any], None] | None = None) -> list[Any]:
    results = []
    for future in client.map(function, list(tasks), pure=False):
        results.append(future.result())
        if on_result is not None:
            on_result(results[-1])
    return results


def _run_dask(function: Callable[[Any], Any], tasks: Sequence[Any], scheduler: str,
              on_result: Callable[[Any], None] | None) -> list[Any]:
    with _dask_client(scheduler) as client:
        return _dask_map(client, function, tasks, on_result)


def _submit(pool: ProcessPoolExecutor, function: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
    """The futures of ``tasks`` on ``pool``, submitted with SIGINT held back (the workers start then)."""
    with _sigint_blocked(), warnings.catch_warnings():
        # Python ≥ 3.12 warns that fork() in a process with threads may deadlock the child; the package's own
        # threads here (a progress bar's monitor, torch's idle thread pool) hold no lock a worker takes
        warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
        return [pool.submit(function, task) for task in tasks]


#: ``run(function, tasks)``: ``[function(task) for task in tasks]``, wherever the runner computes them
TaskRunner = Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]


@contextlib.contextmanager
def task_runner(workers: int, scheduler: str | None = None) -> Iterator[TaskRunner]:
    """``run(function, tasks)``, :func:`run_tasks` on ``workers`` local processes, or on one client of the Dask
    ``scheduler``, started once for the whole block (here for one worker): for a study that maps many short rounds
    of tasks (the multilevel study's levels and MLMC rounds), where a pool or a cluster started per round costs
    more than the round gains."""
    if scheduler is not None:
        with _dask_client(check_scheduler(scheduler)) as client:
            yield lambda function, tasks: _dask_map(client, function, tasks)
        return
    if workers <= 1:
        yield lambda function, tasks: [function(task) for task in tasks]
        return
    with _pool(workers) as pool:
        yield lambda function, tasks: [future.result() for future in _submit(pool, function, tasks)]


def run_tasks(function: Callable[[Any], Any], tasks: Sequence[Any], workers: int,
              on_result: Callable[[Any], None] | None = None, scheduler: str | None = None,
              meanwhile: Callable[[], Any] | None = None) -> list[Any]:
    """``[function(task) for task in tasks]``: on the Dask ``scheduler`` when given (``local:N`` or
    ``tcp://HOST:PORT``), else in ``workers`` local processes when ``workers`` > 1, else here (``function``
    must be importable: a module-level function). ``on_result`` is called with each result as it is
    collected, in task order. ``meanwhile`` (e.g. importing what the caller needs next) is called once here while
    the workers compute, after they were started — or first, when the tasks run here."""
    if meanwhile is not None and (scheduler is not None or workers <= 1 or len(tasks) <= 1):
        meanwhile()
        meanwhile = None
    if scheduler is not None:
        return _run_dask(function, tasks, check_scheduler(scheduler), on_result)
    results = []
    if workers <= 1 or len(tasks) <= 1:
        for task in tasks:
            results.append(function(task))
            if on_result is not None:
                on_result(results[-1])
        return results
    with _pool(min(workers, len(tasks))) as pool:
        futures = _submit(pool, function, tasks)
        if meanwhile is not None:
            meanwhile()
        for future in futures:
            results.append(future.result())
            if on_result is not None:
                on_result(results[-1])
    return results
