"""Progress bars for long work: tqdm on stderr, quiet when stderr is not a terminal."""

from __future__ import annotations

import os
import sys
from typing import Any

from tqdm import tqdm

__all__ = ["progress"]


def progress(total: int | None = None, desc: str = "", unit: str = "it", *,
             disable_all: bool = False, **kwargs: Any) -> tqdm:
    """A tqdm bar showing rate and ETA on stderr, shown when stderr is a terminal.
    ``DIXIT_LAB_PROGRESS=0`` silences it, ``=1`` forces it; ``disable_all`` silences it."""
    setting = os.environ.get("DIXIT_LAB_PROGRESS", "")
    disable = disable_all or (setting == "0") or (setting != "1" and not sys.stderr.isatty())
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, file=sys.stderr,
                dynamic_ncols=True, smoothing=0.1, **kwargs)
