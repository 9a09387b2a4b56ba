"""Inside a sandbox: the pristine template process, and the game process it forks for each
game (``python -I -m dixit_lab.isolation.sandbox_template CONTROL_FD UID``, started by
:mod:`dixit_lab.isolation.sandbox`).

The template runs only the project's own code: it drops to ``UID`` (when bubblewrap started
it as root), makes itself undumpable (no process may read or write its memory), imports the
runtime and the built-in agent's module, and waits for the engine's commands on its control
socket. It never imports or builds an outside agent, never sees a view, and keeps nothing
from one game to the next: each game is a child forked from it.

Each game: the template forks A; A enters a new user, PID, IPC and mount namespace and forks
B, the game process, which is PID 1 there: when B exits, the kernel kills every process it
left (no grandchild outlives the game), and its SysV IPC objects go with the namespace. B
drops every capability, lowers its limits (address space and data, tasks, file size, CPU
seconds), closes every file descriptor but its game socket and stderr, joins a new session
keyring of its own, loads the engine's system-call filter (:mod:`dixit_lab.isolation.
syscall_filter`) and serves the engine (:func:`dixit_lab.isolation.child.serve`). B
cannot name the template or A (they are outside its PID namespace) and nothing is writable,
so no game can leave anything for the next.

A counts the game's CPU: the time of B and every process of its namespace (each one's
descendant: an orphan's reaper is B), their reaped children's included, read from ``/proc``
at intervals short enough that the game cannot pass its budget unseen by more than a tenth
of a second a core; at the budget A kills B, and with it the game.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import pickle
import resource
import select
import signal
import socket
import sys
import time
from typing import Any

from dixit_lab.isolation.syscall_filter import join_new_keyring, load

__all__: list[str] = []

_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID = (0x00020000, 0x08000000,
                                                               0x10000000, 0x20000000)
_LAST_CAP = 63


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _drop_capabilities() -> None:
    """Empty the bounding set (while CAP_SETPCAP allows it) and every capability set."""
    for cap in range(_LAST_CAP + 1):
        _LIBC.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last: fine

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    _check(_LIBC.capset(ctypes.byref(header), data), "capset")


def _become(uid: int) -> None:
    """As root (bubblewrap started without a user namespace): drop to ``uid``."""
    if os.getuid() != 0 or uid == 0:
        return
    for cap in range(_LAST_CAP + 1):
        _LIBC.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    _drop_capabilities()


def _close_all_but(keep: set[int]) -> None:
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    start = 0
    for fd in [*sorted(keep), limit]:
        if fd > start:
            os.closerange(start, fd)
        start = fd + 1


_OVER_BUDGET = 200  # A's exit code when B was killed at its CPU limit


def _cpu_limit(limits: Any) -> int:
    return max(1, int(limits.cpu_seconds + 0.999))


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70


def _game(game_fd: int, limits: Any, decks: dict[str, Any], prepared: dict[str, Any],
          kernel: tuple[bytes, int]) -> None:
    """B: PID 1 of the game's namespaces; never returns."""
    code = 70
    try:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _drop_capabilities()
        _LIBC.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # its own memory is the agent's
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE,
                       signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD, signal.SIGXCPU):
            signal.signal(number, signal.SIG_DFL)  # SIGXCPU: over the CPU budget, it ends
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a closed socket is an error, as usual
        from dixit_lab.isolation.child import serve, set_limits

        set_limits(limits, processes=2 + limits.processes)  # A and B count
        cpu = _cpu_limit(limits)  # at it, SIGKILL (PID 1 of a namespace ignores SIGXCPU)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        _close_all_but({0, 1, 2, game_fd})
        program, keyctl = kernel
        join_new_keyring(_LIBC, keyctl)  # no keyring of the engine's, nor of another game's
        load(_LIBC, program)  # the last step: from here on the agent's code may run
        gc.unfreeze()
        serve(game_fd, game_fd, decks, prepared)
        code = 0
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


_CPU_WAIT = (0.05, 1.0)  # seconds between two counts of a game's CPU: least, most


def _game_cpu(b: int, ticks: int) -> float:
    """CPU seconds used by game process ``b`` and every process below it (its PID
    namespace's), each with its reaped children's (``utime + stime + cutime + cstime``)."""
    parents: dict[int, int] = {}
    used: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{entry.name}/stat", os.O_RDONLY)
            try:
                data = os.read(fd, 1024)
            finally:
                os.close(fd)
            fields = data.rpartition(b")")[2].split()
            pid = int(entry.name)
            parents[pid] = int(fields[1])
            used[pid] = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
    game = {b} if b in used else set()
    frontier = set(game)
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - game
        game |= frontier
    return sum(used[pid] for pid in game) / ticks


