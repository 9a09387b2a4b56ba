"""At a people's table: looks through the garbage collector for the people's seats (their
web tokens and hands), as an agent in the server's own process can."""

from __future__ import annotations

import gc
from typing import Any

from tests.hostile.common import Hostile


class TokenSpy(Hostile):
    def begin_game(self, context: Any) -> None:
        super().begin_game(context)
        seats = [obj for obj in gc.get_objects()
                 if hasattr(type(obj), "__dataclass_fields__") and hasattr(obj, "token")
                 and hasattr(obj, "hand")]
        self.found = {"tokens": len(seats)}
