"""The candidates of ``dixit-lab tune`` and how they are compared: what the search
(:mod:`dixit_lab.run.tuning`) and its outputs (:mod:`dixit_lab.run.tune_report`) share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from dixit_lab.run.experiment import TuneConfig

if TYPE_CHECKING:
    from dixit_lab.stats.intervals import PairedDifference

__all__ = ["Candidate", "alpha_split", "paired_by_deal", "search_leader"]


@dataclass
class Candidate:
    """One value of the parameter: its metric per deal of the search (by deal position) and
    of the confirmation, whether it is still in the race, and what dropped it if anything."""

    value: float
    by_deal: dict[int, float] = field(default_factory=dict)
    alive: bool = True
    #: the paired p-value against the search's leader on common deals (NaN: the leader)
    p_value: float = math.nan
    dropped_after: int | None = None
    confirm_by_deal: dict[int, float] = field(default_factory=dict)
    dropped_in_confirmation: bool = False

    @property
    def samples(self) -> list[float]:
        return list(self.by_deal.values())

    @property
    def mean(self) -> float:
        return float(np.mean(self.samples)) if self.samples else math.nan

    @property
    def half_width(self) -> float:
        if len(self.samples) < 2:
            return math.inf
        return 1.96 * float(np.std(self.samples, ddof=1)) / math.sqrt(len(self.samples))

    @property
    def kept_by_search(self) -> bool:
        return self.dropped_after is None

    def confirmed(self) -> tuple[float, float, float]:
        """(mean, low, high) over the confirmation's deals (NaN without them)."""
        from dixit_lab.stats.metrics import mean_interval

        return mean_interval(list(self.confirm_by_deal.values()))


def paired_by_deal(a: dict[int, float], b: dict[int, float]) -> PairedDifference:
    """The paired comparison ``a - b`` over their common deals (a ``PairedDifference``)."""
    from dixit_lab.stats.intervals import paired_difference

    common = sorted(set(a) & set(b))
    return paired_difference([a[d] for d in common], [b[d] for d in common])


def search_leader(candidates: Sequence[Candidate]) -> Candidate:
    """The candidate the search kept with the highest search mean."""
    return max((c for c in candidates if c.kept_by_search), key=lambda c: c.mean)


def alpha_split(settings: TuneConfig) -> tuple[float, float]:
    """(search's level, confirmation's level): ``alpha`` halved between them, all of it to
    the search when there is no confirmation."""
    if settings.confirm_games > 0:
        return settings.alpha / 2, settings.alpha / 2
    return settings.alpha, 0.0
