"""The candidates of ``dixit-lab tune`` and how they are compared: what the search
(:mod:`dixit_lab.tune.search`) and its outputs (:mod:`dixit_lab.tune.report`) share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dixit_lab.run.experiment import TuneConfig

if TYPE_CHECKING:
    from dixit_lab.stats.intervals import PairedDifference

__all__ = ["Candidate", "alpha_split", "candidate_values", "grid_values", "integer_grid",
           "numeric", "paired_by_deal", "search_leader", "value_text"]


def grid_values(low: float, high: float, points: int) -> list[float]:
    """``points`` evenly spaced candidates from ``low`` to ``high``, rounded to 12 digits so
    that 0.1 steps give 0.3 and not 0.30000000000000004."""
    return [round(float(v), 12) for v in np.linspace(low, high, points)]


def integer_grid(low: float, high: float, points: int) -> list[int]:
    """The integers nearest ``points`` evenly spaced numbers from ``low`` to ``high`` (halves
    up), each once, in order: 9 points from 1 to 4 are 1, 2, 3, 4."""
    return list(dict.fromkeys(math.floor(v + 0.5) for v in np.linspace(low, high, points)))


def candidate_values(settings: TuneConfig) -> list[Any]:
    """The values ``tune`` compares: ``values`` as listed, else the grid of ``kind``."""
    if settings.values is not None:
        return list(settings.values)
    assert settings.low is not None and settings.high is not None  # the config's check
    if settings.kind == "int":
        return integer_grid(settings.low, settings.high, settings.points)
    return grid_values(settings.low, settings.high, settings.points)


def numeric(values: Sequence[Any]) -> bool:
    """Every value a number (true and false are not): plotted on a number line."""
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def value_text(value: Any) -> str:
    """A candidate as the outputs write it: floats with ``:g`` (0.5, 1e-05), true and false
    as in the config, others as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass
class Candidate:
    """One value of the parameter (a number, or a categorical parameter's value): its metric
    per deal of the search (by deal position) and of the confirmation, whether it is still in
    the race, and what dropped it if anything."""

    value: Any
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
