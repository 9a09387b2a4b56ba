"""One tie-break for every model storyteller: the pair-by-pair search (`near_best`, for scores
that depend on the hand) and the fixed table's index (`NearBest`, both engines) choose the
same (card, clue) on every hand, ties included."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.core.agent import make_agent
from dixit_lab.core.cards import load_deck
from dixit_lab.core.rules import get_rules
from dixit_lab.core.seeding import game_seed
from dixit_lab.engine.game import play_game
from dixit_lab_agents.ambiguity import AmbiguityAgent
from dixit_lab_agents.model_storyteller import NearBest, near_best


def _tables(seed: int, n_cards: int = 30, n_clues: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    # coarse values, so that scores tie at the best and similarities tie among near pairs
    scores = rng.integers(0, 6, size=(n_cards, n_clues)).astype(np.float32) / 10
    similarity = rng.integers(0, 4, size=(n_cards, n_clues)).astype(np.float32) / 4
    return scores, similarity


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("tolerance", [0.0, 0.01, 0.15])
def test_the_index_chooses_what_the_pair_search_chooses(seed, tolerance):
    scores, similarity = _tables(seed)
    index = NearBest(scores, similarity, tolerance)
    rng = np.random.default_rng(100 + seed)
    hands = np.stack([rng.choice(scores.shape[0], size=6, replace=False) for _ in range(300)])
    cards, clues = index.tell(hands)
    for hand, card, clue in zip(hands, cards, clues, strict=True):
        row, expected_clue = near_best(scores[hand], similarity[hand], tolerance)
        assert (int(card), int(clue)) == (int(hand[row]), expected_clue)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("tolerance", [0.0, 0.01, 0.15, 1.0])
def test_the_compiled_kernels_lookup_table_gives_what_tell_finds(seed, tolerance):
    """keys_by_best_card[t, c]: the key tell finds for card c when t is the hand's best card;
    the kernel's tell (the best key's clue, first card on ties) read from it is tell's."""
    scores, similarity = _tables(seed)
    index = NearBest(scores, similarity, tolerance)
    table = index.keys_by_best_card()
    assert table.shape == (scores.shape[0], scores.shape[0]) and table.dtype == np.uint64
    rng = np.random.default_rng(200 + seed)
    hands = np.stack([rng.choice(scores.shape[0], size=6, replace=False) for _ in range(300)])
    cards, clues = index.tell(hands)
    low = np.uint64(0xFFFFFFFF)
    for hand, card, clue in zip(hands, cards, clues, strict=True):
        best_card = hand[int(np.argmax(index.card_best[hand]))]
        keys = table[best_card, hand]
        position = int(np.argmax(keys >> np.uint64(32)))
        assert (int(hand[position]), int(low - (keys[position] & low))) == (int(card), int(clue))


def test_ties_go_to_the_first_card_of_the_hand_then_the_lowest_clue():
    scores = np.ones((3, 4), dtype=np.float32)
    similarity = np.array([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]], dtype=np.float32)
    assert near_best(scores, similarity, 0.01) == (0, 1)
    assert near_best(scores[[1, 0, 2]], similarity[[1, 0, 2]], 0.01) == (0, 0)


class _PairSearchAmbiguity(AmbiguityAgent):
    """ambiguity with its table hidden behind pair_scores: it tells by the pair search."""

    name = "ambiguity"

    def score_matrix(self, find: np.ndarray, variance: np.ndarray) -> None:
        return None

    def pair_scores(self, hand: list[int], round_index: int) -> np.ndarray:
        model = self.model  # the round's table, as ambiguity scores it
        return AmbiguityAgent.score_matrix(self, model.find_at(round_index),
                                           model.variance_at(round_index))[hand]


def test_the_pair_search_plays_the_games_the_fixed_table_plays():
    rules, deck = get_rules("classic"), load_deck("dreams")
    for index in range(4):
        seed = game_seed(7, index)
        records = []
        for storyteller in (make_agent("ambiguity"), _PairSearchAmbiguity()):
            table = [storyteller, make_agent("literal"), make_agent("softmax"),
                     make_agent("literal")]
            records.append(play_game(table, rules, deck, seed).to_dict())
        assert records[0] == records[1]
