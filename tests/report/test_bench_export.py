"""``export-bench``: a listener item per told round, tiers from the observed find rate."""

from __future__ import annotations

import json
from pathlib import Path

from dixit_lab.cli.main import main
from dixit_lab.core.cards import load_deck
from dixit_lab.records.format import read_jsonl
from dixit_lab.report.bench_export import export_bench, tier_of

GOLDEN = Path(__file__).parents[1] / "golden_vlm" / "tournament"


def test_every_told_round_is_an_item_with_its_answer(tmp_path):
    counts = export_bench([GOLDEN], tmp_path / "bench.jsonl")
    items = [json.loads(line) for line in (tmp_path / "bench.jsonl").read_text().splitlines()]
    records = list(read_jsonl(GOLDEN / "games.jsonl"))
    deck = load_deck(records[0].deck)
    told = [(record, index, rnd) for record in records for index, rnd in enumerate(record.rounds)
            if not any(f.action == "tell" and f.seat == rnd.storyteller for f in rnd.faults)]
    assert len(items) == len(told) == sum(counts.values())
    for item, (record, index, rnd) in zip(items, told, strict=True):
        assert item["id"] == f"{record.meta['game']}-{index}"
        assert item["clue"] == rnd.clue
        assert item["candidates"] == [deck[card].id for card in rnd.display]
        assert item["target"] == deck[rnd.storyteller_card].id
        assert item["candidates"][item["answer"]] == item["target"]
        voters = [vote for vote in rnd.votes if vote is not None]
        rate = sum(vote == item["answer"] for vote in voters) / len(voters)
        assert item["find_rate"] == round(rate, 4) and item["tier"] == tier_of(rate)


def test_tiers_and_a_seeded_sample_per_tier(tmp_path, capsys):
    assert [tier_of(x) for x in (0.0, 1 / 3, 0.5, 2 / 3, 1.0)] == [
        "hard", "hard", "medium", "easy", "easy"]
    everything = export_bench([GOLDEN], tmp_path / "all.jsonl")
    first = export_bench([GOLDEN], tmp_path / "a.jsonl", per_tier=2, seed=1)
    export_bench([GOLDEN], tmp_path / "b.jsonl", per_tier=2, seed=1)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert all(first[tier] == min(2, everything[tier]) for tier in everything)
    assert main(["export-bench", str(GOLDEN), "--out", str(tmp_path / "c.jsonl")]) == 0
    assert f"wrote {sum(everything.values())} items" in capsys.readouterr().out


def test_a_round_whose_clue_the_engine_replaced_is_left_out():
    import dataclasses

    from dixit_lab.records.format import Fault
    from dixit_lab.report.bench_export import bench_items

    record = next(read_jsonl(GOLDEN / "games.jsonl"))
    first = record.rounds[0]
    fault = Fault(first.storyteller, record.agents[first.storyteller], "tell", "x", "timeout")
    faulty = dataclasses.replace(record, rounds=(first.with_faults((fault,)), *record.rounds[1:]))
    ids = [item["id"] for item in bench_items([faulty])]
    assert ids == [f"{record.meta['game']}-{i}" for i in range(1, len(record.rounds))]
