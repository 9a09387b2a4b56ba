"""The recorded model tournament (``tests/golden_vlm/tournament``, from ``make_golden.py``)
replays byte for byte with no server, and the replay writes nothing into the folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dixit_lab.run.replay import replay_folder

GOLDEN = Path(__file__).parent / "golden_vlm" / "tournament"


def _listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*")}


def test_the_golden_model_tournament_replays_offline():
    before = _listing(GOLDEN)
    compared, difference = replay_folder(GOLDEN, executor="local", show_progress=False)
    assert difference is None, str(difference)
    assert compared == 3
    assert _listing(GOLDEN) == before


def test_the_golden_tournament_has_classified_faults():
    agents = pd.read_csv(GOLDEN / "agents.csv").set_index("player")
    kinds = [column for column in agents.columns if column.startswith("faults_")]
    assert agents["faults"].sum() > 0
    assert (agents[kinds].sum(axis=1) == agents["faults"]).all()
