"""Honest evaluation of a fitted listener model: held-out games and reliability tables.

:func:`holdout_mask` keeps every ``k``-th deal out of the fit: a deal is its experiment seed and
deal index (a game's ``seed`` and ``spawn_key``), which every game dealt from it shares, at every
table size and sweep point; so all the games of a held-out deal are held out, and the model is
never trained on a deal it is evaluated on (nor a round's votes split).
:func:`reliability_table` bins predictions into equal-width bins and gives each bin's
observed find rate with a Wilson interval at the effective sample size of its rounds (the
votes of one round share the clue and the display, see :mod:`dixit_lab.stats.intervals`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dixit_lab.errors import ConfigError
from dixit_lab.stats.intervals import clustered_rate_interval

__all__ = ["holdout_mask", "plot_reliability", "reliability_table", "scores"]

_EPS = 1e-4


def holdout_mask(deals: Sequence[tuple[int, ...]], share: float) -> np.ndarray:
    """True for the rows of held-out deals: every ``round(1 / share)``-th distinct deal, in
    sorted order (``deals``: one sortable key per row, e.g. (seed, spawn key); for one
    experiment's deals 0, 1, 2, ... the deals ``k - 1, 2k - 1, ...``)."""
    if not 0.0 < share < 1.0:
        raise ConfigError(f"holdout share must be in (0, 1), got {share}")
    every = max(2, round(1.0 / share))
    rank = {deal: i for i, deal in enumerate(sorted(set(deals)))}
    return np.array([rank[deal] % every == every - 1 for deal in deals], dtype=bool)


def scores(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Log loss, Brier score, mean prediction and mean outcome."""
    clipped = np.clip(p, _EPS, 1 - _EPS)
    return {
        "log_loss": float(-np.mean(y * np.log(clipped) + (1 - y) * np.log(1 - clipped))),
        "brier": float(np.mean((p - y) ** 2)),
        "mean_predicted": float(p.mean()),
        "mean_observed": float(y.mean()),
        "votes": len(y),
    }


def reliability_table(p: np.ndarray, y: np.ndarray, rounds: np.ndarray,
                      bins: int = 10) -> list[dict[str, float | None]]:
    """One row per non-empty equal-width bin of predicted probability: its range, mean
    prediction, observed rate with a round-clustered 95% Wilson interval (None, JSON null,
    for a bin whose votes come from one round: no interval), and vote count."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
    table = []
    for b in range(bins):
        mask = index == b
        if not mask.any():
            continue
        rate, low, high = clustered_rate_interval(y[mask], rounds[mask])
        known = math.isfinite(low) and math.isfinite(high)
        table.append({"low": float(edges[b]), "high": float(edges[b + 1]),
                      "predicted": float(p[mask].mean()), "observed": rate,
                      "ci_low": low if known else None, "ci_high": high if known else None,
                      "count": int(mask.sum())})
    return table


def plot_reliability(info: dict, path: str) -> str:
    """A reliability diagram of the held-out games (``info`` of a fitted listener): observed
    against predicted find rate per bin, with the bins' round-clustered 95% intervals, for the
    fitted and the analytic model."""
    from matplotlib.figure import Figure

    from dixit_lab.atomic import atomic_write

    fig = Figure(figsize=(6, 5.5))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect")
    for key, label, colour in (("reliability_fitted", "fitted (logistic)", "tab:blue"),
                               ("reliability_analytic", "analytic (exact model)", "tab:orange")):
        rows = info.get(key) or []
        x = [r["predicted"] for r in rows]
        y = [r["observed"] for r in rows]
        errors = [[r["observed"] - (r["ci_low"] if r["ci_low"] is not None else r["observed"])
                   for r in rows],
                  [(r["ci_high"] if r["ci_high"] is not None else r["observed"]) - r["observed"]
                   for r in rows]]
        ax.errorbar(x, y, yerr=errors, marker="o", capsize=3, color=colour, label=label)
    held = info.get("holdout", {})
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted probability that one listener finds the card")
    ax.set_ylabel("observed share (95% interval, clustered by round)")
    ax.set_title(f"held-out games: {held.get('games', '?')} games, "
                 f"{held.get('votes', '?')} votes; 10 equal-width bins")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    atomic_write(Path(path), lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    return path
