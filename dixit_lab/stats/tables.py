"""The tables of a results folder computed from merged
:class:`~dixit_lab.stats.game_stats.GameStats`: the agent table (``agents.csv``), the find-rate
columns and ``find_calibration.csv``, and ``summary.json``'s statistics. Definitions of every
column: :func:`dixit_lab.stats.metrics.agent_table` and docs/results.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dixit_lab.records.batches import OUTCOME_NAMES
from dixit_lab.stats.catalogue import CATALOGUE, agent_columns
from dixit_lab.stats.game_stats import GameStats
from dixit_lab.stats.intervals import mean_interval_from_sums, rate_interval_from_sums

__all__ = ["AGENT_COLUMNS", "agent_frame", "calibration_frame", "fault_frame", "find_rate_frame",
           "summary_dict"]

#: The columns of the agent table (``agents.csv`` before its find-rate and model columns), in
#: order: counts, and the catalogue's metrics with their intervals
#: (:mod:`dixit_lab.stats.catalogue`).
AGENT_COLUMNS: tuple[str, ...] = (
    "player", "agent", "seats", "games",
    *agent_columns(("win_share",)), "win_share_per_seat",
    *agent_columns(("points_per_game",)),
    "storyteller_turns",
    *agent_columns(tuple(f"{outcome}_rate" for outcome in OUTCOME_NAMES)),
    *agent_columns(("storyteller_points_per_turn",)),
    "listener_turns",
    *agent_columns(("listener_accuracy", "decoy_votes_per_turn")),
    "faults", "unperceived_clues",
    # the seat's own decisions (those no fault replaced by its seeded fallback), and chance
    "decisions", "own_decision_share",
    *agent_columns(("listener_chance", "listener_kappa", "listener_accuracy_own",
                    "listener_kappa_own", "some_found_rate_own")),
)

#: the metrics of the table with an interval, from their sums (the observed find rate joins
#: from the find-rate table), and those with a mean only
_AGENT_METRICS = tuple(name for name, m in CATALOGUE.items() if m.kernel is not None
                       and m.column and m.interval != "none" and name != "observed_find_rate")
_MEAN_ONLY = tuple(name for name, m in CATALOGUE.items() if m.kernel is not None and m.column
                   and m.interval == "none")
_DERIVED = {name: m.derived_from for name, m in CATALOGUE.items() if m.derived_from}


def _kappa(accuracy: float, chance: float) -> float:
    """Accuracy corrected for chance: 0 at chance, 1 at always (NaN without votes)."""
    return (accuracy - chance) / (1.0 - chance) if chance < 1.0 else float("nan")


def _interval(name: str, sums: Any, confidence: float) -> tuple[float, float, float]:
    if CATALOGUE[name].interval == "mean":
        return mean_interval_from_sums(sums, confidence)
    return rate_interval_from_sums(sums, confidence)


def agent_frame(stats: GameStats, confidence: float = 0.95) -> pd.DataFrame:
    """One row per player name, in order of first appearance (``AGENT_COLUMNS``)."""
    rows = []
    for name, player in stats.players.items():
        counts = player.counts
        row: dict[str, Any] = {"player": name, "agent": " | ".join(player.specs),
                               "seats": int(counts["seats"]), "games": int(counts["games"])}
        for metric in _AGENT_METRICS:
            row[metric], row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = _interval(
                metric, player.sums[metric], confidence)
        row["win_share_per_seat"] = counts["share_sum"] / counts["seats"] \
            if counts["seats"] else float("nan")
        row["storyteller_turns"] = int(counts["storyteller_turns"])
        row["listener_turns"] = int(counts["listener_turns"])
        row["faults"] = int(counts["faults"])
        row["unperceived_clues"] = int(counts["unperceived"])
        decisions = counts.get("decisions", 0.0)
        row["decisions"] = int(decisions)
        row["own_decision_share"] = 1.0 - counts.get("action_faults", 0.0) / decisions \
            if decisions else float("nan")
        for metric in _MEAN_ONLY:
            row[metric] = player.sums[metric].mean
        for metric, (accuracy, chance) in _DERIVED.items():
            row[metric] = _kappa(row[accuracy], player.sums[chance].mean)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(AGENT_COLUMNS))


def find_rate_frame(stats: GameStats, confidence: float = 0.95) -> pd.DataFrame:
    """Per player that told: observed find rate (Wilson at the effective size over games) and
    mean predicted find rate (NaN without predictions)."""
    rows = []
    for name, player in stats.players.items():
        if not player.told:
            continue
        mean, low, high = rate_interval_from_sums(player.sums["observed_find_rate"],
                                                  confidence)
        turns = player.counts["predicted_turns"]
        rows.append({"player": name, "observed_find_rate": mean,
                     "observed_find_rate_ci_low": low, "observed_find_rate_ci_high": high,
                     "predicted_find_rate": player.counts["predicted_sum"] / turns
                     if turns else float("nan")})
    return pd.DataFrame(rows, columns=["player", "observed_find_rate",
                                       "observed_find_rate_ci_low",
                                       "observed_find_rate_ci_high", "predicted_find_rate"])


def calibration_frame(stats: GameStats) -> pd.DataFrame:
    """Turns with a predicted find rate, binned by it, per player (sorted by player, bin)."""
    rows = []
    for name in sorted(stats.players):
        bins = stats.players[name].bins
        for index in np.flatnonzero(bins[:, 2]):
            predicted, observed, turns = bins[index]
            rows.append({"player": name, "bin": int(index), "predicted": predicted / turns,
                         "observed": observed / turns, "turns": int(turns)})
    return pd.DataFrame(rows, columns=["player", "bin", "predicted", "observed", "turns"])


def fault_frame(stats: GameStats) -> pd.DataFrame:
    """One row per player name: ``faults_<kind>`` counts (the kinds of
    :data:`dixit_lab.records.format.FAULT_KINDS` first)."""
    from dixit_lab.records.format import FAULT_KINDS

    seen = {k for p in stats.players.values() for k in p.fault_kinds}
    kinds = list(FAULT_KINDS) + sorted(seen - set(FAULT_KINDS))
    return pd.DataFrame([{"player": name, **{f"faults_{kind}": p.fault_kinds.get(kind, 0)
                                             for kind in kinds}}
                         for name, p in stats.players.items()],
                        columns=["player", *(f"faults_{kind}" for kind in kinds)])


def summary_dict(stats: GameStats) -> dict[str, Any]:
    """``summary.json``'s statistics: games, rounds (mean, min, max), end reasons, faults and
    each faulty player's first fault, clues not perceived, per player name its games and win
    share; and the table sizes, rule presets and decks."""
    players = {name: {"games": int(p.counts["games"]),
                      "win_share": p.counts["share_sum"] / p.counts["games"]}
               for name, p in stats.players.items() if p.counts["games"]}
    return {
        "games": stats.games,
        "rounds_mean": stats.rounds_total / stats.games if stats.games else None,
        "rounds_min": stats.rounds_min, "rounds_max": stats.rounds_max,
        "end_reasons": dict(stats.end_reasons), "faults": stats.faults,
        "first_faults": {name: p.first_fault for name, p in stats.players.items()
                         if p.first_fault is not None},
        "unperceived_clues": int(sum(p.counts["unperceived"] for p in stats.players.values())),
        "players": players,
        "win_share": {name: row["win_share"] for name, row in players.items()},
        "table_sizes": sorted(stats.sizes), "rule_presets": sorted(stats.rules),
        "decks": sorted(stats.decks),
    }
