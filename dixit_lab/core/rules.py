"""Dixit rule sets and round scoring. Pure: no I/O, no randomness, no project imports (NumPy
only, so that the vectorised scorer shares the point rule).

A :class:`RuleSet` holds every option on which the rule documents differ (see
``docs/rules.md``); :func:`get_rules` builds one from a preset plus overrides and
:func:`score_round` scores one round exactly as the documents describe.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from dixit_lab.errors import UserError

__all__ = ["DECK_EXHAUSTED_MODES", "FIRST_STORYTELLER_MODES", "PRESETS", "IllegalAction",
           "PointTables", "RoundScore", "RuleError", "RuleSet", "get_rules", "max_round_points",
           "point_tables", "record_options", "round_outcome", "round_points", "rule_values",
           "rules_from_values", "score_batch", "score_round", "search_points", "table_points",
           "vote_bonus"]

DeckExhausted = Literal["end_when_last_drawn", "end_when_cannot_refill", "reshuffle_discard",
                        "play_out_hands"]
FirstStoryteller = Literal["seat0", "random", "first_player"]
Outcome = Literal["some_found", "all_found", "none_found"]

DECK_EXHAUSTED_MODES: tuple[str, ...] = (
    "end_when_last_drawn",
    "end_when_cannot_refill",
    "reshuffle_discard",
    "play_out_hands",
)
#: round 1's storyteller: seat 0, a seeded random seat, or the config's first player's seat
FIRST_STORYTELLER_MODES: tuple[str, ...] = ("seat0", "random", "first_player")


class IllegalAction(ValueError):
    """An action or a round that the rules forbid. The message says what is wrong."""


class RuleError(UserError, ValueError):
    """A rule set that cannot be made: an unknown preset or option, a value out of range, a
    number of players the rules do not allow. The message says what is wrong."""


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every option of a Dixit game. Field names are a stable contract."""

    name: str = "classic"
    min_players: int = 3
    max_players: int = 6
    hand_size: int = 6
    hand_size_three_players: int = 7
    decoys_three_players: int = 2
    storyteller_points: int = 3
    finder_points: int = 3
    all_or_none_points: int = 2
    lone_finder_points: int | None = None
    vote_bonus_cap: int | None = None
    target_score: int | None = None
    deck_exhausted: DeckExhausted = "end_when_last_drawn"
    max_rounds: int = 500
    first_storyteller: FirstStoryteller = "seat0"
    # -- options added later: left out of ``options()`` (so of the records) at their default --
    #: points of each listener when every listener found the card (None: all_or_none_points)
    all_found_points: int | None = None
    #: every round is played from the hands as dealt: the played cards go back, nobody draws
    fixed_hands: bool = False
    #: a listener's points per vote on its own card (the vote bonus, at most
    #: ``vote_bonus_cap`` points a round)
    vote_bonus_points: int = 1
    #: a listener may vote for a card it put on the table; that vote finds nothing and earns
    #: no bonus (the bonus is for other players' votes)
    own_card_votes: bool = False

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise RuleError(f"invalid rule set {self.name!r}: " + "; ".join(problems))

    def hand_size_for(self, n_players: int) -> int:
        """Cards in each hand at this player count (7 at three players by default)."""
        return self.hand_size_three_players if n_players == 3 else self.hand_size

    def cards_per_player(self, n_players: int) -> int:
        """Cards each non-storyteller puts on the table (2 at three players by default)."""
        return self.decoys_three_players if n_players == 3 else 1

    def displayed_cards(self, n_players: int) -> int:
        """Number of cards laid out each round."""
        return 1 + (n_players - 1) * self.cards_per_player(n_players)

    def barred_votes(self, own_positions: Sequence[int]) -> tuple[int, ...]:
        """The displayed positions a listener may not vote for, given the positions of its
        own cards: those, unless ``own_card_votes``. The one statement of who may vote for
        what: the engine's check, the play page's server (which tells the page), the
        environment's masks and the model seats' card numbers all read it."""
        return () if self.own_card_votes else tuple(own_positions)

    def barred_vote_mask(self, own: np.ndarray) -> np.ndarray:
        """:meth:`barred_votes` over arrays, for engines of many tables: ``own`` a boolean
        mask of the listeners' own cards (any shape, display positions last), the mask of
        the positions barred (``tests/core/test_rules.py`` holds the two forms together)."""
        return np.zeros_like(own) if self.own_card_votes else own

    def check_players(self, n_players: int) -> None:
        """Raise :class:`RuleError` if this rule set does not allow ``n_players``."""
        if not self.min_players <= n_players <= self.max_players:
            raise RuleError(
                f"rule set {self.name!r} allows {self.min_players} to {self.max_players} "
                f"players, got {n_players}"
            )

    def __copy__(self) -> RuleSet:
        """Another rule set with the same fields (``copy.copy``'s default for a frozen
        dataclass with slots goes through the pickling protocol, five times slower)."""
        return rules_from_values(rule_values(self), type(self))

    def options(self) -> dict[str, Any]:
        """All fields as a plain dict (for records and configs); an option added after the
        first records were written is left out while it has its default, so that the records
        of the rule sets that do not use it stay what they were."""
        options = dataclasses.asdict(self)
        for field, default in _LATER_OPTIONS.items():
            if options[field] == default:
                del options[field]
        return options


