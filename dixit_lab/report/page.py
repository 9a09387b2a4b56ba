"""The report of one results folder: ``report.md`` with its tables, plain-language reading and
plots (``plots/*.png``). Every file is written atomically, so an interrupted report leaves the
previous one intact. Sweeps have their own report (:mod:`dixit_lab.report.sweep`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from dixit_lab.atomic import atomic_write_text
from dixit_lab.core.rules import RuleSet, get_rules
from dixit_lab.errors import UserError
from dixit_lab.report.faults import SeatFaults, fault_text, folder_faults
from dixit_lab.report.markdown import (
    experiment_of,
    fmt,
    html_text,
    is_number,
    markdown_table,
    pct,
    read_json,
    read_yaml,
    separated,
    with_ci,
)
from dixit_lab.report.model_seats import chance_section, model_section
from dixit_lab.report.notes import pairs_section, reading_notes
from dixit_lab.report.plots import plot_outcomes, plot_points, plot_ratings, pyplot, save_figure
from dixit_lab.text_rule import shown_message

__all__ = ["write_report"]


# -- the report of one results folder --------------------------------------------------------


def _folder_rules(config: Any) -> RuleSet | None:
    """The rules a folder's ``config.yaml`` names (a preset, or a preset and options), None
    when it names none that can be made (a sweep over presets, a damaged config)."""
    rules = experiment_of(config).get("rules") if isinstance(config, dict) else None
    try:
        if isinstance(rules, str):
            return get_rules(rules)
        if isinstance(rules, dict):
            return get_rules(str(rules.get("preset", "classic")), **(rules.get("options") or {}))
    except (UserError, TypeError, ValueError):
        return None
    return None


def _run_lines(agents: pd.DataFrame, summary: dict[str, Any], config: dict[str, Any],
               faults: list[SeatFaults]) -> list[str]:
    experiment = experiment_of(config)
    rules = experiment.get("rules")
    presets = summary.get("rule_presets") or []
    if isinstance(rules, dict):
        preset = rules.get("preset", presets[0] if presets else "?")
        options = rules.get("options") or {}
        rules_text = preset + (" with " + ", ".join(f"{k}={v}" for k, v in options.items())
                               if options else "")
    elif rules:
        rules_text = str(rules)
    else:
        rules_text = ", ".join(presets) or "?"
    deck = experiment.get("deck") or ", ".join(summary.get("decks") or []) or "?"
    sizes = summary.get("table_sizes") or []
    lines = [
        f"- **Rules:** {rules_text}",
        f"- **Deck:** {deck}" + (f"; clues: {experiment['clues']}"
                                 if experiment.get("clues") else ""),
        f"- **Players** ({'/'.join(map(str, sizes)) or '?'} per table): "
        + "; ".join(f"{row.player} = `{row.agent}` ({row.seats} seat-games)"
                    for row in agents.itertuples()),
        f"- **Games:** {summary.get('games', '?')}"
        + (f", {summary['rounds_mean']:.1f} rounds on average"
           if is_number(summary.get("rounds_mean")) else ""),
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
    if is_number(summary.get("wall_seconds")):
        timing.append(f"wall time {summary['wall_seconds']:.1f} s")
    if is_number(summary.get("games_per_second")):
        timing.append(f"{summary['games_per_second']:.1f} games/s")
    if summary.get("workers"):
        timing.append(f"{summary['workers']} worker(s)")
    engine = config.get("engine_played") if isinstance(config, dict) else None
    if isinstance(engine, dict) and engine.get("engine"):
        lines.append(f"- **Engine:** {html_text(str(engine['engine']))}"  # specs: user text
                     + (f": {html_text(str(engine['why']))}" if engine.get("why") else ""))
    if timing:
        lines.append("- **Speed:** " + ", ".join(timing))
    lines += _fault_lines(faults)
    if "unperceived_clues" in agents:
        lines.append(_unperceived_line(agents))
    return lines


def _fault_lines(seats: list[SeatFaults]) -> list[str]:
    """The faults by kind, what the engine did with them, and a line for each seat that had
    any (its share of decisions replaced, its kinds, its first fault)."""
    kinds: dict[str, int] = {}
    for seat in seats:
        for kind, count in seat.kinds.items():
            kinds[kind] = kinds.get(kind, 0) + count
    if not kinds:
        return ["- **Faults:** none"]
    counts = ", ".join(f"{html_text(shown_message(kind, 20))} {count}"
                       for kind, count in kinds.items())
    return [f"- **Faults:** {sum(kinds.values())} ({counts}). The engine replaced each failed "
            f"tell, submit or vote by a legal one drawn from the seat's seeded fallback "
            f"stream (a failed begin_game or observe replaces nothing); `dixit-lab show DIR "
            f"--game N` prints a game with its faults:",
            *(f"  - {html_text(fault_text(seat))}" for seat in seats)]


def _unperceived_line(agents: pd.DataFrame) -> str:
    """How many clues each agent could not perceive (outside its clue bank, with no text
    model installed to embed them): it then decided as if every card matched equally."""
    counts = agents["unperceived_clues"].fillna(0).astype(int)
    line = (f"- **Clues not perceived** (outside the agent's clue bank, with no text model "
            f"here to embed them; it took every card as equally similar): {int(counts.sum())}")
    named = [f"{row.player} {int(row.unperceived_clues)}" for row in agents.itertuples()
             if row.unperceived_clues > 0]
    if named:
        line += (" (" + ", ".join(named) + "; install the embedder's text model, e.g. pip "
                 "install 'dixit-lab[offline]', to perceive them)")
    return line


def _agents_markdown(agents: pd.DataFrame) -> str:
    table = agents.sort_values("points_per_game", ascending=False, kind="stable")
    header = ["player", "agent", "games", "seats", "win share", "points / game",
              "storyteller turns", "storyteller points / turn", "all found", "some found",
              "none found", "listener accuracy", "decoy votes / turn", "faults"]
    rows = [[
        str(row["player"]), f"`{row['agent']}`", fmt(row["games"]), fmt(row["seats"]),
        with_ci(row, "win_share"), with_ci(row, "points_per_game", 1),
        fmt(row["storyteller_turns"]), with_ci(row, "storyteller_points_per_turn"),
        with_ci(row, "all_found_rate", percent=True),
        with_ci(row, "some_found_rate", percent=True),
        with_ci(row, "none_found_rate", percent=True),
        with_ci(row, "listener_accuracy", percent=True),
        with_ci(row, "decoy_votes_per_turn"), fmt(row["faults"]),
    ] for _, row in table.iterrows()]
    right = [False, False, *[True] * (len(header) - 2)]
    return markdown_table(header, rows, right)


def _ratings_markdown(ratings: pd.DataFrame) -> str:
    table = ratings.sort_values("strength", ascending=False, kind="stable")
    header = ["player", "games", "strength [95% CI]", "OpenSkill mu", "sigma", "ordinal"]
    rows = []
    for _, row in table.iterrows():
        strength = fmt(row.get("strength"))
        if is_number(row.get("ci_low")) and is_number(row.get("ci_high")):
            strength += f" [{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"
        rows.append([str(row["player"]), fmt(row.get("games")), strength,
                     fmt(row.get("mu")), fmt(row.get("sigma")), fmt(row.get("ordinal"))])
    return markdown_table(header, rows, [False, True, True, True, True, True])


def _reading(agents: pd.DataFrame, ratings: pd.DataFrame | None, games: int) -> list[str]:
    """Two or three sentences read off the numbers."""
    sentences: list[str] = []
    told = agents[agents["storyteller_turns"] > 0].sort_values(
        "storyteller_points_per_turn", ascending=False, kind="stable")
    if len(told):
        best = told.iloc[0]
        text = (f"As storyteller, {best['player']} scored most: "
                f"{with_ci(best, 'storyteller_points_per_turn')} points per turn over "
                f"{best['storyteller_turns']} turns")
        if len(told) > 1:
            second = told.iloc[1]
            apart = separated(best, second, "storyteller_points_per_turn")
            text += (f", against {with_ci(second, 'storyteller_points_per_turn')} for "
                     f"{second['player']}")
            if apart is True:
                text += "; the 95% intervals do not overlap, so the lead is clear"
            elif apart is False:
                text += ("; the 95% intervals overlap, which alone does not show that the "
                         "two score alike (a difference can be clear where intervals overlap)")
        sentences.append(text + ".")
        some = told.sort_values("some_found_rate", ascending=False, kind="stable").iloc[0]
        if len(told) == 1:
            sentences.append(
                f"Its clues were found by some but not all listeners in "
                f"{with_ci(some, 'some_found_rate', percent=True)} of its turns, by everyone "
                f"in {pct(some['all_found_rate'])} and by no one in "
                f"{pct(some['none_found_rate'])}.")
        else:
            too_easy = told.sort_values("all_found_rate", ascending=False, kind="stable").iloc[0]
            too_hard = told.sort_values("none_found_rate", ascending=False,
                                        kind="stable").iloc[0]
            text = (f"{some['player']} hit 'some but not all' most often "
                    f"({with_ci(some, 'some_found_rate', percent=True)} of its turns)")
            easy_rate, hard_rate = too_easy["all_found_rate"], too_hard["none_found_rate"]
            clause = ""
            if easy_rate > 0:
                clause = (f"{too_easy['player']}'s clues were most often found by everyone "
                          f"({pct(easy_rate)})")
            if hard_rate > 0:
                if not clause:
                    clause = (f"{too_hard['player']}'s clues were most often found by no one "
                              f"({pct(hard_rate)})")
                elif too_easy["player"] == too_hard["player"]:
                    clause += f" and also by no one ({pct(hard_rate)})"
                else:
                    clause += f", {too_hard['player']}'s by no one ({pct(hard_rate)})"
            if clause:
                text += "; " + clause
            sentences.append(text + ".")
    ranked = agents.sort_values("points_per_game", ascending=False, kind="stable")
    if len(ranked):
        top = ranked.iloc[0]
        text = (f"Over {games} games {top['player']} had the most points per game "
                f"({with_ci(top, 'points_per_game', 1)}) and a win share of "
                f"{fmt(top['win_share'])}")
        if ratings is not None and len(ratings) and "strength" in ratings:
            first = ratings.sort_values("strength", ascending=False, kind="stable").iloc[0]
            text += (f"; the rating puts {first['player']} first (strength "
                     f"{fmt(first['strength'])})")
        sentences.append(text + ".")
    return sentences


def write_report(results_dir: Path) -> Path:
    """Write ``report.md`` and ``plots/*.png`` for a results folder; returns the report path.

    Reads ``agents.csv``, ``summary.json`` (both computed from the games by
    ``dixit_lab.report.outputs.write_tables``, which calls this), ``ratings.csv`` and
    ``config.yaml`` when present.
    """
    folder = Path(results_dir)
    agents_path = folder / "agents.csv"
    if not agents_path.is_file() or not (folder / "summary.json").is_file():
        raise FileNotFoundError(f"{folder} has no agents.csv or summary.json: `dixit-lab "
                                f"report {folder}` computes the tables and the report")
    agents = pd.read_csv(agents_path)
    ratings_path = folder / "ratings.csv"
    ratings = pd.read_csv(ratings_path) if ratings_path.is_file() else None
    if ratings is not None and ("strength" not in ratings or ratings.empty):
        ratings = None
    # players' names are the user's text: no tag of theirs reaches the report
    agents = agents.assign(player=agents["player"].astype(str).map(html_text))
    if ratings is not None:
        ratings = ratings.assign(player=ratings["player"].astype(str).map(html_text))
    summary = read_json(folder / "summary.json")
    config = read_yaml(folder / "config.yaml")
    name = experiment_of(config).get("name") or summary.get("name") or folder.name

    plots = folder / "plots"
    plot_links: list[tuple[str, str]] = []
    if len(agents):
        plot_points(agents, plots / "points_per_game.png")
        plot_links.append(("Points per game", "plots/points_per_game.png"))
        plot_outcomes(agents, plots / "storyteller_outcomes.png")
        plot_links.append(("Storyteller outcomes", "plots/storyteller_outcomes.png"))
    if ratings is not None:
        plot_ratings(ratings, plots / "ratings.png")
        plot_links.append(("Ratings", "plots/ratings.png"))

    description = experiment_of(config).get("description")
    parts = [f"# {name}", ""]
    if description:
        parts += [str(description).strip(), ""]
    parts += ["## What was run", "", *_run_lines(agents, summary, config,
                                                  folder_faults(folder)), ""]
    if len(agents):
        games = int(summary.get("games") or 0)
        parts += ["## Reading", "", " ".join(_reading(agents, ratings, games)), ""]
        parts += ["## Players", "",
                  "Values are means or rates with 95% intervals in brackets: Wilson intervals "
                  "for rates and the win share, at the effective sample size of their clusters "
                  "(rounds for listener votes, games for storyteller turns and win share), t "
                  "intervals clustered by game for means (points, decoy votes). Win share "
                  "gives 1/k of a game to each of k tied winners and "
                  "sums the shares of a name's seats in one game. Full table: "
                  "[agents.csv](agents.csv).", "", _agents_markdown(agents), ""]
        parts += model_section(agents) + chance_section(agents)
    if ratings is not None:
        parts += ["## Ratings", "",
                  "Strength is a Bradley-Terry / Plackett-Luce log-strength fitted on all "
                  "games (mean 0; a difference d means the first finishes above the second "
                  "with probability 1 / (1 + e^-d)); mu, sigma and ordinal are OpenSkill. "
                  "Full table: [ratings.csv](ratings.csv).", "", _ratings_markdown(ratings), ""]
        parts += pairs_section(folder)
    if len(agents):
        parts += reading_notes(agents, _folder_rules(config))
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
    plt = pyplot()
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
    save_figure(fig, folder / "plots" / "find_calibration.png")
    rows = [[str(r["player"]), f"{r['predicted_find_rate']:.3f}",
             f"{r['observed_find_rate']:.3f} [{r['observed_find_rate_ci_low']:.3f}, "
             f"{r['observed_find_rate_ci_high']:.3f}]"] for _, r in modelled.iterrows()]
    return ["## Predicted vs observed find rate", "",
            "For storytellers that model their listeners, the model's probability that one "
            "listener finds the told card, against the share of listeners who did (95% "
            "interval clustered by game). Binned table: "
            "[find_calibration.csv](find_calibration.csv). The model assumes listeners who "
            "vote as it was told they do (a softmax at its `temperature` in its space: "
            "`softmax(temperature=0.05)` on `conse` by default); at a table of other "
            "listeners a gap measures how far they are from that assumption "
            "(docs/listener_model.md).", "",
            markdown_table(["player", "predicted", "observed [95% CI]"], rows), "",
            "![Predicted vs observed find rate](plots/find_calibration.png)", ""]

