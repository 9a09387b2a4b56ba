"""The report's sections on what a seat did itself: listener accuracy against chance (every
run), and the model seats (runs with ``vlm`` or ``llm`` players): the share of decisions the
model made itself, its faults by kind, the response format its server was asked in and the
model the server reported. Read from ``agents.csv`` (docs/results.md)."""

from __future__ import annotations

import pandas as pd

from dixit_lab.records.format import FAULT_KINDS
from dixit_lab.report.markdown import fmt, is_number, markdown_table, pct

__all__ = ["LOW_SHARE", "chance_section", "model_section"]

#: below this share of its own decisions a model seat's row is flagged in the report
LOW_SHARE = 0.5


def chance_section(agents: pd.DataFrame) -> list[str]:
    """Listener accuracy beside chance and the kappa-style corrected figure, over all votes and
    over the votes the player made itself."""
    if "listener_chance" not in agents or not (agents["listener_turns"] > 0).any():
        return []
    rows = [[str(row["player"]), fmt(row["listener_turns"]), pct(row["listener_accuracy"]),
             pct(row["listener_chance"]), fmt(row["listener_kappa"]),
             pct(row["listener_accuracy_own"]), fmt(row["listener_kappa_own"])]
            for _, row in agents.iterrows() if row["listener_turns"] > 0]
    header = ["player", "votes", "accuracy", "chance", "kappa", "accuracy, own votes",
              "kappa, own votes"]
    return ["## Listeners against chance", "",
            "Chance is what voting at random finds: the mean over a player's votes of 1 / the "
            "cards it may vote for (the shown cards not its own). Kappa is (accuracy - chance) "
            "/ (1 - chance): 0 is chance, 1 always finding the card, below 0 worse than "
            "chance. \"Own votes\" leave out the votes a fault replaced by the seeded "
            "fallback.", "", markdown_table(header, rows, [False, *[True] * 6]), ""]


def model_section(agents: pd.DataFrame) -> list[str]:
    """The model seats' own decisions, faults, format and served model (nothing when the run
    had none)."""
    if "model_decisions" not in agents:
        return []
    seats = agents[agents["model_decisions"].notna()]
    if seats.empty:
        return []
    rows, warnings = [], []
    for _, row in seats.iterrows():
        faults = ", ".join(f"{kind} {int(row[f'faults_{kind}'])}" for kind in FAULT_KINDS
                           if is_number(row.get(f"faults_{kind}")) and row[f"faults_{kind}"])
        share = row.get("own_decision_share")
        rows.append([str(row["player"]), fmt(row["decisions"]), pct(share), faults or "none",
                     str(row.get("response_format") or ""), str(row.get("served_model") or ""),
                     _count(row.get("prompt_tokens")), _count(row.get("completion_tokens")),
                     fmt(row.get("latency_s_per_decision"))])
        if is_number(share) and share < LOW_SHARE:
            made = round(share * row["decisions"])
            warnings.append(f"**Warning: {row['player']} made {made} of "
                            f"{fmt(row['decisions'])} decisions itself ({pct(share)})**: the "
                            f"rest are the seeded fallbacks of its faults, so its rows above "
                            f"are mostly not the model's play.")
    header = ["player", "decisions", "made by the model", "faults", "response format",
              "served model", "prompt tokens", "completion tokens", "s / decision"]
    return ["## Model seats", "",
            "A decision a fault replaced (an unparsable or refused reply, a server error, a "
            "timeout, a budget reached) is played by the seeded fallback; \"made by the "
            "model\" is the share of its decisions (tells, submits, votes) that were the "
            "model's own. The response format is the one its server accepted (after any "
            "fallback: exchanges/servers/sessions.jsonl), the served model the id the server "
            "reported.", "", markdown_table(header, rows, [False, True, True, False, False,
                                                          False, True, True, True]), "",
            *[line for warning in warnings for line in (warning, "")]]


def _count(value: object) -> str:
    return f"{int(value):,}" if is_number(value) else "–"  # type: ignore[call-overload]
