"""The batched engine plays exactly the reference engine's games (a sample in CI; the full
check over >= 1,000 games per case is benchmarks/check_batched.py)."""

from __future__ import annotations

import pytest

from dixit_lab.agent import make_agent
from dixit_lab.batched import batch_supported, play_batch
from dixit_lab.cards import load_deck
from dixit_lab.experiment import parse_config
from dixit_lab.game import play_game
from dixit_lab.rules import get_rules
from dixit_lab.runner import run_experiment
from dixit_lab.seeding import game_seed

SUPPORTED = ["random", "literal", "softmax", "ambiguity(target=0.3)", "pragmatic"]


def compare(specs: list[str], preset: str, games: int, deck: str = "dreams",
            **overrides) -> None:
    """Rotating tables of ``specs``: every batched line equals the reference line."""
    rules = get_rules(preset, **overrides)
    cards = load_deck(deck)
    n = len(specs)
    seatings = [[specs[(seat + g) % n] for seat in range(n)] for g in range(games)]
    seeds = [game_seed(17, g) for g in range(games)]
    metas = [{"game": g} for g in range(games)]
    shared = {spec: make_agent(spec) for spec in set(specs)}
    batched = play_batch([[shared[s] for s in seating] for seating in seatings], rules, cards,
                         seeds, metas)
    reference_agents = {}
    for g, seating in enumerate(seatings):
        table = []
        for seat, spec in enumerate(seating):
            agent = reference_agents.get((seat, spec))
            if agent is None:
                agent = reference_agents[(seat, spec)] = make_agent(spec)
            table.append(agent)
        expected = play_game(table, rules, cards, seeds[g], meta=metas[g]).to_json()
        assert batched[g] == expected, f"game {g} of {specs} under {preset} differs"


@pytest.mark.parametrize("spec", SUPPORTED)
@pytest.mark.parametrize("preset", ["classic", "refresh", "quest"])
def test_every_agent_every_preset_at_three_and_five_players(spec, preset):
    compare([spec] * 3, preset, 8)
    compare([spec, "softmax", spec, "random", "literal"], preset, 10)


@pytest.mark.parametrize("n", [4, 6, 8])
def test_mixed_tables_at_other_player_counts(n):
    pool = ["pragmatic", "softmax", "random", "literal", "ambiguity(target=0.6)", "softmax",
            "random", "literal"]
    compare(pool[:n], "refresh", 10)


def test_variants_lone_finder_cap_random_first_storyteller_and_mixed_deck():
    compare(["random", "literal", "softmax"], "classic", 8, lone_finder_points=4,
            vote_bonus_cap=1, first_storyteller="random")
    compare(["pragmatic", "softmax", "random", "ambiguity(target=0.5)"], "quest", 6,
            deck="dreams+dreams-quest")
    compare(["random"] * 5, "refresh", 10, deck="numbered-84", target_score=None,
            max_rounds=30)


def test_calibrated_is_not_batched_and_auto_falls_back(tmp_path):
    assert not batch_supported(make_agent("calibrated"))
    assert batch_supported(make_agent("pragmatic"))
    config = {"name": "fallback", "seed": 2, "rules": "classic", "deck": "dreams",
              "players": ["calibrated", "softmax", "random"], "games": 6,
              "executor": {"kind": "local"}}
    auto = run_experiment(parse_config(config), tmp_path / "auto", show_progress=False,
                          write_outputs=False)
    assert auto.played == 6
    with pytest.raises(ValueError, match="calibrated.* has no batched policy"):
        run_experiment(parse_config({**config, "engine": "batched"}), tmp_path / "forced",
                       show_progress=False, write_outputs=False)


def test_the_runner_gives_the_same_bytes_with_either_engine(tmp_path):
    config = {"name": "engines", "seed": 4, "rules": "refresh", "deck": "dreams",
              "players": ["literal", "softmax", "pragmatic", "random",
                          {"agent": "ambiguity", "params": {"target": 0.4}}],
              "games": 40, "executor": {"kind": "process", "workers": 2}}
    for engine in ("reference", "batched"):
        run_experiment(parse_config({**config, "engine": engine}), tmp_path / engine,
                       show_progress=False, write_outputs=False)
    assert (tmp_path / "reference" / "games.jsonl").read_bytes() == \
        (tmp_path / "batched" / "games.jsonl").read_bytes()
