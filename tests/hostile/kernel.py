"""Kernel objects that cross every wall a namespace builds: keyrings (the session keyring a
sandbox shared with the engine, a key left for the next game or for a partner) and inotify
(a watch on the host's files sees every process's opens, whatever its namespace). Each agent
calls the kernel itself through ``ctypes`` and reports what it got."""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from pathlib import Path
from typing import Any

from tests.hostile.common import Hostile

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long
# x86_64 system call numbers
_ADD_KEY, _REQUEST_KEY, _KEYCTL = 248, 249, 250
_INOTIFY_INIT1, _INOTIFY_ADD_WATCH = 294, 254
_KEYCTL_DESCRIBE, _KEYCTL_READ = 6, 11
_KEY_SPEC_SESSION_KEYRING = -3
_IN_OPEN, _IN_NONBLOCK = 0x20, 0x800

#: the key the host leaves in the engine's session keyring (tests/hostile/keyring_host.py)
HOST_KEY = "dixit-canary-token"
#: the key a spy leaves for itself, or for its partner
SPY_KEY = "dixit-spy-memory"


def _error() -> str:
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def _syscall(*args: Any) -> int:
    return int(_LIBC.syscall(*(ctypes.c_long(a) if isinstance(a, int) else a for a in args)))


def _keyctl_text(operation: int, serial: int) -> bytes | None:
    buffer = ctypes.create_string_buffer(4096)
    size = _syscall(_KEYCTL, operation, serial, buffer, 4096)
    return None if size < 0 else buffer.raw[:min(size, 4096)]


def session_keys() -> tuple[list[tuple[str, bytes | None]], str]:
    """The keys of this process's session keyring: (description, payload) each; and the
    error of the first call (``ok`` if it worked)."""
    listing = _keyctl_text(_KEYCTL_READ, _KEY_SPEC_SESSION_KEYRING)
    if listing is None:
        return [], _error()
    keys = []
    for (serial,) in struct.iter_unpack("i", listing[:len(listing) // 4 * 4]):
        described = _keyctl_text(_KEYCTL_DESCRIBE, serial) or b""
        payload = _keyctl_text(_KEYCTL_READ, serial)
        keys.append((described.rstrip(b"\0").decode(errors="replace").rpartition(";")[2],
                     payload))
    return keys, "ok"


def add_key(name: str, payload: bytes) -> str:
    """Add a user key to the session keyring: ``ok`` or the error."""
    result = _syscall(_ADD_KEY, ctypes.c_char_p(b"user"), ctypes.c_char_p(name.encode()),
                      ctypes.c_char_p(payload), len(payload), _KEY_SPEC_SESSION_KEYRING)
    return "ok" if result >= 0 else _error()


class KeyringSpy(Hostile):
    """Reads the session keyring at every game (the host's token, the key a game before it
    left) and leaves its own key there, with this game's first hand."""

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        keys, listed = session_keys()
        names = [name for name, _ in keys]
        host = [payload for name, payload in keys if name == HOST_KEY]
        self.found = {"listed": listed, "host_key": bool(host and host[0]),
                      "recalled": SPY_KEY in names, "added": add_key(SPY_KEY, b"hand")}


class InotifySpy(Hostile):
    """Watches the files bound in its sandbox (its own module and the deck's images) for
    opens: what it got from ``inotify_init1`` and ``inotify_add_watch``."""

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        fd = _syscall(_INOTIFY_INIT1, _IN_NONBLOCK)
        self.found = {"init": "ok" if fd >= 0 else _error(), "watches": []}
        if fd < 0:
            return
        images = [card.image for card in context.deck.cards if card.image is not None]
        for path in [Path(__file__).resolve(), *([images[0].parent] if images else [])]:
            watch = _syscall(_INOTIFY_ADD_WATCH, fd, ctypes.c_char_p(bytes(path)), _IN_OPEN)
            self.found["watches"].append("ok" if watch >= 0 else _error())
        os.close(fd)


class ImageOpener(Hostile):
    """The storyteller of a colluding pair: opens the image of the card it tells (one read of
    its file), which is all its partner needs to see (:class:`ImageWatcher`)."""

    def tell(self, view: Any) -> Any:
        image = self.context.deck.cards[view.hand[0]].image
        if image is not None:
            with open(image, "rb") as handle:
                handle.read(1)
        return super().tell(view)


class ImageWatcher(Hostile):
    """The partner: watches the deck's image folder (inotify, ``IN_OPEN``); at each vote, the
    cards whose image was opened since its last vote are the storyteller's."""

    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        self.fd = _syscall(_INOTIFY_INIT1, _IN_NONBLOCK)
        self.found = {"watch": "ok" if self.fd >= 0 else _error()}
        self.by_name = {card.image.name: index for index, card in enumerate(context.deck.cards)
                        if card.image is not None}
        folders = {card.image.parent for card in context.deck.cards if card.image is not None}
        if self.fd >= 0:
            for folder in folders:
                if _syscall(_INOTIFY_ADD_WATCH, self.fd, ctypes.c_char_p(bytes(folder)),
                            _IN_OPEN) < 0:
                    self.found["watch"] = _error()

    def _opened(self) -> set[int]:
        cards: set[int] = set()
        if self.fd < 0:
            return cards
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return cards
            offset = 0
            while offset + 16 <= len(data):
                _, _, _, size = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16:offset + 16 + size].rstrip(b"\0").decode()
                if name in self.by_name:
                    cards.add(self.by_name[name])
                offset += 16 + size

    def vote(self, view: Any) -> int:
        self.teller_cards[view.storyteller] = self._opened()
        return super().vote(view)
