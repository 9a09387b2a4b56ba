"""Held-out evaluation of fitted listener models."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.listener.fit_eval import holdout_mask, reliability_table, scores


def test_whole_deals_are_held_out():
    deals = [(7, deal) for deal in np.repeat(np.arange(20), 7).tolist()]
    held = holdout_mask(deals, 0.2)
    held_deals = {deal for deal, out in zip(deals, held, strict=True) if out}
    assert held_deals == {(7, 4), (7, 9), (7, 14), (7, 19)}  # every 5th deal
    assert not held_deals & {deal for deal, out in zip(deals, held, strict=True) if not out}
    with pytest.raises(ValueError, match="holdout share"):
        holdout_mask(deals, 1.5)


def test_a_deal_played_at_several_table_sizes_is_held_out_everywhere():
    """A sweep's points reuse the deals: 301 games a point at two table sizes. Every game of
    a held-out deal is held out, wherever it sits in the logged games."""
    deals = [(4242, deal) for point in range(2) for deal in range(301)]
    held = holdout_mask(deals, 0.2)
    held_deals = {deal for deal, out in zip(deals, held, strict=True) if out}
    trained = {deal for deal, out in zip(deals, held, strict=True) if not out}
    assert not held_deals & trained
    assert len(held_deals) == 60 and held.sum() == 120


def test_reliability_bins_are_equal_width_with_intervals_in_range():
    rng = np.random.default_rng(0)
    p = rng.random(4000)
    y = (rng.random(4000) < p).astype(float)
    rounds = np.repeat(np.arange(1000), 4)
    table = reliability_table(p, y, rounds, bins=10)
    assert len(table) == 10
    for row in table:
        assert row["low"] <= row["predicted"] <= row["high"]
        assert 0.0 <= row["ci_low"] <= row["observed"] <= row["ci_high"] <= 1.0
        assert row["ci_low"] - 0.02 <= row["predicted"] <= row["ci_high"] + 0.02
    assert sum(row["count"] for row in table) == 4000


def test_scores_of_a_perfect_and_a_flat_forecast():
    y = np.array([0.0, 1.0, 1.0, 0.0])
    assert scores(y, y)["brier"] == 0.0
    flat = scores(np.full(4, 0.5), y)
    assert np.isclose(flat["log_loss"], np.log(2)) and flat["votes"] == 4


def test_reliability_diagram_is_a_png(tmp_path):
    from PIL import Image

    from dixit_lab.listener.fit_eval import plot_reliability

    rng = np.random.default_rng(1)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(float)
    table = reliability_table(p, y, np.arange(500))
    info = {"reliability_fitted": table, "reliability_analytic": table,
            "holdout": {"games": 10, "votes": 500}}
    path = plot_reliability(info, str(tmp_path / "r.png"))
    Image.open(path).verify()


def test_a_bin_of_one_round_has_no_interval_and_still_plots(tmp_path):
    """One round's votes cannot give a clustered interval: the bin says so with None (JSON
    null, not NaN, so a saved model loads back equal) and the diagram draws it bare."""
    from dixit_lab.listener.fit_eval import plot_reliability

    p = np.array([0.05, 0.06, 0.55, 0.56, 0.57, 0.58])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1.0])
    table = reliability_table(p, y, np.array([7, 7, 1, 2, 3, 4]))
    assert table[0]["ci_low"] is None and table[0]["ci_high"] is None
    assert table[1]["ci_low"] is not None and table[1]["ci_low"] <= table[1]["observed"]
    info = {"reliability_fitted": table, "reliability_analytic": table,
            "holdout": {"games": 1, "votes": 6}}
    assert plot_reliability(info, str(tmp_path / "r.png")).endswith("r.png")
