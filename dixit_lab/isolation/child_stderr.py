"""What an untrusted seat's child writes to its stderr (``isolation: process`` or
``sandbox``), passed on to the engine's stderr, bounded and harmless.

A :class:`StderrRelay` reads one child's stderr in a thread, in chunks of at most
:data:`CHUNK` bytes, and hands it to its seat's :class:`SeatStderr`, which passes on at most
:data:`STDERR_LIMIT` bytes a seat (every child of the seat together: its process or sandbox,
and any that replaced one that died) and then one note; the rest is read and dropped, so the
engine holds at most a chunk and a line of it. Each line shown is the seat's name in brackets
and the line with every character the text rule refuses written as its escape (a control
byte, an ANSI or OSC escape, a carriage return, a right-to-left override:
:func:`dixit_lab.text_rule.escaped`), so no agent moves the cursor, colours, titles or sets the
clipboard of the operator's terminal, or forges one of the engine's lines; a line longer than
:data:`LINE_CHARS` characters is shown in pieces of that length. The thread writes with
``os.write`` (no lock of Python's ``sys.stderr`` that a fork could inherit held).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import threading

from dixit_lab.text_rule import escaped

__all__ = ["CHUNK", "LINE_CHARS", "STDERR_LIMIT", "SeatStderr", "StderrRelay"]

#: bytes of a seat's stderr passed on; the rest is read and dropped
STDERR_LIMIT = 1 << 20
#: bytes read from a child's stderr at a time
CHUNK = 1 << 16
#: characters of a line shown at once (a longer line is shown in pieces)
LINE_CHARS = 2000


class SeatStderr:
    """One seat's share of the engine's stderr: its name (``label``, shown before each of its
    lines; the seat's public name once it plays) and what is left of its
    :data:`STDERR_LIMIT`."""

    def __init__(self, label: str, limit: int = STDERR_LIMIT, out: int = 2) -> None:
        self.label, self.limit, self.out = label, limit, out
        self.passed = 0
        self.noted = False
        self._lock = threading.Lock()

    def take(self, size: int) -> int:
        """How many of ``size`` more bytes may be passed on (counted as passed)."""
        with self._lock:
            allowed = max(0, min(size, self.limit - self.passed))
            self.passed += allowed
            return allowed

    def show(self, line: str) -> None:
        """Write one line, escaped and prefixed with the seat's name."""
        self._write(f"[{escaped(self.label)}] {escaped(line)}\n")

    def note_dropped(self) -> None:
        """Say once that the rest of the seat's stderr is dropped."""
        with self._lock:
            if self.noted:
                return
            self.noted = True
        self._write(f"[{escaped(self.label)}] (its stderr passed {self.limit} bytes; the rest "
                    f"is dropped)\n")

    def _write(self, text: str) -> None:
        view = memoryview(text.encode("utf-8", "backslashreplace"))
        with contextlib.suppress(OSError):
            while view:
                view = view[os.write(self.out, view):]


class StderrRelay:
    """Reads a child's stderr (a file descriptor this relay owns and closes at its end) in a
    daemon thread and passes it to ``seat`` (which may be swapped for another: a sandbox
    made before its seat was known)."""

    def __init__(self, fd: int, seat: SeatStderr) -> None:
        self.seat = seat
        self._thread = threading.Thread(target=self._run, args=(fd,), daemon=True,
                                        name="child stderr")
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait until the child's stderr ended (every writer closed it)."""
        self._thread.join(timeout)

    def _run(self, fd: int) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""  # the line read so far (at most LINE_CHARS characters)
        seat = self.seat
        try:
            while True:
                try:
                    chunk = os.read(fd, CHUNK)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                seat = self.seat
                allowed = seat.take(len(chunk))
                if allowed:
                    pending = self._lines(seat, pending + decoder.decode(chunk[:allowed]))
                if allowed < len(chunk):  # over the seat's limit: the rest is dropped
                    if pending:
                        seat.show(pending)
                        pending = ""
                    seat.note_dropped()
            pending += decoder.decode(b"", final=True)
            if pending:
                seat.show(pending)
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)

    @staticmethod
    def _lines(seat: SeatStderr, text: str) -> str:
        """Show every whole line of ``text`` (pieces of LINE_CHARS of a longer one); return
        the unfinished rest."""
        *lines, rest = text.split("\n")
        for line in lines:
            line = line.removesuffix("\r")  # (a line ended by CR LF)
            for start in range(0, max(len(line), 1), LINE_CHARS):
                seat.show(line[start:start + LINE_CHARS])
        while len(rest) > LINE_CHARS:
            seat.show(rest[:LINE_CHARS])
            rest = rest[LINE_CHARS:]
        return rest
