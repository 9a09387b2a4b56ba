"""The Ray executor: play chunks of games on a Ray cluster (or a local Ray instance).

Install it with ``pip install -e ".[ray]"`` from the clone. Every node of a cluster needs the same
``dixit_lab`` version and data as the machine that submits the run: a worker plays a chunk with
:func:`dixit_lab.run.tournament.play_chunk`, exactly as the process pool does, so the records are
byte-identical to those of the other executors.

- The :class:`~dixit_lab.run.tournament.TableSetup` goes to the object store once (``ray.put``);
  each task receives the reference and a chunk of :class:`~dixit_lab.run.tournament.GameSpec` s.
- Agents and embedding spaces are built in the worker processes and cached there (per process):
  Ray reuses its workers, so a worker builds them once for all the chunks it plays.
- A task whose worker dies (killed, out of memory, a lost node) is re-run by Ray (``max_retries``);
  the games are determined by their specs, so a re-run gives the same records, and each chunk
  is yielded once.
- At most ``4 x workers`` chunks are in flight (enough to hide a task's round trip, ~1-2 ms
  here, more across a network), so a long run does not queue all its chunks at once.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from dixit_lab.errors import UserError, install_hint
from dixit_lab.run.tournament import GameSpec, TableSetup, play_chunk

__all__ = ["INSTALL_HINT", "RayExecutor", "RayNotInstalled", "RayRunError", "import_ray",
           "ray_session",
           "run_chunks_ray"]

INSTALL_HINT = install_hint("ray")
_IN_FLIGHT_PER_WORKER = 4


class RayNotInstalled(UserError, RuntimeError):
    """The ``ray`` executor was chosen but Ray is not installed."""


class RayRunError(UserError, RuntimeError):
    """The Ray cluster cannot be reached, or a chunk's worker kept dying."""


def import_ray() -> Any:
    """The ``ray`` module, or :class:`RayNotInstalled` saying how to install it."""
    try:
        import ray
    except ImportError as error:
        raise RayNotInstalled(f"the ray executor needs Ray, which is not installed ({error}); "
                              f"install it with: {INSTALL_HINT}") from None
    return ray


@contextlib.contextmanager
def ray_session(address: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """Connect to Ray for the ``with`` block and yield the ``ray`` module.

    If this process is already connected, that connection is used and left open. Otherwise
    ``address`` None starts a local instance with ``workers`` CPUs (default: all cores), and an
    address (``HOST:6379``, ``auto`` or ``ray://HOST:10001``) connects to a running cluster;
    either way the connection is shut down when the block ends. Sweeps run all their points in
    one session, so a local instance starts (several seconds) only once.
    """
    ray = import_ray()
    started = False
    if not ray.is_initialized():
        quiet = {"logging_level": logging.ERROR, "configure_logging": True}
        if address is None:
            from dixit_lab.run.executors import available_workers

            # "local": a new instance even if `ray start` left a cluster on this machine
            with contextlib.redirect_stdout(sys.stderr):
                ray.init(address="local", num_cpus=workers or available_workers(),
                         include_dashboard=False, **quiet)
        else:
            _check_reachable(address)
            with contextlib.redirect_stdout(sys.stderr):
                ray.init(address=address, **quiet)
        started = True
    try:
        with _ray_threads_print_to_stderr():
            yield ray
    finally:
        if started:
            with contextlib.redirect_stdout(sys.stderr):  # its last, deduplicated messages
                ray.shutdown()


class _StdoutOfTheMainThread:
    """A ``sys.stdout`` that passes on what this program writes and sends what Ray's own
    threads (named ``ray_...``: its raylet messages, ``(raylet) A worker died ...``, and the
    workers' forwarded output) write to stderr."""

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout

    def write(self, text: str) -> int:
        if threading.current_thread().name.startswith("ray_"):
            return sys.stderr.write(text)
        return self.stdout.write(text)

    def flush(self) -> None:
        self.stdout.flush()
        sys.stderr.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stdout, name)