def _watch(b: int, limits: Any) -> bool:
    """A: wait for game process ``b`` to end, counting its game's CPU; kill it at its
    budget. True if it was killed there. Two counts in a row must be over the budget (a
    child reaped between the reading of its own time and of its parent's is counted twice
    once)."""
    budget = float(limits.cpu_seconds)
    ticks = os.sysconf("SC_CLK_TCK")
    cores = os.cpu_count() or 1
    pidfd = os.pidfd_open(b)
    over = False
    while True:
        used = _game_cpu(b, ticks)
        if used >= budget and over:
            os.kill(b, signal.SIGKILL)
            return True
        over = used >= budget
        wait = _CPU_WAIT[0] if over else min(_CPU_WAIT[1],
                                             max(_CPU_WAIT[0], (budget - used) / cores))
        if select.select([pidfd], [], [], wait)[0]:
            return False


def _fork_game(game_fd: int, control_fd: int, limits: Any, decks: dict[str, Any],
               prepared: dict[str, Any], kernel: tuple[bytes, int]) -> tuple[int, int]:
    """Fork A (which forks B into new namespaces): (A's pid, B's pid), both as seen here."""
    read_end, write_end = os.pipe()
    a = os.fork()
    if a == 0:
        code = 70
        try:
            os.close(read_end)
            os.close(control_fd)
            _check(_LIBC.unshare(_CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWNS),
                   "unshare")
            b = os.fork()
            if b == 0:
                os.close(write_end)
                _game(game_fd, limits, decks, prepared, kernel)
            os.write(write_end, str(b).encode())
            os.close(write_end)
            os.close(game_fd)
            _close_all_but({0, 1, 2})
            killed = _watch(b, limits)
            _, status, usage = os.wait4(b, 0)
            code = _exit_code(status)
            if killed or (code == 128 + signal.SIGKILL
                          and usage.ru_utime + usage.ru_stime >= _cpu_limit(limits) - 0.05):
                code = _OVER_BUDGET
        except BaseException as error:
            os.write(2, f"dixit_lab sandbox: a game could not start: {error}\n".encode())
        finally:
            os._exit(code)
    os.close(write_end)
    text = b""
    while True:
        chunk = os.read(read_end, 32)
        if not chunk:
            break
        text += chunk
    os.close(read_end)
    if not text:
        _, status = os.waitpid(a, 0)
        raise OSError(f"the game process did not start (exit {_exit_code(status)})")
    return a, int(text)


