"""The batched engine: many games at once as NumPy arrays, identical to the reference engine.

:func:`dixit_lab.engine.game.play_game` is the readable definition of a game. This module plays the
same games for a whole batch of seeds in lockstep: hands, piles, scores and votes are arrays
over games, and every agent's decision is an array operation over the games in which that
agent acts (a :class:`BatchPolicy`, which the agent provides through ``batch_policy()``).
Random numbers come from the same counter-based streams as the reference engine (see
:mod:`dixit_lab.core.seeding`), so the records are byte-identical; ``tests/engine/test_batched.py``
checks that for every supported agent, rule preset and player count.

All games of a batch share the table shape (players, rules, deck). The game's mechanics (the
deal, the cards leaving hands, the display's order, the scoring, the refill, the reshuffle and
the end) are the state machine's, :class:`~dixit_lab.engine.table_states.TableStates`, which
the vector environment drives too; this module asks the seats' policies and plays their answers
on it, the games still in play a round at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dixit_lab.core.agent import Agent, GameContext
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import RuleSet
from dixit_lab.core.seeding import DealSeeds, game_key, game_keys, seat_bases_many, uniforms
from dixit_lab.engine.batch_output import columns, json_lines, json_records
from dixit_lab.engine.rule_support import rules_problem
from dixit_lab.engine.table_states import END_REASONS, GOING, TableStates
from dixit_lab.records.batches import GameBatch

__all__ = ["DECISION_METHODS", "BatchPolicy", "Draws", "TableShape", "Tables", "batch_blocker",
           "batch_supported", "first_seats", "play_batch", "prepare_tables", "rules_supported"]


class Draws:
    """The next uniform number of each (game, seat) stream of the rows a decision concerns."""

    def __init__(self, bases: np.ndarray, counters: np.ndarray, rows: np.ndarray,
                 seats: np.ndarray) -> None:
        self._bases, self._counters, self._rows, self._seats = bases, counters, rows, seats

    def next(self) -> np.ndarray:
        counters = self._counters[self._rows, self._seats]
        values = uniforms(self._bases[self._rows, self._seats], counters.astype(np.uint64))
        self._counters[self._rows, self._seats] = counters + 1
        return values


class BatchPolicy(Protocol):
    """An agent's decisions over many games at once (rows), exactly as the agent decides.

    ``clue_texts`` is the clue bank the policy perceives (None: it names its clues by
    ``words``, which must all be in the table's bank); the engine calls ``bind`` with the
    table's bank before the first decision. The built-in agents' policies are written once
    for both engines (``dixit_lab.policy.backends``)."""

    clue_texts: tuple[str, ...] | None

    def bind(self, texts: tuple[str, ...]) -> None:
        """Fix the table's clue bank (the clue rows ``tell`` returns and the others get)."""
        ...

    def tell(self, hands: np.ndarray, draws: Draws) -> tuple[np.ndarray, np.ndarray]:
        """(R, h) hands -> (cards, clue rows of the clue bank), each (R,). A policy whose
        decisions depend on the round also has ``at_round(index)``, the policy of round
        ``index`` (0-based), which the engine asks for at the start of every round."""
        ...

    def submit(self, hands: np.ndarray, clues: np.ndarray, n_cards: int,
               draws: Draws) -> np.ndarray:
        """(R, h) hands, (R,) clues -> (R, n_cards) cards, in the agent's order."""
        ...

    def vote(self, display: np.ndarray, own: np.ndarray, clues: np.ndarray,
             draws: Draws) -> np.ndarray:
        """(R, k) displayed cards, (R, k) own-card mask, (R,) clues -> (R,) positions."""
        ...


#: the methods through which a game reaches an agent: a batch policy plays them all
DECISION_METHODS: tuple[str, ...] = ("begin_game", "tell", "submit", "vote", "observe")


def batch_blocker(agent: Agent) -> str | None:
    """Why the batched engine may not play ``agent`` (None: it may).

    The rule: a batch policy speaks for the class that defines ``batch_policy`` (the first
    in the agent's MRO whose body names it) and for its bases, never for a subclass. So that
    class must be the most-derived definer of every decision method
    (:data:`DECISION_METHODS`): a subclass that overrides ``tell``, ``submit``, ``vote``,
    ``begin_game`` or ``observe`` without defining ``batch_policy`` itself plays on the
    reference engine (a subclass that vouches for its policy defines ``batch_policy``, and
    ``dixit_lab.testing.check_batch_policy`` checks it). ``batch_policy = None`` in a class,
    or on an instance, says it has none."""
    cls, mro = type(agent), type(agent).__mro__
    own = getattr(agent, "__dict__", {})
    if "batch_policy" in own:  # set on the instance: it speaks for the instance
        return None if callable(own["batch_policy"]) else \
            f"{cls.__name__} has no batched policy (with these parameters)"
    owner = next((klass for klass in mro if "batch_policy" in vars(klass)), None)
    if owner is None or not callable(getattr(agent, "batch_policy", None)):
        return f"{cls.__name__} has no batched policy"
    for method in DECISION_METHODS:
        if method in own:
            return (f"{cls.__name__} replaces {method} on this instance, which the batched "
                    f"policy of {owner.__name__} does not play")
        definer = next(klass for klass in mro if method in vars(klass))
        if mro.index(definer) < mro.index(owner):
            return (f"{definer.__name__} overrides {method}, which the batched policy of "
                    f"{owner.__name__} does not play")
    return None


def batch_supported(agent: Agent) -> bool:
    """True if the batched engine plays the agent's own decisions (:func:`batch_blocker`)."""
    return batch_blocker(agent) is None


def _at_round(policies: list[Any], index: int) -> list[Any]:
    """Each policy for round ``index``: a policy whose decisions depend on the round (the
    model storytellers': their listener model does) gives its round's policy by
    ``at_round(index)``; any other is the same every round."""
    return [p.at_round(index) if callable(getattr(p, "at_round", None)) else p
            for p in policies]


def rules_supported(rules: RuleSet) -> bool:
    """True if the batched engine plays games under ``rules`` (the one check of what each
    engine plays: :func:`~dixit_lab.engine.rule_support.rules_problem`)."""
    return rules_problem("batched", rules) is None


@dataclass(frozen=True)
class TableShape:
    """The shape of a table: players, hand size, cards per listener, cards shown, deck size."""

    n: int
    hand: int
    per_player: int
    shown: int
    deck: int


def _policies(agents: Sequence[Agent], n: int, rules: RuleSet, deck: Deck
              ) -> tuple[list[Any], tuple[str, ...]]:
    """A batch policy per distinct agent (prepared for this table shape) and the table's
    clue list."""
    policies = []
    for agent in agents:
        name = getattr(agent, "spec", None) or agent.name
        blocker = batch_blocker(agent)
        if blocker is not None:
            raise ValueError(f"agent {name!r}: {blocker}; use the reference engine")
        cache = agent.__dict__.setdefault("_batch_policies", {})
        key = (n, rules, deck.name, len(deck))
        if key not in cache:  # prepared once per agent instance and table shape
            agent.begin_game(GameContext(0, n, rules, deck))
            cache[key] = agent.batch_policy()  # type: ignore[attr-defined]
        policies.append(cache[key])
    # one clue list for the table: the embedding agents' bank, or the policies' own words
    banks = [p.clue_texts for p in policies if p.clue_texts is not None]
    clue_texts = tuple(banks[0]) if banks else tuple(policies[0].words)
    for policy in policies:
        policy.bind(clue_texts)
    return policies, clue_texts


def play_batch(tables: Sequence[Sequence[Agent]], rules: RuleSet, deck: Deck,
               seeds: Sequence[Any], metas: Sequence[dict[str, Any]] | None = None,
               first_player_seats: Sequence[int] | None = None) -> list[str]:
    """Play game ``g`` with the agents ``tables[g]`` (by seat) from ``seeds[g]``, for all
    games at once, and return their JSON lines: exactly ``play_game(tables[g], rules, deck,
    seeds[g], meta=metas[g], first_player_seat=first_player_seats[g]).to_json()`` (no
    ``first_player_seats``: 0 in every game). Every agent must support batching; one agent
    instance may sit in many seats and games (batched policies keep no state)."""
    if not tables:
        return []
    games, rounds, names, clue_texts = run_batch(tables, rules, deck, seeds,
                                                 first_player_seats)
    return json_lines(games, rounds, rules, deck, names, clue_texts, metas)


def play_batch_columns(tables: Sequence[Sequence[Agent]], rules: RuleSet, deck: Deck,
                       seeds: Sequence[Any], metas: Sequence[dict[str, Any]],
                       indices: Sequence[int], first_player_seats: Sequence[int] | None = None
                       ) -> tuple[str, GameBatch]:
    """:func:`play_batch`'s JSON lines as one text (each line and its newline:
    ``batch_output.lines_of`` splits it) and the same games as a
    :class:`~dixit_lab.records.batches.GameBatch` (``indices``: their record indices)."""
    games, rounds, names, clue_texts = run_batch(tables, rules, deck, seeds,
                                                 first_player_seats)
    return (json_records(games, rounds, rules, deck, names, clue_texts, metas),
            columns(games, rounds, rules, deck, names, clue_texts, metas, indices))


def run_batch(tables: Sequence[Sequence[Agent]], rules: RuleSet, deck: Deck,
              seeds: Sequence[Any], first_player_seats: Sequence[int] | None = None
              ) -> tuple[_Batch, list[dict[str, np.ndarray]], list[str], Sequence[str]]:
    """Play the games of :func:`play_batch`: their state, their rounds' arrays, the agents'
    names and the clue texts (for the records: ``batch_output.json_lines``, and
    :mod:`dixit_lab.engine.batch_output`)."""
    table = prepare_tables(tables, rules, deck, seeds)
    games = _Batch(table.shape, rules, seeds, table.seating,
                   first_seats(first_player_seats, len(tables), table.shape.n))
    return games, games.run(table.policies), table.names, table.clue_texts


def first_seats(first_player_seats: Sequence[int] | None, games: int, n: int) -> np.ndarray:
    """The seat of the config's first player in each game, (B,) int64 (``GameSteps``'s
    ``first_player_seat``; None: 0 in every game)."""
    if first_player_seats is None:
        return np.zeros(games, dtype=np.int64)
    seats = np.asarray(first_player_seats, dtype=np.int64).reshape(-1)
    if len(seats) != games or bool(((seats < 0) | (seats >= n)).any()):
        raise ValueError(f"first_player_seats: {len(seats)} seats of 0..{n - 1} for {games} "
                         f"games expected")
    return seats


@dataclass(frozen=True)
class Tables:
    """The games of a batch as the batched engines play them: the table shape, the distinct
    agents (by first seat), the agent of each seat of each game (``seating``, (B, n) indices
    of ``agents``), their batch policies (prepared for the shape and bound to the table's clue
    bank), their names (specs) and the clue bank."""

    shape: TableShape
    agents: list[Agent]
    seating: np.ndarray
    policies: list[Any]
    names: list[str]
    clue_texts: tuple[str, ...]


def prepare_tables(tables: Sequence[Sequence[Agent]], rules: RuleSet, deck: Deck,
                   seeds: Sequence[Any]) -> Tables:
    """Check a batch of games (one table shape, rules the batched engines play, agents with
    batch policies) and prepare its :class:`Tables`."""
    if len(tables) != len(seeds):
        raise ValueError(f"{len(tables)} tables for {len(seeds)} seeds")
    if not tables:
        raise ValueError("no game to play")
    n = len(tables[0])
    if any(len(table) != n for table in tables):
        raise ValueError("all games of a batch need the same number of players")
    rules.check_players(n)
    problem = rules_problem("batched", rules)
    if problem is not None:
        raise ValueError(problem)
    shape = TableShape(n, rules.hand_size_for(n), rules.cards_per_player(n),
                       rules.displayed_cards(n), len(deck))
    deck.check_playable(n, shape.hand, shape.shown)
    distinct: dict[int, int] = {}
    agents: list[Agent] = []
    seating = np.empty((len(tables), n), dtype=np.int64)
    for g, table in enumerate(tables):
        for seat, agent in enumerate(table):
            index = distinct.get(id(agent))
            if index is None:
                index = distinct[id(agent)] = len(agents)
                agents.append(agent)
            seating[g, seat] = index
    policies, clue_texts = _policies(agents, n, rules, deck)
    names = [getattr(a, "spec", None) or a.name for a in agents]
    return Tables(shape, agents, seating, policies, names, clue_texts)


def _keys(seeds: Sequence[Any]) -> np.ndarray:
    """The games' keys, (B, 2) uint64: vectorised when the seeds are one experiment's
    ``game_seed(seed, deal)`` sequences (or their :class:`DealSeeds`), else one at a time."""
    if isinstance(seeds, DealSeeds):
        return seeds.keys()
    first = seeds[0]
    if all(isinstance(s, np.random.SeedSequence) for s in seeds):
        entropy = first.entropy
        if isinstance(entropy, int) and all(s.entropy == entropy and len(s.spawn_key) == 1
                                            for s in seeds):
            keys = game_keys(entropy, np.array([s.spawn_key[0] for s in seeds]))
            if keys is not None:
                return keys
    return np.array([game_key(seed) for seed in seeds], dtype=np.uint64).reshape(len(seeds), 2)


def game_seeds(seeds: Sequence[Any]) -> Sequence[Any]:
    """The games' seeds as a batch keeps them: a :class:`DealSeeds` as it is (its
    ``SeedSequence`` objects are never made), any other sequence as a list."""
    return seeds if isinstance(seeds, DealSeeds) else list(seeds)


class _Batch:
    """B games of one table shape played a round at a time on the game's state machine
    (:class:`~dixit_lab.engine.table_states.TableStates`), the games still in play together:
    the seats' policies decide, the machine plays their answers."""

    def __init__(self, shape: TableShape, rules: RuleSet, seeds: Sequence[Any],
                 seating: np.ndarray, first_player_seats: np.ndarray) -> None:
        self.shape, self.rules = shape, rules
        self.seeds = game_seeds(seeds)
        self.seating = seating  # (B, n): the policy of each seat of each game
        self.single = 0 if int(seating.max()) == 0 else None
        b = len(self.seeds)
        keys = _keys(self.seeds)
        self.state = TableStates(b, shape.n, rules, shape.deck)
        self.state.deal(np.arange(b), keys, first_player_seats)
        self.scores = self.state.scores  # (B, n): the records read the final scores here
        self.seat_bases = seat_bases_many(keys, shape.n)
        self.seat_counters = np.zeros((b, shape.n), dtype=np.int64)
        self.active = np.ones(b, dtype=bool)
        self.end_round = np.full(b, -1, dtype=np.int64)
        self.end_reason = np.array([""] * b, dtype=object)

    def run(self, policies: list[Any]) -> list[dict[str, np.ndarray]]:
        rounds = []
        for index in range(self.rules.max_rounds):
            live = np.flatnonzero(self.active)
            if live.size == 0:
                break
            rounds.append(self.play_round(index, live, _at_round(policies, index)))
        return rounds

    def _decide(self, policies: list[Any], live: np.ndarray, seats: np.ndarray, action: str,
                *args: np.ndarray, **kwargs: Any) -> list[tuple[np.ndarray | slice, Any]]:
        """Run ``action`` of each acting agent's policy on the games where it acts."""
        if self.single is not None:  # one agent everywhere: no grouping needed
            draws = Draws(self.seat_bases, self.seat_counters, live, seats)
            result = getattr(policies[0], action)(*args, **kwargs, draws=draws)
            return [(slice(None), result)]
        acting = self.seating[live, seats]
        out: list[tuple[np.ndarray | slice, Any]] = []
        for index in np.unique(acting).tolist():
            mask = acting == index
            rows = live[mask]
            draws = Draws(self.seat_bases, self.seat_counters, rows, seats[mask])
            result = getattr(policies[index], action)(*(a[mask] for a in args), **kwargs,
                                                      draws=draws)
            out.append((mask, result))
        return out

    def _decide_hands(self, policies: list[Any], live: np.ndarray, seats: np.ndarray,
                      action: str, hands: np.ndarray, *args: np.ndarray, **kwargs: Any
                      ) -> list[tuple[np.ndarray | slice, Any]]:
        """:meth:`_decide` for a decision on the acting seats' ``hands`` ((L, h)): once hands
        differ in length (play_out_hands, the pile empty), each length is decided apart, on
        the hands' cards only ((L', length))."""
        lengths = self.state.hand_len[live, seats]
        if bool((lengths == self.shape.hand).all()):
            return self._decide(policies, live, seats, action, hands, *args, **kwargs)
        out: list[tuple[np.ndarray | slice, Any]] = []
        for length in np.unique(lengths).tolist():
            rows = np.flatnonzero(lengths == length)
            for mask, result in self._decide(policies, live[rows], seats[rows], action,
                                             hands[rows, :length], *(a[rows] for a in args),
                                             **kwargs):
                out.append((rows[mask], result))
        return out

    def play_round(self, index: int, live: np.ndarray, policies: list[Any]
                   ) -> dict[str, np.ndarray]:
        """Round ``index`` of the games ``live``: its record's arrays."""
        state, n, per = self.state, self.shape.n, self.shape.per_player
        size = live.size
        at = np.arange(size)
        teller = state.storyteller[live]
        hands = state.hands[live]                        # (L, n, h), before the round
        teller_hands = hands[at, teller]                 # (L, h)
        cards = np.empty(size, dtype=np.int64)
        clues = np.empty(size, dtype=np.int64)
        for mask, (told_cards, told_clues) in self._decide_hands(policies, live, teller,
                                                                 "tell", teller_hands):
            cards[mask], clues[mask] = told_cards, told_clues
        state.tell(live, _slots_of(teller_hands, cards[:, None])[:, 0], clues)

        picks = np.zeros((size, n, per), dtype=np.int64)
        for offset in range(1, n):
            seat = (teller + offset) % n
            seat_hands = hands[at, seat]
            chosen = np.empty((size, per), dtype=np.int64)
            for mask, result in self._decide_hands(policies, live, seat, "submit", seat_hands,
                                                   clues, n_cards=per):
                chosen[mask] = result
            picks[at, seat] = _slots_of(seat_hands, chosen)
        state.lay_out(live, picks)
        display, card_owner = state.display[live], state.card_owner[live]

        votes = np.full((size, n), -1, dtype=np.int64)
        for offset in range(1, n):
            seat = (teller + offset) % n
            own = card_owner == seat[:, None]
            for mask, result in self._decide(policies, live, seat, "vote", display, own, clues):
                votes[at[mask], seat[mask]] = result
        points, ending = state.score(live, votes)
        ended = ending != GOING
        over = live[ended]
        self.active[over] = False
        self.end_round[over] = index
        self.end_reason[over] = np.array(END_REASONS, dtype=object)[ending[ended]]
        return {"rows": live, "storyteller": teller, "clue": clues, "card": cards,
                "display": display, "card_owner": card_owner, "votes": votes,
                "points": points, "scores": state.scores[live], "hand": teller_hands}


def _slots_of(hands: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """The hand slots of ``cards`` ((R, c) cards of the (R, h) ``hands``)."""
    return np.argmax(hands[:, None, :] == cards[:, :, None], axis=2)
