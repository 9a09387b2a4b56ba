"""Report sections that keep a reader from misreading a results folder: pairwise rating
differences, and notes on what the numbers assume (used by :mod:`dixit_lab.report.page`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

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
             "(first minus second) with its 95% bootstrap interval over resampled games, the "
             "probability that a seat of the first finishes above a seat of the second, and "
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


def reading_notes(agents: pd.DataFrame) -> list[str]:
    """Plain-language warnings that apply to this run's players."""
    specs = " ".join(str(a) for a in agents.get("agent", []))
    notes = []
    if "random" in specs:
        notes.append(
            "A `random` player votes at random, so it almost never finds an obvious clue that "
            "everyone else finds: with it at the table, an obvious storyteller (`literal`) "
            "lands in \"some but not all found\" and scores 3 where it would score 0 among "
            "careful listeners. Rankings in such a run reward obviousness; they do not carry "
            "over to a table of attentive listeners.")
    if any(name in specs for name in ("ambiguity", "pragmatic", "calibrated")):
        notes.append(
            "The predicted find rate is the storyteller's own model: listeners that perceive "
            "through the storyteller's embedding space and vote by a softmax of similarity "
            "with the temperature it assumes, decoys submitted (by a softmax or as best "
            "matches) from random hands of the whole deck. It ignores what earlier rounds "
            "removed from hands and deck (cards that match clues well leave first, so late "
            "decoys are weaker and listeners find more than predicted), and it is wrong for "
            "listeners that perceive differently (another embedder, or perception noise).")
    if not notes:
        return []
    return ["## Reading notes", "", *[f"- {note}" for note in notes], ""]
