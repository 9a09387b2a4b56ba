"""What a child may read of the processes it can see: every ``/proc/<pid>`` but its own (and
its parent, first): ``cmdline``, ``cwd``, ``environ``, the targets of ``fd/*``, ``mem`` (at a
mapped address) and ``ptrace`` (PTRACE_SEIZE, then detach); and its own environment. It
reports what it got that contains ``canary`` (the test puts that word in the engine's
command line, folder, environment and results folder) and the environment variables that
look like secrets."""

from __future__ import annotations

import contextlib
import ctypes
import os
from typing import Any

from tests.hostile.common import Hostile

_SEIZE, _INTERRUPT, _DETACH = 0x4206, 0x4207, 17


def _pids() -> list[int]:
    with contextlib.suppress(OSError):
        own = {os.getpid()}
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in own]
        parent = os.getppid()
        return sorted(pids, key=lambda p: p != parent)
    return []


def _read(path: str, size: int = 1 << 16) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return None


def _mem(pid: int) -> bool:
    maps = _read(f"/proc/{pid}/maps")
    if not maps:
        return False
    for line in maps.decode(errors="replace").splitlines():
        span, perms = line.split()[:2]
        if perms.startswith("r"):
            start = int(span.split("-")[0], 16)
            try:
                with open(f"/proc/{pid}/mem", "rb") as handle:
                    handle.seek(start)
                    return bool(handle.read(16))
            except (OSError, ValueError, OverflowError):
                return False
    return False


def _ptrace(pid: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(_SEIZE, pid, None, None) != 0:
        return False
    libc.ptrace(_INTERRUPT, pid, None, None)  # stop it, so that it can be detached
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0x40000000)  # __WALL
    libc.ptrace(_DETACH, pid, None, None)
    return True


def probe() -> dict[str, Any]:
    found: dict[str, Any] = {"seen": 0}
    hits: set[str] = set()
    for pid in _pids()[:64]:
        found["seen"] += 1
        for name in ("cmdline", "environ"):
            data = _read(f"/proc/{pid}/{name}")
            if data and b"canary" in data:
                hits.add(name)
        with contextlib.suppress(OSError):
            if "canary" in os.readlink(f"/proc/{pid}/cwd"):
                hits.add("cwd")
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if "canary" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                        hits.add("fd")
        cmdline = _read(f"/proc/{pid}/cmdline") or b""
        if b"dixit_lab.cli" in cmdline or b"canary" in cmdline:  # the engine
            if _mem(pid):
                hits.add("mem")
            if _ptrace(pid):
                hits.add("ptrace")
    found["leaks"] = sorted(hits)
    found["env"] = sorted(name for name, value in os.environ.items()
                          if "canary" in value or any(word in name for word in (
                              "KEY", "TOKEN", "SECRET", "EXCHANGE")))
    return found


class ProcSpy(Hostile):
    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        self.found = probe()
