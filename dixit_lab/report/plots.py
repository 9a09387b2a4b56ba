"""Plots of results: one style, drawn on plain matplotlib figures and written atomically as PNG.

Figures are ``matplotlib.figure.Figure`` objects, never pyplot's, so that writing a report does
not change the backend or the style of the caller's session (a notebook's inline plots).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dixit_lab.atomic import atomic_write

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["HATCHES", "MARKERS", "OUTCOME_COLOURS", "OUTCOME_LABELS", "Plots", "interval_plot",
           "plot_outcomes", "plot_points", "plot_ratings", "pyplot", "save_figure",
           "short_label"]

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
_DPI = 120
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
HATCHES = ("", "//", "..", "xx", "\\\\", "--")
_LABEL_CHARS = 38


# -- small helpers ---------------------------------------------------------------------------


_STYLE = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10,
          "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 9}


class Plots:
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

        style = self.matplotlib.rc_context(_STYLE)  # type: ignore[arg-type]
        style.__enter__()  # left in save_figure, once the figure is written
        figure = Figure(figsize=kwargs.pop("figsize", None))
        figure._dixit_style = style  # type: ignore[attr-defined]
        axes = figure.subplots(nrows, ncols, **kwargs)
        return figure, axes


def pyplot() -> Any:
    return Plots()


def save_figure(fig: Figure, path: Path) -> Path:
    """Save a figure atomically as PNG."""
    try:
        fig.tight_layout()
        atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=_DPI))
    finally:
        style = getattr(fig, "_dixit_style", None)
        if style is not None:
            style.__exit__(None, None, None)
    return path


def short_label(text: str, limit: int = _LABEL_CHARS) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- plots of one results folder -------------------------------------------------------------


def interval_plot(plt: Any, names: Sequence[str], values: np.ndarray, lows: np.ndarray,
                   highs: np.ndarray, *, title: str, xlabel: str, note: Callable[[int], str],
                   colour: str = "#3b6fb6") -> Figure:
    """A dot-and-whisker chart, one row per name, best at the top."""
    n = len(names)
    fig, ax = plt.subplots(figsize=(8.0, 1.4 + 0.42 * n))
    y = np.arange(n)
    has_ci = np.isfinite(lows) & np.isfinite(highs)
    err = np.vstack([np.where(has_ci, values - lows, 0.0), np.where(has_ci, highs - values, 0.0)])
    err = np.maximum(err, 0.0)  # a one-game bootstrap gives bounds a rounding error off
    ax.errorbar(values, y, xerr=err, fmt="o", color=colour, ecolor=colour, elinewidth=2,
                capsize=4, markersize=6)
    ax.set_yticks(y, [short_label(name) for name in names])
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


def plot_points(agents: pd.DataFrame, path: Path) -> Path:
    plt = pyplot()
    table = agents.sort_values("points_per_game", ascending=True, kind="stable")
    values = table["points_per_game"].to_numpy(float)
    lows = table["points_per_game_ci_low"].to_numpy(float)
    highs = table["points_per_game_ci_high"].to_numpy(float)
    seats = table["seats"].to_numpy(int)

    def note(i: int) -> str:
        return f"{values[i]:.1f}  (n = {seats[i]} seat-games)"

    fig = interval_plot(plt, list(table["player"]), values, lows, highs,
                         title="Points per game, with 95% intervals (clustered by game)",
                         xlabel="final score per seat-game (points)", note=note)
    return save_figure(fig, path)


def plot_outcomes(agents: pd.DataFrame, path: Path) -> Path:
    plt = pyplot()
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
        whiskers = np.clip([some[ok] - low[ok], high[ok] - some[ok]], 0, None)
        ax.errorbar(some[ok], y[ok] + 0.36, xerr=whiskers,
                    fmt="none", ecolor="black", elinewidth=1.2, capsize=3,
                    label="95% Wilson interval of 'some'")
    turns = table["storyteller_turns"].to_numpy(int)
    for i in range(n):
        text = f"n = {turns[i]} turns" if turns[i] else "no storyteller turns"
        ax.text(1.02, y[i], text, va="center", fontsize=8.5, color="#333333",
                transform=ax.get_yaxis_transform())
    ax.set_yticks(y, [short_label(name) for name in table["player"]])
    ax.set_ylim(-0.6, n - 0.25)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(plt.matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("share of the player's storyteller turns (%)")
    ax.set_title("Storyteller outcomes: did some but not all listeners find the card?", pad=30)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False,
              handlelength=1.4, columnspacing=1.2)
    fig.subplots_adjust(right=0.8)
    return save_figure(fig, path)


def plot_ratings(ratings: pd.DataFrame, path: Path) -> Path:
    plt = pyplot()
    table = ratings.sort_values("strength", ascending=True, kind="stable")
    values = table["strength"].to_numpy(float)
    lows = table.get("ci_low", pd.Series(np.nan, index=table.index)).to_numpy(float)
    highs = table.get("ci_high", pd.Series(np.nan, index=table.index)).to_numpy(float)
    games = table["games"].to_numpy(int) if "games" in table else np.zeros(len(table), int)

    def note(i: int) -> str:
        return f"{values[i]:+.2f}  (n = {games[i]} games)"

    fig = interval_plot(plt, list(table["player"]), values, lows, highs,
                         title="Rating strength, with 95% bootstrap intervals",
                         xlabel="Bradley-Terry / Plackett-Luce log-strength (mean 0)",
                         note=note, colour="#7b4fa8")
    fig.axes[0].axvline(0.0, color="#777777", linewidth=0.8, linestyle=":")
    return save_figure(fig, path)

