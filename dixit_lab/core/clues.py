"""Clue banks: the texts a storyteller (or a guesser's imagination) can choose clues from.

A :class:`ClueBank` is an ordered, de-duplicated tuple of short clue texts, each tagged
with a *kind* (``concrete_noun``, ``idiom``, ``title`` ...). Agents score every clue in a
bank against card embeddings, so a bank is immutable, has a stable :attr:`ClueBank.content_hash`
to key embedding caches, and maps a text back to its row with :meth:`ClueBank.index`.

Banks come from three places:

* a bundled name, e.g. ``ClueBank.load("default")`` -> ``data/clues/default.csv``
  (the data root of :mod:`dixit_lab.bundled`: ``$DIXIT_LAB_DATA`` if set, else the
  package's bundled data);
* a user file: ``.txt`` (one clue per line, blank lines and ``#`` comments ignored, kind
  ``custom``) or ``.csv`` (a ``text`` column, an optional ``kind`` column);
* memory: ``ClueBank.from_texts([...])``.

Every text goes through :func:`normalize_clue`; duplicates are detected case-insensitively
(``str.casefold``) and the first occurrence is kept.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from dixit_lab.bundled import data_path
from dixit_lab.errors import UserError
from dixit_lab.text_rule import CLUE_CHARS, text_problem

__all__ = [
    "CLUE_KINDS",
    "CUSTOM_KIND",
    "DEFAULT_CLUE_BANK",
    "ClueBank",
    "ClueBankError",
    "available_clue_banks",
    "clue_key",
    "normalize_clue",
]

#: The kinds used by the bundled banks.
CLUE_KINDS: tuple[str, ...] = (
    "concrete_noun",
    "abstract_noun",
    "emotion",
    "adjective",
    "verb",
    "phrase",
    "idiom",
    "title",
    "onomatopoeia",
)
#: Kind given to clues from user files or memory that carry no kind.
CUSTOM_KIND = "custom"
#: Name of the bank used when none is given.
DEFAULT_CLUE_BANK = "default"

_QUOTE_PAIRS: tuple[tuple[str, str], ...] = (
    ('"', '"'),
    ("'", "'"),
    ("\u201c", "\u201d"),  # “ ”
    ("\u2018", "\u2019"),  # ‘ ’
)
_TRAILING_PUNCT = ".;:"
_WHITESPACE = re.compile(r"\s+")


class ClueBankError(UserError, ValueError):
    """A clue bank that cannot be loaded or built. The message names the file or bank."""


def _clues_dir() -> Path:
    return data_path("clues")


def normalize_clue(text: str) -> str:
    """Return the display form of a clue.

    Applies Unicode NFC, strips the ends, collapses internal whitespace to one space,
    removes surrounding *matching* quotes (``"…"``, ``'…'``, ``“…”``, ``‘…’``) and trailing
    sentence punctuation (``.``, ``;``, ``:``). ``?``, ``!`` and ellipses (``…`` or a
    trailing ``...``) are kept. Case is preserved; compare clues with :func:`clue_key`.
    The steps repeat until nothing changes, so ``'"The end."'`` becomes ``The end``.
    An all-punctuation or blank input gives ``""``.
    """
    if not isinstance(text, str):
        raise TypeError(f"a clue must be a str, got {type(text).__name__}: {text!r}")
    out = _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()
    while True:
        before = out
        for left, right in _QUOTE_PAIRS:
            if len(out) >= 2 and out.startswith(left) and out.endswith(right):
                out = out[len(left) : -len(right)].strip()
        if not out.endswith("...") and out.endswith(tuple(_TRAILING_PUNCT)):
            out = out.rstrip(_TRAILING_PUNCT).rstrip()
        if out == before:
            return out


def clue_key(text: str) -> str:
    """The de-duplication / lookup key of a clue: its normalised form, casefolded."""
    return normalize_clue(text).casefold()


@dataclass(frozen=True, repr=False)
class ClueBank:
    """An immutable, ordered bank of distinct clue texts, each with a kind.

    Construct it with :meth:`load` or :meth:`from_texts`, which normalise and
    de-duplicate. The raw constructor normalises too but *rejects* duplicates and
    empty texts instead of dropping them.

    ``dropped_duplicates`` and ``skipped_empty`` record what the loader threw away;
    they do not take part in equality or hashing.
    """

    name: str
    texts: tuple[str, ...]
    kinds: tuple[str, ...]
    dropped_duplicates: int = field(default=0, compare=False)
    skipped_empty: int = field(default=0, compare=False)
    _index: dict[str, int] = field(default_factory=dict, init=False, compare=False)

    def __post_init__(self) -> None:
        texts = tuple(self.texts)
        kinds = tuple(self.kinds)
        if len(texts) != len(kinds):
            raise ClueBankError(
                f"clue bank {self.name!r}: {len(texts)} texts but {len(kinds)} kinds"
            )
        if not texts:
            raise ClueBankError(f"clue bank {self.name!r} is empty")
        normalised = tuple(normalize_clue(t) for t in texts)
        index: dict[str, int] = {}
        for i, (text, kind) in enumerate(zip(normalised, kinds, strict=True)):
            if not text:
                raise ClueBankError(
                    f"clue bank {self.name!r}: clue {i} ({texts[i]!r}) is empty after normalisation"
                )
            problem = text_problem(text)
            if problem:
                raise ClueBankError(f"clue bank {self.name!r}: clue {i} ({text!r}) is not one "
                                    f"line of text: it holds {problem}")
            if len(text) > CLUE_CHARS:  # (every agent's clue has this cap: the engine's check)
                raise ClueBankError(f"clue bank {self.name!r}: clue {i} has {len(text)} "
                                    f"characters; a clue has at most {CLUE_CHARS}")
            if not isinstance(kind, str) or not kind.strip():
                raise ClueBankError(f"clue bank {self.name!r}: clue {i} ({text!r}) has no kind")
            key = text.casefold()
            if key in index:
                raise ClueBankError(
                    f"clue bank {self.name!r}: clue {i} ({text!r}) duplicates clue "
                    f"{index[key]} ({normalised[index[key]]!r}); use ClueBank.from_texts "
                    "to drop duplicates"
                )
            index[key] = i
        object.__setattr__(self, "texts", normalised)
        object.__setattr__(self, "kinds", tuple(k.strip() for k in kinds))
        self._index.update(index)

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        kinds: str | Sequence[str] | None = None,
        name: str = "custom",
    ) -> ClueBank:
        """Build a bank from in-memory texts.

        ``kinds`` is one kind per text, a single kind for all, or None (``"custom"``).
        Texts are normalised; empty ones are skipped and counted in ``skipped_empty``;
        case-insensitive duplicates are dropped (first kept) and counted in
        ``dropped_duplicates``. Raises :class:`ClueBankError` if nothing is left.
        """
        texts = list(texts)
        if kinds is None or isinstance(kinds, str):
            kind_list = [CUSTOM_KIND if kinds is None else kinds] * len(texts)
        else:
            kind_list = list(kinds)
            if len(kind_list) != len(texts):
                raise ClueBankError(
                    f"clue bank {name!r}: {len(texts)} texts but {len(kind_list)} kinds"
                )
        return cls._build(texts, kind_list, name=name, source=f"clue bank {name!r}")

    @classmethod
    def _build(
        cls,
        texts: Sequence[str],
        kinds: Sequence[str],
        *,
        name: str,
        source: str,
        skipped_empty: int = 0,
    ) -> ClueBank:
        """Normalise, drop empties and duplicates, and construct; ``source`` prefixes errors."""
        out_texts: list[str] = []
        out_kinds: list[str] = []
        seen: set[str] = set()
        dropped = 0
        for text, kind in zip(texts, kinds, strict=True):
            norm = normalize_clue(text)
            if not norm:
                skipped_empty += 1
                continue
            key = norm.casefold()
            if key in seen:
                dropped += 1
                continue
            seen.add(key)
            out_texts.append(norm)
            out_kinds.append(kind.strip() if kind and kind.strip() else CUSTOM_KIND)
        if not out_texts:
            raise ClueBankError(
                f"{source}: no clues left after normalisation "
                f"({len(texts)} read, {skipped_empty} empty, {dropped} duplicates)"
            )
        return cls(
            name=name,
            texts=tuple(out_texts),
            kinds=tuple(out_kinds),
            dropped_duplicates=dropped,
            skipped_empty=skipped_empty,
        )

    @classmethod
    def load(cls, name_or_path: str | Path = DEFAULT_CLUE_BANK) -> ClueBank:
        """Load a bundled bank by name (``"default"``) or a user ``.txt`` / ``.csv`` file.

        A :class:`~pathlib.Path`, or a string with a directory separator or a file
        extension, is a file path; any other string is a bundled bank name.

        Raises:
            FileNotFoundError: the file does not exist.
            ClueBankError: (a ``ValueError``) unknown bundled name, unknown extension,
                missing ``text`` column, undecodable or malformed file, or an empty bank.
        """
        if isinstance(name_or_path, Path) or _looks_like_path(name_or_path):
            path = Path(name_or_path).expanduser()
            return cls._load_file(path, name=path.stem)
        name = str(name_or_path)
        path = _clues_dir() / f"{name}.csv"
        if not path.is_file():
            available = available_clue_banks()
            raise ClueBankError(
                f"unknown bundled clue bank {name!r} (looked for {path}); available: "
                f"{', '.join(available) if available else 'none'}"
            )
        return cls._load_file(path, name=name)

    @classmethod
    def _load_file(cls, path: Path, *, name: str) -> ClueBank:
        if not path.exists():
            raise FileNotFoundError(f"clue bank file not found: {path}")
        if not path.is_file():
            raise ClueBankError(f"clue bank path is not a file: {path}")
        suffix = path.suffix.lower()
        if suffix not in (".txt", ".csv"):
            raise ClueBankError(
                f"{path}: unknown clue bank extension {path.suffix or '(none)'!r}; "
                "use .txt (one clue per line) or .csv (a 'text' column, optional 'kind')"
            )
        try:
            content = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ClueBankError(f"{path}: not UTF-8 text ({exc})") from exc
        if suffix == ".txt":
            texts, kinds, empty = _parse_txt(content, path)
        else:
            texts, kinds, empty = _parse_csv(content, path)
        return cls._build(texts, kinds, name=name, source=str(path), skipped_empty=empty)

    # ------------------------------------------------------------------ container API

    def __len__(self) -> int:
        return len(self.texts)

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __getitem__(self, i: int) -> str:
        return self.texts[i]

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and clue_key(text) in self._index

    def __repr__(self) -> str:
        return (
            f"ClueBank(name={self.name!r}, n={len(self)}, "
            f"kinds={self.kind_counts()}, hash={self.content_hash[:12]})"
        )

    def index(self, text: str) -> int:
        """Row of ``text`` (matched after normalisation, case-insensitively).

        Raises:
            KeyError: the clue is not in the bank.
        """
        try:
            return self._index[clue_key(text)]
        except KeyError:
            raise KeyError(
                f"clue {text!r} is not in clue bank {self.name!r} ({len(self)} clues)"
            ) from None

    def kind_of(self, text: str) -> str:
        """Kind of the clue ``text`` (``KeyError`` if absent)."""
        return self.kinds[self.index(text)]

    def kind_counts(self) -> dict[str, int]:
        """Number of clues per kind, sorted by kind name."""
        return dict(sorted(Counter(self.kinds).items()))

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 (hex) of the normalised texts joined by ``"\\n"``: an embedding-cache key.

        Depends on the texts and their order only, not on the name or the kinds.
        """
        return hashlib.sha256("\n".join(self.texts).encode("utf-8")).hexdigest()

    # ------------------------------------------------------------------ derived banks

    def subset(self, kinds: str | Iterable[str], name: str | None = None) -> ClueBank:
        """The clues whose kind is in ``kinds``, in bank order.

        Raises:
            ClueBankError: a requested kind is absent from the bank (lists the kinds present).
        """
        wanted = [kinds] if isinstance(kinds, str) else list(dict.fromkeys(kinds))
        if not wanted:
            raise ClueBankError(f"clue bank {self.name!r}: subset() needs at least one kind")
        present = self.kind_counts()
        missing = [k for k in wanted if k not in present]
        if missing:
            raise ClueBankError(
                f"clue bank {self.name!r} has no clues of kind {', '.join(map(repr, missing))}; "
                f"kinds present: {', '.join(present)}"
            )
        keep = set(wanted)
        rows = [i for i, k in enumerate(self.kinds) if k in keep]
        return ClueBank(
            name=name or f"{self.name}[{'+'.join(wanted)}]",
            texts=tuple(self.texts[i] for i in rows),
            kinds=tuple(self.kinds[i] for i in rows),
        )

    def sample(self, n: int, rng: np.random.Generator, name: str | None = None) -> ClueBank:
        """``n`` distinct clues drawn without replacement with ``rng``, in draw order.

        Only the given generator is used (never global random state), so a seeded
        generator gives the same sample every time.

        Raises:
            TypeError: ``rng`` is not a ``numpy.random.Generator``.
            ClueBankError: ``n`` is not between 1 and ``len(self)``.
        """
        if not isinstance(rng, np.random.Generator):
            raise TypeError(
                f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
                f"got {type(rng).__name__}"
            )
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 1 <= n <= len(self):
            raise ClueBankError(
                f"clue bank {self.name!r}: cannot sample {n!r} clues from {len(self)}"
            )
        rows = rng.choice(len(self), size=int(n), replace=False)
        return ClueBank(
            name=name or f"{self.name}~{int(n)}",
            texts=tuple(self.texts[i] for i in rows),
            kinds=tuple(self.kinds[i] for i in rows),
        )