@functools.lru_cache(maxsize=256)
def record_options(rules: RuleSet) -> dict[str, Any]:
    """``rules.options()`` made once per rule set, for the records of the reference engine
    (which share the dict: read it, do not change it)."""
    return rules.options()


_FIELD_NAMES: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(RuleSet))
#: every field's value of a rule set, in order (all immutable: ints, strings, None, booleans)
rule_values: Callable[[RuleSet], tuple[Any, ...]] = operator.attrgetter(*_FIELD_NAMES)
_SETTERS = tuple(RuleSet.__dict__[name].__set__ for name in _FIELD_NAMES)


def rules_from_values(values: tuple[Any, ...], kind: type[RuleSet] = RuleSet) -> RuleSet:
    """A rule set of :func:`rule_values` (already checked: no ``__post_init__``), set by the
    slots' own setters (a third faster than ``object.__setattr__``)."""
    twin = object.__new__(kind)
    for setter, value in zip(_SETTERS, values, strict=True):
        setter(twin, value)
    return twin


#: the largest value of a point option, of max_rounds and of target_score: far beyond any rule
#: book (3 and 5 points, 30 to win), and small enough that every score of a game fits the
#: engines' 32-bit round arrays and 64-bit records
MAX_POINTS, MAX_ROUNDS, MAX_TARGET = 1_000, 100_000, 1_000_000_000


def _problems(rules: RuleSet) -> list[str]:
    problems: list[str] = []
    positive = ("min_players", "max_players", "hand_size", "hand_size_three_players",
                "decoys_three_players", "max_rounds")
    for field in positive:
        value = getattr(rules, field)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            problems.append(f"{field} must be a positive integer, got {value!r}")
    for field in ("storyteller_points", "finder_points", "all_or_none_points",
                  "vote_bonus_points"):
        value = getattr(rules, field)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            problems.append(f"{field} must be a non-negative integer, got {value!r}")
    for field in ("fixed_hands", "own_card_votes"):
        value = getattr(rules, field)
        if not isinstance(value, bool):
            problems.append(f"{field} must be true or false, got {value!r}")
    for field, most in (("storyteller_points", MAX_POINTS), ("finder_points", MAX_POINTS),
                        ("all_or_none_points", MAX_POINTS), ("vote_bonus_points", MAX_POINTS),
                        ("lone_finder_points", MAX_POINTS), ("vote_bonus_cap", MAX_POINTS),
                        ("all_found_points", MAX_POINTS), ("max_rounds", MAX_ROUNDS),
                        ("target_score", MAX_TARGET)):
        value = getattr(rules, field)
        if isinstance(value, int) and not isinstance(value, bool) and value > most:
            problems.append(f"{field} must be at most {most:,}, got {value:,}")
    for field in ("lone_finder_points", "vote_bonus_cap", "target_score", "all_found_points"):
        value = getattr(rules, field)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < (1 if field == "target_score" else 0)):
            problems.append(f"{field} must be None or a non-negative integer, got {value!r}")
    if not problems:
        if rules.min_players < 3:
            problems.append(f"min_players must be at least 3 (Dixit needs a storyteller and "
                            f"two voters), got {rules.min_players}")
        if rules.max_players < rules.min_players:
            problems.append(f"max_players ({rules.max_players}) is below min_players "
                            f"({rules.min_players})")
        if rules.min_players <= 3 and rules.decoys_three_players >= rules.hand_size_three_players:
            problems.append("decoys_three_players must be smaller than hand_size_three_players")
    if rules.deck_exhausted not in DECK_EXHAUSTED_MODES:
        problems.append(f"deck_exhausted must be one of {', '.join(DECK_EXHAUSTED_MODES)}; "
                        f"got {rules.deck_exhausted!r}")
    if rules.first_storyteller not in FIRST_STORYTELLER_MODES:
        problems.append(f"first_storyteller must be one of {', '.join(FIRST_STORYTELLER_MODES)}; "
                        f"got {rules.first_storyteller!r}")
    return problems


