"""Import guards for the optional model stacks (torch, open_clip, transformers, ...).

``pytest.importorskip`` catches only ImportError, but a broken install of an optional stack
fails in other ways (a torchvision built for another torch raises RuntimeError at import:
``operator torchvision::nms does not exist``). Such a failure must skip the tests that need
the stack, with the reason, never stop the collection of the whole suite.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

__all__ = ["import_or_skip"]


def import_or_skip(name: str) -> Any:
    """Import module ``name``, or skip the calling test module with the reason."""
    try:
        return importlib.import_module(name)
    except Exception as error:  # ImportError, or a broken install raising anything else
        pytest.skip(f"{name} does not import here ({type(error).__name__}: {error}); "
                    "the full suite installs it: scripts/test.sh --full",
                    allow_module_level=True)
