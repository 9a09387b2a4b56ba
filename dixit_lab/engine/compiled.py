"""The compiled engine: the batched engine's games, played whole by a Numba kernel.

With the ``fast`` extra (``pip install 'dixit-lab[fast]'``: Numba), the games of a batch whose
every policy has a compiled form (``kernel_policy()``, :mod:`dixit_lab.policy.kernel`: the
built-in ``random``, ``literal``, ``softmax``, ``ambiguity`` and ``pragmatic``; a policy whose
tables change round by round, as the model storytellers' listener model follows the hands,
gives the kernel one tell table per round, from ``at_round``) are played by
:func:`dixit_lab.engine.kernel.play_games`, one game after another in machine code, and their
records written by the batched engine's writer (:mod:`dixit_lab.engine.batch_output`): byte for
byte the reference engine's records (``tests/engine/test_compiled.py``,
``benchmarks/check_batched.py --engine compiled``).

Without Numba nothing here imports it: :func:`kernel_problem` says what is missing, and the
runner plays on the NumPy batched engine. The first call compiles the kernel (tens of
seconds) and caches it on disk (Numba's ``cache=True``, beside the module or in Numba's user
cache folder); later processes load it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import threading
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dixit_lab.core.agent import Agent
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import DECK_EXHAUSTED_MODES, RuleSet, search_points, vote_bonus
from dixit_lab.engine.batch_output import columns, json_lines, json_records
from dixit_lab.engine.batched import (
    Tables,
    TableShape,
    _keys,
    batch_blocker,
    first_seats,
    game_seeds,
    prepare_tables,
)
from dixit_lab.engine.rule_support import rules_problem as _rules_problem
from dixit_lab.policy.kernel import (
    SUBMIT_SOFTMAX,
    TELL_SOFTMAX,
    VOTE_SOFTMAX,
    KernelPolicy,
    kernel_blocker,
)
from dixit_lab.records.batches import GameBatch

__all__ = ["MARGIN", "MAX_DECK", "agent_blocker", "compiled_problem", "kernel_problem",
           "play_compiled", "play_compiled_columns", "rules_problem", "softmax_weights"]

#: the largest deck the kernel plays (its sorts keep a card's index in 11 bits)
MAX_DECK = 2048
#: How near the threshold a softmax draw from weights made once per table
#: (:func:`softmax_weights`, ``kernel_rules.weighted``) may compare a cumulative sum, as a
#: share of the sum of the weights, before the kernel draws again from the values as the
#: reference does (``kernel_rules.categorical``: exp((v - top) / T) for each). The two kinds
#: of weights differ by one constant factor and by rounding: each exp's argument, of at most
#: ~750 for a weight that counts, is rounded twice (a relative error of 1.7e-13 at most), the
#: exps and the sums by a few ulps each: under 4e-13 of the total in all. At 1e-9 the fast
#: draw is the reference's, and fewer than 1 draw in 10^8 is drawn again.
MARGIN = 1e-9
_END_REASONS = np.array(["max_rounds", "target_score", "deck_exhausted"], dtype=object)
_INSTALL = "pip install 'dixit-lab[fast]'"


def kernel_problem() -> str | None:
    """Why the compiled kernel cannot run here (None: it can): Numba is not installed."""
    if importlib.util.find_spec("numba") is None:
        return f"the compiled engine needs Numba, which is not installed ({_INSTALL})"
    return None


def rules_problem(rules: RuleSet, deck_size: int) -> str | None:
    """Why the kernel does not play games under ``rules`` with a deck of ``deck_size``."""
    problem = _rules_problem("compiled", rules)
    if problem is not None:
        return problem
    if deck_size > MAX_DECK:
        return f"the compiled engine plays decks of at most {MAX_DECK} cards, not {deck_size}"
    return None


def agent_blocker(agent: Agent) -> str | None:
    """Why the kernel may not play ``agent`` (None: it may): it has no batched policy it
    plays (:func:`~dixit_lab.engine.batched.batch_blocker`), or that policy has no compiled
    form. The policy's class is read from the return annotation of ``batch_policy``, so that
    the check builds nothing (an embedding agent's tables take seconds)."""
    blocker = batch_blocker(agent)
    if blocker is not None:
        return blocker
    policy_class = _policy_class(type(agent))  # type: ignore[arg-type]
    if policy_class is None:
        return (f"{type(agent).__name__}.batch_policy declares no policy class (a return "
                f"annotation), so the compiled engine cannot tell that it plays it")
    return kernel_blocker(policy_class)


def compiled_problem(rules: RuleSet, deck: Deck, agents: Sequence[Agent]) -> str | None:
    """Why the compiled engine cannot play games of ``agents`` under ``rules`` with ``deck``
    (None: it can), one phrase: Numba is missing, a rule or the deck is out of its reach,
    or an agent (named by its spec) has no compiled form."""
    problem = kernel_problem() or rules_problem(rules, len(deck))
    if problem is not None:
        return problem
    blockers = []
    for agent in agents:
        blocker = agent_blocker(agent)
        if blocker is not None:
            blockers.append(f"{getattr(agent, 'spec', None) or agent.name}: {blocker}")
    return "; ".join(blockers) or None


@functools.lru_cache(maxsize=256)
def _policy_class(agent_class: type) -> type | None:
    owner = next((klass for klass in agent_class.__mro__ if "batch_policy" in vars(klass)),
                 None)
    if owner is None:
        return None
    try:
        hints = typing.get_type_hints(vars(owner)["batch_policy"])
    except Exception:  # an annotation that does not resolve: unknown
        return None
    declared = hints.get("return")
    return declared if isinstance(declared, type) else None


# -- playing -----------------------------------------------------------------------------------


@dataclass
class _Played:
    """What the records writer reads of a batch (the batched engine's ``_Batch`` fields)."""

    shape: TableShape
    seeds: Sequence[Any]
    seating: np.ndarray
    end_round: np.ndarray
    end_reason: np.ndarray
    scores: np.ndarray


def play_compiled(tables: Sequence[Sequence[Agent]], rules: RuleSet, deck: Deck,
                  seeds: Sequence[Any], metas: Sequence[dict[str, Any]] | None = None,
                  first_player_seats: Sequence[int] | None = None) -> list[str]:
    """:func:`~dixit_lab.engine.batched.play_batch` on the compiled kernel: the same JSON
    lines."""
    if not tables:
        return []
    games, rounds, names, clue_texts = run_compiled(tables, rules, deck, seeds,
                                                    first_player_seats)
    return json_lines(games, rounds, rules, deck, names, clue_texts, metas)


def play_compiled_columns(tables: Sequence[Sequence[Agent]], rules: RuleSet, deck: Deck,
                          seeds: Sequence[Any], metas: Sequence[dict[str, Any]],
                          indices: Sequence[int],
                          first_player_seats: Sequence[int] | None = None
                          ) -> tuple[str, GameBatch]:
    """:func:`play_compiled`'s lines as one text and the same games as a
    :class:`~dixit_lab.records.batches.GameBatch` (as ``batched.play_batch_columns``)."""
    games, rounds, names, clue_texts = run_compiled(tables, rules, deck, seeds,
                                                    first_player_seats)
    return (json_records(games, rounds, rules, deck, names, clue_texts, metas),
            columns(games, rounds, rules, deck, names, clue_texts, metas, indices))


def run_compiled(tables: Sequence[Sequence[Agent]], rules: RuleSet, deck: Deck,
                 seeds: Sequence[Any], first_player_seats: Sequence[int] | None = None
                 ) -> tuple[_Played, list[dict[str, np.ndarray]], list[str], Sequence[str]]:
    """Play the games (as ``batched.run_batch``): their state, their rounds as the batched
    engine's arrays (one dict a round, over the games that played it), names, clue texts."""
    problem = kernel_problem() or rules_problem(rules, len(deck))
    if problem is not None:
        raise ValueError(problem)
    for agent in dict.fromkeys(a for table in tables for a in table):
        blocker = agent_blocker(agent)
        if blocker is not None:
            name = getattr(agent, "spec", None) or agent.name
            raise ValueError(f"agent {name!r}: {blocker}; use engine: batched or auto")
    table = prepare_tables(tables, rules, deck, seeds)
    seeds = game_seeds(seeds)
    keys = _keys(seeds)
    flat = play_keys(table, rules, keys, reuse=True,  # by_round copies the rounds out
                     first_player_seats=first_player_seats)
    games = _Played(table.shape, seeds, table.seating, flat.end_round,
                    _END_REASONS[flat.end_reason], flat.final)
    return games, flat.by_round(), table.names, table.clue_texts


@dataclass
class FlatRounds:
    """Every round of a batch, game after game: the rounds of game ``g`` are rows
    ``round_start[g] .. round_start[g + 1] - 1``."""

    round_start: np.ndarray
    end_round: np.ndarray
    end_reason: np.ndarray  # 0 max_rounds, 1 target_score, 2 deck_exhausted
    final: np.ndarray
    rounds: dict[str, np.ndarray]

    def by_round(self) -> list[dict[str, np.ndarray]]:
        """The rounds as the batched engine gives them: round ``r`` over the games (rows)
        that played it."""
        out = []
        played = self.end_round + 1
        for index in range(int(played.max(initial=0))):
            rows = np.flatnonzero(played > index)
            at = self.round_start[rows] + index
            out.append({"rows": rows, **{key: values[at] for key, values in
                                         self.rounds.items()}})
        return out


def play_keys(table: Tables, rules: RuleSet, keys: np.ndarray, reuse: bool = False,
              first_player_seats: Sequence[int] | None = None) -> FlatRounds:
    """Play the games of game keys ``keys`` ((B, 2) uint64) at ``table`` on the kernel.
    ``reuse``: its round arrays (``FlatRounds.rounds``) are this thread's from one call to
    the next (their pages written once, not once a batch: a tenth of a compiled game), so
    valid only until this thread's next call with ``reuse``. ``first_player_seats``: (B,)
    as ``batched.first_seats`` (None: 0 in every game)."""
    from dixit_lab.engine.kernel import Games, Policies, Results, Rounds, Table, play_games
    from dixit_lab.engine.kernel_bases import seat_bases

    shape = table.shape
    n, b = shape.n, keys.shape[0]
    if table.seating.shape != (b, n) or keys.shape != (b, 2):  # the kernel reads unchecked
        raise ValueError(f"{b} game keys for seating {table.seating.shape}")
    pack = _packed(table, rules.max_rounds)
    dims = np.array([n, shape.hand, shape.per_player, shape.shown, shape.deck], np.int64)
    rule_ints = np.array([DECK_EXHAUSTED_MODES.index(rules.deck_exhausted),
                          -1 if rules.target_score is None else rules.target_score,
                          rules.max_rounds, rules.first_storyteller == "random",
                          rules.fixed_hands], dtype=np.int64)
    # the first storyteller of each game unless drawn: seat 0, or the first player's seat
    firsts = (first_seats(first_player_seats, b, n)
              if rules.first_storyteller == "first_player" else np.zeros(b, dtype=np.int64))
    search = np.array(search_points(rules, n), dtype=np.int64)
    bonus = np.array([vote_bonus(rules, votes) for votes in range(n)], dtype=np.int64)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    bases = seat_bases(keys, n)
    seating = np.ascontiguousarray(table.seating, dtype=np.int64)
    round_start = np.zeros(b + 1, dtype=np.int64)
    end_round = np.empty(b, dtype=np.int64)
    end_reason = np.empty(b, dtype=np.int64)
    final = np.empty((b, n), dtype=np.int64)
    capacity = b * _rounds_guess(rules, shape) + rules.max_rounds
    rounds = _held_rounds(capacity, shape) if reuse else _round_arrays(capacity, shape)
    games = Games(keys, bases, seating, firsts)
    at = Table(dims, rule_ints, search, bonus)
    policies = Policies._make((*pack, MARGIN))  # MARGIN read now: tests set it
    results = Results(round_start, end_round, end_reason, final)
    done = 0
    while done < b:
        done = play_games(games, at, policies, done, b, results,  # type: ignore[call-arg]
                          Rounds(*rounds.values()))
        if done < b:  # the round arrays are full: twice the room, and on
            grown = _round_arrays(2 * len(rounds["storyteller"]), shape)
            for key, values in rounds.items():
                grown[key][:len(values)] = values
            rounds = grown
            if reuse:
                _HELD.rounds[shape] = grown
    used = int(round_start[b])
    return FlatRounds(round_start, end_round, end_reason, final,
                      {key: values[:used] for key, values in rounds.items()})


def _rounds_guess(rules: RuleSet, shape: TableShape) -> int:
    """Rounds a game lasts when the deck ends it (a guess otherwise: the arrays grow)."""
    if rules.deck_exhausted == "reshuffle_discard" or rules.fixed_hands:
        return min(rules.max_rounds, 32)
    # play_out_hands: then the hands are played out, a card or two a round
    out = shape.hand if rules.deck_exhausted == "play_out_hands" else 0
    return min(rules.max_rounds, 2 + out + (shape.deck - shape.n * shape.hand) // shape.shown)


#: the round arrays' integers but the clue rows: seats, cards (< MAX_DECK), votes, points and
#: scores fit in 32 bits, and the arrays' pages, written once each, cost a seventh of the
#: kernel's time at 64
_ROUND_DTYPE = np.int32


_HELD = threading.local()  # .rounds: TableShape -> this thread's round arrays (play_keys)


def _held_rounds(capacity: int, shape: TableShape) -> dict[str, np.ndarray]:
    """This thread's round arrays for ``shape``, of ``capacity`` rows or more (made larger
    when they are not)."""
    held: dict[TableShape, dict[str, np.ndarray]] = getattr(_HELD, "rounds", {})
    _HELD.rounds = held
    arrays = held.get(shape)
    if arrays is None or len(arrays["storyteller"]) < capacity:
        arrays = held[shape] = _round_arrays(capacity, shape)
    return arrays


def _round_arrays(capacity: int, shape: TableShape) -> dict[str, np.ndarray]:
    """Empty round arrays, in the order of the kernel's arguments (keys: the batched
    engine's names)."""
    n, k, small = shape.n, shape.shown, _ROUND_DTYPE
    return {"storyteller": np.empty(capacity, small), "clue": np.empty(capacity, np.int64),
            "card": np.empty(capacity, small), "display": np.empty((capacity, k), small),
            "card_owner": np.empty((capacity, k), small),
            "votes": np.empty((capacity, n), small),
            "points": np.empty((capacity, n), small),
            "scores": np.empty((capacity, n), small),
            "hand": np.empty((capacity, shape.hand), small)}


# -- the policies as the kernel's arrays ------------------------------------------------------

_PACKS: dict[tuple[int, ...], tuple[tuple[Any, ...], tuple[np.ndarray, ...]]] = {}


def _packed(table: Tables, max_rounds: int) -> tuple[np.ndarray, ...]:
    """The kernel's arrays of the table's policies for games of at most ``max_rounds`` rounds
    (made once per set of policy objects)."""
    key = (max_rounds, *(id(policy) for policy in table.policies))
    cached = _PACKS.get(key)
    if cached is not None and all(a is b for a, b in zip(cached[0], table.policies,
                                                         strict=True)):
        return cached[1]
    described, by_round = [], []
    for policy, name in zip(table.policies, table.names, strict=True):
        blocker = kernel_blocker(policy)
        if blocker is not None:  # the annotation of batch_policy said another class
            raise ValueError(f"agent {name!r}: {blocker}")
        described.append(policy.kernel_policy())
        by_round.append(_near_by_round(policy, described[-1], max_rounds, name))
    pack = _pack(described, by_round)
    if len(_PACKS) >= 8:
        _PACKS.clear()
    _PACKS[key] = (tuple(table.policies), pack)  # the policies stay alive: ids stay theirs
    return pack


class _Stack:
    """Distinct arrays of one kind, each once (by identity), stacked for the kernel."""

    def __init__(self, dtype: Any, empty: tuple[int, ...]) -> None:
        self.dtype, self.empty = dtype, empty
        self.rows: dict[int, int] = {}
        self.arrays: list[np.ndarray] = []

    def add(self, array: Any) -> int:
        if array is None:
            return -1
        index = self.rows.get(id(array))
        if index is None:
            index = self.rows[id(array)] = len(self.arrays)
            self.arrays.append(np.asarray(array, dtype=self.dtype))
        return index

    def stacked(self) -> np.ndarray:
        if not self.arrays:
            return np.zeros(self.empty, dtype=self.dtype)
        return np.ascontiguousarray(np.stack(self.arrays))


def _near_by_round(policy: Any, described: KernelPolicy, max_rounds: int, name: str
                   ) -> list[Any]:
    """The ``NearBest`` of each round of a game (as long as it changes; the last stands for
    every later round): the round's policy (``at_round``, as the batched engine asks it),
    which may change that table alone."""
    if not callable(getattr(policy, "at_round", None)):
        return [described.near_best]
    seen: dict[int, Any] = {id(policy): described.near_best}
    keep, rounds = [policy], []
    for index in range(max_rounds):
        at = policy.at_round(index)
        if id(at) not in seen:
            keep.append(at)  # alive while ids are compared
            other = at.kernel_policy()
            if not _same_but_tell_table(other, described):
                raise ValueError(f"agent {name!r}: its policy at_round({index}) changes more "
                                 f"than its tell's table, which the compiled engine does not "
                                 f"play; use engine: batched or auto")
            seen[id(at)] = other.near_best
        rounds.append(seen[id(at)])
    while len(rounds) > 1 and rounds[-1] is rounds[-2]:
        rounds.pop()
    return rounds


def _same_but_tell_table(one: KernelPolicy, other: KernelPolicy) -> bool:
    """Whether two descriptions differ in their ``near_best`` alone (tables compared by
    identity first, then by value)."""
    for field in dataclasses.fields(KernelPolicy):
        a, b = getattr(one, field.name), getattr(other, field.name)
        if field.name == "near_best" or a is b:
            continue
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                    and np.array_equal(a, b)):
                return False
        elif a != b:
            return False
    return True


def softmax_weights(values: Any, temperature: float) -> np.ndarray:
    """exp((v - the row's maximum) / T) for each value ``v`` of each row (the last axis): the
    weights of the kernel's softmax draws (:data:`MARGIN`). A row with a NaN or an infinite
    value, or a temperature of 0, gives weights the kernel does not draw from."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.exp((values - values.max(axis=-1, keepdims=True)) / temperature)


def _pack(policies: list[KernelPolicy], near_by_round: list[list[Any]]
          ) -> tuple[np.ndarray, ...]:
    """(pol, temps, tabs, vecs, ivecs, cdfs, near_keys, nbest, words, near_rows, wtabs,
    wvecs): the fields of ``kernel.Policies`` but the margin, which describe the policies
    (``near_keys``: each ``NearBest``'s ``keys_by_best_card``, which its tell looks up;
    ``wtabs``, ``wvecs``: the softmax weights of the tables and vectors a softmax rule draws
    from)."""
    from dixit_lab.engine import kernel_rules

    tabs, vecs = _Stack(np.float64, (1, 1, 1)), _Stack(np.float64, (1, 1))
    ivecs, cdfs = _Stack(np.int64, (1, 1)), _Stack(np.float64, (1, 1, 1))
    near_row: dict[int, int] = {}  # id(NearBest) -> its row (alive: the caller holds them)
    near_keys: list[np.ndarray] = []
    nbest: list[np.ndarray] = []
    word_lists: list[np.ndarray] = []
    pol = np.full((len(policies), kernel_rules.COLUMNS), -1, dtype=np.int64)
    temps = np.ones(len(policies), dtype=np.float64)
    near_rows = np.full((len(policies), max(len(r) for r in near_by_round)), -1, np.int64)
    for p, policy in enumerate(policies):
        row = pol[p]
        row[kernel_rules.TELL] = policy.tell
        row[kernel_rules.SUBMIT] = policy.submit
        row[kernel_rules.VOTE] = policy.vote
        temps[p] = policy.temperature
        row[kernel_rules.LISTEN] = tabs.add(policy.listen)
        row[kernel_rules.VOTE_TABLE] = tabs.add(policy.vote_table)
        row[kernel_rules.CARD_VALUE] = vecs.add(policy.card_value)
        row[kernel_rules.CARD_CLUE] = ivecs.add(policy.card_clue)
        row[kernel_rules.CDF] = cdfs.add(policy.clue_cdf)
        row[kernel_rules.CLUE_TOTAL] = vecs.add(policy.clue_total)
        if policy.clue_cdf is not None:
            row[kernel_rules.LAST_CLUE] = np.shape(policy.clue_cdf)[1] - 1
        for r, near in enumerate(near_by_round[p]):
            if near is None:
                continue
            if id(near) not in near_row:  # one NearBest: one row of nbest and near_keys
                near_row[id(near)] = len(near_keys)
                near_keys.append(near.keys_by_best_card())
                nbest.append(near.card_best)
            near_rows[p, r] = near_row[id(near)]
        near_rows[p, len(near_by_round[p]):] = near_rows[p, len(near_by_round[p]) - 1]
        if policy.words is not None:
            row[kernel_rules.WORDS] = len(word_lists)
            row[kernel_rules.WORD_COUNT] = len(policy.words)
            word_lists.append(np.asarray(policy.words, dtype=np.int64))
    width = max([1, *(len(words) for words in word_lists)])
    words = np.zeros((max(1, len(word_lists)), width), dtype=np.int64)
    for index, listed in enumerate(word_lists):
        words[index, :len(listed)] = listed
    if not near_keys:
        near_keys, nbest = [np.zeros((1, 1), np.uint64)], [np.zeros(1, np.float32)]
    wtabs, wvecs = _weights(policies, pol)
    return (pol, temps, tabs.stacked(), vecs.stacked(), ivecs.stacked(), cdfs.stacked(),
            np.ascontiguousarray(np.stack(near_keys)),
            np.ascontiguousarray(np.stack(nbest), dtype=np.float32), words, near_rows,
            wtabs, wvecs)


def _weights(policies: list[KernelPolicy], pol: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The softmax weights of every (table, temperature) a softmax rule draws from, each once,
    stacked; their rows written into ``pol``."""
    from dixit_lab.engine import kernel_rules

    tabs, vecs = _Stack(np.float64, (1, 1, 1)), _Stack(np.float64, (1, 1))
    made: dict[tuple[int, float], np.ndarray] = {}

    def row(stack: _Stack, values: Any, temperature: float) -> int:
        key = (id(values), temperature)  # the policies (and so their tables) stay alive
        if key not in made:
            made[key] = softmax_weights(values, temperature)
        return stack.add(made[key])

    for p, policy in enumerate(policies):
        t = policy.temperature
        if policy.submit == SUBMIT_SOFTMAX:
            pol[p, kernel_rules.LISTEN_WEIGHTS] = row(tabs, policy.listen, t)
        if policy.vote == VOTE_SOFTMAX:
            pol[p, kernel_rules.VOTE_WEIGHTS] = row(tabs, policy.vote_table, t)
        if policy.tell == TELL_SOFTMAX:
            pol[p, kernel_rules.CARD_WEIGHTS] = row(vecs, policy.card_value, t)
    return tabs.stacked(), vecs.stacked()
