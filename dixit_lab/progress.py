"""Progress bars for long work: tqdm on stderr, quiet when stderr is not a terminal."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from tqdm import tqdm

__all__ = ["progress", "stage"]


def progress(total: int | None = None, desc: str = "", unit: str = "it", *,
             disable_all: bool = False, force: bool = False, **kwargs: Any) -> tqdm:
    """The one progress bar of the project: tqdm with rate and ETA on stderr, shown when
    stderr is a terminal (or with ``force``). ``DIXIT_LAB_PROGRESS=0`` silences it, ``=1``
    forces it; ``disable_all`` silences it."""
    setting = os.environ.get("DIXIT_LAB_PROGRESS", "")
    shown = force or setting == "1" or (setting != "0" and sys.stderr.isatty())
    disable = disable_all or setting == "0" or not shown
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, file=sys.stderr,
                dynamic_ncols=True, smoothing=0.1, **kwargs)


def _shown(force: bool = False) -> bool:
    setting = os.environ.get("DIXIT_LAB_PROGRESS", "")
    return force or setting == "1" or (setting != "0" and sys.stderr.isatty())


@contextlib.contextmanager
def stage(name: str, shown: bool = True) -> Iterator[None]:
    """A step of a long command after its progress bar (merging, tables, the report): one
    line on stderr when it starts and its time when it ends, so that a long run never looks
    frozen; shown when progress bars are (``DIXIT_LAB_PROGRESS``)."""
    visible = shown and _shown()
    start = time.perf_counter()
    if visible:
        print(f"{name} ...", end="", file=sys.stderr, flush=True)
    try:
        yield
    finally:
        if visible:
            print(f" {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
