"""Classes named by import strings: ``"package.module:ClassName"`` or ``"path/to/file.py:Class"``.

This is how an outside agent enters a config without being packaged: a module importable on
``sys.path``, or a Python file (a relative path is read from the current folder). A file is
imported once, under a module name derived from its absolute path, so that worker processes
forked from this one find the same class. :func:`load_attribute` returns any object so named
(the ``policy`` agent's policies).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

from dixit_lab.errors import UserError

__all__ = ["ImportStringError", "is_import_string", "load_attribute", "load_class"]


class ImportStringError(UserError, ValueError):
    """An import string that does not name a class. The message says why."""


def is_import_string(name: str) -> bool:
    """True for ``module:Class`` and ``file.py:Class`` (registry names hold no colon)."""
    return ":" in name


def load_attribute(target: str, what: str = "name") -> object:
    """The object named by ``target`` (``module.sub:name`` or ``path/file.py:name``); ``what``
    names the attribute in the error message."""
    where, _, attribute = target.rpartition(":")
    if not where or not attribute.isidentifier():
        raise ImportStringError(f"{target!r} is not 'package.module:{what}' or "
                                f"'path/to/file.py:{what}'")
    module = _load_file(where, target) if _is_path(where) else _load_module(where, target)
    value = getattr(module, attribute, None)
    if value is None:
        raise ImportStringError(f"{target!r}: {where} has no attribute {attribute!r}")
    return value


def load_class(target: str) -> type:
    """The class named by ``target`` (``module.sub:Class`` or ``path/file.py:Class``)."""
    value = load_attribute(target, "ClassName")
    if not isinstance(value, type):
        attribute = target.rpartition(":")[2]
        raise ImportStringError(f"{target!r}: {attribute} is a {type(value).__name__}, "
                                f"not a class")
    return value


def _is_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where


def _load_module(name: str, target: str) -> object:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and (name == error.name or name.startswith(error.name + ".")):
            raise ImportStringError(f"{target!r}: no module named {error.name!r} on sys.path "
                                    f"(install it, or name a file: 'path/to/file.py:Class')"
                                    ) from None
        raise ImportStringError(f"{target!r}: importing {name} failed: {error}") from None
    except Exception as error:
        raise ImportStringError(f"{target!r}: importing {name} raised "
                                f"{type(error).__name__}: {error}") from None


def _load_file(where: str, target: str) -> object:
    path = Path(where).expanduser()
    if not path.is_file():
        raise ImportStringError(f"{target!r}: file {where} not found (relative paths are read "
                                f"from the current folder, {Path.cwd()})")
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    module_name = f"dixit_lab_user_{resolved.stem.replace('-', '_')}_{digest}"
    module = sys.modules.get(module_name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise ImportStringError(f"{target!r}: {where} cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[module_name]
        raise ImportStringError(f"{target!r}: importing {where} raised "
                                f"{type(error).__name__}: {error}") from None
    return module