# DixitWorld's arena (arXiv 2510.10117; github.com/HKUST-KnowComp/DixitWorld, commit
# a849288, see docs/vlm.md) as its code is written: 4 players (src/config.py NUM_PLAYERS,
# experiments/parallel_model_comparison.py create_agents), 4-card hands dealt once and kept
# every round (config.py CARDS_PER_PLAYER; the rounds play copies of the dealt hands,
# parallel_model_comparison.py line 156), 12 rounds and no target (line 70
# rounds_per_phase), P1 telling first in both phases (line 163 storyteller_index: the
# same agents, their hands swapped); its _calculate_scores (lines 260-307):
# finders 3 also when all find, +1 at most for the votes on one's card (lines 298-300);
# no vote on one's own card (the filter of line 357).
_DIXITWORLD = dict(min_players=4, max_players=4, hand_size=4, fixed_hands=True, max_rounds=12,
                   all_found_points=3, vote_bonus_cap=1, first_storyteller="first_player")

PRESETS: dict[str, dict[str, Any]] = {
    # 000: the classic box. No target; the game ends when the last card is drawn.
    "classic": dict(max_players=6, deck_exhausted="end_when_last_drawn"),
    # 002: Dixit Refresh (2021). 3-8 players, 30 points, reshuffle the discard.
    "refresh": dict(max_players=8, target_score=30, deck_exhausted="reshuffle_discard"),
    # 001 + 003: the rules page and the Quest expansion. Bonus cap 3, 30 points.
    # Hands are always 6, at 3 players too (001: "distribuez-en 6", "reconstituer une main de
    # 6 cartes"; 003: "six cartes").
    "quest": dict(max_players=6, vote_bonus_cap=3, target_score=30, hand_size_three_players=6,
                  deck_exhausted="end_when_cannot_refill"),
    "dixitworld": _DIXITWORLD,
    # The same arena as its code runs, which is how its published figures were made: the
    # bonus of lines 298-300 is never paid, because `selected_distractor` is set (line 323)
    # only on the copy of the agent that a multiprocessing pool worker received (lines
    # 185-189), so the round's own agents keep the None of src/agents.py line 56; for the
    # same reason the filter of line 357 gets an empty list and line 359 lets a listener vote
    # for any card on the table, its own included (its prompt does not say which is its own).
    # Its second phase is a fresh random deal (run_parallel_rounds deals again, lines 88-89,
    # over the hands reverse_hands swapped at line 477): that is the schedule's part, a fresh
    # deal every game (experiments/dixitworld_arena_as_run.yaml).
    "dixitworld_as_run": dict(_DIXITWORLD, vote_bonus_points=0, own_card_votes=True),
}

