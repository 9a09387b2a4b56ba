"""Floods: of memory, of a file, of processes, of CPU (a thread that works between
decisions), of time (a slow ``observe``), and a child that stops reading the engine."""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import socket
import stat
import struct
import threading
import time
from typing import Any

from tests.hostile.common import Hostile


class FloodSpy(Hostile):
    """``kind``: ``memory`` (``gib`` GiB, touched), ``shared`` (the same through a shared
    anonymous mapping, ``mmap(MAP_SHARED | MAP_ANONYMOUS)``, which the data limit does not
    count), ``file`` (256 MiB into ``target`` or any writable folder), ``processes`` (64 that
    sleep), ``cpu`` (three threads spinning from the game's start, while each decision waits
    ``pause`` seconds: the work is between them) or ``forked`` (four forked processes
    spinning, each under its own CPU limit; ``spent``: the CPU of those it reaped)."""

    def __init__(self, kind: str = "memory", target: str = "", pause: float = 0.0,
                 gib: float = 2.0) -> None:
        self.kind, self.target, self.pause, self.gib = kind, target, pause, gib

    def tell(self, view: Any) -> Any:
        time.sleep(self.pause)
        if self.kind == "forked":
            with contextlib.suppress(ChildProcessError):
                while True:
                    pid, _, usage = os.wait4(-1, os.WNOHANG)
                    if not pid:
                        break
                    self.found["spent"] += usage.ru_utime + usage.ru_stime
        return super().tell(view)

    def submit(self, view: Any) -> list[int]:
        time.sleep(self.pause)
        return super().submit(view)

    def vote(self, view: Any) -> int:
        time.sleep(self.pause)
        return super().vote(view)

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        self.found = {"kind": self.kind}
        if self.kind == "memory":
            try:
                block = bytearray(int(self.gib * (1 << 30)))
                block[::4096] = b"x" * len(block[::4096])
                self.found["bytes"] = len(block)
                del block
            except MemoryError:
                self.found["bytes"] = 0
        elif self.kind == "shared":
            try:
                size = int(self.gib * (1 << 30))
                with mmap.mmap(-1, size, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS) as block:
                    for offset in range(0, size, 4096):
                        block[offset] = 1
                    self.found["bytes"] = size
            except (OSError, MemoryError):
                self.found["bytes"] = 0
        elif self.kind == "forked":
            self.found["spent"] = 0.0
            for _ in range(4):
                with contextlib.suppress(OSError):
                    if os.fork() == 0:
                        while True:
                            sum(range(10_000))
        elif self.kind == "file":
            written = 0
            for folder in (self.target, os.getcwd(), "/tmp", "/dev/shm", "/"):
                if not folder:
                    continue
                with contextlib.suppress(OSError), open(os.path.join(folder, "flood.bin"),
                                                        "wb") as handle:
                    chunk = b"x" * (1 << 20)
                    for _ in range(256):
                        written += handle.write(chunk)
                if written:
                    break
            self.found["bytes"] = written
        elif self.kind == "processes":
            started = 0
            for _ in range(64):
                try:
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                    started += 1
                except OSError:
                    break
            self.found["started"] = started
        elif self.kind == "cpu":
            for _ in range(3):
                threading.Thread(target=_spin, daemon=True).start()


def _spin() -> None:
    while True:
        sum(range(10_000))


class SlowObserver(Hostile):
    """Takes ``seconds`` in every ``observe`` (the decisions are quick)."""

    def __init__(self, seconds: float = 3.0) -> None:
        self.seconds = seconds

    def observe(self, result: Any) -> None:
        time.sleep(self.seconds)


def _frame(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class _NeverReturns(Hostile):
    """A seat whose first decision (a tell or a submit: every seat makes one in round 0)
    runs :meth:`_at_first_decision` and never returns."""

    def _at_first_decision(self) -> None:
        raise NotImplementedError

    def _never_return(self) -> None:
        self._at_first_decision()
        while True:
            time.sleep(60)

    def submit(self, view: Any) -> list[int]:
        self._never_return()
        return []

    def tell(self, view: Any) -> Any:
        self._never_return()
        return None


class DeafSpy(_NeverReturns):
    """At its first decision: shrinks its end of the channel to the engine (a socket's
    receive buffer, a pipe's size), starts a thread that answers every request in advance
    (forged frames, as fast as the engine reads them) and stops reading for good."""

    def _at_first_decision(self) -> None:
        targets = []
        for fd in range(64):
            with contextlib.suppress(OSError):
                mode = os.fstat(fd).st_mode
                if stat.S_ISSOCK(mode):
                    sock = socket.socket(fileno=os.dup(fd))
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
                    targets.append(fd)
                elif stat.S_ISFIFO(mode) and fd != 2:
                    with contextlib.suppress(OSError):
                        fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
                    targets.append(fd)

        def answer() -> None:
            frame = _frame(b'{"ok": 0}')
            while True:
                for fd in targets:
                    with contextlib.suppress(OSError):
                        os.write(fd, frame)
                time.sleep(0.001)

        threading.Thread(target=answer, daemon=True).start()


class StuckSpy(_NeverReturns):
    """At its first decision starts a second thread and never returns (it reads nothing more
    from the engine and forges nothing): a seat stuck for good, seen as a process of two
    threads until the engine's decision timeout ends it."""

    def _at_first_decision(self) -> None:
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
