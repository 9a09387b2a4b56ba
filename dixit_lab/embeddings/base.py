"""The :class:`Embedder` protocol, the embedder registry and :func:`make_embedder`.

An embedder maps card images (or captions) and clue texts into one vector space. Its ``id`` is
its full identity — backend, model, weights, preprocessing and every parameter that changes
the vectors — and keys the disk cache and the shipped embeddings. Parameters that only change
*how fast* vectors are computed (``device``, ``batch_size``) are left out of the id, so that
they do not split the cache.

Constructing an embedder and reading ``id``/``dim`` never imports torch or loads a model; the
model is loaded on the first ``embed_*`` call. A machine without torch can therefore still use
shipped or cached embeddings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dixit_lab.bundled import source_checkout
from dixit_lab.core.cards import Card
from dixit_lab.errors import UserError, install_hint
from dixit_lab.plugins.registry import Registry, UnknownName
from dixit_lab.plugins.spec import SpecError, check_value, format_spec, parse_spec, type_name

__all__ = [
    "Embedder",
    "EmbedderSpecError",
    "MissingCaptionError",
    "ModelUnavailableError",
    "available_embedders",
    "card_content",
    "card_content_hash",
    "embedder_parameters",
    "image_bytes",
    "image_path",
    "make_embedder",
    "missing_packages",
    "normalize_rows",
    "register_embedder",
    "text_hash",
    "text_model_problem",
]


@runtime_checkable
class Embedder(Protocol):
    """Maps cards and texts to L2-normalised float32 row vectors of one space.

    Optional: a method ``card_content(card) -> bytes`` returning the bytes that determine a
    card's vector (default: the image file's bytes; the ``text`` backend returns the caption).
    The cache and the shipped files key cards by the sha256 of these bytes.
    """

    @property
    def id(self) -> str:
        """Full, stable identity; equal ids promise equal vectors."""
        ...

    @property
    def dim(self) -> int:
        """Vector length."""
        ...

    def embed_images(self, cards: Sequence[Card]) -> np.ndarray:
        """(len(cards), dim) float32, rows of unit norm."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows of unit norm."""
        ...


class EmbedderSpecError(UserError, ValueError):
    """An unknown embedder or a bad parameter in an embedder spec."""


class ModelUnavailableError(UserError, RuntimeError):
    """The model an embedder needs cannot be loaded here (missing package or weights)."""


class MissingCaptionError(UserError, ValueError):
    """A caption-based embedder met a card without a caption."""


def text_hash(text: str) -> str:
    """sha256 hex digest of a text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def image_path(card: Card) -> Path:
    """A card's image file; a clear error for a card without an image."""
    if card.image is None:
        raise ValueError(f"card {card.id!r} has no image (a numbered, rules-only card?); "
                         "image embedders need a deck with images")
    return card.image


def image_bytes(card: Card) -> bytes:
    """The bytes of a card's image file."""
    return image_path(card).read_bytes()


def card_content(embedder: object, card: Card) -> bytes:
    """The bytes that determine ``card``'s vector under ``embedder``."""
    method = getattr(embedder, "card_content", None)
    return method(card) if callable(method) else image_bytes(card)


