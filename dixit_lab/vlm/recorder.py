"""The model agents' recorder: the recording seam (:mod:`dixit_lab.core.recording`) of the
exchange store (:mod:`dixit_lab.vlm.store`)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from dixit_lab.core.recording import Recorder, RecordMode
from dixit_lab.vlm.store import EXCHANGES_FOLDER, exchange_session

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ExchangeRecorder"]


class ExchangeRecorder(Recorder):
    """The model agents' recorder (``recorder = "exchanges"``): their exchanges in
    ``<results>/exchanges/``, their usage rows in ``exchanges/usage/`` (the model columns of
    ``agents.csv``); it plays a chunk's model games all at once
    (:func:`dixit_lab.vlm.driver.play_remote_chunk`)."""

    plays_chunks: ClassVar[bool] = True

    def session(self, folder: Path, mode: RecordMode | None, budget: Any
                ) -> contextlib.AbstractContextManager[None]:
        return exchange_session(folder / EXCHANGES_FOLDER, mode, budget)

    def agent_columns(self, folder: Path) -> pd.DataFrame | None:
        from dixit_lab.vlm.usage import usage_table

        table = usage_table(folder)
        return table if len(table) else None

    def play_chunk(self, setup: Any, chunk: list[Any]) -> list[tuple[int, str]]:
        from dixit_lab.vlm.driver import play_remote_chunk

        return play_remote_chunk(setup, chunk)
