"""The compiled kernel plays exactly the reference engine's games (a sample in CI: one compile,
a few hundred games; the check over many games is
``benchmarks/check_batched.py --engine compiled``). Skips, saying why, without the ``fast``
extra (Numba)."""

from __future__ import annotations

import copy
import math

import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.compiled import agent_blocker, kernel_problem, play_compiled
from dixit_lab.errors import ConfigError
from dixit_lab.policy.backends import MANY
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from dixit_lab.run.tournament import AUTO_COMPILED_GAMES, table_setup
from dixit_lab.testing import batch_differences
from dixit_lab_agents.literal import LiteralAgent, LiteralPolicy
from tests.games_files import games_text

needs_numba = pytest.mark.skipif(kernel_problem() is not None,
                                 reason=kernel_problem() or "")

SUPPORTED = ["random", "literal", "softmax", "ambiguity(target=0.3)", "pragmatic"]


def compare(specs: list[str], preset: str, games: int, **overrides) -> None:
    bad = batch_differences(specs, get_rules(preset, **overrides), load_deck("dreams"), games,
                            engine="compiled")
    assert not bad, f"games {bad} of {specs} under {preset} differ"


@needs_numba
@pytest.mark.parametrize("preset", ["classic", "refresh", "quest"])
def test_every_built_in_agent_at_one_mixed_table(preset):
    compare(SUPPORTED, preset, 5)
    compare(["softmax", "random", "literal"], preset, 40)


@needs_numba
@pytest.mark.parametrize("spec", ["ambiguity(target=0.4)", "pragmatic"])
def test_the_model_storytellers_tables_round_by_round(spec):
    """Their listener model follows the hands: a tell table per round, as the reference
    engine's (a game long enough to reach the model's last table; a reshuffling deck)."""
    compare([spec] * 4, "classic", 12)
    compare([spec, "random", spec], "refresh", 6)


@needs_numba
@pytest.mark.parametrize("overrides", [{"deck_exhausted": "end_when_cannot_refill"},
                                       {"deck_exhausted": "reshuffle_discard"},
                                       {"first_storyteller": "random"},
                                       {"first_storyteller": "first_player"},
                                       {"target_score": 12}, {"fixed_hands": True}])
def test_rule_options(overrides):
    compare(["random", "literal", "softmax", "random"], "classic", 30, **overrides)


@needs_numba
def test_six_players_with_the_search_bonus_preset():
    compare(["softmax", "softmax", "random", "literal", "literal", "random"], "refresh", 5)


class _VotesItsOwnWay(LiteralPolicy):
    def vote(self, display, own, clues, draws):  # a vote the compiled form does not play
        return super().vote(display, own, clues, draws)


class _OwnVote(LiteralAgent):
    def batch_policy(self) -> _VotesItsOwnWay:
        return _VotesItsOwnWay(self, MANY)


def test_the_kernel_names_what_it_cannot_play():
    for spec in SUPPORTED:
        assert agent_blocker(make_agent(spec)) is None
    assert "overrides vote" in (agent_blocker(_OwnVote()) or "")


class _RoundPolicy(LiteralPolicy):
    """A policy whose round-1 form changes its vote table, not only its tell's."""

    def at_round(self, index):
        if index == 0:
            return self
        other = copy.copy(self)
        other.similarity = self.similarity + 1.0
        return other


class _ChangesByRound(LiteralAgent):
    def batch_policy(self) -> _RoundPolicy:
        return _RoundPolicy(self, MANY)


@needs_numba
def test_a_policy_that_changes_more_than_its_tell_by_round_is_refused():
    with pytest.raises(ValueError, match=r"policy at_round\(1\) changes more than its tell's "
                                         "table"):
        play_compiled([[_ChangesByRound(), make_agent("random"), make_agent("random")]],
                      get_rules("classic"), load_deck("dreams"), [1])


@needs_numba
def test_a_table_it_cannot_play_is_refused_naming_the_agent():
    with pytest.raises(ValueError, match="overrides vote"):
        play_compiled([[_OwnVote(), make_agent("random"), make_agent("random")]],
                      get_rules("classic"), load_deck("dreams"), [1])


# -- the engine choice -------------------------------------------------------------------------


def _config(engine: str, games: int = 60, **extra) -> dict:
    return {"name": "compiled", "seed": 5, "rules": "classic", "deck": "dreams",
            "players": ["random", "literal", "softmax", "random"], "games": games,
            "engine": engine, "executor": {"kind": "local"}, **extra}


def _engine_played(folder) -> dict:
    import yaml

    return yaml.safe_load((folder / "config.yaml").read_text())["engine_played"]


