"""Reports: the markdown report and plots of a results folder or a sweep, and a text replay
of one game for the terminal (``dixit-lab show DIR --game N``).

Every file is written atomically (a temporary file renamed over the target), so a report that
is interrupted leaves the previous one intact. Plots use matplotlib's Agg backend.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import yaml

from dixit_lab.files import atomic_write, atomic_write_text
from dixit_lab.metrics import agent_table, player_names
from dixit_lab.records import GameRecord, read_jsonl
from dixit_lab.report_notes import pairs_section, reading_notes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from dixit_lab.cards import Deck

__all__ = [
    "OUTCOME_COLOURS",
    "OUTCOME_LABELS",
    "SWEEP_METRICS",
    "show_game",
    "write_report",
    "write_sweep_report",
]

#: One colour per storyteller outcome, used by every plot.
OUTCOME_COLOURS: dict[str, str] = {
    "some_found": "#2e9d4f",  # green: the storyteller scores
    "all_found": "#d1453b",   # red: too obvious
    "none_found": "#9a9a9a",  # grey: too obscure
}
OUTCOME_LABELS: dict[str, str] = {
    "some_found": "some but not all found",
    "all_found": "all found",
    "none_found": "none found",
}
#: Metrics drawn against each swept value, with their axis labels.
SWEEP_METRICS: dict[str, str] = {
    "storyteller_points_per_turn": "storyteller points per turn (points)",
    "observed_find_rate": "share of listeners who found the storyteller's card",
    "some_found_rate": "'some but not all' rate (share of storyteller turns)",
    "points_per_game": "points per game (final score)",
    "win_share": "win share (games won, ties shared)",
}
_METRIC_TITLES: dict[str, str] = {
    "storyteller_points_per_turn": "Storyteller points per turn",
    "observed_find_rate": "Find rate (observed; predicted dotted where modelled)",
    "some_found_rate": "Storyteller turns where some but not all found the card",
    "points_per_game": "Points per game",
    "win_share": "Win share",
}
_DPI = 120
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_HATCHES = ("", "//", "..", "xx", "\\\\", "--")
_LABEL_CHARS = 38


# -- small helpers ---------------------------------------------------------------------------


_STYLE = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10,
          "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 9}


class _Plots:
    """What the plotting code needs of ``pyplot``, without pyplot: figures are plain
    ``matplotlib.figure.Figure`` objects, so writing a report never changes the backend or
    the global style of the caller's session (e.g. a notebook's inline plots)."""

    def __init__(self) -> None:
        import matplotlib
        import matplotlib.cm
        import matplotlib.ticker

        self.matplotlib = matplotlib
        self.cm = matplotlib.cm

    def subplots(self, nrows: int = 1, ncols: int = 1, **kwargs: Any) -> tuple[Figure, Any]:
        from matplotlib.figure import Figure

        style = self.matplotlib.rc_context(_STYLE)
        style.__enter__()  # left in _save, once the figure is written
        figure = Figure(figsize=kwargs.pop("figsize", None))
        figure._dixit_style = style  # type: ignore[attr-defined]
        axes = figure.subplots(nrows, ncols, **kwargs)
        return figure, axes


def _pyplot() -> Any:
    return _Plots()


def _save(fig: Figure, path: Path) -> Path:
    """Save a figure atomically as PNG."""
    try:
        fig.tight_layout()
        atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=_DPI))
    finally:
        style = getattr(fig, "_dixit_style", None)
        if style is not None:
            style.__exit__(None, None, None)
    return path


def _short(text: str, limit: int = _LABEL_CHARS) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool) and math.isfinite(float(value))


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool | np.bool_):
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}f}"
    return str(value)


def _pct(value: Any) -> str:
    if value is None or not _is_number(value):
        return "–"
    return f"{100 * float(value):.0f}%"


def _with_ci(row: pd.Series, name: str, digits: int = 2, percent: bool = False) -> str:
    show = _pct if percent else (lambda v: _fmt(v, digits))
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    text = show(row.get(name))
    if _is_number(low) and _is_number(high):
        text += f" [{show(low)}, {show(high)}]"
    return text


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]],
                    right: Sequence[bool] | None = None) -> str:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    right = right or [False] * len(header)
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _experiment(config: dict[str, Any]) -> dict[str, Any]:
    """The experiment section of a results folder's config.yaml (or the config itself)."""
    inner = config.get("experiment")
    return inner if isinstance(inner, dict) else config


def _separated(a: pd.Series, b: pd.Series, metric: str) -> bool | None:
    """True if the intervals of ``metric`` for rows a and b do not overlap; None if unknown."""
    values = [a.get(f"{metric}_ci_low"), a.get(f"{metric}_ci_high"),
              b.get(f"{metric}_ci_low"), b.get(f"{metric}_ci_high")]
    if not all(_is_number(v) for v in values):
        return None
    a_low, a_high, b_low, b_high = (float(v) for v in values)
    return a_low > b_high or b_low > a_high


