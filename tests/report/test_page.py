"""Reports: every file written, valid PNGs, working links, sweeps, and the text of one game."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from PIL import Image

from dixit_lab import Deck, get_rules, make_agent, play_game, read_jsonl, write_jsonl
from dixit_lab.core.agent import register_agent
from dixit_lab.core.cards import Card
from dixit_lab.report.outputs import write_tables
from dixit_lab.report.page import _reading, write_report
from dixit_lab.report.show import show_game
from dixit_lab.report.sweep import write_sweep_report
from dixit_lab.stats.metrics import agent_table
from dixit_lab_agents.random_agent import RandomAgent

NAMES = ["teller", "crowd", "crowd", "crowd", "other"]


def _records(n_games=12, names=NAMES, specs=None, rules="quest", seed=0):
    specs = specs or ["random"] * len(names)
    deck = Deck.numbered(84)
    return [play_game([make_agent(spec) for spec in specs], get_rules(rules), deck,
                      seed=seed * 1000 + i, meta={"game": i, "players": list(names)})
            for i in range(n_games)]


def _results_folder(folder: Path, records, *, ratings: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(records, folder / "games.jsonl")
    config = {"experiment": {"name": "unit-run", "seed": 42, "rules": {"preset": "quest",
                                                                       "options": {}},
                             "deck": "numbered-84", "games": len(records),
                             "players": [{"name": n, "agent": "random"} for n in NAMES]}}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    (folder / "summary.json").write_text(json.dumps(
        {"name": "unit-run", "games": len(records), "wall_seconds": 1.5,
         "games_per_second": 8.0, "workers": 2}))
    if ratings:
        pd.DataFrame({"player": ["crowd", "teller", "other"], "games": [len(records)] * 3,
                      "mu": [26.0, 25.0, 24.0], "sigma": [2.0, 2.1, 2.2],
                      "ordinal": [20.0, 18.7, 17.4], "strength": [0.3, 0.0, -0.3],
                      "ci_low": [0.1, -0.2, -0.6], "ci_high": [0.5, 0.2, 0.0]}
                     ).to_csv(folder / "ratings.csv", index=False)
    return folder


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)]+)\)", markdown)


def _assert_png(path: Path) -> None:
    assert path.is_file(), path
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size[0] > 400 and image.size[1] > 150


def test_write_report_writes_every_file(tmp_path):
    records = _records()
    folder = _results_folder(tmp_path / "run", records)
    write_tables(folder)  # the tables, then the report
    report = folder / "report.md"
    for name in ("points_per_game", "storyteller_outcomes", "ratings"):
        _assert_png(folder / "plots" / f"{name}.png")
    agents = pd.read_csv(folder / "agents.csv")
    expected = agent_table(records)
    assert list(agents.player) == list(expected.player)
    assert agents.points_per_game.tolist() == pytest.approx(expected.points_per_game.tolist())
    text = report.read_text()
    assert text.startswith("# unit-run")
    for link in _links(text):
        assert (folder / link).is_file(), link
    assert {"plots/points_per_game.png", "plots/storyteller_outcomes.png", "plots/ratings.png",
            "agents.csv", "ratings.csv"} <= set(_links(text))
    for needle in ("quest", "numbered-84", "42", "1.5 s", "8.0 games/s", "## Ratings",
                   "teller", "crowd", "other", "## Reading"):
        assert needle in text, needle
    assert not list(folder.rglob("*.tmp")), "temporary files left behind"


def test_report_reads_existing_agents_csv_and_skips_missing_ratings(tmp_path):
    folder = _results_folder(tmp_path / "run", _records(6), ratings=False)
    table = agent_table(read_jsonl(folder))
    table.loc[0, "player"] = "renamed-in-csv"
    table.to_csv(folder / "agents.csv", index=False)
    text = write_report(folder).read_text()
    assert "renamed-in-csv" in text
    assert "## Ratings" not in text and not (folder / "plots" / "ratings.png").exists()
    for link in _links(text):
        assert (folder / link).is_file(), link


def test_report_without_config_or_summary(tmp_path):
    folder = tmp_path / "bare"
    folder.mkdir()
    write_jsonl(_records(4, names=["a", "b", "c"]), folder / "games.jsonl")
    with pytest.raises(FileNotFoundError, match="dixit-lab report"):
        write_report(folder)
    write_tables(folder)
    text = (folder / "report.md").read_text()
    assert text.startswith("# bare") and "- **Games:** 4" in text


def _agents(**rows):
    base = {"seats": 10, "games": 10, "win_share": 0.5, "points_per_game": 20.0,
            "storyteller_turns": 30, "all_found_rate": 0.1, "some_found_rate": 0.6,
            "none_found_rate": 0.3}
    return pd.DataFrame([{"player": name, **base, **values} for name, values in rows.items()])


def test_reading_is_computed_from_the_numbers():
    apart = _agents(
        alpha={"storyteller_points_per_turn": 1.0, "storyteller_points_per_turn_ci_low": 0.8,
               "storyteller_points_per_turn_ci_high": 1.2},
        beta={"storyteller_points_per_turn": 2.5, "storyteller_points_per_turn_ci_low": 2.3,
              "storyteller_points_per_turn_ci_high": 2.7, "some_found_rate": 0.8,
              "all_found_rate": 0.0, "none_found_rate": 0.2})
    text = " ".join(_reading(apart, None, 10))
    assert "As storyteller, beta scored most: 2.50 [2.30, 2.70]" in text
    assert "do not overlap" in text
    assert "beta hit 'some but not all' most often (80%" in text
    close = apart.assign(storyteller_points_per_turn_ci_low=[0.8, 0.9],
                         storyteller_points_per_turn_ci_high=[1.2, 2.7])
    overlap = " ".join(_reading(close, None, 10))
    assert "intervals overlap, which alone does not show that the two score alike" in overlap
    assert "do not separate" not in overlap  # overlapping intervals are not a test of equality


def test_plots_follow_the_data(tmp_path):
    """A report of other games gives other pictures (the plots are not canned)."""
    first = _results_folder(tmp_path / "a", _records(6, seed=1))
    second = _results_folder(tmp_path / "b", _records(6, seed=2))
    write_tables(first)
    write_tables(second)
    name = "plots/storyteller_outcomes.png"
    assert (first / name).read_bytes() != (second / name).read_bytes()


@register_agent("test-report-random")
class _TunableRandom(RandomAgent):
    """The random agent with a (meaningless) numeric parameter to sweep over."""

    def __init__(self, block: int = 64) -> None:
        self.block = block


def _sweep(tmp_path: Path, values, column="players.0.params.block", spec=None):
    root = tmp_path / "sweep"
    rows = []
    for point, value in enumerate(values):
        names = ["tester", "rnd", "rnd", "rnd"]
        specs = [spec(value) if spec else "random", "random", "random", "random"]
        rules = value if column == "rules.preset" else "quest"
        folder = root / "points" / f"{point:03d}"
        folder.mkdir(parents=True)
        write_jsonl(_records(6, names, specs, rules, seed=point), folder / "games.jsonl")
        rows.append({"point": point, column: value, "folder": f"points/{point:03d}"})
    pd.DataFrame(rows).to_csv(root / "sweep.csv", index=False)
    return root


def test_sweep_report_with_three_points(tmp_path):
    root = _sweep(tmp_path, [4, 16, 64], spec=lambda v: f"test-report-random(block={v})")
    report = write_sweep_report(root)
    joined = pd.read_csv(root / "sweep_agents.csv")
    assert len(joined) == 3 * 2
    assert list(joined.columns[:3]) == ["point", "players.0.params.block", "folder"]
    assert joined[joined.player == "tester"]["players.0.params.block"].tolist() == [4, 16, 64]
    assert joined[joined.player == "tester"].agent.tolist() == [
        "test-report-random(block=4)", "test-report-random(block=16)",
        "test-report-random(block=64)"]
    for point in range(3):  # point reports were written because they were missing
        assert (root / "points" / f"{point:03d}" / "report.md").is_file()
        assert (root / "points" / f"{point:03d}" / "agents.csv").is_file()
    for metric in ("storyteller_points_per_turn", "some_found_rate", "points_per_game",
                   "win_share"):
        _assert_png(root / "plots" / f"sweep_{metric}.png")
    text = report.read_text()
    links = _links(text)
    assert sum(link.endswith("report.md") for link in links) == 3
    for link in links:
        assert (root / link).is_file(), link
    assert "tester" in text


def test_categorical_sweep_draws_bars(tmp_path):
    root = _sweep(tmp_path, ["classic", "quest", "refresh"], column="rules.preset")
    report = write_sweep_report(root)
    _assert_png(root / "plots" / "sweep_some_found_rate.png")
    joined = pd.read_csv(root / "sweep_agents.csv")
    assert sorted(set(joined["rules.preset"])) == ["classic", "quest", "refresh"]
    for link in _links(report.read_text()):
        assert (root / link).is_file(), link


def _round_blocks(text: str) -> list[str]:
    return re.split(r"\n(?=Round \d+/)", text.split("\nFinal scores:")[0])[1:]


def test_show_game_lists_clues_cards_and_points():
    record = _records(1)[0]
    text = show_game(record)
    blocks = _round_blocks(text)
    assert len(blocks) == len(record.rounds)
    names = record.meta["players"]
    for block, rnd in zip(blocks, record.rounds, strict=True):
        assert f'clue: "{rnd.clue}"' in block
        assert f"storyteller: seat {rnd.storyteller}, {names[rnd.storyteller]}" in block
        for seat in range(record.n_players):
            points = re.escape(f"{rnd.points[seat]:+d}")
            pattern = rf"seat {seat}, {names[seat]}\s+{points}\s+{rnd.scores[seat]}\b"
            assert re.search(pattern, block), (seat, block)
        marked = [line for line in block.splitlines() if re.match(r"\s+\*\s*\d+\.", line)]
        assert len(marked) == 1
        position = rnd.display.index(rnd.storyteller_card)
        assert f"{position + 1}. card {rnd.storyteller_card} " in marked[0]
        expected = {"all_found": "all found", "some_found": "some but not all",
                    "none_found": "no one found"}[rnd.outcome]
        assert expected in block
    winners = [f"seat {s}, {names[s]}" for s in record.winners]
    assert all(winner in text.split("Winner")[-1] for winner in winners)


def test_show_game_uses_deck_ids_and_short_captions():
    long = "A very long caption that goes on and on about a dreamlike staircase in the sky"
    deck = Deck("captioned", tuple(Card(f"dream-{i:03d}", caption=long if i % 2 else None)
                                   for i in range(84)))
    record = play_game([make_agent("random") for _ in range(4)], get_rules("classic"), deck,
                       seed=3)
    text = show_game(record, deck)
    first = record.rounds[0]
    for card in first.display:
        assert deck.cards[card].id in text
    assert long not in text
    captions = re.findall(r"“([^”]*)”", text)
    assert captions and all(len(c) <= 50 for c in captions)
    assert "seat 0, random" in text  # without meta["players"], names are the agent specs


def test_interval_plot_takes_an_interval_that_misses_its_estimate():
    """A bootstrap interval can lie beside the estimate, and an interval that ends at the
    mean can differ from it in the last bit: neither may stop the report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from dixit_lab.report.plots import interval_plot

    fig = interval_plot(plt, ["a", "b"], np.array([1.0, 0.5]), np.array([1.2, 0.5 + 1e-16]),
                         np.array([1.5, 0.7]), title="t", xlabel="x", note=lambda i: "")
    plt.close(fig)


