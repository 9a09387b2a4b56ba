"""The model columns of ``agents.csv``: for the model agents, tokens, latency, cost, the
response format the server was asked in and the model it reported, and ``reasoning_tokens``
where a server reported them (from the usage rows in ``exchanges/usage/``; the report asks for
them through the recording seam,
:meth:`dixit_lab.vlm.recorder.ExchangeRecorder.agent_columns`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

__all__ = ["USAGE_COLUMNS", "usage_table"]
USAGE_COLUMNS = ("model_decisions", "model_exchanges", "recorded_exchanges", "prompt_tokens",
                 "completion_tokens", "unreported_usage", "latency_s_per_decision", "cost_usd",
                 "response_format", "served_model")


def _usage_rows(folder: Path) -> list[dict]:
    """Usage rows, once per decision (a game played twice, e.g. by a resumed run, counts once:
    the first file in name order wins)."""
    seen: dict[tuple, dict] = {}
    for path in sorted((folder / "exchanges" / "usage").glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                seen.setdefault((row["game"], row["seat"], row["round"], row["action"]), row)
    return list(seen.values())


def usage_table(folder: str | Path) -> pd.DataFrame:
    """One row per player name that made model calls: decisions, exchanges (and how many were
    reused from the store), tokens, mean latency per decision (as measured when each exchange
    was made) and total cost (NaN without a price)."""
    rows = _usage_rows(Path(folder))
    columns = ["player", *USAGE_COLUMNS]
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(rows)
    for column, empty in (("cost_usd", float("nan")), ("unreported_usage", 0),
                          ("format", None), ("served_model", None)):
        if column not in frame:
            frame[column] = empty
    grouped = frame.groupby("player", sort=False)
    table = pd.DataFrame({
        "model_decisions": grouped.size(),
        "model_exchanges": grouped["exchanges"].sum(),
        "recorded_exchanges": grouped["recorded"].sum(),
        "prompt_tokens": grouped["prompt_tokens"].sum(),
        "completion_tokens": grouped["completion_tokens"].sum(),
        "unreported_usage": grouped["unreported_usage"].sum(),
        "latency_s_per_decision": grouped["latency_s"].mean().round(4),
        "cost_usd": grouped["cost_usd"].sum(min_count=1),
        "response_format": grouped["format"].agg(_joined),
        "served_model": grouped["served_model"].agg(_joined),
    }).reset_index()
    if "reasoning_tokens" in frame:  # a reasoning model's share of the completion tokens
        table.insert(len(table.columns), "reasoning_tokens",
                     grouped["reasoning_tokens"].sum(min_count=1).to_numpy())
        columns.append("reasoning_tokens")
    return table[columns]


def _joined(values: pd.Series) -> str | None:
    """The distinct values, in order of first use, joined by `` | `` (None if none)."""
    seen = list(dict.fromkeys(str(v) for v in values if isinstance(v, str)))
    return " | ".join(seen) if seen else None