# -- plots of one results folder -------------------------------------------------------------


def _interval_plot(plt: Any, names: Sequence[str], values: np.ndarray, lows: np.ndarray,
                   highs: np.ndarray, *, title: str, xlabel: str, note: Callable[[int], str],
                   colour: str = "#3b6fb6") -> Figure:
    """A dot-and-whisker chart, one row per name, best at the top."""
    n = len(names)
    fig, ax = plt.subplots(figsize=(8.0, 1.4 + 0.42 * n))
    y = np.arange(n)
    has_ci = np.isfinite(lows) & np.isfinite(highs)
    err = np.vstack([np.where(has_ci, values - lows, 0.0), np.where(has_ci, highs - values, 0.0)])
    ax.errorbar(values, y, xerr=err, fmt="o", color=colour, ecolor=colour, elinewidth=2,
                capsize=4, markersize=6)
    ax.set_yticks(y, [_short(name) for name in names])
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    finite = np.concatenate([values[np.isfinite(values)], lows[has_ci], highs[has_ci]])
    if finite.size:
        low, high = float(finite.min()), float(finite.max())
        span = (high - low) or max(abs(high), 1.0)
        ax.set_xlim(low - 0.08 * span, high + 0.08 * span)
    for i in range(n):
        ax.text(1.02, y[i], note(i), va="center", fontsize=8.5, color="#333333",
                transform=ax.get_yaxis_transform())
    return fig


def _plot_points(agents: pd.DataFrame, path: Path) -> Path:
    plt = _pyplot()
    table = agents.sort_values("points_per_game", ascending=True, kind="stable")
    values = table["points_per_game"].to_numpy(float)
    lows = table["points_per_game_ci_low"].to_numpy(float)
    highs = table["points_per_game_ci_high"].to_numpy(float)
    seats = table["seats"].to_numpy(int)

    def note(i: int) -> str:
        return f"{values[i]:.1f}  (n = {seats[i]} seat-games)"

    fig = _interval_plot(plt, list(table["player"]), values, lows, highs,
                         title="Points per game, with 95% intervals (clustered by game)",
                         xlabel="final score per seat-game (points)", note=note)
    return _save(fig, path)


def _plot_outcomes(agents: pd.DataFrame, path: Path) -> Path:
    plt = _pyplot()
    table = agents.sort_values(["some_found_rate", "player"], ascending=[True, False],
                               kind="stable", na_position="first")
    n = len(table)
    fig, ax = plt.subplots(figsize=(8.5, 1.9 + 0.45 * n))
    y = np.arange(n)
    left = np.zeros(n)
    for outcome in ("some_found", "all_found", "none_found"):
        width = np.nan_to_num(table[f"{outcome}_rate"].to_numpy(float))
        ax.barh(y, width, left=left, color=OUTCOME_COLOURS[outcome], height=0.62,
                label=OUTCOME_LABELS[outcome], edgecolor="white", linewidth=0.8)
        for i in range(n):
            if width[i] >= 0.08:
                ax.text(left[i] + width[i] / 2, y[i], f"{100 * width[i]:.0f}%", ha="center",
                        va="center", color="white", fontsize=8.5, fontweight="bold")
        left += width
    some = table["some_found_rate"].to_numpy(float)
    low = table["some_found_rate_ci_low"].to_numpy(float)
    high = table["some_found_rate_ci_high"].to_numpy(float)
    ok = np.isfinite(some) & np.isfinite(low) & np.isfinite(high)
    if ok.any():
        ax.errorbar(some[ok], y[ok] + 0.36, xerr=[some[ok] - low[ok], high[ok] - some[ok]],
                    fmt="none", ecolor="black", elinewidth=1.2, capsize=3,
                    label="95% Wilson interval of 'some'")
    turns = table["storyteller_turns"].to_numpy(int)
    for i in range(n):
        text = f"n = {turns[i]} turns" if turns[i] else "no storyteller turns"
        ax.text(1.02, y[i], text, va="center", fontsize=8.5, color="#333333",
                transform=ax.get_yaxis_transform())
    ax.set_yticks(y, [_short(name) for name in table["player"]])
    ax.set_ylim(-0.6, n - 0.25)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(plt.matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("share of the player's storyteller turns (%)")
    ax.set_title("Storyteller outcomes: did some but not all listeners find the card?", pad=30)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False,
              handlelength=1.4, columnspacing=1.2)
    fig.subplots_adjust(right=0.8)
    return _save(fig, path)


