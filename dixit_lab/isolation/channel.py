"""Frames between the engine and an untrusted agent's process, every read and every write
bounded by a deadline.

A frame is a 4-byte big-endian length and that many bytes. The engine's ends are
non-blocking: a child that stops reading (its pipe full) or stops answering costs at most the
deadline, then :class:`ChannelTimeout`; one that closes its end is :class:`ChannelClosed`; one
that announces a frame larger than ``max_frame`` is :class:`ChannelFlood`. The child's side
(:func:`read_frame`, :func:`write_frame`) blocks: it has nothing else to do.
"""

from __future__ import annotations

import os
import select
import struct
import time

__all__ = ["Channel", "ChannelClosed", "ChannelError", "ChannelFlood", "ChannelTimeout",
           "read_frame", "write_frame"]

HEADER = struct.Struct(">I")


class ChannelError(Exception):
    """The child failed the protocol; ``kind`` is the fault class it becomes."""

    kind = "crashed"


class ChannelTimeout(ChannelError):
    kind = "timeout"


class ChannelClosed(ChannelError):
    kind = "crashed"


class ChannelFlood(ChannelError):
    kind = "crashed"


class Channel:
    """The engine's end of a child's two streams (``read_fd`` and ``write_fd``, the same fd
    for a socket)."""

    def __init__(self, read_fd: int, write_fd: int, max_frame: int = 1 << 20) -> None:
        self.read_fd, self.write_fd, self.max_frame = read_fd, write_fd, max_frame
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)

    def send(self, data: bytes, deadline: float) -> None:
        """Write one frame, or raise by ``deadline`` (a ``time.monotonic`` instant)."""
        view = memoryview(HEADER.pack(len(data)) + data)
        poller = select.poll()
        poller.register(self.write_fd, select.POLLOUT)
        while view:
            try:
                view = view[os.write(self.write_fd, view):]
                continue
            except BlockingIOError:
                pass
            except OSError:  # EPIPE, ECONNRESET: the child is gone
                raise ChannelClosed("the agent's process closed its end") from None
            if not _wait(poller, deadline):
                raise ChannelTimeout("it stopped reading")

    def receive(self, deadline: float) -> bytes:
        """Read one frame, or raise by ``deadline``."""
        (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
        if size > self.max_frame:
            raise ChannelFlood(f"it sent a frame of {size} bytes (more than "
                               f"{self.max_frame})")
        return self._read(size, deadline)

    def _read(self, size: int, deadline: float) -> bytes:
        chunks: list[bytes] = []
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN)
        while size:
            try:
                chunk = os.read(self.read_fd, min(size, 1 << 16))
            except BlockingIOError:
                if not _wait(poller, deadline):
                    raise ChannelTimeout("no answer") from None
                continue
            except OSError:
                raise ChannelClosed("the agent's process closed its end") from None
            if not chunk:
                raise ChannelClosed("the agent's process closed its end")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)


def _wait(poller: select.poll, deadline: float) -> bool:
    """Whether the fd became ready before ``deadline`` (an error or a hang-up counts as
    ready: the next read or write says which)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    return bool(poller.poll(max(1, int(remaining * 1000 + 0.999))))


# -- the child's side: blocking ---------------------------------------------------------------

def read_frame(fd: int) -> bytes | None:
    """The next frame on ``fd``, or None when the engine closed its end."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    return _read_exactly(fd, size)


def write_frame(fd: int, data: bytes) -> None:
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
