"""Honest evaluation of a fitted listener model: held-out games and reliability tables.

:func:`holdout_mask` keeps every ``k``-th game out of the fit (by its position in the logged
games, so whole games are held out and a round's votes never straddle the split).
:func:`reliability_table` bins predictions into equal-width bins and gives each bin's
observed find rate with a Wilson interval at the effective sample size of its rounds (the
votes of one round share the clue and the display, see :mod:`dixit_lab.intervals`).
"""

from __future__ import annotations

import numpy as np

from dixit_lab.intervals import clustered_rate_interval

__all__ = ["holdout_mask", "reliability_table", "scores"]

_EPS = 1e-4


def holdout_mask(games: np.ndarray, share: float) -> np.ndarray:
    """True for the rows of held-out games: every ``round(1 / share)``-th distinct game."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"holdout share must be in (0, 1), got {share}")
    every = max(2, round(1.0 / share))
    _, position = np.unique(games, return_inverse=True)
    return position % every == every - 1


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
                      bins: int = 10) -> list[dict[str, float]]:
    """One row per non-empty equal-width bin of predicted probability: its range, mean
    prediction, observed rate with a round-clustered 95% Wilson interval, and vote count."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
    table = []
    for b in range(bins):
        mask = index == b
        if not mask.any():
            continue
        rate, low, high = clustered_rate_interval(y[mask], rounds[mask])
        table.append({"low": float(edges[b]), "high": float(edges[b + 1]),
                      "predicted": float(p[mask].mean()), "observed": rate,
                      "ci_low": low, "ci_high": high, "count": int(mask.sum())})
    return table


def run_training(config_path: str) -> str:
    """Play (or complete) the games of a training config into its default results folder —
    an experiment or a sweep — and return that folder: ``fit-listener --config`` fits on it
    and records the config, not the folder, as the model's source."""
    from pathlib import Path

    import yaml

    from dixit_lab.experiment import load_config
    from dixit_lab.runner import run_experiment, run_sweep

    config = load_config(config_path)
    if config.sweep:
        data = yaml.safe_load(Path(config_path).read_text(encoding="utf-8"))
        return str(run_sweep(data, config_path, show_progress=False))
    return str(run_experiment(config, show_progress=False).folder)
