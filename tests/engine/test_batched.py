"""The batched engine plays exactly the reference engine's games (a sample in CI; the full
check over >= 1,000 games per case is benchmarks/check_batched.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.batched import batch_supported
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from dixit_lab.testing import batch_differences, check_batch_policy
from tests.games_files import games_text

SUPPORTED = ["random", "literal", "softmax", "ambiguity(target=0.3)", "pragmatic"]


def compare(specs: list[str], preset: str, games: int, deck: str = "dreams",
            **overrides) -> None:
    """Rotating tables of ``specs``: every batched line equals the reference line."""
    bad = batch_differences(specs, get_rules(preset, **overrides), load_deck(deck), games)
    assert not bad, f"games {bad} of {specs} under {preset} differ"


def test_check_batch_policy_passes_the_built_ins_and_catches_a_wrong_policy(monkeypatch):
    check_batch_policy("literal", games=3, players=(4,))
    from dixit_lab.policy.backends import MANY
    from dixit_lab_agents.literal import LiteralPolicy

    original = LiteralPolicy.vote

    def off_by_one(self, display, own, clues, draws):  # votes the next allowed card, batched
        votes = original(self, display, own, clues, draws)
        if self.on is not MANY:
            return votes
        return np.where(own[np.arange(len(votes)), (votes + 1) % display.shape[1]], votes,
                        (votes + 1) % display.shape[1])

    monkeypatch.setattr(LiteralPolicy, "vote", off_by_one)
    with pytest.raises(AssertionError, match="batched engine's games"):
        check_batch_policy("literal", games=3, players=(4,))


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


def test_dixitworld_fixed_hands_and_its_scoring():
    compare(["pragmatic", "softmax", "random", "literal"], "dixitworld", 8)


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
    assert games_text(tmp_path / "reference") == \
        games_text(tmp_path / "batched")