def _plot_ratings(ratings: pd.DataFrame, path: Path) -> Path:
    plt = _pyplot()
    table = ratings.sort_values("strength", ascending=True, kind="stable")
    values = table["strength"].to_numpy(float)
    lows = table.get("ci_low", pd.Series(np.nan, index=table.index)).to_numpy(float)
    highs = table.get("ci_high", pd.Series(np.nan, index=table.index)).to_numpy(float)
    games = table["games"].to_numpy(int) if "games" in table else np.zeros(len(table), int)

    def note(i: int) -> str:
        return f"{values[i]:+.2f}  (n = {games[i]} games)"

    fig = _interval_plot(plt, list(table["player"]), values, lows, highs,
                         title="Rating strength, with 95% bootstrap intervals",
                         xlabel="Bradley-Terry / Plackett-Luce log-strength (mean 0)",
                         note=note, colour="#7b4fa8")
    fig.axes[0].axvline(0.0, color="#777777", linewidth=0.8, linestyle=":")
    return _save(fig, path)


# -- the report of one results folder --------------------------------------------------------


def _run_lines(records: Sequence[GameRecord], agents: pd.DataFrame, summary: dict[str, Any],
               config: dict[str, Any]) -> list[str]:
    experiment = _experiment(config)
    rules = experiment.get("rules")
    if isinstance(rules, dict):
        preset = rules.get("preset", records[0].rules if records else "?")
        options = rules.get("options") or {}
        rules_text = preset + (" with " + ", ".join(f"{k}={v}" for k, v in options.items())
                               if options else "")
    elif rules:
        rules_text = str(rules)
    else:
        rules_text = ", ".join(sorted({r.rules for r in records})) or "?"
    deck = experiment.get("deck") or ", ".join(sorted({r.deck for r in records})) or "?"
    sizes = sorted({r.n_players for r in records})
    lines = [
        f"- **Rules:** {rules_text}",
        f"- **Deck:** {deck}" + (f"; clues: {experiment['clues']}"
                                 if experiment.get("clues") else ""),
        f"- **Players** ({'/'.join(map(str, sizes)) or '?'} per table): "
        + "; ".join(f"{row.player} = `{row.agent}` ({row.seats} seat-games)"
                    for row in agents.itertuples()),
        f"- **Games:** {len(records)}"
        + (f", {summary['rounds_mean']:.1f} rounds on average"
           if _is_number(summary.get("rounds_mean")) else ""),
    ]
    schedule = experiment.get("schedule")
    if isinstance(schedule, dict) and schedule.get("kind"):
        lines[-1] += f"; schedule: {schedule['kind']}"
    if "seed" in experiment or "seed" in summary:
        lines.append(f"- **Seed:** {experiment.get('seed', summary.get('seed'))}")
    reasons = summary.get("end_reasons") or {}
    if reasons:
        lines.append("- **Ends:** " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    timing = []
    if _is_number(summary.get("wall_seconds")):
        timing.append(f"wall time {summary['wall_seconds']:.1f} s")
    if _is_number(summary.get("games_per_second")):
        timing.append(f"{summary['games_per_second']:.1f} games/s")
    if summary.get("workers"):
        timing.append(f"{summary['workers']} worker(s)")
    if timing:
        lines.append("- **Speed:** " + ", ".join(timing))
    faults = summary.get("faults")
    if faults is None:
        faults = int(agents["faults"].sum()) if "faults" in agents else 0
    lines.append(f"- **Faults** (illegal actions replaced by the engine): {faults}")
    return lines


def _agents_markdown(agents: pd.DataFrame) -> str:
    table = agents.sort_values("points_per_game", ascending=False, kind="stable")
    header = ["player", "agent", "games", "seats", "win share", "points / game",
              "storyteller turns", "storyteller points / turn", "all found", "some found",
              "none found", "listener accuracy", "decoy votes / turn", "faults"]
    rows = [[
        str(row["player"]), f"`{row['agent']}`", _fmt(row["games"]), _fmt(row["seats"]),
        _with_ci(row, "win_share"), _with_ci(row, "points_per_game", 1),
        _fmt(row["storyteller_turns"]), _with_ci(row, "storyteller_points_per_turn"),
        _with_ci(row, "all_found_rate", percent=True),
        _with_ci(row, "some_found_rate", percent=True),
        _with_ci(row, "none_found_rate", percent=True),
        _with_ci(row, "listener_accuracy", percent=True),
        _with_ci(row, "decoy_votes_per_turn"), _fmt(row["faults"]),
    ] for _, row in table.iterrows()]
    right = [False, False, *[True] * (len(header) - 2)]
    return _markdown_table(header, rows, right)


def _ratings_markdown(ratings: pd.DataFrame) -> str:
    table = ratings.sort_values("strength", ascending=False, kind="stable")
    header = ["player", "games", "strength [95% CI]", "OpenSkill mu", "sigma", "ordinal"]
    rows = []
    for _, row in table.iterrows():
        strength = _fmt(row.get("strength"))
        if _is_number(row.get("ci_low")) and _is_number(row.get("ci_high")):
            strength += f" [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]"
        rows.append([str(row["player"]), _fmt(row.get("games")), strength,
                     _fmt(row.get("mu")), _fmt(row.get("sigma")), _fmt(row.get("ordinal"))])
    return _markdown_table(header, rows, [False, True, True, True, True, True])


def _reading(agents: pd.DataFrame, ratings: pd.DataFrame | None, games: int) -> list[str]:
    """Two or three sentences read off the numbers."""
    sentences: list[str] = []
    told = agents[agents["storyteller_turns"] > 0].sort_values(
        "storyteller_points_per_turn", ascending=False, kind="stable")
    if len(told):
        best = told.iloc[0]
        text = (f"As storyteller, {best['player']} scored most: "
                f"{_with_ci(best, 'storyteller_points_per_turn')} points per turn over "
                f"{best['storyteller_turns']} turns")
        if len(told) > 1:
            second = told.iloc[1]
            apart = _separated(best, second, "storyteller_points_per_turn")
            text += (f", against {_with_ci(second, 'storyteller_points_per_turn')} for "
                     f"{second['player']}")
            if apart is True:
                text += "; the 95% intervals do not overlap, so the lead is clear"
            elif apart is False:
                text += ("; the 95% intervals overlap, so these games do not separate the "
                         "two")
        sentences.append(text + ".")
        some = told.sort_values("some_found_rate", ascending=False, kind="stable").iloc[0]
        if len(told) == 1:
            sentences.append(
                f"Its clues were found by some but not all listeners in "
                f"{_with_ci(some, 'some_found_rate', percent=True)} of its turns, by everyone "
                f"in {_pct(some['all_found_rate'])} and by no one in "
                f"{_pct(some['none_found_rate'])}.")
        else:
            too_easy = told.sort_values("all_found_rate", ascending=False, kind="stable").iloc[0]
            too_hard = told.sort_values("none_found_rate", ascending=False,
                                        kind="stable").iloc[0]
            text = (f"{some['player']} hit 'some but not all' most often "
                    f"({_with_ci(some, 'some_found_rate', percent=True)} of its turns)")
            easy_rate, hard_rate = too_easy["all_found_rate"], too_hard["none_found_rate"]
            clause = ""
            if easy_rate > 0:
                clause = (f"{too_easy['player']}'s clues were most often found by everyone "
                          f"({_pct(easy_rate)})")
            if hard_rate > 0:
                if not clause:
                    clause = (f"{too_hard['player']}'s clues were most often found by no one "
                              f"({_pct(hard_rate)})")
                elif too_easy["player"] == too_hard["player"]:
                    clause += f" and also by no one ({_pct(hard_rate)})"
                else:
                    clause += f", {too_hard['player']}'s by no one ({_pct(hard_rate)})"
            if clause:
                text += "; " + clause
            sentences.append(text + ".")
    ranked = agents.sort_values("points_per_game", ascending=False, kind="stable")
    if len(ranked):
        top = ranked.iloc[0]
        text = (f"Over {games} games {top['player']} had the most points per game "
                f"({_with_ci(top, 'points_per_game', 1)}) and a win share of "
                f"{_fmt(top['win_share'])}")
        if ratings is not None and len(ratings) and "strength" in ratings:
            first = ratings.sort_values("strength", ascending=False, kind="stable").iloc[0]
            text += (f"; the rating puts {first['player']} first (strength "
                     f"{_fmt(first['strength'])})")
        sentences.append(text + ".")
    return sentences


def write_report(results_dir: Path) -> Path:
    """Write ``report.md`` and ``plots/*.png`` for a results folder; returns the report path.

    Reads ``games.jsonl``, ``agents.csv`` (computed from the games and written if absent),
    ``ratings.csv``, ``summary.json`` and ``config.yaml`` when present.
    """
    folder = Path(results_dir)
    games_path = folder / "games.jsonl"
    if not games_path.is_file():
        raise FileNotFoundError(f"{folder} has no games.jsonl: is it a results folder?")
    records = list(read_jsonl(games_path))
    agents_path = folder / "agents.csv"
    if agents_path.is_file():
        agents = pd.read_csv(agents_path)
    else:
        agents = agent_table(records)
        atomic_write_text(agents_path, agents.to_csv(index=False))
    ratings_path = folder / "ratings.csv"
    ratings = pd.read_csv(ratings_path) if ratings_path.is_file() else None
    if ratings is not None and ("strength" not in ratings or ratings.empty):
        ratings = None
    summary = _read_json(folder / "summary.json")
    if "rounds_mean" not in summary and records:
        summary["rounds_mean"] = float(np.mean([len(r.rounds) for r in records]))
        summary.setdefault("end_reasons", pd.Series([r.end_reason for r in records])
                           .value_counts().to_dict())
    config = _read_yaml(folder / "config.yaml")
    name = _experiment(config).get("name") or summary.get("name") or folder.name

    plots = folder / "plots"
    plot_links: list[tuple[str, str]] = []
    if len(agents):
        _plot_points(agents, plots / "points_per_game.png")
        plot_links.append(("Points per game", "plots/points_per_game.png"))
        _plot_outcomes(agents, plots / "storyteller_outcomes.png")
        plot_links.append(("Storyteller outcomes", "plots/storyteller_outcomes.png"))
    if ratings is not None:
        _plot_ratings(ratings, plots / "ratings.png")
        plot_links.append(("Ratings", "plots/ratings.png"))

    description = _experiment(config).get("description")
    parts = [f"# {name}", ""]
    if description:
        parts += [str(description).strip(), ""]
    parts += ["## What was run", "", *_run_lines(records, agents, summary, config), ""]
    if len(agents):
        parts += ["## Reading", "", " ".join(_reading(agents, ratings, len(records))), ""]
        parts += ["## Players", "",
                  "Values are means or rates with 95% intervals in brackets: Wilson intervals "
                  "for rates and the win share, at the effective sample size of their clusters "
                  "(rounds for listener votes, games for storyteller turns and win share), t "
                  "intervals clustered by game for means (points, decoy votes). Win share "
                  "gives 1/k of a game to each of k tied winners and "
                  "sums the shares of a name's seats in one game. Full table: "
                  "[agents.csv](agents.csv).", "", _agents_markdown(agents), ""]
    if ratings is not None:
        parts += ["## Ratings", "",
                  "Strength is a Bradley-Terry / Plackett-Luce log-strength fitted on all "
                  "games (mean 0; a difference d means the first finishes above the second "
                  "with probability 1 / (1 + e^-d)); mu, sigma and ordinal are OpenSkill. "
                  "Full table: [ratings.csv](ratings.csv).", "", _ratings_markdown(ratings), ""]
        parts += pairs_section(folder)
    if len(agents):
        parts += reading_notes(agents)
    calibration = _calibration_section(folder, agents)
    if plot_links:
        parts += ["## Plots", ""]
        for title, link in plot_links:
            parts += [f"### {title}", "", f"![{title}]({link})", ""]
    parts += calibration
    report = folder / "report.md"
    atomic_write_text(report, "\n".join(parts).rstrip() + "\n")
    return report


def _calibration_section(folder: Path, agents: pd.DataFrame) -> list[str]:
    """Predicted vs observed find rate of the storytellers that model their listeners."""
    path = folder / "find_calibration.csv"
    if not path.is_file() or "predicted_find_rate" not in agents:
        return []
    bins = pd.read_csv(path)
    modelled = agents[agents["predicted_find_rate"].notna()]
    if bins.empty or modelled.empty:
        return []
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect")
    for index, (player, group) in enumerate(bins.groupby("player", sort=False)):
        colour = plt.cm.tab10(index % 10)
        ax.plot(group["predicted"], group["observed"], marker="o", color=colour, label=player)
        for _, row in group.iterrows():
            ax.annotate(str(int(row["turns"])), (row["predicted"], row["observed"]),
                        textcoords="offset points", xytext=(4, -10), fontsize=7,
                        color=colour)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted probability that one listener finds the card")
    ax.set_ylabel("observed share of listeners who found it")
    ax.set_title("Is the storyteller's listener model calibrated?\n(binned turns; labels: "
                 "turns per bin)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    _save(fig, folder / "plots" / "find_calibration.png")
    rows = [[str(r["player"]), f"{r['predicted_find_rate']:.3f}",
             f"{r['observed_find_rate']:.3f} [{r['observed_find_rate_ci_low']:.3f}, "
             f"{r['observed_find_rate_ci_high']:.3f}]"] for _, r in modelled.iterrows()]
    return ["## Predicted vs observed find rate", "",
            "For storytellers that model their listeners, the model's probability that one "
            "listener finds the told card, against the share of listeners who did (95% "
            "interval clustered by game). Binned table: "
            "[find_calibration.csv](find_calibration.csv).", "",
            _markdown_table(["player", "predicted", "observed [95% CI]"], rows), "",
            "![Predicted vs observed find rate](plots/find_calibration.png)", ""]


# -- sweeps ------------------------------------------------------------------------------------


def _numeric_column(values: pd.Series) -> pd.Series | None:
    """The values as floats if every one is a number (not a bool), else None."""
    if values.dtype == bool:
        return None
    converted = pd.to_numeric(values, errors="coerce")
    if converted.isna().any():
        return None
    return converted.astype(float)


def _varying_players(joined: pd.DataFrame) -> set[str]:
    """Players whose agent spec differs between sweep points."""
    specs = joined.groupby("player")["agent"].nunique()
    return set(specs[specs > 1].index)


def _series_label(player: str, others: dict[str, Any]) -> str:
    if not others:
        return _short(player, 30)
    return _short(player, 24) + " (" + ", ".join(f"{k}={v}" for k, v in others.items()) + ")"


def _plot_sweep_metric(joined: pd.DataFrame, paths: Sequence[str], metric: str,
                       path: Path) -> Path:
    """One panel per swept path: curves with CI bands (numeric) or grouped bars."""
    plt = _pyplot()
    varying = _varying_players(joined)
    n_panels = len(paths)
    fig, axes = plt.subplots(1, n_panels, figsize=(7.5 * n_panels, 5.6), squeeze=False)
    players = list(dict.fromkeys(joined["player"]))
    colours = {p: plt.cm.tab10(i % 10) for i, p in enumerate(players)}
    low_col, high_col = f"{metric}_ci_low", f"{metric}_ci_high"
    for ax, swept in zip(axes[0], paths, strict=True):
        others = [p for p in paths if p != swept and joined[p].nunique() > 1]
        numeric = _numeric_column(joined[swept])
        if numeric is not None:
            data = joined.assign(_x=numeric)
            combos = list(dict.fromkeys(zip(*(data[c] for c in others), strict=True))) or [()]
            for keys, group in data.groupby(["player", *others], sort=False):
                keys = keys if isinstance(keys, tuple) else (keys,)
                player = keys[0]
                marker = _MARKERS[combos.index(tuple(keys[1:])) % len(_MARKERS)]
                group = group.sort_values("_x")
                solid = player in varying or not varying
                x = group["_x"].to_numpy(float)
                y = group[metric].to_numpy(float)
                label = _series_label(player, dict(zip(others, keys[1:], strict=True)))
                if not solid:
                    label += " (fixed)"
                ax.plot(x, y, marker=marker, markersize=5, color=colours[player],
                        linestyle="-" if solid else "--", linewidth=2 if solid else 1.2,
                        label=label)
                if low_col in group and high_col in group:
                    low, high = group[low_col].to_numpy(float), group[high_col].to_numpy(float)
                    ok = np.isfinite(low) & np.isfinite(high)
                    if ok.any():
                        ax.fill_between(x[ok], low[ok], high[ok], color=colours[player],
                                        alpha=0.18 if solid else 0.08, linewidth=0)
                if metric == "observed_find_rate" and "predicted_find_rate" in group:
                    predicted = group["predicted_find_rate"].to_numpy(float)
                    if np.isfinite(predicted).any():
                        ax.plot(x, predicted, linestyle=":", marker="x", color=colours[player],
                                linewidth=1.5, label=f"{label} - predicted by its model")
            ax.set_xlabel(f"{swept} (swept value)")
        else:
            labels = list(dict.fromkeys(joined[swept].astype(str)))
            groups = joined.assign(_x=joined[swept].astype(str))
            series = list(dict.fromkeys(zip(*(groups[c] for c in ["player", *others]),
                                            strict=True)))
            combos = list(dict.fromkeys(keys[1:] for keys in series))
            width = 0.8 / max(len(series), 1)
            for index, keys in enumerate(series):
                mask = np.ones(len(groups), bool)
                for column, key in zip(["player", *others], keys, strict=True):
                    mask &= (groups[column] == key).to_numpy()
                group = groups[mask].set_index("_x").reindex(labels)
                x = np.arange(len(labels)) - 0.4 + width * (index + 0.5)
                y = group[metric].to_numpy(float)
                err = None
                if low_col in group and high_col in group:
                    low, high = group[low_col].to_numpy(float), group[high_col].to_numpy(float)
                    err = np.vstack([np.nan_to_num(y - low), np.nan_to_num(high - y)])
                label = _series_label(keys[0], dict(zip(others, keys[1:], strict=True)))
                hatch = _HATCHES[combos.index(tuple(keys[1:])) % len(_HATCHES)]
                ax.bar(x, y, width=width * 0.95, color=colours[keys[0]], label=label,
                       hatch=hatch, edgecolor="white", linewidth=0.5,
                       yerr=err, capsize=3, error_kw={"elinewidth": 1, "ecolor": "#333333"})
            ax.set_xticks(np.arange(len(labels)), [_short(v, 32) for v in labels],
                          rotation=20 if max(map(len, labels)) > 8 else 0)
            ax.set_xlabel(f"{swept} (swept setting)")
        ax.set_ylabel(SWEEP_METRICS[metric])
        if metric in ("some_found_rate", "win_share"):
            ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.set_title(f"{_METRIC_TITLES[metric]} vs {swept}\n(95% intervals)")
        handles, _ = ax.get_legend_handles_labels()
        if handles and numeric is not None:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8,
                      ncol=2 if len(handles) > 3 else len(handles), frameon=False)
        elif handles:  # rotated category labels below: keep the legend clear of them
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                      frameon=False)
    return _save(fig, path)


