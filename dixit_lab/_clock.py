"""The moment the package was first imported: ``dixit-lab`` reports the time of the whole
command from here (imports, work and output; only the interpreter's start-up is left out)."""

from __future__ import annotations

import time

STARTED = time.perf_counter()