_LATER_OPTIONS: dict[str, Any] = {"all_found_points": None, "fixed_hands": False,
                                   "vote_bonus_points": 1, "own_card_votes": False}


def get_rules(name: str = "classic", **overrides: Any) -> RuleSet:
    """Return the preset ``name`` (``classic``, ``refresh``, ``quest``, ``dixitworld``,
    ``dixitworld_as_run``) with ``overrides``.

    >>> get_rules("classic", lone_finder_points=4).lone_finder_points
    4
    """
    from dixit_lab.suggest import did_you_mean

    if name not in PRESETS:
        raise RuleError(f"unknown rule preset {name!r}{did_you_mean(name, PRESETS)}; "
                        f"available presets: {', '.join(sorted(PRESETS))}")
    unknown = sorted(set(overrides) - set(_FIELD_NAMES))
    if unknown:
        raise RuleError(f"unknown rule option(s) {', '.join(map(repr, unknown))}"
                        f"{did_you_mean(unknown[0], _FIELD_NAMES)}; "
                        f"allowed options: {', '.join(f for f in _FIELD_NAMES if f != 'name')}")
    fields: dict[str, Any] = {"name": name, **PRESETS[name], **overrides}
    return RuleSet(**fields)


@dataclass(frozen=True, slots=True)
class RoundScore:
    """Points of one round, each tuple indexed by seat.

    ``points = search + bonus`` where ``search`` holds the storyteller's and finders' points
    (or the all-or-none points) and ``bonus`` the capped +1 per vote on one's own cards;
    ``votes_received`` counts the votes of other players (a vote on one's own card, which
    ``own_card_votes`` allows, finds nothing and is received by nobody).
    """

    points: tuple[int, ...]
    search: tuple[int, ...]
    bonus: tuple[int, ...]
    votes_received: tuple[int, ...]
    finders: tuple[int, ...]
    outcome: Outcome


def score_round(
    rules: RuleSet,
    storyteller: int,
    card_owner: Sequence[int],
    votes: Mapping[int, int],
) -> RoundScore:
    """Score one round.

    ``card_owner[i]`` is the seat that put displayed card ``i`` (0-based) on the table and
    ``votes`` maps each voting seat to a displayed index. Every seat owns at least one
    displayed card, so the players are ``0 .. max(card_owner)``. Illegal input raises
    :class:`IllegalAction` saying what is wrong.
    """
    votes = {_plain_int(seat): _plain_int(index) for seat, index in votes.items()}
    n_players = _check_round(rules, storyteller, card_owner, votes)
    return _score(rules, n_players, storyteller, card_owner, votes)


def _plain_int(value: Any) -> Any:
    """NumPy integers as Python ints (as ``play_game`` takes them); anything else unchanged,
    for the checks to name."""
    if isinstance(value, int):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def _check_round(
    rules: RuleSet, storyteller: int, card_owner: Sequence[int], votes: Mapping[int, int]
) -> int:
    owners = set(card_owner)
    n_players = len(owners)
    if owners != set(range(n_players)):
        raise IllegalAction(f"card_owner must name seats 0..n-1, each at least once; "
                            f"got seats {sorted(owners)}")
    if n_players < 3:
        raise IllegalAction(f"a round needs at least 3 players, got {n_players}")
    if not rules.min_players <= n_players <= rules.max_players:
        raise IllegalAction(f"rule set {rules.name!r} allows {rules.min_players} to "
                            f"{rules.max_players} players, got a round of {n_players}")
    if not 0 <= storyteller < n_players:
        raise IllegalAction(f"storyteller seat {storyteller} is not one of the seats "
                            f"0..{n_players - 1}")
    expected_each = rules.cards_per_player(n_players)
    for seat in range(n_players):
        count = sum(1 for owner in card_owner if owner == seat)
        expected = 1 if seat == storyteller else expected_each
        if count != expected:
            who = "the storyteller" if seat == storyteller else f"seat {seat}"
            raise IllegalAction(f"{who} has {count} card(s) on the table; expected {expected} "
                                f"at {n_players} players")
    if storyteller in votes:
        raise IllegalAction(f"the storyteller (seat {storyteller}) may not vote")
    for seat in range(n_players):
        if seat != storyteller and seat not in votes:
            raise IllegalAction(f"seat {seat} has not voted")
    for seat, index in votes.items():
        if not isinstance(seat, int) or not 0 <= seat < n_players:
            raise IllegalAction(f"vote from unknown seat {seat!r}")
        if not isinstance(index, int) or isinstance(index, bool) or not (
            0 <= index < len(card_owner)
        ):
            raise IllegalAction(f"seat {seat} voted for card {index!r}, out of range "
                                f"0..{len(card_owner) - 1}")
        own = [position for position, owner in enumerate(card_owner) if owner == seat]
        if index in rules.barred_votes(own):
            raise IllegalAction(f"seat {seat} voted for its own card (displayed index {index})")
    return n_players