def test_the_report_names_the_faults_by_kind_and_what_the_engine_did(tmp_path):
    broken = Path(__file__).parents[1] / "broken_agents.py"
    specs = [f"{broken}:IllegalEveryMove", *["random"] * 3, f"{broken}:RaisesInVote"]
    records = [play_game([make_agent(spec) for spec in specs], get_rules("quest"),
                         Deck.numbered(84), seed=i, on_illegal="fallback",
                         meta={"game": i, "players": list(NAMES)}) for i in range(3)]
    folder = _results_folder(tmp_path / "run", records)
    write_tables(folder)
    agents = pd.read_csv(folder / "agents.csv").set_index("player")
    illegal, raised = agents.loc["teller", "faults_illegal"], agents.loc["other", "faults_raised"]
    assert illegal > 0 and raised > 0
    text = (folder / "report.md").read_text()
    assert (f"- **Faults:** {illegal + raised} (illegal {illegal}, raised {raised}). The engine "
            f"replaced each failed tell, submit or vote by a legal one drawn from the seat's "
            f"seeded fallback stream") in text
    teller = agents.loc["teller", "decisions"]
    assert (f"  - teller (agent {specs[0]}): {teller} of {teller} decisions replaced "
            f"(100%): illegal {illegal} — first: tell, game ") in text
    assert f"  - other (agent {specs[4]}): {raised} of " in text
    assert ": the agent raised ZeroDivisionError: integer division or modulo by zero" in text
    assert "illegal actions replaced" not in text
