"""Settings of the whole suite."""

from __future__ import annotations

from hypothesis import settings

# No property test is a timed test: a loaded machine (CI's, a laptop running other work) must
# not turn a correct example into a failure (Hypothesis' default deadline is 200 ms an example).
settings.register_profile("dixit_lab", deadline=None)
settings.load_profile("dixit_lab")
