"""The batched engine plays exactly the reference engine's games (a sample in CI; the full
check over >= 1,000 games per case is benchmarks/check_batched.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import Clue, make_agent, register_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.engine.batched import batch_blocker, batch_supported
from dixit_lab.errors import ConfigError
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from dixit_lab.testing import batch_differences, check_batch_policy
from dixit_lab_agents.literal import LiteralAgent, LiteralPolicy
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


def test_scores_past_the_writers_table_of_numbers():
    """1,000 points a find over 120 rounds: scores past the records writer's table of small
    numbers (65,536) are written one by one, the reference's bytes all the same."""
    compare(["random", "literal", "softmax", "random"], "classic", 3, storyteller_points=1000,
            finder_points=1000, all_or_none_points=1000, max_rounds=120,
            deck_exhausted="reshuffle_discard")


def test_dixitworld_fixed_hands_and_its_scoring():
    compare(["pragmatic", "softmax", "random", "literal"], "dixitworld", 8)


def test_dixitworld_as_run_no_bonus_and_own_card_votes_allowed():
    """The batched engine plays own_card_votes (its policies never vote for their own card,
    which can never find the storyteller's) and scores no bonus, as the reference engine."""
    compare(["pragmatic", "softmax", "random", "literal"], "dixitworld_as_run", 8)
    compare(["random", "literal", "softmax"], "classic", 6, own_card_votes=True)


def test_calibrated_is_not_batched_and_auto_falls_back(tmp_path):
    assert not batch_supported(make_agent("calibrated"))
    assert batch_supported(make_agent("pragmatic"))
    config = {"name": "fallback", "seed": 2, "rules": "classic", "deck": "dreams",
              "players": ["calibrated", "softmax", "random"], "games": 6,
              "executor": {"kind": "local"}}
    auto = run_experiment(parse_config(config), tmp_path / "auto", show_progress=False,
                          write_outputs=False)
    assert auto.played == 6
    with pytest.raises(ConfigError, match="calibrated.* has no batched policy"):
        parse_config({**config, "engine": "batched"})  # refused before a folder exists


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


# -- whose decisions a batched policy plays ----------------------------------------------------


@register_agent("test-kth-clue")
class KthClue(LiteralAgent):
    """Notebook 04's storyteller: literal's card with the rank-th clue; it overrides only tell
    (and inherits literal's batched policy, which tells literal's clue)."""

    def __init__(self, rank: int = 20) -> None:
        super().__init__()
        self.rank = rank

    def prepare(self, space):
        super().prepare(space)
        self.kth = np.argsort(-space.similarity, axis=0, kind="stable")[self.rank - 1].tolist()

    def tell(self, view):
        card = max(view.hand, key=self.best_similarity.__getitem__)
        return Clue(card, self.space.clues[self.kth[card]])


class TellMixin:
    def tell(self, view):
        return LiteralAgent.tell(self, view)


class Mixed(TellMixin, LiteralAgent):
    """A mixin before the class of the policy overrides tell too (the MRO decides)."""


@register_agent("test-vouching")
class Vouching(LiteralAgent):
    """Overrides vote with literal's own vote and vouches for literal's policy."""

    def vote(self, view):
        return LiteralAgent.vote(self, view)

    def batch_policy(self) -> LiteralPolicy:
        return LiteralPolicy(self)


def test_a_batched_policy_plays_only_for_the_class_that_defines_it_and_its_bases():
    assert batch_blocker(make_agent("test-kth-clue")) == (
        "KthClue overrides tell, which the batched policy of LiteralAgent does not play")
    assert "TellMixin overrides tell" in batch_blocker(Mixed())
    assert batch_supported(make_agent("test-vouching"))
    replaced = make_agent("literal")
    replaced.vote = lambda view: 0
    assert "replaces vote on this instance" in batch_blocker(replaced)
    assert batch_blocker(make_agent("softmax(noise=0.1)")) == (
        "SoftmaxAgent has no batched policy (with these parameters)")
    for spec in SUPPORTED:  # pragmatic overrides vote, and defines its own batch_policy
        assert batch_blocker(make_agent(spec)) is None, spec


def _kth_config(rank: int, engine: str = "auto") -> dict:
    return {"name": f"kth-{rank}", "seed": 4242, "rules": "classic", "deck": "dreams",
            "players": [{"name": "mine", "agent": f"test-kth-clue(rank={rank})"},
                        {"name": "softmax", "agent": "softmax(temperature=0.05)", "count": 4}],
            "games": 25, "engine": engine, "executor": {"kind": "local"}}


def test_a_subclass_that_overrides_tell_plays_its_own_clues_on_the_reference_engine(
        tmp_path, capsys):
    with pytest.raises(ConfigError, match="engine: .*test-kth-clue\\(rank=100\\): KthClue "
                                          "overrides tell"):
        parse_config(_kth_config(100, "batched"))
    for rank in (1, 100):
        run_experiment(parse_config(_kth_config(rank)), tmp_path / f"auto-{rank}",
                       show_progress=False)
        run_experiment(parse_config(_kth_config(rank, "reference")), tmp_path / f"ref-{rank}",
                       show_progress=False, write_outputs=False)
        assert games_text(tmp_path / f"auto-{rank}") == games_text(tmp_path / f"ref-{rank}")
    said = capsys.readouterr().err
    assert said.count("the reference engine plays these games (test-kth-clue(rank=100): "
                      "KthClue overrides tell") == 1
    report = (tmp_path / "auto-100" / "report.md").read_text()
    assert "**Engine:** reference: test-kth-clue(rank=100): KthClue overrides tell" in report
    assert games_text(tmp_path / "auto-1") != games_text(tmp_path / "auto-100")
    found = {rank: _row(tmp_path / f"auto-{rank}")["all_found_rate"] for rank in (1, 100)}
    assert found[1] > 0.7 > 0.3 > found[100]  # the rank-100 clue is found far less often


def _row(folder):
    import pandas as pd

    return pd.read_csv(folder / "agents.csv").set_index("player").loc["mine"]


def test_a_batched_run_says_so_in_its_report(tmp_path):
    config = {"name": "batched", "seed": 1, "rules": "classic", "deck": "dreams",
              "players": ["literal", "softmax", "random"], "games": 6,
              "executor": {"kind": "local"}}
    run_experiment(parse_config(config), tmp_path, show_progress=False)
    assert "**Engine:** batched: every agent has a batched policy" in (
        tmp_path / "report.md").read_text()


def test_the_first_player_tells_first_wherever_it_sits():
    """``first_storyteller="first_player"``: round 1's storyteller is the seat the engines are
    told holds the config's first player (``batch_differences`` rotates it round the table),
    in both engines alike."""
    from dixit_lab.core.seeding import game_seed
    from dixit_lab.engine.batched import play_batch
    from dixit_lab.records.format import GameRecord

    compare(["pragmatic", "softmax", "random", "literal"], "classic", 8,
            first_storyteller="first_player")
    rules, deck = get_rules("dixitworld"), load_deck("dreams")
    agent = make_agent("random")
    lines = play_batch([[agent] * 4] * 4, rules, deck, [game_seed(3, g) for g in range(4)],
                       first_player_seats=[0, 3, 2, 1])
    tellers = [[rnd.storyteller for rnd in GameRecord.from_json(line).rounds[:4]]
               for line in lines]
    assert tellers == [[0, 1, 2, 3], [3, 0, 1, 2], [2, 3, 0, 1], [1, 2, 3, 0]]