def write_sweep_report(sweep_dir: Path) -> Path:
    """Write ``sweep_agents.csv``, ``plots/sweep_<metric>.png`` and ``report.md`` for a sweep.

    Reads ``sweep.csv`` (``point``, one column per swept config path, ``folder``) and each
    point's ``agents.csv``, running :func:`write_report` on a point that lacks it or its report.
    """
    folder = Path(sweep_dir)
    sweep_path = folder / "sweep.csv"
    if not sweep_path.is_file():
        raise FileNotFoundError(f"{folder} has no sweep.csv: is it a sweep results folder?")
    sweep = pd.read_csv(sweep_path)
    missing = {"point", "folder"} - set(sweep.columns)
    if missing:
        raise ValueError(f"{sweep_path}: missing column(s) {', '.join(sorted(missing))}")
    paths = [c for c in sweep.columns if c not in ("point", "folder")]
    frames = []
    for _, row in sweep.iterrows():
        point_dir = folder / str(row["folder"])
        if not (point_dir / "agents.csv").is_file() or not (point_dir / "report.md").is_file():
            write_report(point_dir)
        agents = pd.read_csv(point_dir / "agents.csv")
        settings = {"point": row["point"], **{p: row[p] for p in paths},
                    "folder": row["folder"]}
        frames.append(agents.assign(**settings)[[*settings, *agents.columns]])
    joined = pd.concat(frames, ignore_index=True)
    atomic_write_text(folder / "sweep_agents.csv", joined.to_csv(index=False))

    plot_links = []
    if paths:
        for metric in SWEEP_METRICS:
            if metric in joined:
                target = folder / "plots" / f"sweep_{metric}.png"
                _plot_sweep_metric(joined, paths, metric, target)
                plot_links.append((_METRIC_TITLES[metric], f"plots/sweep_{metric}.png"))

    name = folder.name
    first = folder / str(sweep["folder"].iloc[0]) / "config.yaml" if len(sweep) else None
    if first is not None:
        name = _experiment(_read_yaml(first)).get("name") or name
    parts = [f"# Sweep: {name}", "",
             f"{len(sweep)} points over {', '.join(f'`{p}`' for p in paths) or 'nothing'}. "
             "Every point keeps the experiment seed. Joined table: "
             "[sweep_agents.csv](sweep_agents.csv).", "", "## Points", ""]
    rows = []
    for _, row in sweep.iterrows():
        point_rows = joined[joined["point"] == row["point"]]
        games = int(point_rows["games"].max()) if len(point_rows) else 0
        summary_path = folder / str(row["folder"]) / "summary.json"
        if summary_path.is_file():  # the point's games, not one player's share of them
            games = int(json.loads(summary_path.read_text(encoding="utf-8")).get("games", games))
        link = f"[report]({Path(str(row['folder'])).as_posix()}/report.md)"
        rows.append([str(row["point"]), *[str(row[p]) for p in paths], str(games), link])
    parts += [_markdown_table(["point", *paths, "games", "report"], rows), ""]
    parts += _varying_table(joined, paths)
    from dixit_lab.sweep_pairs import neighbour_differences, sweep_pairs_section

    players = sorted(_varying_players(joined)) or list(dict.fromkeys(joined["player"]))
    pairs = neighbour_differences(folder, sweep, paths, players)
    atomic_write_text(folder / "sweep_pairs.csv", pairs.to_csv(index=False))
    parts += sweep_pairs_section(pairs, paths)
    reading = _sweep_reading(joined, paths)
    if reading:
        parts += ["## Reading", "", " ".join(reading), ""]
    if plot_links:
        parts += ["## Curves", "",
                  "Solid lines: players whose agent changes with the sweep; dashed: the others, "
                  "for reference. Bands and error bars: 95% intervals (Wilson for rates, t "
                  "clustered by game for means).", ""]
        for title, link in plot_links:
            parts += [f"### {title}", "", f"![{title}]({link})", ""]
    report = folder / "report.md"
    atomic_write_text(report, "\n".join(parts).rstrip() + "\n")
    return report


