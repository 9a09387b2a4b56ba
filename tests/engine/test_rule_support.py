"""The parity table: every preset x option x table size, on every engine. Each engine plays
the reference engine's games byte for byte (the vector environment: the PettingZoo
environment's, which steps the reference game), or refuses the rules with the one sentence of
``engine.rule_support.rules_problem`` at its entry and in the runner; docs/rules.md's table
lists exactly the refusals. Today every engine plays every case (a refusal is checked with
one made up for the test)."""

from __future__ import annotations

import importlib.util
import itertools
import re
from pathlib import Path

import pytest

from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import DECK_EXHAUSTED_MODES, PRESETS, get_rules
from dixit_lab.engine.compiled import kernel_problem
from dixit_lab.engine.rule_support import ENGINES, NOT_PLAYED, rules_problem
from dixit_lab.errors import ConfigError
from dixit_lab.run.tournament import TableSetup
from dixit_lab.testing import batch_differences

SEATS = ["random", "literal", "softmax", "random", "literal", "softmax"]
#: a model storyteller (its tell tables follow the hands round by round) at 4 players: 2 s a
#: case to build, so over the deck_exhausted modes only (tests/engine/test_batched.py and
#: test_compiled.py play it under every preset)
MODEL_SEATS = ["ambiguity(target=0.3)", "random", "softmax", "literal"]
#: long enough for the pile to run out at 3, 4 and 6 players on the dreams deck (and the
#: discard to be reshuffled); without it a reshuffling game with no target plays 500 rounds
ROUNDS = 25


def _rules(preset: str, **options):
    """The preset with ``options``, at most :data:`ROUNDS` rounds a game."""
    return get_rules(preset, max_rounds=min(ROUNDS, get_rules(preset).max_rounds), **options)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _cases() -> list[tuple[str, str, bool, int]]:
    cases = []
    for preset, mode, own in itertools.product(PRESETS, DECK_EXHAUSTED_MODES, (False, True)):
        rules = get_rules(preset, deck_exhausted=mode, own_card_votes=own)
        cases += [(preset, mode, own, n) for n in (3, 4, 6)
                  if rules.min_players <= n <= rules.max_players]
    return cases


CASES = _cases()
#: the other options, each on its own at one preset and size
OPTIONS = [{"first_storyteller": "random"}, {"first_storyteller": "first_player"},
           {"fixed_hands": True}, {"lone_finder_points": 4}, {"vote_bonus_cap": 1},
           {"all_found_points": 3}, {"vote_bonus_points": 0}, {"target_score": 12},
           {"decoys_three_players": 1}, {"hand_size_three_players": 6}]


def _check_engine(engine: str, rules, n: int, games: int = 4, specs=None) -> str:
    """'same' or 'refused' (asserting the refusal is the shared sentence everywhere)."""
    specs = specs or SEATS[:n]
    problem = rules_problem(engine, rules)
    deck = load_deck("dreams")
    if problem is None:
        bad = batch_differences(specs, rules, deck, games, seed=5, engine=engine)
        assert not bad, f"{engine}: games {bad} differ from the reference engine's"
        return "same"
    if engine == "compiled":
        from dixit_lab.engine.compiled import play_compiled as play
    else:
        from dixit_lab.engine.batched import play_batch as play
    from dixit_lab.core.agent import make_agent

    with pytest.raises(ValueError) as refused:
        play([[make_agent(s) for s in specs]], rules, deck, [1], [{}])
    assert str(refused.value) == problem
    setup = TableSetup(seed=1, rules=rules, deck="dreams", names=tuple(specs),
                       specs=tuple(specs), on_illegal="raise", engine=engine)
    with pytest.raises(ConfigError) as chosen:
        setup.engine_choice()
    assert problem in str(chosen.value)
    return "refused"


@pytest.mark.parametrize(("preset", "mode", "own", "n"), CASES)
def test_every_preset_mode_and_size_on_the_batched_engine(preset, mode, own, n):
    rules = _rules(preset, deck_exhausted=mode, own_card_votes=own)
    _check_engine("batched", rules, n)


@pytest.mark.skipif(kernel_problem() is not None, reason=kernel_problem() or "")
@pytest.mark.parametrize(("preset", "mode", "own", "n"), CASES)
def test_every_preset_mode_and_size_on_the_compiled_engine(preset, mode, own, n):
    rules = _rules(preset, deck_exhausted=mode, own_card_votes=own)
    _check_engine("compiled", rules, n)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: next(iter(o)))
@pytest.mark.parametrize("engine", ["batched", "compiled"])
def test_every_other_option_on_the_batched_engines(engine, options):
    if engine == "compiled" and kernel_problem() is not None:
        pytest.skip(kernel_problem() or "")
    n = 3 if "three_players" in next(iter(options)) else 4
    assert _check_engine(engine, _rules("classic", **options), n,
                         games=6) == "same"


@pytest.mark.parametrize("mode", DECK_EXHAUSTED_MODES)
@pytest.mark.parametrize("engine", ["batched", "compiled"])
def test_a_model_storyteller_under_every_deck_exhausted_mode(engine, mode):
    if engine == "compiled" and kernel_problem() is not None:
        pytest.skip(kernel_problem() or "")
    _check_engine(engine, _rules("classic", deck_exhausted=mode), 4, specs=MODEL_SEATS)


@pytest.mark.skipif(importlib.util.find_spec("pettingzoo") is None,
                    reason="the vector environment's reference is the PettingZoo "
                           "environment: pip install 'dixit-lab[env]'")
@pytest.mark.parametrize(("preset", "mode", "own", "n"), CASES)
def test_every_preset_mode_and_size_in_the_vector_environment(preset, mode, own, n):
    from tests.env.test_vector import same_games

    assert rules_problem("vector", get_rules(preset)) is None
    same_games(n, preset, {"deck_exhausted": mode, "own_card_votes": own}, 60, seed=3 + n)


def test_the_docs_table_lists_exactly_what_each_engine_does_not_play():
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Which engine plays which rule"):]
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \|$", section, re.M)
    listed = {engine: cell for engine, cell in rows if engine in ENGINES}
    assert set(listed) == set(ENGINES), listed
    for engine in ENGINES:
        refused = NOT_PLAYED.get(engine, {})
        cell = listed[engine]
        if not refused:
            assert cell.startswith("every rule"), (engine, cell)
        for option, value in refused:
            assert f"`{option}: {value}`" in cell, (engine, option, value, cell)


@pytest.mark.parametrize("engine", ["batched", "compiled"])
def test_a_rule_an_engine_does_not_play_is_refused_in_one_sentence_everywhere(engine,
                                                                             monkeypatch):
    """Every engine plays every rule today (NOT_PLAYED is empty); a rule listed there is
    refused by the engine's entry and by the runner with the same sentence."""
    if engine == "compiled" and kernel_problem() is not None:
        pytest.skip(kernel_problem() or "")
    from dixit_lab.engine import rule_support

    monkeypatch.setitem(rule_support.NOT_PLAYED, engine,
                        {("deck_exhausted", "reshuffle_discard"): "a test's refusal"})
    rules = _rules("classic", deck_exhausted="reshuffle_discard")
    assert _check_engine(engine, rules, 4) == "refused"
    assert rules_problem(engine, rules) == (
        f"the {engine} engine does not play deck_exhausted='reshuffle_discard' (a test's "
        f"refusal); the reference engine does")
    assert _check_engine(engine, _rules("classic"), 4) == "same"


def test_an_unknown_engine_is_named():
    with pytest.raises(ValueError, match="unknown engine 'turbo'"):
        rules_problem("turbo", get_rules())
