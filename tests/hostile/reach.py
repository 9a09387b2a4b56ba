"""Reaching out: reading the results folder (``target``, a path the attacker knows: its
games, the deal secret, the model's exchanges), signalling other processes, and leaving a
grandchild behind."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from typing import Any

from tests.hostile.common import Hostile


class FolderSpy(Hostile):
    """Lists ``target`` and reads every file under it."""

    def __init__(self, target: str = "") -> None:
        self.target = target

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        files = read = 0
        with contextlib.suppress(OSError):
            for root, _, names in os.walk(self.target):
                for name in names:
                    files += 1
                    with contextlib.suppress(OSError), open(os.path.join(root, name),
                                                            "rb") as handle:
                        handle.read(1 << 16)
                        read += 1
        self.found = {"files": files, "read": read}


class SignalSpy(Hostile):
    """At every game's start, sends ``signal`` to its parent and to every process whose
    command line names the engine or another seat's process."""

    def __init__(self, signal: str = "SIGKILL") -> None:
        self.signal = signal

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        number = signal.Signals[self.signal]
        sent = 0
        targets = {os.getppid()}
        with contextlib.suppress(OSError):
            for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
                with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as h:
                    line = h.read()
                    if any(word in line for word in (b"dixit_lab.cli", b"isolation_child",
                                                     b"sandbox_template", b"bwrap")):
                        targets.add(pid)
        for pid in targets - {os.getpid(), 0}:
            with contextlib.suppress(OSError):
                os.kill(pid, number)
                sent += 1
        self.found = {"sent": sent}


class OrphanSpy(Hostile):
    """Leaves a grandchild (double fork, its own session) named ``dixit-orphan`` that sleeps
    for ``seconds``: it must not outlive the game."""

    def __init__(self, seconds: float = 60.0) -> None:
        self.seconds = seconds

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        try:
            child = os.fork()
        except OSError as error:
            self.found = {"forked": False, "error": str(error)}
            return
        if child == 0:
            with contextlib.suppress(BaseException):
                os.setsid()
                if os.fork() == 0:
                    ctypes.CDLL(None).prctl(15, b"dixit-orphan", 0, 0, 0)  # PR_SET_NAME
                    time.sleep(self.seconds)
            os._exit(0)
        os.waitpid(child, 0)
        self.found = {"forked": True}