def _varying_table(joined: pd.DataFrame, paths: Sequence[str]) -> list[str]:
    """The storyteller figures of the players that change with the sweep, point by point."""
    varying = _varying_players(joined) or set(joined["player"])
    rows = []
    for _, row in joined[joined["player"].isin(varying)].iterrows():
        def rate(column: str, row: pd.Series = row) -> str:
            value = row.get(column, float("nan"))
            if not np.isfinite(value):
                return "–"
            low = row.get(f"{column}_ci_low", float("nan"))
            high = row.get(f"{column}_ci_high", float("nan"))
            return (f"{value:.3f} [{low:.3f}, {high:.3f}]" if np.isfinite(low)
                    else f"{value:.3f}")

        rows.append([str(row["point"]), *[str(row[p]) for p in paths], str(row["player"]),
                     str(int(row.get("storyteller_turns", 0))),
                     rate("storyteller_points_per_turn"), rate("all_found_rate"),
                     rate("some_found_rate"), rate("none_found_rate"),
                     rate("observed_find_rate"), rate("predicted_find_rate")])
    if not rows:
        return []
    header = ["point", *paths, "player", "storyteller turns", "points / turn", "all found",
              "some found", "none found", "find rate (observed)", "find rate (predicted)"]
    return ["## Storytellers that change with the sweep", "",
            "Means and rates with 95% intervals (t clustered by game; Wilson for the outcome "
            "rates). The find rate is the share of listeners who found the storyteller's card; "
            "the predicted one is the agent's own model, where it has one.", "",
            _markdown_table(header, rows), ""]


