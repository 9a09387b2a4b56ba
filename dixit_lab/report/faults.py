"""A results folder's faults, said the same way on the terminal and in ``report.md``: for each
seat with faults, its faults by kind, the decisions they replaced and its first fault; and
which seats are over the run's limit (``max_fault_share``; ``min_model_share`` for a model
seat). Read from ``agents.csv`` (``faults_<kind>``, ``decisions``, ``own_decision_share``)
and ``summary.json`` (``first_faults``), which the games' sums give (docs/results.md)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dixit_lab.records.format import FAULT_KINDS
from dixit_lab.report.markdown import is_number, read_json
from dixit_lab.text_rule import shown_message

if TYPE_CHECKING:
    from dixit_lab.stats.game_stats import GameStats

__all__ = ["SeatFaults", "fault_line", "fault_text", "first_text", "folder_faults",
           "limits_message", "over_limits", "seat_faults", "stats_faults"]


@dataclass(frozen=True)
class SeatFaults:
    """One player's faults: ``kinds`` counts every fault by kind (a failed ``begin_game``
    or ``observe`` too), ``replaced`` the decisions (tells, submits, votes) a fault replaced
    by a seeded legal one, of its ``decisions``; ``first`` is its first fault
    (:attr:`~dixit_lab.stats.game_stats.PlayerStats.first_fault`)."""

    player: str
    agent: str
    decisions: int
    replaced: int
    kinds: dict[str, int]
    first: dict[str, Any] | None

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    @property
    def share(self) -> float:
        """The share of its decisions that faults replaced (1 - ``own_decision_share``)."""
        return self.replaced / self.decisions if self.decisions else 0.0


def seat_faults(agents: pd.DataFrame, first_faults: dict[str, Any]) -> list[SeatFaults]:
    """The players of an agent table (``agents.csv``) with at least one fault, in its
    order; ``first_faults``: ``summary.json``'s, by player."""
    kinds = [column[len("faults_"):] for column in agents.columns
             if column.startswith("faults_")]
    kinds.sort(key=lambda kind: (kind not in FAULT_KINDS,
                                 FAULT_KINDS.index(kind) if kind in FAULT_KINDS else 0))
    seats = []
    for _, row in agents.iterrows():
        counts = {kind: int(row[f"faults_{kind}"]) for kind in kinds
                  if is_number(row[f"faults_{kind}"]) and row[f"faults_{kind}"] > 0}
        if not counts:
            continue
        decisions = int(row["decisions"]) if is_number(row.get("decisions")) else 0
        own = row.get("own_decision_share")
        replaced = round((1.0 - float(own)) * decisions) if is_number(own) else 0
        first = first_faults.get(str(row["player"]))
        seats.append(SeatFaults(str(row["player"]), str(row.get("agent", "")), decisions,
                                replaced, counts, first if isinstance(first, dict) else None))
    return seats


def folder_faults(folder: Path) -> list[SeatFaults]:
    """The seats with faults of a results folder (none without its ``agents.csv``)."""
    path = Path(folder) / "agents.csv"
    if not path.is_file():
        return []
    first = read_json(Path(folder) / "summary.json").get("first_faults")
    agents = pd.read_csv(path, dtype={"player": str, "agent": str}, keep_default_na=False,
                         na_values=[""])  # a player named "NA" or "007" is that text
    return seat_faults(agents, first if isinstance(first, dict) else {})


def stats_faults(stats: GameStats) -> list[SeatFaults]:
    """The seats with faults of some games' sums, as their results folder would give them
    (for games that have no folder: ``dixit-lab simulate``)."""
    from dixit_lab.stats.tables import agent_frame, fault_frame, summary_dict

    agents = agent_frame(stats).merge(fault_frame(stats), on="player", how="left")
    return seat_faults(agents, summary_dict(stats)["first_faults"])


def _share_text(share: float) -> str:
    return f"{share:.1%}" if share < 0.1 else f"{share:.0%}"


