"""Two records of one game compared: the first field where they differ (``replay``, and a
resume that replays a sample of its saved games with other code: :mod:`dixit_lab.run.resume`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Difference", "first_difference", "line_difference"]


@dataclass(frozen=True)
class Difference:
    """Where a replayed record first differs: ``game`` (``meta.game``) and ``round`` (the
    index in ``rounds``, from 0; printed from 1, as people count rounds)."""

    game: int
    round: int | None
    field: str
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        # a game by its number (meta.game, from 0), a round as people count it (from 1)
        where = f"game {self.game}" + (f", round {self.round + 1}" if self.round is not None
                                       else "")
        return (f"{where}, field {self.field}: recorded {self.recorded!r}, replayed "
                f"{self.replayed!r}")


def first_difference(game: int, recorded: dict[str, Any], replayed: dict[str, Any]
                     ) -> Difference | None:
    """The first field where two game records differ (rounds compared field by field)."""
    for key in dict.fromkeys([*recorded, *replayed]):
        a, b = recorded.get(key), replayed.get(key)
        if a == b:
            continue
        if key == "rounds" and isinstance(a, list) and isinstance(b, list):
            for index, (ra, rb) in enumerate(zip(a, b, strict=False)):
                for field in dict.fromkeys([*ra, *rb]):
                    if ra.get(field) != rb.get(field):
                        return Difference(game, index, field, ra.get(field), rb.get(field))
            return Difference(game, min(len(a), len(b)), "rounds (count)", len(a), len(b))
        return Difference(game, None, key, a, b)
    return None


def line_difference(game: int, recorded: str, replayed: str) -> Difference | None:
    """The first difference of two JSON lines of game ``game`` (None when they are the same
    bytes; their first 80 characters when they differ in bytes only)."""
    if recorded == replayed:
        return None
    import json

    found = first_difference(game, json.loads(recorded), json.loads(replayed))
    return found or Difference(game, None, "(bytes)", recorded[:80], replayed[:80])