def card_content_hash(embedder: object, card: Card) -> str:
    """sha256 hex digest of :func:`card_content`."""
    return hashlib.sha256(card_content(embedder, card)).hexdigest()


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """float32 copy with unit-norm rows; a zero or non-finite row is an error."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise ValueError("cannot normalise: a row is zero or not finite")
    return (out / norms).astype(np.float32)


# ----------------------------------------------------------------------------------- registry

# Built-in backends and plugins are entry points of the ``dixit_lab.embedders`` group
# (``pyproject.toml``), imported on first use so that importing this module stays light.
EMBEDDERS: Registry[Any] = Registry("dixit_lab.embedders", "embedder", object, source_checkout)


def register_embedder(name: str) -> Callable[[type], type]:
    """Class decorator: register a dataclass embedder under ``name``.

    The dataclass's init fields are the spec parameters; their annotations (``int``, ``float``,
    ``bool``, ``str``, ``X | None``) are used to validate spec values.
    """

    def decorate(cls: type) -> type:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"embedder {name!r}: {cls.__name__} must be a dataclass")
        EMBEDDERS.register(name)(cls)
        return cls

    return decorate


def _lookup(name: str) -> type:
    try:
        return EMBEDDERS.get(name)
    except UnknownName as error:
        raise EmbedderSpecError(str(error)) from None


def available_embedders() -> list[str]:
    """Names of the registered embedder backends."""
    return EMBEDDERS.names()


def embedder_parameters(name: str) -> dict[str, tuple[Any, Any]]:
    """``{parameter: (type, default)}`` of the backend ``name``."""
    cls = _lookup(name)
    hints = typing.get_type_hints(cls)
    params: dict[str, tuple[Any, Any]] = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        params[f.name] = (hints[f.name], default)
    return params


def make_embedder(spec: str | Mapping[str, Any] | Embedder) -> Embedder:
    """An embedder from a spec string (``"conse(top_k=5)"``), a dict from YAML
    (``{"kind": "clip", "model": "ViT-B-32"}``; ``name`` is accepted for ``kind``) or an
    embedder object (returned as is)."""
    if isinstance(spec, str):
        try:
            name, params = parse_spec(spec)
        except ValueError as error:
            raise EmbedderSpecError(f"bad embedder spec: {error}") from None
    elif isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("kind", None) or params.pop("name", None)
        if not isinstance(name, str):
            raise EmbedderSpecError(f"an embedder dict needs a 'kind' (one of "
                                    f"{', '.join(available_embedders())}), got {dict(spec)!r}")
    elif isinstance(spec, Embedder):
        return spec
    else:
        raise EmbedderSpecError(f"expected an embedder spec string, dict or embedder, "
                                f"got {type(spec).__name__}")
    cls = _lookup(name)
    allowed = embedder_parameters(name)
    values: dict[str, Any] = {}
    for key, value in params.items():
        if key not in allowed:
            from dixit_lab.suggest import did_you_mean

            raise EmbedderSpecError(f"embedder {name!r} has no parameter {key!r}"
                                    f"{did_you_mean(key, allowed)}; allowed: "
                                    f"{_describe(allowed)}")
        values[key] = _coerce(name, key, value, allowed[key][0])
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:
        raise EmbedderSpecError(f"embedder {name!r}: {error}") from None


def _describe(allowed: Mapping[str, tuple[Any, Any]]) -> str:
    return ", ".join(f"{key}: {type_name(kind)} = {default!r}"
                     for key, (kind, default) in allowed.items())


def _coerce(name: str, key: str, value: Any, kind: Any) -> Any:
    try:
        return check_value(kind, value)
    except SpecError as error:
        # A bare word such as ``device=0`` reads as an int; accept it where a string is wanted.
        if str in (typing.get_args(kind) or (kind,)) and isinstance(value, int) \
                and not isinstance(value, bool):
            return str(value)
        raise EmbedderSpecError(f"embedder {name!r}: parameter {key!r} {error}") from None


def spec_id(name: str, params: Mapping[str, Any]) -> str:
    """An embedder id in spec syntax (used by the built-in backends)."""
    return format_spec(name, params)


def missing_packages(modules: Sequence[tuple[str, str]]) -> list[str]:
    """The packages (``(module, package)`` pairs) whose module cannot be found here, without
    importing any of them (importing torch takes seconds)."""
    import importlib.util

    missing = []
    for module, package in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a module set to None, a broken parent package
            found = False
        if not found:
            missing.append(package)
    return missing


def text_model_problem(spec: str | Mapping[str, Any] | Embedder) -> tuple[str, str] | None:
    """Why the embedder of ``spec`` cannot embed a text outside the shipped clue banks here
    (its text model is not installed): (what is missing, the extra that installs it), or
    None. Asks the embedder's optional ``text_model_problem()`` without loading a model; an
    embedder without one is taken to manage (what it then fails to perceive is counted)."""
    check = getattr(make_embedder(spec), "text_model_problem", None)
    problem = check() if callable(check) else None
    return None if problem is None else (str(problem[0]), str(problem[1]))


#: packages built on torch: torch, then torchvision (if installed), are imported before them,
#: so that a broken torch build, or a torchvision made for another torch, is named as itself
#: and not as the package above it ("Could not import module 'PreTrainedModel'")
_ON_TORCH = frozenset({"sentence_transformers", "open_clip", "transformers", "torchvision",
                       "efficientnet_lite_pytorch"})


def first_cause(error: BaseException) -> BaseException:
    """The first error of an import that failed: the end of its chain of causes."""
    seen = {id(error)}
    while True:
        inner = error.__cause__ or error.__context__
        if inner is None or id(inner) in seen:
            return error
        seen.add(id(inner))
        error = inner


def require(module: str, extra: str) -> Any:
    """Import ``module`` or raise :class:`ModelUnavailableError` naming the first import that
    failed, its first error and the install hint."""
    stack = [name for name in ("torch", "torchvision") if name != module
             and module in _ON_TORCH and (name == "torch" or _installed(name))]
    for name in (*stack, module):
        try:
            imported = importlib.import_module(name)
        except Exception as error:  # missing, or a broken install (torchvision for another torch)
            cause = first_cause(error)
            where = "" if name == module else f" (it imports {name!r} first)"
            raise ModelUnavailableError(
                f"this embedder needs the Python package {module!r}, which does not import "
                f"here{where}: {name} failed with {type(cause).__name__}: {cause}; "
                f"{install_hint(extra, torch=True)}") from error
    return imported


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def open_rgb(card: Card) -> Any:
    """A card's image as an RGB ``PIL.Image`` (read whole, the file closed)."""
    from PIL import Image

    with Image.open(image_path(card)) as image:
        return image.convert("RGB")


def embed_in_batches(items: Sequence[Any], batch_size: int,
                     encode: Callable[[Sequence[Any]], np.ndarray], dim: int,
                     what: str) -> np.ndarray:
    """``encode`` over consecutive batches of ``items``, stacked and checked
    (:func:`check_output`); the model backends' one loop. No items, no call."""
    if not items:
        return np.zeros((0, dim), dtype=np.float32)
    rows = [encode(items[start:start + batch_size])
            for start in range(0, len(items), batch_size)]
    return check_output(np.concatenate(rows), len(items), dim, what)


def check_output(matrix: Any, n: int, dim: int, what: str) -> np.ndarray:
    """Validate a backend's output: shape (n, dim), finite; returned float32, unit rows."""
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    out = np.asarray(matrix, dtype=np.float32)
    if out.shape != (n, dim):
        raise ValueError(f"{what}: expected shape {(n, dim)}, got {out.shape}")
    return normalize_rows(out)
