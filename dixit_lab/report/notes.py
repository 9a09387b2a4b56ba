"""Report sections that keep a reader from misreading a results folder: pairwise rating
differences, and notes on what the numbers assume (used by :mod:`dixit_lab.report.page`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dixit_lab.core import rules as core_rules
from dixit_lab.core.rules import RuleSet
from dixit_lab.report.markdown import html_text

__all__ = ["pairs_section", "reading_notes"]


def _fmt(x: float, digits: int = 2) -> str:
    return "–" if pd.isna(x) else f"{x:+.{digits}f}"


def pairs_section(folder: Path, limit: int = 15) -> list[str]:
    """Markdown for ``rating_pairs.csv``: each pair's strength difference with its bootstrap
    interval (neighbours in the ranking first, the pairs a reader compares)."""
    path = folder / "rating_pairs.csv"
    if not path.is_file():
        return []
    pairs = pd.read_csv(path)
    if pairs.empty:
        return []
    lines = ["## Rating differences", "",
             "Per-player intervals overlap even when a difference is clear, because the "
             "strengths of one fit move together. Each row is a difference of strengths "
             "(first minus second) with its 95% interval (1.96 standard deviations of the "
             "difference over bootstrap resamples of the games; it held its level for "
             "identical players: docs/statistics.md), the probability that a seat of the "
             "first finishes above a seat of the second, and "
             "the share of bootstrap replicates in which the first is stronger. Full table: "
             "[rating_pairs.csv](rating_pairs.csv).", "",
             "| first | second | difference [95% CI] | P(first above second) | first stronger |",
             "|---|---|---|---|---|"]
    for _, row in pairs.head(limit).iterrows():
        sure = "" if pd.isna(row["ci_low"]) or row["ci_low"] <= 0 < row["ci_high"] else " *"
        first, second = (html_text(str(row[k])).replace("|", "\\|")
                         for k in ("player_a", "player_b"))
        lines.append(f"| {first} | {second} | {_fmt(row['difference'])} "
                     f"[{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]{sure} | "
                     f"{row['a_above_b']:.2f} [{row['a_above_b_ci_low']:.2f}, "
                     f"{row['a_above_b_ci_high']:.2f}] | {row['a_stronger_share']:.2f} |")
    if len(pairs) > limit:
        lines.append(f"| … | {len(pairs) - limit} more pairs in the CSV | | | |")
    lines += ["", "\\* the interval excludes 0.", ""]
    return lines


def _pct(rate: float) -> str:
    return f"{100 * rate:.0f}%"


def _random_note(agents: pd.DataFrame, rules: RuleSet | None) -> str | None:
    """What a `random` listener does to the storytellers' outcomes, in this folder's numbers:
    its finds against chance, and the storyteller whose clues everyone else found most."""
    specs = agents.get("agent", pd.Series(dtype=str)).astype(str)
    randoms = agents[specs.str.split("(").str[0] == "random"]
    if randoms.empty:
        return None
    row = randoms.iloc[0]
    name = str(row["player"])
    text = ("`random`" + (f" ({name})" if name != "random" else "")) + " votes at random"
    if pd.notna(row.get("listener_accuracy")) and pd.notna(row.get("listener_chance")):
        text += (f": it found the storyteller's card in {_pct(row['listener_accuracy'])} of "
                 f"its votes, where chance is {_pct(row['listener_chance'])}")
    if rules is not None:  # the folder's rules: some found it, against all found it
        teller = core_rules.search_points(rules, 4)[0]
        if teller[2] != teller[-1]:
            text += (". A clue that every other listener finds still ends \"some but not all\" "
                     f"when it misses, and then the storyteller scores {teller[2]} instead of "
                     f"{teller[-1]}")
    others = agents[(specs.str.split("(").str[0] != "random")
                    & (agents.get("storyteller_turns", 0) > 0)]
    if "all_found_rate" in others and others["all_found_rate"].notna().any():
        easy = others.loc[others["all_found_rate"].idxmax()]
        text += (f"; here {easy['player']}'s clues, found by everyone in "
                 f"{_pct(easy['all_found_rate'])} of its turns (the most of any storyteller), "
                 f"found some but not all in {_pct(easy['some_found_rate'])}")
    return text + "."


def _prediction_note(agents: pd.DataFrame) -> str | None:
    """Each modelled storyteller's predicted against observed find rate, in this folder."""
    if "predicted_find_rate" not in agents or "observed_find_rate" not in agents:
        return None
    modelled = agents[agents["predicted_find_rate"].notna()
                      & agents["observed_find_rate"].notna()]
    if modelled.empty:
        return None
    parts = []
    for _, row in modelled.iterrows():
        predicted, observed = row["predicted_find_rate"], row["observed_find_rate"]
        low, high = row.get("observed_find_rate_ci_low"), row.get("observed_find_rate_ci_high")
        gap = observed - predicted
        side = ("above" if gap > 0 else "below") if round(gap, 3) != 0 else "at"
        text = (f"{row['player']} predicted {predicted:.3f} and its listeners found "
                f"{observed:.3f}")
        if pd.notna(low) and pd.notna(high):
            inside = low <= predicted <= high
            text += (f" [{low:.3f}, {high:.3f}]: observed {side} predicted by "
                     f"{abs(gap):.3f}, the prediction {'inside' if inside else 'outside'} "
                     f"the 95% interval")
        parts.append(text)
    return ("The predicted find rate is the storyteller's own model of its listeners (what "
            "it assumes: docs/listener_model.md), not a measurement. In these games "
            + "; ".join(parts) + " (find_calibration.csv bins the turns by prediction).")


def reading_notes(agents: pd.DataFrame, rules: RuleSet | None = None) -> list[str]:
    """Warnings that apply to this run's players, each stated in the run's own numbers
    (``agents`` is the folder's ``agents.csv``) and its ``rules`` (None: unknown, the
    sentences that need them left out)."""
    notes = [note for note in (_random_note(agents, rules), _prediction_note(agents)) if note]
    if not notes:
        return []
    return ["## Reading notes", "", *[f"- {note}" for note in notes], ""]
