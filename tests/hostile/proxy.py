"""The agent whose ``__init__`` patches the engine's proxy (``IsolatedAgent``) when the engine
builds it: from then on the engine's own process plays its seat, with a garbage-collector spy
that finds the game key there. On import it notes its process id in the file that
``DIXIT_TEST_IMPORTS`` names (only the engine's test sets it: a child's environment is
empty), so a test sees whether the engine's process ever imported it."""

from __future__ import annotations

import os
import sys
from typing import Any

from tests.hostile.common import Hostile

_MARK = os.environ.get("DIXIT_TEST_IMPORTS")
if _MARK:
    with open(_MARK, "a", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")


def _patch() -> bool:
    """Route every IsolatedAgent of this process through an in-process GcSpy."""
    isolation = sys.modules.get("dixit_lab.isolation.isolated_agent")
    if isolation is None:
        return False
    from tests.spies import GcSpy

    proxy = isolation.IsolatedAgent

    def spy(self: Any) -> GcSpy:
        if "_hostile_spy" not in self.__dict__:
            self.__dict__["_hostile_spy"] = GcSpy()
        return self.__dict__["_hostile_spy"]

    proxy.begin_game = lambda self, context: spy(self).begin_game(context)
    proxy.tell = lambda self, view: spy(self).tell(view)
    proxy.submit = lambda self, view: spy(self).submit(view)
    proxy.vote = lambda self, view: spy(self).vote(view)
    proxy.observe = lambda self, result: spy(self).observe(result)
    return True


class ProxyPatcher(Hostile):
    def __init__(self) -> None:
        self.found = {"patched": _patch(), "pid": os.getpid()}
