"""Predicted vs observed find rates: is a storyteller's model of its listeners calibrated?

For every storyteller turn of a player whose agent predicts find probabilities (``ambiguity``,
``pragmatic``, ``calibrated``: agents with a ``predicted_find`` method), the agent is rebuilt
from its spec and asked what it predicted for the (card, clue) it told, given its hand and the
round; the observed find rate of the turn is the share of listeners who voted for the card.
The agent is given the deck the games were played with: a results folder's
(:func:`~dixit_lab.records.decks.folder_decks`), else the deck the records name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from dixit_lab.core.agent import GameContext, make_agent
from dixit_lab.core.cards import Deck, DeckError
from dixit_lab.core.rules import RuleSet
from dixit_lab.errors import UserError
from dixit_lab.records.decks import DeckLookup, by_name
from dixit_lab.records.format import GameRecord

__all__ = ["PredictionCache", "calibration_bins", "find_rate_table", "predicted_finds",
           "turn_predictions"]


class PredictionCache:
    """The storytellers rebuilt to ask them their predictions, by (spec, deck content,
    players, rules); None for a spec whose agent predicts nothing, and for the ``untrusted`` specs
    (seats played in a child: the engine never builds them, so their predictions are not
    asked and their predicted find rate is NaN). The :data:`AGENTS` most recently asked are
    kept (each holds its tables: a sweep of many points must not keep every point's)."""

    #: storytellers kept at once
    AGENTS = 16

    def __init__(self, untrusted: frozenset[str] = frozenset()) -> None:
        self.agents: dict[tuple[Any, ...], Any] = {}
        self.predicts: dict[str, bool] = {}
        self.untrusted = untrusted

    def agent(self, spec: str, deck: str, decks: DeckLookup, n_players: int, rules: RuleSet
              ) -> Any:
        """The storyteller of ``spec`` for games of the deck named ``deck`` (found by
        ``decks``: only when its agent predicts)."""
        if spec in self.untrusted:
            return None
        if spec not in self.predicts:
            self.predicts[spec] = callable(getattr(make_agent(spec), "predicted_find", None))
        if not self.predicts[spec]:
            return None
        played = _deck(decks, deck)
        key = (spec, played.fingerprint, n_players, rules)
        agent = self.agents.pop(key, None)
        if agent is None:
            agent = make_agent(spec)
            try:
                agent.begin_game(GameContext(0, n_players, rules, played))
            except Exception as error:  # an agent's own code: its failure is named, in a line
                raise UserError(f"{spec} could not be set up to predict its find rates at "
                                f"{n_players} players under {rules.name!r}: "
                                f"{type(error).__name__}: {error}") from error
        self.agents[key] = agent  # the most recent last
        while len(self.agents) > self.AGENTS:
            del self.agents[next(iter(self.agents))]
        return agent


def _deck(decks: DeckLookup, name: str) -> Deck:
    deck = decks(name)
    if deck is None:
        raise DeckError(f"deck {name!r} of these games cannot be loaded here: the "
                        f"storytellers' predicted find rates need it")
    return deck


def predicted_finds(batch: Any, cache: PredictionCache, decks: DeckLookup = by_name
                    ) -> np.ndarray:
    """(R,) each round's predicted find rate of its storyteller (NaN where its agent has no
    model, its hand was not recorded, or its clue is outside its bank), for a
    :class:`~dixit_lab.records.batches.GameBatch`; ``decks``: how the games' deck is found
    (a results folder's :func:`~dixit_lab.records.decks.folder_decks`)."""
    from dixit_lab.records.batches import rule_sets

    predicted = np.full(batch.rounds, np.nan)
    if not batch.rounds:
        return predicted
    n = batch.n
    spec_codes, specs = batch.coded("agents")
    teller_spec = spec_codes[batch.round_game * n + batch.storyteller]
    deck_codes, deck_names = batch.coded("deck")
    rules = rule_sets(batch.rule_options)
    rule_list = list(rules.values())
    if len(rules) == 1:
        rule_of_game = np.zeros(batch.games, dtype=np.int64)
    else:
        position = {text: code for code, text in enumerate(rules)}
        rule_of_game = np.fromiter((position[text] for text in batch.rule_options),
                                   dtype=np.int64, count=batch.games)
    has_hand = np.diff(np.asarray(batch.hands.offsets)) > 0
    clue_codes, clue_texts = batch.coded("clue")
    group_of_game = (deck_codes * len(specs)) * len(rules) + rule_of_game
    groups = group_of_game[batch.round_game] + teller_spec * len(rules)
    for group in np.unique(groups[has_hand]):
        deck, rest = divmod(int(group), len(specs) * len(rules))
        spec, rule_set = specs[rest // len(rules)], rule_list[rest % len(rules)]
        agent = cache.agent(spec, deck_names[deck], decks, n, rule_set)
        if agent is None:
            continue
        rows = np.flatnonzero((groups == group) & has_hand)
        cards = batch.storyteller_card[rows]
        rounds = batch.round_number[rows]
        coded = getattr(agent, "predicted_finds_coded", None)
        if callable(coded):
            predicted[rows] = coded(cards, clue_codes[rows], clue_texts, rounds)
            continue
        turn_clues = [clue_texts[code] for code in clue_codes[rows].tolist()]
        many = getattr(agent, "predicted_finds", None)
        if callable(many):
            predicted[rows] = many(cards, turn_clues, rounds)
            continue
        hands = batch.hands.take(rows).to_pylist()
        for slot, (row, hand) in enumerate(zip(rows, hands, strict=True)):
            with contextlib.suppress(KeyError):  # a fallback clue outside the bank
                predicted[row] = agent.predicted_find(hand, int(cards[slot]),
                                                      turn_clues[slot], int(rounds[slot]))
    return predicted


def turn_predictions(records: Iterable[GameRecord], untrusted: frozenset[str] = frozenset(),
                     decks: DeckLookup = by_name) -> pd.DataFrame:
    """One row per storyteller turn: game, round, player, agent, voters, finders,
    ``observed`` (finders / voters: the samples of ``observed_find_rate``,
    :func:`dixit_lab.stats.kernels.observed_find_rate`) and ``predicted``
    (:func:`predicted_finds`: NaN for agents without a model, and for the ``untrusted`` specs,
    which are never built here), from batches of the records; ``decks``: as for
    :func:`predicted_finds`."""
    from dixit_lab.records.batches import record_batches
    from dixit_lab.stats.kernels import Seats, observed_find_rate

    cache = PredictionCache(untrusted)
    frames = []
    for batch in record_batches(records):
        seats = Seats(batch)
        teller = batch.round_game * batch.n + batch.storyteller
        frames.append(pd.DataFrame({
            "record_index": batch.record_index[batch.round_game],
            "game": batch.game[batch.round_game], "round": batch.round_number,
            "player": np.asarray(seats.names, dtype=object)[seats.teller],
            "agent": np.asarray(batch.agents.to_pylist(), dtype=object)[teller],
            "voters": np.full(batch.rounds, batch.n - 1), "finders": batch.n_finders,
            "observed": observed_find_rate(seats).values,
            "predicted": predicted_finds(batch, cache, decks)}))
    columns = ["game", "round", "player", "agent", "voters", "finders", "observed",
               "predicted"]
    if not frames:
        return pd.DataFrame([], columns=columns)
    turns = pd.concat(frames, ignore_index=True)  # one table size a batch: back in order
    return turns.sort_values(["record_index", "round"], kind="stable",
                             ignore_index=True)[columns]


def find_rate_table(turns: pd.DataFrame) -> pd.DataFrame:
    """Per player: mean predicted and observed find rate over its storyteller turns, with a
    95% interval for the observed rate clustered by game (Wilson at the effective sample
    size: it stays in [0, 1])."""
    from dixit_lab.stats.intervals import bounded_mean_interval

    rows = []
    for player, group in turns.groupby("player", sort=False):
        mean, low, high = bounded_mean_interval(group["observed"].to_numpy(float),
                                                group["game"].to_numpy())
        predicted = group["predicted"].to_numpy(float)
        rows.append({"player": player,
                     "observed_find_rate": mean,
                     "observed_find_rate_ci_low": low,
                     "observed_find_rate_ci_high": high,
                     "predicted_find_rate": (float(np.nanmean(predicted))
                                             if np.isfinite(predicted).any() else float("nan"))})
    return pd.DataFrame(rows)


def calibration_bins(turns: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Turns with a prediction, binned by predicted find rate: mean predicted, mean observed
    and the number of turns per bin and player."""
    known = turns[np.isfinite(turns["predicted"].to_numpy(float))]
    if known.empty:
        return pd.DataFrame(columns=["player", "bin", "predicted", "observed", "turns"])
    edges = np.linspace(0, 1, bins + 1)
    labelled = known.assign(bin=np.clip(np.digitize(known["predicted"], edges) - 1, 0,
                                        bins - 1))
    grouped = labelled.groupby(["player", "bin"], sort=True)
    return grouped.agg(predicted=("predicted", "mean"), observed=("observed", "mean"),
                       turns=("observed", "size")).reset_index()
