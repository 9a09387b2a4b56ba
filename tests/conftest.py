"""Settings of the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# No property test is a timed test: a loaded machine (CI's, a laptop running other work) must
# not turn a correct example into a failure (Hypothesis' default deadline is 200 ms an example).
settings.register_profile("dixit_lab", deadline=None)
settings.load_profile("dixit_lab")


#: The timing-sensitive tests: decision timeouts, CPU budgets and wall-clock bounds that a
#: second test process on the same cores could push past their limits. They carry the marker
#: ``serial``: scripts/test.sh runs the rest on several processes (pytest-xdist), then these
#: alone (tests/test_conftest.py checks that each file named here exists).
SERIAL_FILES = frozenset({
    "test_trust_attacks.py", "test_attacks.py", "test_attacks_configs.py", "test_attacks_web.py",
    "isolation/test_isolated_agent.py", "isolation/test_sandbox.py", "embeddings/test_cache.py",
    "vlm/test_budgets_and_share.py", "vlm/test_reply_attacks.py", "web/test_browser.py",
})
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Timing-sensitive tests are marked ``serial`` (:data:`SERIAL_FILES`). The ``install``
    tests (tests/test_packaging.py: build the package, install it into fresh environments)
    take minutes: the full suite runs them (scripts/test.sh --full sets
    DIXIT_LAB_INSTALL_TESTS=1), the default suite skips them saying so."""
    for item in items:
        if item.path.resolve().relative_to(TESTS).as_posix() in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)
    if os.environ.get("DIXIT_LAB_INSTALL_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="builds and installs the package (minutes): run by "
                                   "scripts/test.sh --full, or with DIXIT_LAB_INSTALL_TESTS=1")
    for item in items:
        if item.get_closest_marker("install") is not None:
            item.add_marker(skip)
