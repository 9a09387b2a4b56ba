"""The report of a sweep: the points' tables joined, one curve (or bar group) per player along
each swept path, with intervals, and the paired reading of neighbouring points."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dixit_lab.atomic import atomic_write_text
from dixit_lab.records.integrity import FolderLock
from dixit_lab.records.sweeps import SWEEP_TABLE, sweep_points
from dixit_lab.report.faults import fault_text, folder_faults
from dixit_lab.report.markdown import (
    experiment_of,
    html_text,
    markdown_table,
    read_yaml,
    separated,
    with_ci,
)
from dixit_lab.report.outputs import REPORT_AGAIN, write_tables
from dixit_lab.report.plots import HATCHES, MARKERS, pyplot, save_figure, short_label
from dixit_lab.stats.catalogue import CATALOGUE

__all__ = ["SWEEP_METRICS", "write_sweep_report"]

#: Metrics drawn against each swept value (labels and titles from the metric catalogue).
SWEEP_METRICS: tuple[str, ...] = ("storyteller_points_per_turn", "observed_find_rate",
                                  "some_found_rate", "points_per_game", "win_share")


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
        return short_label(player, 30)
    return short_label(player, 24) + " (" + ", ".join(f"{k}={v}" for k, v in others.items()) + ")"


def _plot_sweep_metric(joined: pd.DataFrame, paths: Sequence[str], metric: str,
                       path: Path) -> Path:
    """One panel per swept path: curves with CI bands (numeric) or grouped bars."""
    plt = pyplot()
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
                marker = MARKERS[combos.index(tuple(keys[1:])) % len(MARKERS)]
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
                    # clipped: an interval that ends at the mean can differ in the last bit
                    err = np.clip(np.vstack([np.nan_to_num(y - low), np.nan_to_num(high - y)]),
                                  0, None)
                label = _series_label(keys[0], dict(zip(others, keys[1:], strict=True)))
                hatch = HATCHES[combos.index(tuple(keys[1:])) % len(HATCHES)]
                ax.bar(x, y, width=width * 0.95, color=colours[keys[0]], label=label,
                       hatch=hatch, edgecolor="white", linewidth=0.5,
                       yerr=err, capsize=3, error_kw={"elinewidth": 1, "ecolor": "#333333"})
            ax.set_xticks(np.arange(len(labels)), [short_label(v, 32) for v in labels],
                          rotation=20 if max(map(len, labels)) > 8 else 0)
            ax.set_xlabel(f"{swept} (swept setting)")
        ax.set_ylabel(CATALOGUE[metric].axis)
        if metric in ("some_found_rate", "win_share"):
            ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.set_title(f"{CATALOGUE[metric].title} vs {swept}\n(95% intervals)")
        handles, _ = ax.get_legend_handles_labels()
        if handles and numeric is not None:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8,
                      ncol=2 if len(handles) > 3 else len(handles), frameon=False)
        elif handles:  # rotated category labels below: keep the legend clear of them
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                      frameon=False)
    return save_figure(fig, path)


def write_sweep_report(sweep_dir: Path) -> Path:
    """Write ``sweep_agents.csv``, ``plots/sweep_<metric>.png`` and ``report.md`` for a sweep.

    Reads ``sweep.csv`` (``point``, one column per swept config path, ``folder``) and each
    point's ``agents.csv``, computing the tables and report of a point that lacks them.
    """
    folder = Path(sweep_dir)
    if sweep_points(folder) is None:  # checked: the points' table, every point's games
        raise FileNotFoundError(f"{folder} has no sweep.csv: is it a sweep results folder?")
    sweep = pd.read_csv(folder / SWEEP_TABLE)
    paths = [c for c in sweep.columns if c not in ("point", "folder")]
    frames = []
    for _, row in sweep.iterrows():
        point_dir = folder / str(row["folder"])
        if not (point_dir / "agents.csv").is_file() or not (point_dir / "report.md").is_file():
            with FolderLock(point_dir, "report", REPORT_AGAIN):
                write_tables(point_dir)  # the point's tables and report
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
                plot_links.append((CATALOGUE[metric].title, f"plots/sweep_{metric}.png"))

    name = folder.name
    first = folder / str(sweep["folder"].iloc[0]) / "config.yaml" if len(sweep) else None
    if first is not None:
        name = experiment_of(read_yaml(first)).get("name") or name
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
    parts += [markdown_table(["point", *paths, "games", "report"], rows), ""]
    parts += _faults_section(folder, sweep)
    parts += _varying_table(joined, paths)
    from dixit_lab.stats.sweep_pairs import neighbour_differences, sweep_pairs_section

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


def _faults_section(folder: Path, sweep: pd.DataFrame) -> list[str]:
    """The points' seats with faults, a line each as in each point's report (nothing when no
    point had any)."""
    lines = [f"- point {row['point']}: {html_text(fault_text(seat))}"
             for _, row in sweep.iterrows()
             for seat in folder_faults(folder / str(row["folder"]))]
    if not lines:
        return []
    return ["## Faults", "",
            "The engine replaced each failed tell, submit or vote by a legal one drawn from "
            "the seat's seeded fallback stream; each point's report says more.", "", *lines, ""]


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
            markdown_table(header, rows), ""]


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
                             f"the sweep ({with_ci(best, metric)}).")
            continue
        where = ", ".join(f"{p} = {best[p]}" for p in paths)
        text = (f"{player} scored most as storyteller at {where}: "
                f"{with_ci(best, metric)} points per turn, against "
                f"{with_ci(worst, metric)} at its lowest point")
        apart = separated(best, worst, metric)
        if apart is not None:
            text += (" (intervals do not overlap)" if apart else
                     " (intervals overlap, which alone does not show that the two are "
                     "alike)")
        sentences.append(text + ".")
        if len(sentences) == 3:
            break
    return sentences

