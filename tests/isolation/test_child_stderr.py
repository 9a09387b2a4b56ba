"""A child's stderr reaches the engine's bounded, escaped and under its seat's name."""

from __future__ import annotations

import os
import tempfile

from dixit_lab.isolation.child_stderr import LINE_CHARS, SeatStderr, StderrRelay


def relayed(chunks: list[bytes], limit: int = 1 << 20, seats: int = 1) -> list[str]:
    """What relays of ``chunks`` write (``seats`` children of one seat, each writing them
    all), as lines."""
    with tempfile.TemporaryFile() as out:
        seat = SeatStderr("p1", limit=limit, out=out.fileno())
        relays = []
        for _ in range(seats):
            read_in, write_in = os.pipe()
            relays.append(StderrRelay(read_in, seat))
            for chunk in chunks:
                os.write(write_in, chunk)
            os.close(write_in)
        for relay in relays:
            relay.join(10)
        out.seek(0)
        return out.read().decode().splitlines()


def test_control_bytes_are_escaped_and_each_line_is_prefixed():
    lines = relayed([b"\x1b]0;owned\x07title\r\x1b[31mdixit-lab run: error: forged\n",
                     b"plain \xe2\x80", b"\xae\n", b"last without newline"])
    assert lines == ["[p1] \\x1b]0;owned\\x07title\\r\\x1b[31mdixit-lab run: error: forged",
                     "[p1] plain \\u202e", "[p1] last without newline"]


def test_a_flood_without_a_newline_is_cut_at_the_seats_limit_and_noted():
    lines = relayed([b"z" * (1 << 16)] * 64, limit=100_000)  # 4 MiB, one line
    shown = sum(len(line) - len("[p1] ") for line in lines[:-1])
    assert shown == 100_000 and all(len(line) <= LINE_CHARS + 5 for line in lines)
    assert lines[-1] == "[p1] (its stderr passed 100000 bytes; the rest is dropped)"


def test_the_limit_is_the_seats_across_its_children():
    lines = relayed([b"y" * 60_000 + b"\n"], limit=100_000, seats=2)
    shown = sum(len(line) - len("[p1] ") for line in lines if "dropped" not in line)
    assert shown == 100_000 - 1  # (the first child's newline is one of the bytes)
    assert sum("dropped" in line for line in lines) == 1