def _sweep_reading(joined: pd.DataFrame, paths: Sequence[str]) -> list[str]:
    """Per varying player (or every player), where its storyteller points peak."""
    varying = _varying_players(joined) or set(joined["player"])
    sentences = []
    metric = "storyteller_points_per_turn"
    for player in sorted(varying):
        rows = joined[(joined["player"] == player) & joined[metric].notna()]
        if len(rows) < 2:
            continue
        best = rows.loc[rows[metric].idxmax()]
        worst = rows.loc[rows[metric].idxmin()]
        if math.isclose(float(best[metric]), float(worst[metric])):
            sentences.append(f"{player}'s storyteller points per turn did not change across "
                             f"the sweep ({_with_ci(best, metric)}).")
            continue
        where = ", ".join(f"{p} = {best[p]}" for p in paths)
        text = (f"{player} scored most as storyteller at {where}: "
                f"{_with_ci(best, metric)} points per turn, against "
                f"{_with_ci(worst, metric)} at its lowest point")
        apart = _separated(best, worst, metric)
        if apart is not None:
            text += (" (intervals do not overlap)" if apart else
                     " (intervals overlap: the sweep does not separate them)")
        sentences.append(text + ".")
        if len(sentences) == 3:
            break
    return sentences


# -- one game as text --------------------------------------------------------------------------


