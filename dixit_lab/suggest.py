"""The "did you mean" of an error about an unknown name (an agent, a parameter, a config field,
a rule preset or option, a deck, an executor): the closest known name by ``difflib``."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``" (did you mean 'softmax'?)"`` for the known name closest to ``word``, or ``""`` when
    none is close (difflib's ratio of at least 0.6)."""
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
