"""Settings of the whole suite."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# No property test is a timed test: a loaded machine (CI's, a laptop running other work) must
# not turn a correct example into a failure (Hypothesis' default deadline is 200 ms an example).
settings.register_profile("dixit_lab", deadline=None)
settings.load_profile("dixit_lab")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``install`` tests (tests/test_packaging.py: build the package, install it into fresh
    environments) take minutes: the full suite runs them (scripts/test.sh --full sets
    DIXIT_LAB_INSTALL_TESTS=1), the default suite skips them saying so."""
    if os.environ.get("DIXIT_LAB_INSTALL_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="builds and installs the package (minutes): run by "
                                   "scripts/test.sh --full, or with DIXIT_LAB_INSTALL_TESTS=1")
    for item in items:
        if item.get_closest_marker("install") is not None:
            item.add_marker(skip)
