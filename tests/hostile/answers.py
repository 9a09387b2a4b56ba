"""Answers the engine must survive: a nested submission, any JSON-shaped answer, clues and
exception messages of a million characters, and a stderr that floods or writes escapes to the
operator's terminal."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import random
import stat
from typing import Any

from dixit_lab.core.agent import Clue
from tests.hostile.common import Hostile


class NestedSubmit(Hostile):
    """Submits ``[[card]]``: a list in a list (unhashable: ``set()`` of it raises)."""

    def submit(self, view: Any) -> Any:
        return [[card] for card in view.hand[:view.n_cards]]


def any_value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-shaped value of any kind, drawn from ``rng``: nested lists and dicts, huge and
    negative ints, floats (inf, nan), strings, bools, None."""
    kinds = ["int", "huge", "float", "special", "str", "bool", "none"]
    if depth < 4:
        kinds += ["list", "list", "dict"]
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.randint(-3, 70)
    if kind == "huge":
        return rng.choice([1, -1]) * 10 ** rng.randint(18, 400)
    if kind == "float":
        return rng.choice([0.0, 1.0, 2.5, -1.0, 1e308, 3.0])
    if kind == "special":
        return rng.choice([float("inf"), float("-inf"), float("nan")])
    if kind == "str":
        return rng.choice(["", "3", "a clue", "\x1b[31mred", "x" * rng.randint(0, 400),
                           "\u202eevil", "\n"])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        return [any_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {str(any_value(rng, depth + 1))[:20]: any_value(rng, depth + 1)
            for _ in range(rng.randint(0, 3))}


def any_answer(rng: random.Random, action: str, view: Any) -> Any:
    """An answer to ``action``: any value, or one shaped like the answer with any parts (a
    clue of any card and text, a list of any cards, any card among the legal ones's kind)."""
    shape = rng.random()
    if shape < 0.3:
        return any_value(rng)
    if action == "tell":
        card = rng.choice([*view.hand, any_value(rng)])
        return Clue(card, rng.choice(["ok", any_value(rng)]))
    if action == "submit":
        if rng.random() < 0.25:  # cards in lists: [[card]]
            return [[rng.choice(view.hand)] for _ in range(view.n_cards)]
        cards = [rng.choice([*view.hand, any_value(rng)])
                 for _ in range(rng.choice([view.n_cards, view.n_cards, 0, 2]))]
        return cards if rng.random() < 0.9 else tuple(cards)
    return rng.choice([0, 1, len(view.display) - 1, any_value(rng)])


class AnyAnswer(Hostile):
    """Answers every decision with :func:`any_answer` of a stream seeded by ``seed``."""

    def __init__(self, seed: int = 0) -> None:
        self._stream = random.Random(seed)

    def tell(self, view: Any) -> Any:
        return any_answer(self._stream, "tell", view)

    def submit(self, view: Any) -> Any:
        return any_answer(self._stream, "submit", view)

    def vote(self, view: Any) -> Any:
        return any_answer(self._stream, "vote", view)


class LongText(Hostile):
    """Clues of ``chars`` characters (``what: clue``), or every decision raising an exception
    whose message has ``chars`` characters (``what: raise``): seeded random base64, which no
    compressor shrinks much below its 6 bits a character."""

    def __init__(self, what: str = "clue", chars: int = 1_000_000) -> None:
        self.what, self.chars = what, chars
        self._stream = random.Random(0)

    def text(self) -> str:
        return base64.b64encode(self._stream.randbytes(self.chars * 3 // 4 + 3)).decode()[
            :self.chars]

    def _raise(self) -> None:
        if self.what == "raise":
            raise ValueError(self.text())

    def tell(self, view: Any) -> Clue:
        self._raise()
        return Clue(view.hand[0], self.text())

    def submit(self, view: Any) -> list[int]:
        self._raise()
        return super().submit(view)

    def vote(self, view: Any) -> int:
        self._raise()
        return super().vote(view)


class StderrWriter(Hostile):
    """At its first game's start writes to stderr: ``mib`` MiB without a newline
    (``kind: flood``), or lines that would repaint a terminal (``kind: escapes``: a window
    title, an OSC 52 clipboard write, a forged coloured error line of the engine)."""

    ESCAPES = (b"\x1b]0;owned title\x07"
               b"\x1b]52;c;ZWNobyBvd25lZA==\x07"
               b"\r\x1b[2K\x1b[31mdixit-lab run: error: forged\x1b[0m\n")

    def __init__(self, kind: str = "flood", mib: int = 64) -> None:
        self.kind, self.mib = kind, mib
        self.done = False

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        if self.done:
            return
        self.done = True
        if self.kind == "escapes":
            _write_all(2, self.ESCAPES)
            return
        chunk = b"z" * (1 << 20)
        for _ in range(self.mib):
            _write_all(2, chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class ForgedReply(AnyAnswer):
    """Besides its answers, writes a forged reply frame straight into its channel to the
    engine before each one (any JSON value, an object with any ``ok``, ``clue``, ``error``,
    ``illegal`` or ``unperceived``, text nested deeper than a parser goes, bytes that are not
    UTF-8): every later reply the engine reads is one answer late, whatever it asked."""

    def _forge(self) -> None:
        fds = []
        for fd in range(3, 64):
            with contextlib.suppress(OSError):
                mode = os.fstat(fd).st_mode
                writes = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
                if stat.S_ISSOCK(mode) or (stat.S_ISFIFO(mode) and writes):
                    fds.append(fd)
        rng = self._stream
        shape = rng.random()
        if shape < 0.1:
            body = b"[" * 100_000
        elif shape < 0.15:
            body = b"\xff\xfe{"
        elif shape < 0.3:
            body = json.dumps(any_value(rng)).encode()
        else:
            key = rng.choice(["ok", "clue", "error", "illegal", "unperceived"])
            body = json.dumps({key: any_value(rng), **({"ok": 1} if rng.random() < 0.3 else {})}
                              ).encode()
        for fd in fds:
            with contextlib.suppress(OSError):
                _write_all(fd, len(body).to_bytes(4, "big") + body)

    def tell(self, view: Any) -> Any:
        self._forge()
        return super().tell(view)

    def submit(self, view: Any) -> Any:
        self._forge()
        return super().submit(view)

    def vote(self, view: Any) -> Any:
        self._forge()
        return super().vote(view)
