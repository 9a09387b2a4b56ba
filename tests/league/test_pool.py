"""The shipped reference pool: it loads, spans weak to strong with its median member at 0, is
measured on the bundled deck it names, and is frozen: its calibration played again gives the
shipped strengths exactly (a change to a member's play must make a new version)."""

from __future__ import annotations

import json

import pytest

from dixit_lab.bundled import data_path
from dixit_lab.core.cards import load_deck
from dixit_lab.errors import UserError
from dixit_lab.league.pool import POOL_FOLDER, calibrate, load_pool, pool_versions


def test_the_newest_pool_loads_and_spans_weak_to_strong():
    pool = load_pool()
    assert pool.version == pool_versions()[-1]
    ordered = sorted(pool.names, key=pool.strengths.__getitem__)
    assert ordered[0] == "random" and ordered[-1] == "ambiguity-0.5"
    assert sorted(pool.strengths.values())[len(pool.names) // 2] == 0.0
    assert pool.strengths["ambiguity-0.5"] - pool.strengths["random"] > 3
    for name in pool.names:
        low, high = pool.intervals[name]
        assert low <= pool.strengths[name] <= high
    assert load_deck(pool.deck).fingerprint == pool.deck_fingerprint


def test_an_unknown_version_is_one_line_naming_the_versions():
    with pytest.raises(UserError, match="no reference pool of version '99'; versions: 1"):
        load_pool("99")


@pytest.mark.parametrize("version", pool_versions())
def test_a_shipped_pool_is_frozen(version, tmp_path):
    """Its games played again, on whichever engine this install has, give the file's
    strengths and intervals to the digit."""
    shipped = load_pool(version)
    again = calibrate(version, list(shipped.members), rules=shipped.rules, deck=shipped.deck,
                      table_size=shipped.table_size, deals=shipped.calibration["deals"],
                      seed=shipped.calibration["seed"], out=tmp_path,
                      description=shipped.description)
    assert again.strengths == shipped.strengths
    assert again.intervals == shipped.intervals
    saved = json.loads((data_path(POOL_FOLDER) / f"pool-{version}.json").read_text())
    assert {**again.to_json(), "calibration": saved["calibration"]} == saved


def test_the_docs_table_is_the_shipped_pool():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "league.md").read_text()
    pool = load_pool("1")
    for name in pool.names:
        low, high = pool.intervals[name]

        def shown(value: float) -> str:
            return "0.000" if value == 0 else f"{value:+.3f}".replace("-", "−")

        row = f"| `{name}` | {shown(pool.strengths[name])} | [{shown(low)}, {shown(high)}] |"
        assert row in page, row
