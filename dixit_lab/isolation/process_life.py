"""Child processes that do not outlive their parent."""

from __future__ import annotations

import contextlib
import os

__all__ = ["die_with_parent", "pool_worker_setup"]


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (``PR_SET_PDEATHSIG``), so that a
    parent killed with SIGKILL leaves no worker holding its pipes; elsewhere, nothing."""
    with contextlib.suppress(Exception):
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent is already gone
            os._exit(0)


def pool_worker_setup() -> None:
    """Run in each worker of the process pool: die with the parent, leave Ctrl-C to the parent
    (which stops the pool) and end quietly when the parent stops it (SIGTERM), rather than with
    a handler inherited through the fork that would print a traceback."""
    import gc
    import signal

    gc.freeze()  # what the fork gave is never collected: no copy of the parent's pages
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
