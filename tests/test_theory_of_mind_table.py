"""``experiments/theory_of_mind_table.py``: the docs table from a (small) run of the shipped
sweep."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import yaml

from dixit_lab.records.files import find_records
from dixit_lab.records.format import read_jsonl
from dixit_lab.run.runner import run_sweep

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "experiments" / "theory_of_mind_table.yaml"
SMALL = "theory_of_mind(embedders='conse,text', temperatures='0.2', noise_levels='0')"


def _script():
    spec = importlib.util.spec_from_file_location("theory_of_mind_table",
                                                  CONFIG.with_suffix(".py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass looks its module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def test_the_shipped_sweep_has_each_storyteller_for_each_audience_and_size():
    script = _script()
    data = yaml.safe_load(CONFIG.read_text())
    groups: dict[tuple, list[str]] = {}
    for entry in data["sweep"]["players"]:
        audience = tuple((p["name"], p.get("count", 1)) for p in entry[1:])
        groups.setdefault(audience, []).append(script._role(entry[0]["agent"]))
    sizes = {}
    for audience, roles in groups.items():
        label = audience[0][0] if len(audience) == 1 else "mixed"
        sizes.setdefault(label, set()).add(1 + sum(count for _, count in audience))
        assert roles == (["theory_of_mind", "pragmatic"] if label == "mixed"
                         else ["theory_of_mind", "pragmatic", "oracle"])
    assert sizes == {a: {3, 4, 5, 6} for a in ("text", "ridge", "noisy", "T0.01", "T0.2",
                                                 "mixed")}


def test_the_table_pairs_the_storytellers_of_an_audience_game_by_game(tmp_path):
    # the shipped sweep's shape on warm listeners and a two-type family (cheap tables)
    warm = {"name": "warm", "agent": "softmax", "params": {"embedder": "text",
                                                            "temperature": 0.2}}
    tellers = [{"name": "storyteller", "agent": SMALL}, {"name": "storyteller",
                                                         "agent": "pragmatic"},
               {"name": "storyteller", "agent": "pragmatic(embedder=text, temperature=0.2)"}]
    points = [[teller, {**warm, "count": 2}] for teller in tellers]
    data = {"name": "small", "seed": 5, "rules": "classic", "deck": "dreams", "games": 6,
            "players": points[0], "executor": {"kind": "local"}, "sweep": {"players": points}}
    folder = run_sweep(data, "small", tmp_path / "sweep", show_progress=False)
    script = _script()
    (row,) = script.table_rows(folder)
    assert (row["audience"], row["players"], row["family"]) == ("warm", 3, "inside")
    assert row["oracle spec"] == "pragmatic(embedder=text, temperature=0.2)"
    for role in ("pragmatic", "oracle"):
        difference = row[f"minus {role}"]
        assert difference.pairs == row["games"] <= 6
        assert difference.low <= difference.mean <= difference.high
    # the same deals: game 0's first hand is the same for the three storytellers
    folders = sorted((folder / "points").iterdir())[:3]
    hands = {tuple(next(iter(read_jsonl(find_records(p)))).rounds[0].storyteller_hand)
             for p in folders}
    assert len(hands) == 1
    table = script.markdown([row])
    assert "| warm | inside | 3 |" in table
    assert "Oracles: `pragmatic(embedder=text, temperature=0.2)`." in table


def test_an_audience_is_inside_only_when_all_of_it_is_one_type_of_the_family():
    script = _script()
    text, conse = ("text", "softmax(embedder=text)", 2), ("conse", "softmax", 1)
    assert script.inside("theory_of_mind", [text])
    assert script.inside("theory_of_mind", [("noisy", "softmax(noise=0.1)", 3)])
    assert not script.inside("theory_of_mind", [("cold", "softmax(temperature=0.01)", 3)])
    assert not script.inside("theory_of_mind", [text, conse])  # mixed: no single type
    assert not script.inside("theory_of_mind(embedders=conse)", [text])