def _card_label(card: int, deck: Deck | None, caption_chars: int = 50) -> str:
    if deck is None or not 0 <= card < len(deck.cards):
        return f"card {card}"
    entry = deck.cards[card]
    if entry.caption:
        caption = entry.caption if len(entry.caption) <= caption_chars else (
            entry.caption[: caption_chars - 1].rstrip() + "…")
        return f"{entry.id}  “{caption}”"
    return entry.id


def show_game(record: GameRecord, deck: Deck | None = None) -> str:
    """A round-by-round, plain-text account of one game, for a terminal."""
    names = player_names(record)
    n = record.n_players
    seat_label = [f"seat {s}, {names[s]}" for s in range(n)]
    game = record.meta.get("game")
    title = f"Game {game}" if game is not None else "Game"
    lines = [
        f"{title}: {record.rules} rules, deck {record.deck}, {n} players, "
        f"{len(record.rounds)} rounds, ended by {record.end_reason.replace('_', ' ')}",
        "Seats: " + "; ".join(
            f"{s} {names[s]}" + (f" ({record.agents[s]})" if record.agents[s] != names[s] else "")
            for s in range(n)),
        "",
    ]
    name_width = max(len(label) for label in seat_label)
    for number, rnd in enumerate(record.rounds, start=1):
        teller = rnd.storyteller
        lines.append(f"Round {number}/{len(record.rounds)}   storyteller: "
                     f"{seat_label[teller]}   clue: \"{rnd.clue}\"")
        voters: dict[int, list[int]] = {}
        for seat, vote in enumerate(rnd.votes):
            if vote is not None:
                voters.setdefault(vote, []).append(seat)
        cards = [_card_label(card, deck) for card in rnd.display]
        card_width = min(max(len(c) for c in cards), 70)
        owner_width = max(len(seat_label[o]) for o in rnd.card_owner) + 4
        lines.append(f"       {'card':<{card_width}}  {'owner':<{owner_width}}voted by")
        for position, (card, owner) in enumerate(zip(cards, rnd.card_owner, strict=True)):
            mark = "*" if owner == teller else " "
            who = ", ".join(f"{names[s]} (seat {s})" for s in voters.get(position, [])) or "-"
            owner_text = f"({seat_label[owner]})"
            lines.append(f"  {mark}{position + 1:>2}. {card:<{card_width}}  "
                         f"{owner_text:<{owner_width}}{who}")
        finders = rnd.finders
        outcome = {"all_found": "all found the storyteller's card",
                   "some_found": "some but not all found it",
                   "none_found": "no one found it"}[rnd.outcome]
        lines.append(f"  * = storyteller's card.  Outcome: {outcome} "
                     f"({len(finders)} of {n - 1} voters)")
        for fault in rnd.faults:
            lines.append(f"  ! fault, seat {fault.seat} ({fault.action}): {fault.message}")
        lines.append(f"    {'player':<{name_width}}  points  total")
        for seat in range(n):
            role = "  (storyteller)" if seat == teller else ""
            lines.append(f"    {seat_label[seat]:<{name_width}}  {rnd.points[seat]:>+6d}"
                         f"  {rnd.scores[seat]:>5d}{role}")
        lines.append("")
    lines.append("Final scores:")
    order = sorted(range(n), key=lambda s: (-record.final_scores[s], s))
    for seat in order:
        crown = "  winner" if seat in record.winners else ""
        lines.append(f"    {seat_label[seat]:<{name_width}}  {record.final_scores[seat]:>5d}"
                     f"{crown}")
    winners = ", ".join(seat_label[s] for s in record.winners)
    shared = " (shared victory)" if len(record.winners) > 1 else ""
    lines.append(f"Winner{'s' if len(record.winners) > 1 else ''}: {winners}{shared}")
    return "\n".join(lines) + "\n"
