"""Where the data and the example configs that ship with the package are: the one place that
finds them (decks, clue banks, shipped embeddings, listener models, ``experiments/*.yaml``).

In the repository they live in the top-level ``data/`` and ``experiments/`` folders, the source
of truth. The build maps them into the package (``pyproject.toml``: ``dixit_lab._data`` and
``dixit_lab._examples``), so that a wheel or an sdist installs them beside the code, found here
through :mod:`importlib.resources` from any working folder. An editable install (or a checkout
on ``sys.path``) has no mapped copy: the package's folder is the checkout's ``dixit_lab/``, and
the data is read from the checkout's ``data/`` and ``experiments/`` beside it.
``$DIXIT_LAB_DATA`` overrides the data folder (never the examples).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from dixit_lab.errors import UserError

__all__ = [
    "UnknownExampleError",
    "data_path",
    "data_root",
    "example_names",
    "example_path",
    "examples_root",
    "source_checkout",
]

#: the package folder that holds each mapped folder of a build, and its name in a checkout
_MAPPED = {"_data": "data", "_examples": "experiments"}


class UnknownExampleError(UserError, ValueError):
    """A name that is no packaged example config. The message names the ones there are."""


def _package_folder() -> Path:
    folder = resources.files("dixit_lab")
    # an installed package is a folder on the disk (pip never installs a zip): a real path
    return Path(str(folder))


def source_checkout() -> Path | None:
    """The repository the package is imported from (an editable install or a checkout on
    ``sys.path``: the folder above ``dixit_lab/`` holds its ``pyproject.toml`` and
    ``data/``), or None for an installed wheel or sdist."""
    root = _package_folder().resolve().parent
    if (root / "pyproject.toml").is_file() and (root / "data").is_dir() \
            and not (_package_folder() / "_data").is_dir():
        return root
    return None


def _bundled(name: str) -> Path:
    """The folder mapped in as ``dixit_lab/<name>`` (a build), else the checkout's."""
    inside = _package_folder() / name
    if inside.is_dir():
        return inside
    checkout = source_checkout()
    if checkout is not None:
        return checkout / _MAPPED[name]
    return inside  # missing: the callers list what they found (none)


def data_root() -> Path:
    """The folder of the bundled data (``decks/``, ``clues/``, ``embeddings/``,
    ``listener_models/``); ``$DIXIT_LAB_DATA`` overrides it."""
    env = os.environ.get("DIXIT_LAB_DATA")
    return Path(env) if env else _bundled("_data")


def data_path(*parts: str) -> Path:
    """A path under :func:`data_root`, e.g. ``data_path("decks", "dreams")``."""
    return data_root().joinpath(*parts)


def examples_root() -> Path:
    """The folder of the packaged example configs (the repository's ``experiments/``)."""
    return _bundled("_examples")


def example_names() -> list[str]:
    """The packaged example configs by name (``quickstart``, ...), sorted."""
    root = examples_root()
    if not root.is_dir():
        return []
    return sorted(path.stem for path in root.glob("*.yaml"))


def example_path(name: str) -> Path:
    """The file of the packaged example ``name`` (with or without ``.yaml``)."""
    stem = name.removesuffix(".yaml")
    path = examples_root() / f"{stem}.yaml"
    if "/" in stem or "\\" in stem or not path.is_file():
        names = example_names()
        raise UnknownExampleError(f"no packaged example {name!r}; the examples are: "
                                  f"{', '.join(names) or 'none found'} "
                                  "(`dixit-lab examples` lists them)")
    return path