class _Control:
    """The template's end of its control socket: pickled frames in (the engine is trusted),
    JSON frames out; a file descriptor may come with a frame."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)

    def receive(self) -> tuple[Any, list[int]] | None:
        header, fds, _, _ = socket.recv_fds(self.sock, 4, 4)
        while header and len(header) < 4:
            more = self.sock.recv(4 - len(header))
            if not more:
                return None
            header += more
        if not header:
            return None
        size = int.from_bytes(header, "big")
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return pickle.loads(data), list(fds)

    def send(self, reply: dict[str, Any], fd: int | None = None) -> None:
        data = json.dumps(reply).encode()
        frame = len(data).to_bytes(4, "big") + data
        if fd is None:
            self.sock.sendall(frame)
        else:  # the descriptor travels with the first byte
            socket.send_fds(self.sock, [frame[:1]], [fd])
            self.sock.sendall(frame[1:])


def _describe(code: int) -> str:
    if code == _OVER_BUDGET:
        return ("used up its CPU budget for the game (limits.cpu_seconds, counted over all "
                "its processes) and was killed")
    if code > 128:
        try:
            return f"killed by {signal.Signals(code - 128).name}"
        except ValueError:
            return f"killed by signal {code - 128}"
    return f"exited (code {code})"


class _Games:
    """The game processes: one spare forked ahead (a pristine fork, waiting for its game),
    those in play, and how the ended ones ended."""

    def __init__(self, control_fd: int, limits: Any, decks: dict[str, Any],
                 prepared: dict[str, Any], kernel: tuple[bytes, int]) -> None:
        self.control_fd, self.limits, self.decks, self.prepared = (control_fd, limits, decks,
                                                                   prepared)
        self.kernel = kernel  # the system-call filter and keyctl's number
        self.spare: tuple[socket.socket, int, int] | None = None
        self.playing: dict[int, tuple[int, int]] = {}
        self.ended: dict[int, str] = {}
        self.waiting: dict[int, int] = {}  # A's pid -> game number, for games killed

    def fork_spare(self) -> None:
        if self.spare is None:
            engine_end, game_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                a, b = _fork_game(game_end.fileno(), self.control_fd, self.limits, self.decks,
                                  self.prepared, self.kernel)
            finally:
                game_end.close()
            self.spare = (engine_end, a, b)

    def drop_spare(self) -> None:
        """The spare was forked before the template changed: it goes, unused."""
        if self.spare is not None:
            engine_end, a, b = self.spare
            self.spare = None
            engine_end.close()
            with contextlib.suppress(ProcessLookupError):
                os.kill(b, signal.SIGKILL)
            self.waiting[a] = -1

    def take(self, number: int) -> socket.socket:
        self.fork_spare()
        assert self.spare is not None
        engine_end, a, b = self.spare
        self.spare = None
        self.playing[number] = (a, b)
        return engine_end

    def end(self, number: int) -> None:
        if number in self.playing:
            a, b = self.playing.pop(number)
            with contextlib.suppress(ProcessLookupError):
                os.kill(b, signal.SIGKILL)  # the whole namespace of the game goes
            self.waiting[a] = number

    def reap(self) -> None:
        for a in list(self.waiting):
            done, status = os.waitpid(a, os.WNOHANG)
            if done:
                self.ended[self.waiting.pop(a)] = _describe(_exit_code(status))

    def how_ended(self, number: int, wait: float) -> str | None:
        """How game ``number`` ended, waiting up to ``wait`` s for it to end by itself."""
        if number in self.playing:
            a, _ = self.playing[number]
            deadline = time.monotonic() + wait
            while True:
                done, status = os.waitpid(a, os.WNOHANG)
                if done:
                    del self.playing[number]
                    self.ended[number] = _describe(_exit_code(status))
                    break
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.002)
        self.reap()
        return self.ended.get(number)


def main() -> None:
    control_fd, uid = int(sys.argv[1]), int(sys.argv[2])
    _become(uid)
    _LIBC.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # no process may read or trace the template
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    control = _Control(control_fd)
    received = control.receive()
    if received is None:
        return
    (path, preload, limits, warm, kernel), _ = received
    join_new_keyring(_LIBC, kernel[1])  # the engine's session keyring stays outside
    sys.path[:] = path
    importlib.import_module("dixit_lab.isolation.child")
    for module in preload:  # the project's own agent modules (never an outside agent's)
        importlib.import_module(module)
    decks: dict[str, Any] = {}
    prepared: dict[str, Any] = {}
    if warm is not None:  # a built-in agent (the project's code): made once, here
        from dixit_lab.core.agent import make_agent

        prepared[warm] = make_agent(warm)
    games = _Games(control_fd, limits, decks, prepared, kernel)
    gc.collect()
    gc.freeze()  # the games fork from here: no collection copies the template's pages
    control.send({"ready": os.getpid()})
    while True:
        received = control.receive()
        if received is None:
            return  # the engine is gone
        (command, *args), _ = received
        if command == "deck":
            key, deck = args
            decks[key] = deck
            games.drop_spare()  # forked without this deck
            control.send({"ok": key})
        elif command == "warm":  # the built-in agent's caches for a table, from no game
            key, n_players, rules, names = args
            from dixit_lab.core.agent import GameContext

            try:
                for agent in prepared.values():
                    agent.begin_game(GameContext(0, n_players, rules, decks[key], names, 0))
                games.drop_spare()
                control.send({"ok": key})
            except Exception as error:
                control.send({"error": f"{type(error).__name__}: {error}"})
        elif command == "game":
            (number,) = args
            try:
                engine_end = games.take(number)
            except OSError as error:
                control.send({"error": str(error)})
                continue
            control.send({"started": number}, engine_end.fileno())
            engine_end.close()
            games.fork_spare()  # the next game's process, while this one plays
        elif command == "end":  # no reply: the engine does not wait for it
            (number,) = args
            games.end(number)
        elif command == "status":
            number, wait = args
            control.send({"ended": games.how_ended(number, wait)})
        else:
            control.send({"error": f"unknown command {command!r}"})
        games.reap()


if __name__ == "__main__":
    main()
