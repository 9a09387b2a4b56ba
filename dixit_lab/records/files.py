"""Where a results folder keeps its games, and how to read and write them compressed.

A run writes ``games.jsonl.zst`` by default: the same JSON Lines as ``games.jsonl``,
compressed with Zstandard (about a seventh of the bytes; ``zstd -d`` or
:func:`open_records` give the lines back byte for byte). ``records: jsonl`` in a config, or
``--records jsonl``, writes the plain file. Readers take either.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO, Any, Literal

from dixit_lab.errors import ConfigError

__all__ = ["RECORD_FORMATS", "RECORD_NAMES", "RecordFormat", "compressor", "find_records",
           "games_file", "is_compressed", "open_records", "open_text", "records_name"]

RecordFormat = Literal["jsonl.zst", "jsonl"]
#: the formats a results folder can keep its games in, the default first
RECORD_FORMATS: tuple[str, ...] = ("jsonl.zst", "jsonl")
#: the games files a results folder can hold
RECORD_NAMES: tuple[str, ...] = tuple(f"games.{kind}" for kind in RECORD_FORMATS)
#: zstd's level 3 ("dfast") with a 512 KB window, 64 K hash entries and matches of 7 bytes or
#: more: a game's JSON repeats long keys and runs of numbers, so short matches buy nothing.
#: The size of the default level (465 bytes a game) a sixth faster (7.3 -> 6.1 µs a game,
#: medians of 9 passes over 10,000 games; level 1 is 5.6 µs but 494 bytes a game)
_PARAMETERS = {"window_log": 19, "hash_log": 16, "chain_log": 14, "min_match": 7}


def records_name(kind: str = "jsonl.zst") -> str:
    if kind not in RECORD_FORMATS:
        raise ConfigError(f"records must be one of {', '.join(RECORD_FORMATS)}, got {kind!r}")
    return f"games.{kind}"


def find_records(folder: Path) -> Path | None:
    """The games file of a results folder (either format), or None."""
    for name in RECORD_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def games_file(path: str | Path) -> Path:
    """The games file a user names: a results folder's (either format) or the file itself."""
    path = Path(path)
    if path.is_dir():
        found = find_records(path)
        if found is None:
            raise FileNotFoundError(f"{path} holds no games.jsonl.zst or games.jsonl: is it "
                                    f"a results folder?")
        return found
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: give a results folder or its games "
                                f"file")
    return path


def is_compressed(path: Path) -> bool:
    return path.name.endswith(".zst")


def compressor() -> object:
    """The Zstandard compressor of games files: every frame carries a checksum of its content
    (``write_checksum``), which the reader verifies, so a damaged frame is refused."""
    import zstandard

    return zstandard.ZstdCompressor(compression_params=zstandard.ZstdCompressionParameters
                                    .from_level(3, write_checksum=True, **_PARAMETERS))


class _Decompressed(io.RawIOBase):
    """A ``.zst`` file's bytes, frame after frame (parts concatenate); a file that is cut
    short or damaged raises ``ValueError`` naming it, never reads as fewer games."""

    def __init__(self, path: Path) -> None:
        import zstandard

        self.path = path
        self._raw = path.open("rb")
        self._zstd = zstandard
        self._frame: Any = None  # the decompressor of the frame being read
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def _more(self) -> bytes:
        """The next decompressed bytes; b"" at the end of the file."""
        while True:
            data = self._raw.read(1 << 20)
            if not data:
                if self._frame is not None and not self._frame.eof:
                    raise ConfigError(f"{self.path}: not a whole Zstandard file (it ends inside "
                                     f"a frame)")
                return b""
            out = []
            while data:
                if self._frame is None or self._frame.eof:
                    self._frame = self._zstd.ZstdDecompressor().decompressobj()
                try:
                    out.append(self._frame.decompress(data))
                except self._zstd.ZstdError as error:
                    raise ConfigError(f"{self.path}: not a Zstandard file of games ({error})"
                                     ) from None
                data = self._frame.unused_data if self._frame.eof else b""
            if any(out):
                return b"".join(out)

    def readinto(self, buffer: Any) -> int:
        if not len(self._pending):
            self._pending = memoryview(self._more())
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def open_records(path: Path) -> IO[bytes]:
    """A games file opened for reading its lines as bytes, decompressed if it is ``.zst``;
    first checked against the folder's manifest, if it has one
    (:func:`dixit_lab.manifest.check_games_file`: a file of another size or digest is
    refused, naming it)."""
    from dixit_lab.records.manifest import check_games_file

    path = Path(path)
    check_games_file(path)
    if not is_compressed(path):
        return path.open("rb")
    return io.BufferedReader(_Decompressed(path), buffer_size=1 << 20)


def open_text(path: Path) -> IO[str]:
    """A games file opened for reading its lines as text (UTF-8), split on ``"\\n"`` only:
    the one line break of a games file (``"\\r"`` or U+2028 inside a record, written by an
    older version, never splits it)."""
    return io.TextIOWrapper(open_records(path), encoding="utf-8", newline="\n")