def available_clue_banks() -> list[str]:
    """Names of the bundled clue banks (the ``.csv`` stems in ``<data root>/clues``), sorted."""
    folder = _clues_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.csv") if p.is_file())


# ---------------------------------------------------------------------- parsing helpers


def _looks_like_path(value: str) -> bool:
    return "/" in value or os.sep in value or bool(Path(value).suffix)


def _parse_txt(content: str, path: Path) -> tuple[list[str], list[str], int]:
    """One clue per line (lines end at ``"\\n"``, a line separator such as U+2028 in a line is
    refused, naming the line); blank lines and ``#`` comments are ignored silently.

    Lines with content that normalises to nothing (e.g. ``""``) count as empty.
    """
    texts: list[str] = []
    empty = 0
    for number, line in enumerate(content.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        _check_clue_text(stripped, f"{path}, line {number}", allow="\t")
        if not normalize_clue(stripped):
            empty += 1
            continue
        texts.append(stripped)
    return texts, [CUSTOM_KIND] * len(texts), empty


def _check_clue_text(text: str, where: str, allow: str) -> None:
    """Refuse a clue of a file that breaks the text rule (``allow``: the whitespace that
    normalisation collapses to a space: tabs, and the line breaks of a quoted CSV clue)."""
    problem = text_problem(text, allow=allow)
    if problem:
        raise ClueBankError(f"{where}: the clue {text!r} is not one line of text: it holds "
                            f"{problem}")


#: a quoted clue may hold a line break or two, never more (more is an unbalanced quote)
MAX_CLUE_LINES = 3


def _parse_csv(content: str, path: Path) -> tuple[list[str], list[str], int]:
    """A ``text`` column (required) and a ``kind`` column (optional), header matched
    case-insensitively. Rows with an empty ``text`` are skipped and counted."""
    reader = csv.reader(io.StringIO(content, newline=""), strict=True)
    start = first = 1
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise ClueBankError(f"{path}: empty CSV, expected a header row with a 'text' column")
        columns = [h.strip().lower() for h in header]
        if "text" not in columns:
            raise ClueBankError(
                f"{path}: no 'text' column; columns found: {', '.join(repr(h) for h in header)}"
            )
        text_col = columns.index("text")
        kind_col = columns.index("kind") if "kind" in columns else None
        texts: list[str] = []
        kinds: list[str] = []
        empty = 0
        start = reader.line_num + 1
        for row in reader:
            first, start = start, reader.line_num + 1
            if not row:
                continue  # a blank line, not a clue
            text = row[text_col] if text_col < len(row) else ""
            if reader.line_num - first > MAX_CLUE_LINES - 1:
                raise ClueBankError(f"{path}, line {first}: a quoted clue runs over lines "
                                    f"{first}-{reader.line_num} (an unbalanced quote?)")
            _check_clue_text(text, f"{path}, line {first}", allow="\n\r\t")
            if not normalize_clue(text):
                empty += 1
                continue
            kind = row[kind_col].strip() if kind_col is not None and kind_col < len(row) else ""
            texts.append(text)
            kinds.append(kind or CUSTOM_KIND)
    except csv.Error as exc:
        first = start if "end of data" in str(exc) else reader.line_num
        raise ClueBankError(f"{path}, line {first}: malformed CSV ({exc}; an unbalanced "
                            f"quote?)") from None
    return texts, kinds, empty
