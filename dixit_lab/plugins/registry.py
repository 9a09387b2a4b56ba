"""Registries of named classes (agents, embedders, executors), the ecosystem's way.

Built-ins and plugins enter a registry the same way: as **entry points** of the registry's
group in their package's metadata (``[project.entry-points."dixit_lab.agents"]`` in
``pyproject.toml``: ``literal = "dixit_lab_agents.literal:LiteralAgent"``). A name is listed
without importing anything and its class is imported on first use, so a broken plugin costs
only its own name (asking for it raises :class:`UnknownName`, one line naming the entry point
and what is wrong; whoever walks every name skips it with a warning), and the core imports no
concrete class. Code may also register a class directly (``Registry.register``, the
``@register_agent`` decorator).

The metadata of an editable install (``pip install -e .``) is written when it is installed, so
an entry point added to the checkout's ``pyproject.toml`` afterwards is not in it. A registry
given the checkout (``checkout``: the folder of the ``pyproject.toml`` the running code comes
from, or None for an installed wheel) reads that project's entry points from the file instead
(:func:`declared_entry_points`): a new agent in a checkout needs no reinstall.
"""

from __future__ import annotations

import re
import tomllib
import warnings
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Generic, TypeVar

from dixit_lab.errors import UserError

__all__ = ["Registry", "UnknownName", "declared_entry_points"]

T = TypeVar("T")
C = TypeVar("C", bound=type)


class UnknownName(UserError, KeyError):
    """A name that no entry point or registration provides, or whose entry point does not
    import or is not of the registry's kind: a user's mistake (the command line prints it as
    one line). ``str()`` lists the known names."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown name"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_entry_points(pyproject: Path, group: str) -> tuple[str, dict[str, EntryPoint]]:
    """The project name and the entry points of ``group`` that ``pyproject`` declares
    (``[project.entry-points."GROUP"]``); ("", {}) for a file that cannot be read."""
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        declared = project.get("entry-points", {}).get(group, {})
        name = str(project.get("name", ""))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return "", {}
    if not isinstance(declared, dict):
        return "", {}
    return name, {key: EntryPoint(key, value, group) for key, value in declared.items()
                  if isinstance(value, str)}


class Registry(Generic[T]):
    """Classes of ``kind`` (a word for messages, e.g. ``"agent"``) that subclass ``base``,
    by name: registered in code, or entry points of ``group`` (with ``checkout``, the
    checkout's own ``pyproject.toml`` declares that project's: see the module docstring)."""

    def __init__(self, group: str, kind: str, base: type[T],
                 checkout: Callable[[], Path | None] | None = None) -> None:
        self.group, self.kind, self.base = group, kind, base
        self.checkout = checkout
        self._classes: dict[str, type[T]] = {}
        self._entries: dict[str, EntryPoint] | None = None
        #: names the checkout's pyproject.toml declares that its install did not record
        self._not_installed: dict[str, Path] = {}

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._entries is None:
            entries = {entry.name: entry for entry in entry_points(group=self.group)}
            root = self.checkout() if self.checkout is not None else None
            if root is not None:
                pyproject = root / "pyproject.toml"
                project, declared = declared_entry_points(pyproject, self.group)
                if project:  # what its install recorded may be stale: the file says
                    installed = {name for name, entry in entries.items()
                                 if entry.dist is not None
                                 and _normalized(entry.dist.name) == _normalized(project)}
                    entries = {name: entry for name, entry in entries.items()
                               if name not in installed}
                    entries.update(declared)
                    self._not_installed = {name: pyproject for name in declared
                                           if name not in installed}
            self._entries = entries
        return self._entries

    def register(self, name: str) -> Callable[[C], C]:
        """Class decorator: register ``cls`` under ``name``."""

        def decorate(cls: C) -> C:
            if not (isinstance(cls, type) and issubclass(cls, self.base)):
                raise TypeError(f"registering {self.kind} {name!r} needs a subclass of "
                                f"{self.base.__name__}")
            existing = self._classes.get(name)
            if existing is not None and existing.__qualname__ != cls.__qualname__:
                raise ValueError(f"{self.kind} name {name!r} is already registered by "
                                 f"{existing.__module__}.{existing.__qualname__}")
            entry = self._entry_points().get(name)
            if existing is None and entry is not None and entry.value not in (
                    f"{cls.__module__}:{cls.__qualname__}", cls.__module__):
                raise ValueError(f"{self.kind} name {name!r} is already registered by the "
                                 f"entry point {entry.value}")
            self._classes[name] = cls
            return cls  # type: ignore[return-value]  # (C is a subclass of base)

        return decorate

    def origin(self, name: str) -> str | None:
        """The module of ``name``'s class, without importing it (a registered class's module,
        else its entry point's); None for an unknown name."""
        cls = self._classes.get(name)
        if cls is not None:
            return cls.__module__
        entry = self._entry_points().get(name)
        return entry.value.split(":")[0] if entry is not None else None

    def entry_point(self, name: str) -> EntryPoint | None:
        """The entry point that provides ``name`` (None for a class registered in code only,
        or an unknown name), without importing it."""
        return self._entry_points().get(name)

    def names(self) -> list[str]:
        """Every known name, without importing any class."""
        return sorted(set(self._classes) | set(self._entry_points()))

    def get(self, name: str) -> type[T]:
        """The class of ``name``, imported on first use."""
        cls = self._classes.get(name)
        if cls is not None:
            return cls
        entry = self._entry_points().get(name)
        if entry is None:
            from dixit_lab.suggest import did_you_mean

            raise UnknownName(f"unknown {self.kind} {name!r}{did_you_mean(name, self.names())}"
                              f"; available {self.kind}s: {', '.join(self.names()) or 'none'}")
        try:
            loaded = entry.load()
        except Exception as error:
            reason = " ".join(f"{type(error).__name__}: {error}".split())  # one line
            new = self._not_installed.get(name)
            hint = (f"; it is declared in {new} but not installed: if its package is new, "
                    f"rerun pip install -e . there" if new is not None else "")
            raise UnknownName(f"{self.kind} {name!r} ({entry.value}) could not be loaded: "
                              f"{reason}{hint}") from None
        if isinstance(loaded, type) and issubclass(loaded, self.base):
            self._classes.setdefault(name, loaded)
        if name not in self._classes:  # an entry point naming a module that registers it
            raise UnknownName(f"{self.kind} {name!r}: entry point {entry.value} is not a "
                              f"subclass of {self.base.__name__}")
        return self._classes[name]

    def load_all(self) -> dict[str, type[T]]:
        """Every class that can be loaded (a broken plugin warns and is left out)."""
        classes = {}
        for name in self.names():
            try:
                classes[name] = self.get(name)
            except UnknownName as error:
                warnings.warn(str(error), stacklevel=2)
        return classes