# -- the point rule, in one place --------------------------------------------------------------
# Every scorer (score_round, the engine's round_points, the batched engine, the listener model)
# reads a round's points from these two functions: a new scoring variant is a change here.


@functools.lru_cache(maxsize=256)
def search_points(rules: RuleSet, n_players: int
                  ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Points for the search, by the number of finders ``f`` (0 .. n_players - 1):
    ``(storyteller[f], finder[f], missed[f])``, where a *finder* voted for the storyteller's card
    and a listener who *missed* did not. All or none found it: the storyteller 0 and every
    listener ``all_or_none_points`` (``all_found_points`` when all found it, if set); some: the
    storyteller and each finder ``finder_points`` (``storyteller_points``), or
    ``lone_finder_points`` each when a single listener found it."""
    voters = n_players - 1
    storyteller, finder, missed = [], [], []
    for finders in range(n_players):
        if finders in (0, voters):
            listener = rules.all_or_none_points
            if finders == voters and rules.all_found_points is not None:
                listener = rules.all_found_points
            storyteller.append(0)
            finder.append(listener)
            missed.append(listener)
        elif finders == 1 and rules.lone_finder_points is not None:
            storyteller.append(rules.lone_finder_points)
            finder.append(rules.lone_finder_points)
            missed.append(0)
        else:
            storyteller.append(rules.storyteller_points)
            finder.append(rules.finder_points)
            missed.append(0)
    return tuple(storyteller), tuple(finder), tuple(missed)


def vote_bonus(rules: RuleSet, votes_received: Any) -> Any:
    """A listener's bonus for the votes on its own card(s): ``vote_bonus_points`` a vote, at
    most ``vote_bonus_cap`` points a round (an int, or elementwise on a NumPy array)."""
    cap, points = rules.vote_bonus_cap, rules.vote_bonus_points
    bonus = votes_received * points if points != 1 else votes_received
    if cap is None:
        return bonus
    if isinstance(bonus, int):
        return min(cap, bonus)
    return np.minimum(bonus, cap)


def max_round_points(rules: RuleSet, n_players: int) -> int:
    """The most points a seat can score in one round (bounds of observation spaces)."""
    search = max(max(table) for table in search_points(rules, n_players))
    return int(search + vote_bonus(rules, n_players - 1))


def round_outcome(finders: int, voters: int) -> Outcome:
    """``none_found``, ``all_found`` or ``some_found``."""
    if finders == 0:
        return "none_found"
    return "all_found" if finders == voters else "some_found"


class PointTables(NamedTuple):
    """A table's points by count, read from :func:`search_points` and :func:`vote_bonus`
    once: ``storyteller``, ``finder`` and ``missed`` by the number of finders, ``bonus`` by the
    votes a listener's cards received (0 .. n_players - 1)."""

    storyteller: tuple[int, ...]
    finder: tuple[int, ...]
    missed: tuple[int, ...]
    bonus: tuple[int, ...]


@functools.lru_cache(maxsize=256)
@functools.lru_cache(maxsize=256)
def point_tables(rules: RuleSet, n_players: int) -> PointTables:
    """The :class:`PointTables` of ``rules`` at ``n_players`` (the reference engine reads
    them once a game)."""
    teller, finder, missed = search_points(rules, n_players)
    bonus = tuple(int(vote_bonus(rules, received)) for received in range(n_players))
    return PointTables(teller, finder, missed, bonus)


def round_points(rules: RuleSet, storyteller: int, card_owner: Sequence[int],
                 votes: Sequence[int | None]) -> tuple[int, ...]:
    """The points of a round already known to be legal (``votes`` by seat, ``None`` for the
    storyteller): the engine's fast path, equal to ``score_round(...).points``."""
    return table_points(point_tables(rules, len(votes)), storyteller, card_owner, votes)


def table_points(tables: PointTables, storyteller: int, card_owner: Sequence[int],
                 votes: Sequence[int | None]) -> tuple[int, ...]:
    """:func:`round_points` from the table's :func:`point_tables`."""
    received = [0] * len(votes)
    finders = []
    for seat, index in enumerate(votes):
        if index is None:
            continue
        owner = card_owner[index]
        if owner == storyteller:
            finders.append(seat)
        elif owner != seat:  # a vote on one's own card (own_card_votes) earns nothing
            received[owner] += 1
    found = len(finders)
    hit, miss, bonus = tables.finder[found], tables.missed[found], tables.bonus
    points = [miss + bonus[count] for count in received]
    for seat in finders:
        points[seat] = hit + bonus[received[seat]]
    points[storyteller] = tables.storyteller[found]
    return tuple(points)


def _score(
    rules: RuleSet,
    n_players: int,
    storyteller: int,
    card_owner: Sequence[int],
    votes: Mapping[int, int],
) -> RoundScore:
    """Scoring without validation (the votes have been checked)."""
    votes_received = [0] * n_players
    finders: list[int] = []
    for seat, index in votes.items():
        owner = card_owner[index]
        if owner == storyteller:
            finders.append(seat)
        elif owner != seat:
            votes_received[owner] += 1
    finders.sort()
    teller, finder, missed = search_points(rules, n_players)
    count = len(finders)
    search = [finder[count] if seat in finders else missed[count] for seat in range(n_players)]
    search[storyteller] = teller[count]
    bonus = [0 if seat == storyteller else vote_bonus(rules, votes_received[seat])
             for seat in range(n_players)]
    return RoundScore(
        points=tuple(s + b for s, b in zip(search, bonus, strict=True)),
        search=tuple(search),
        bonus=tuple(bonus),
        votes_received=tuple(votes_received),
        finders=tuple(finders),
        outcome=round_outcome(count, n_players - 1),
    )


def score_batch(rules: RuleSet, teller: np.ndarray, display: np.ndarray,
                card_owner: np.ndarray, votes: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """The points by seat of many rounds at once, (R, n): :func:`search_points` and
    :func:`vote_bonus` over arrays (the batched engine's scoring), the rule
    :func:`round_points` applies to one round. ``votes`` is (R, n) with -1 for the
    storyteller, ``cards`` the storyteller's cards (R,)."""
    n = votes.shape[1]
    target = np.argmax(display == cards[:, None], axis=1)
    voting = votes >= 0
    found = voting & (votes == target[:, None])
    finders = found.sum(axis=1)
    owner_of_vote = np.take_along_axis(card_owner, np.maximum(votes, 0), axis=1)
    # a vote on one's own card (own_card_votes) finds nothing and is received by nobody
    decoy_votes = voting & ~found & (owner_of_vote != np.arange(n)[None, :])
    received = np.stack([(decoy_votes & (owner_of_vote == seat)).sum(axis=1)
                         for seat in range(n)], axis=1)
    storyteller, finder, missed = (np.asarray(table, dtype=np.int64)
                                   for table in search_points(rules, n))
    points = np.where(found, finder[finders][:, None], missed[finders][:, None])
    points = points + vote_bonus(rules, received)
    is_teller = np.arange(n)[None, :] == teller[:, None]
    return np.where(is_teller, storyteller[finders][:, None], points)