@contextlib.contextmanager
def _ray_threads_print_to_stderr() -> Iterator[None]:
    """Stdout is the command's output: for the ``with`` block, Ray's messages go to stderr.
    Ray prints them with ``print(..., file=sys.stdout)`` from its driver threads, so the
    threads are told apart by name (Ray's ``ray_listen_error_messages`` and
    ``ray_print_logs``)."""
    original = sys.stdout
    router = _StdoutOfTheMainThread(original)
    sys.stdout = router
    try:
        yield
    finally:
        if sys.stdout is router:  # unless someone replaced it since
            sys.stdout = original


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast, in one line, on a ``HOST:PORT`` that nothing listens on (``ray.init`` would
    retry for minutes and print the low-level errors of its client)."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # "auto", "ray://..." and the like: Ray knows best
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise RayRunError(f"cannot reach the Ray cluster at {address} ({error}); start it "
                           f"with `ray start --head` on the head node, or check --address"
                           ) from None


def _cluster_cpus(ray: Any) -> int:
    try:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))
    except Exception:  # pragma: no cover - a cluster that cannot tell
        return 1


class RayExecutor:
    """Chunks as Ray tasks, on a cluster at ``address`` or a local Ray instance."""

    writes_parts = False  # workers may be on other machines: part files are written here

    def default_workers(self, address: str | None) -> int:
        from dixit_lab.run.executors import available_workers

        return 0 if address else available_workers()

    def session(self, address: str | None, workers: int | None
                ) -> contextlib.AbstractContextManager[Any]:
        return ray_session(address, workers)

    def run(self, setup: TableSetup, chunks: Sequence[list[GameSpec]], workers: int | None,
            address: str | None, parts: Any = None, records: str = "jsonl.zst"
            ) -> Iterator[list[tuple[int, str]]]:
        return run_chunks_ray(setup, chunks, address=address, workers=workers)


def run_chunks_ray(setup: TableSetup, chunks: Sequence[list[GameSpec]], *,
                   address: str | None = None, workers: int | None = None,
                   max_retries: int = 3,
                   task: Callable[[TableSetup, list[GameSpec]], Any] = play_chunk,
                   ) -> Iterator[list[tuple[int, str]]]:
    """Yield each chunk's (game index, JSON line) pairs as soon as the chunk is done.

    ``address``: None for a local Ray instance (started here with ``workers`` CPUs, default all
    cores, unless this process is already connected), or the address of a cluster.
    ``workers``: caps the chunks in flight at ``4 x workers`` (default: ``4 x`` the cluster's
    CPUs). A chunk whose worker process dies is re-run up to ``max_retries`` times; an error in
    a game (:class:`~dixit_lab.run.tournament.GameFailed`) is raised as the process pool raises it,
    without retries. ``task`` is what the workers run on each chunk (tests swap in probes).
    """
    if not chunks:
        return
    with ray_session(address, workers) as ray:
        from ray.exceptions import RayTaskError

        remote = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(task)
        setup_ref = ray.put(setup)  # once: every task gets the reference, not the setup
        limit = _IN_FLIGHT_PER_WORKER * (workers or _cluster_cpus(ray))
        pending: dict[Any, int] = {}  # object ref -> chunk id
        finished: set[int] = set()
        queue = iter(enumerate(chunks))

        def submit() -> None:
            item = next(queue, None)
            if item is not None:
                pending[remote.remote(setup_ref, item[1])] = item[0]

        try:
            while len(pending) < limit and len(pending) < len(chunks):
                submit()
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    chunk_id = pending.pop(ref)
                    try:
                        results = ray.get(ref)
                    except RayTaskError as error:  # an exception raised by the task itself
                        cause = getattr(error, "cause", None)
                        if isinstance(cause, BaseException):
                            raise cause from None
                        raise
                    except ray.exceptions.RayError as error:  # worker died max_retries + 1 times
                        games = [spec.index for spec in chunks[chunk_id]]
                        raise RayRunError(
                            f"ray executor: the chunk of games {games[0]}-{games[-1]} failed "
                            f"after {max_retries} retries: {type(error).__name__}: {error}"
                        ) from None
                    submit()
                    if chunk_id in finished:  # never hand a chunk on twice
                        continue
                    finished.add(chunk_id)
                    yield results
        finally:
            for ref in pending:  # an interrupted run: drop what is still queued or running
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