def first_text(first: dict[str, Any]) -> str:
    """A first fault as ``vote, game 3, round 2: the agent raised ...``: rounds counted from 1,
    as ``dixit-lab show DIR --game 3`` numbers them; each text shown safely."""
    try:
        where = f"game {int(first['game'])}, round {int(first['round']) + 1}"
    except (KeyError, TypeError, ValueError):
        where = "game ?"
    action = shown_message(str(first.get("action", "?")), 20)
    return f"{action}, {where}: {shown_message(str(first.get('message', '')))}"


def fault_text(seat: SeatFaults) -> str:
    """``broken (agent my.py:Broken): 173 of 600 decisions replaced (29%): raised 173 —
    first: vote, game 0, round 1: the agent raised ZeroDivisionError: ...`` (every text of
    an agent, its name and spec too, shown safely: :func:`~dixit_lab.text_rule.shown_message`)."""
    text = shown_message(seat.player)
    if seat.agent and seat.agent != seat.player:
        text += f" (agent {shown_message(seat.agent)})"
    text += f": {seat.replaced} of {seat.decisions} decisions replaced"
    if seat.decisions:
        text += f" ({_share_text(seat.share)})"
    hooks = seat.total - seat.replaced
    if hooks > 0:
        text += f", {hooks} failed begin_game or observe"
    text += ": " + ", ".join(f"{shown_message(kind, 20)} {count}"
                            for kind, count in seat.kinds.items())
    if seat.first is not None:
        text += f" — first: {first_text(seat.first)}"
    return text


def fault_line(seat: SeatFaults) -> str:
    """The line a run prints for a seat with faults."""
    return f"faults: {fault_text(seat)}"


def over_limits(seats: Sequence[SeatFaults], max_fault_share: float, min_model_share: float,
                models: Collection[str] = ()) -> list[tuple[str, str]]:
    """Each seat over its limit, as (why, in a phrase; the config field of its limit): a
    model seat (a player of ``models``) that made less than ``min_model_share`` of its
    decisions itself, any other seat whose faults replaced more than ``max_fault_share`` of
    its decisions."""
    over = []
    for seat in seats:
        name = shown_message(seat.player)
        if seat.player in models:
            own = 1.0 - seat.share
            if own < min_model_share:
                over.append((f"{name} made {seat.decisions - seat.replaced} of "
                             f"{seat.decisions} decisions itself ({_share_text(own)}), under "
                             f"min_model_share {min_model_share:g}", "min_model_share"))
        elif seat.share > max_fault_share:
            over.append((f"{name} had {seat.replaced} of {seat.decisions} decisions replaced "
                         f"by faults ({_share_text(seat.share)}), over max_fault_share "
                         f"{max_fault_share:g}", "max_fault_share"))
    return over


#: the setting of each limit that accepts any faults
_ACCEPT = {"max_fault_share": "max_fault_share: 1", "min_model_share": "min_model_share: 0"}


def limits_message(where: str, over: Sequence[tuple[str, str]], option: bool = False) -> str:
    """The one line of a run that fails on :func:`over_limits`' seats (``where``: its
    folder); ``option``: the limit is the command's ``--max-fault-share``, not a config's
    field."""
    said = (f"{where}: {'; '.join(why for why, _ in over)}: the engine played a seeded legal "
            f"decision for each fault, so these rows mix the agent's play with the engine's")
    if option:
        return f"{said}; fix the agent, or pass --max-fault-share 1 to accept them"
    fields = list(dict.fromkeys(field for _, field in over))
    fix = " and ".join(("the model's server or prompts" if field == "min_model_share" else
                        "the agent") for field in fields)
    return (f"{said} (the faults: lines above; dixit-lab show DIR --game N); the results are "
            f"written; fix {fix}, or set {' and '.join(_ACCEPT[f] for f in fields)} in the "
            f"config to accept them")