@needs_numba
def test_engine_compiled_gives_the_batched_bytes_and_says_so(tmp_path):
    for engine in ("batched", "compiled"):
        run_experiment(parse_config(_config(engine)), tmp_path / engine, show_progress=False,
                       write_outputs=False)
    assert games_text(tmp_path / "batched") == games_text(tmp_path / "compiled")
    assert _engine_played(tmp_path / "compiled")["engine"] == "compiled"
    assert _engine_played(tmp_path / "batched")["engine"] == "batched"


def test_auto_plays_a_short_run_on_the_numpy_engine_saying_why(tmp_path):
    run_experiment(parse_config(_config("auto")), tmp_path, show_progress=False,
                   write_outputs=False)
    played = _engine_played(tmp_path)
    assert played["engine"] == "batched"
    assert "not compiled: " in played["why"]


def test_auto_picks_the_kernel_for_a_long_run_only_when_it_plays_everything(monkeypatch):
    from dixit_lab.engine import compiled

    long = AUTO_COMPILED_GAMES
    choice = table_setup(parse_config(_config("auto", long))).engine_choice()
    assert choice[0] == ("compiled" if kernel_problem() is None else "batched")
    monkeypatch.setattr(compiled, "kernel_problem", lambda: "Numba is not installed (test)")
    engine, why = table_setup(parse_config(_config("auto", long))).engine_choice()
    assert (engine, why) == ("batched", "every agent has a batched policy; not compiled: "
                                        "Numba is not installed (test)")


def test_engine_compiled_plays_every_rule_and_refuses_a_missing_numba(monkeypatch):
    if kernel_problem() is None:  # play_out_hands and own_card_votes too (both refused before)
        for rules in ({"preset": "classic", "options": {"deck_exhausted": "play_out_hands"}},
                      "dixitworld_as_run"):
            setup = table_setup(parse_config(_config("compiled", rules=rules)))
            assert setup.engine_choice()[0] == "compiled", rules
    from dixit_lab.engine import compiled

    monkeypatch.setattr(compiled, "kernel_problem", lambda: "Numba is not installed (test)")
    with pytest.raises(ConfigError, match="engine 'compiled' was asked for, but Numba is not "
                                          "installed"):
        parse_config(_config("compiled"))


def test_a_short_auto_run_never_imports_numba(tmp_path):
    """The quickstart's path (engine: auto, fewer than AUTO_COMPILED_GAMES games) pays nothing
    for the extra: Numba is not even imported."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from dixit_lab.run.experiment import parse_config\n"
        "from dixit_lab.run.runner import run_experiment\n"
        "config = parse_config({'name': 'short', 'seed': 1, 'rules': 'classic',\n"
        "    'deck': 'dreams', 'players': ['random', 'literal', 'softmax'], 'games': 20,\n"
        "    'executor': {'kind': 'local'}})\n"
        "run_experiment(config, sys.argv[1], show_progress=False, write_outputs=False)\n"
        "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "run")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"


@needs_numba
@pytest.mark.parametrize("margin", [2.0, -math.inf])
def test_every_softmax_draw_exact_or_fast_gives_the_same_games(monkeypatch, margin):
    """The kernel's softmax draws from weights made once per table unless a sum lies within
    ``MARGIN`` of the threshold. Forced both ways (2.0: every draw from the values, as the
    reference; -inf: never), a softmax table still plays the reference's games."""
    from dixit_lab.engine import compiled

    monkeypatch.setattr(compiled, "MARGIN", margin)
    monkeypatch.setattr(compiled, "_PACKS", {})
    compare(["softmax", "softmax(temperature=0.5)", "random", "softmax"], "classic", 25)
    compare(["softmax"] * 3, "quest", 10)


@needs_numba
def test_kept_round_arrays_give_each_batch_its_own_rounds() -> None:
    """``play_keys(reuse=True)`` plays into the same arrays batch after batch (grown when a
    batch needs more rows): each batch's rounds are those of fresh arrays."""
    import numpy as np

    from dixit_lab.core.seeding import game_seed
    from dixit_lab.engine.batched import _keys, prepare_tables
    from dixit_lab.engine.compiled import play_keys

    deck = load_deck("dreams")
    for rules in (get_rules("classic"),  # 60 rounds a game, more than the 32 guessed: grown
                  get_rules("classic", deck_exhausted="reshuffle_discard", max_rounds=60)):
        for first, games in ((0, 30), (30, 7), (37, 60)):
            seeds = [game_seed(5, g) for g in range(first, first + games)]
            table = prepare_tables([[make_agent("softmax")] * 4] * games, rules, deck, seeds)
            kept = play_keys(table, rules, _keys(seeds), reuse=True)
            fresh = play_keys(table, rules, _keys(seeds))
            assert np.array_equal(kept.round_start, fresh.round_start)
            for key, values in fresh.rounds.items():
                assert np.array_equal(kept.rounds[key], values), key
