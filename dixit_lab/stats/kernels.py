"""Each metric of the catalogue computed once, over a batch of games: its kernel.

A kernel takes the :class:`Seats` of a :class:`~dixit_lab.records.batches.GameBatch` and gives
the metric's :class:`Samples`: one value per sample (a game of a player name, a seat-game, a
storyteller turn, a listener's vote), with the game it comes from, the cluster its interval
groups it by (the game, or the round for votes) and its player. Everything that reads a metric
reads these arrays: the sums behind ``agents.csv`` (:func:`dixit_lab.stats.game_stats.
batch_stats`), the per-game samples that ``tune`` maximises and sweeps pair
(:func:`per_game`, :func:`player_per_game`) and the seat-game table
(:func:`dixit_lab.stats.metrics.seat_games_frame`, from :func:`seat_win_share`). The
catalogue (:mod:`dixit_lab.stats.catalogue`) names and describes each metric and points at
its kernel; ``tests/stats/test_kernels.py`` checks every kernel against a computation from
the records, game by game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dixit_lab.records.batches import OUTCOME_NAMES, GameBatch

__all__ = ["DECISIONS", "Samples", "Seats", "decoy_votes", "listener_accuracy",
           "listener_accuracy_own", "listener_chance", "listener_chance_own", "observed_find_rate",
           "outcome", "per_game", "player_per_game", "points_per_game", "seat_win_share",
           "some_found_rate_own", "storyteller_points", "win_share"]

#: the decisions that are a seat's own: a fault of one of these actions replaced it
DECISIONS = ("tell", "submit", "vote")


@dataclass(frozen=True)
class Samples:
    """A metric's samples in a batch, in the order its sums add them: ``values`` (float),
    ``game`` (position in the batch), ``cluster`` (numbered within the batch: what the
    interval groups by) and ``player`` (code into the batch's player names)."""

    values: np.ndarray
    game: np.ndarray
    cluster: np.ndarray
    player: np.ndarray

    def keep(self, mask: np.ndarray) -> Samples:
        """The samples where ``mask`` holds (these samples themselves when it always
        does: a batch without faults keeps every decision)."""
        if mask.all():
            return self
        return Samples(self.values[mask], self.game[mask], self.cluster[mask],
                       self.player[mask])


def seat_win_share(batch: GameBatch) -> tuple[np.ndarray, np.ndarray]:
    """(G, n) whether each seat won, and its share of the game: 1/k for each of k tied
    winners, else 0."""
    won = np.zeros((batch.games, batch.n), dtype=bool)
    won[batch.winner_game, batch.winner_seat] = True
    winners = np.bincount(batch.winner_game, minlength=batch.games)
    return won, np.where(won, 1.0 / np.maximum(winners, 1)[:, None], 0.0)


class Seats:
    """A batch's seats indexed once for every kernel: player codes, storytellers, the
    listeners' seat-rounds, the decisions faults replaced."""

    def __init__(self, batch: GameBatch) -> None:
        self.batch = batch
        codes, self.names = batch.player_codes
        self.codes = codes  # (G * n,)
        self.p = len(self.names)
        self.seat_code = codes.reshape(batch.games, batch.n)  # (G, n)
        self._samples: dict[Callable[[Seats], Samples], Samples] = {}

    def samples(self, kernel: Callable[[Seats], Samples]) -> Samples:
        """``kernel(self)``, computed once for this batch (the ``_own`` metrics keep a part
        of another metric's samples: all of them, the same object, when nothing failed)."""
        found = self._samples.get(kernel)
        if found is None:
            found = self._samples[kernel] = kernel(self)
        return found

    @cached_property
    def teller(self) -> np.ndarray:
        """(R,) the player code of each round's storyteller."""
        b = self.batch
        return self.seat_code[b.round_game, b.storyteller]

    @cached_property
    def listeners(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The listeners' seat-rounds, round by round: their round, seat and player code
        (every seat of a round but its storyteller's, in seat order)."""
        b = self.batch
        others = np.arange(b.n - 1)[None, :]
        seat_of = (others + (others >= b.storyteller[:, None])).ravel()
        round_of = np.repeat(np.arange(b.rounds), b.n - 1)
        return round_of, seat_of, self.codes[b.round_game[round_of] * b.n + seat_of]

    @cached_property
    def listener_cells(self) -> np.ndarray:
        """Per listener seat-round (:attr:`listeners`), its cell in a flattened (R, n)
        array."""
        round_of, seat_of, _ = self.listeners
        return round_of * self.batch.n + seat_of

    @cached_property
    def listener_game(self) -> np.ndarray:
        """Per listener seat-round (:attr:`listeners`), its game."""
        return self.batch.round_game[self.listeners[0]]

    @cached_property
    def chance(self) -> np.ndarray:
        """(R, n) one over the cards each seat may vote for (the shown ones not its own)."""
        b = self.batch
        owner_of_round = np.arange(b.rounds)[:, None] * b.n + b.card_owner  # (round, seat)
        own_cards = np.bincount(owner_of_round.ravel(), minlength=b.rounds * b.n).reshape(
            b.rounds, b.n)
        return 1.0 / np.maximum(b.display.shape[1] - own_cards, 1)

    @cached_property
    def failed(self) -> dict[str, np.ndarray]:
        """Per decision (``tell``, ``submit``, ``vote``), a (R, n) mask of the seat-rounds
        where a fault replaced the seat's own decision."""
        b = self.batch
        masks = {action: np.zeros((b.rounds, b.n), dtype=bool) for action in DECISIONS}
        if len(b.fault_round) and b.fault_actions is not None:
            actions = np.asarray(b.fault_actions.to_pylist(), dtype=object)
            for action, mask in masks.items():
                pick = actions == action
                mask[b.fault_round[pick], b.fault_seat[pick]] = True
        return masks

    @cached_property
    def own_vote(self) -> np.ndarray:
        """Per listener seat-round (:attr:`listeners`), whether the vote was its own."""
        return ~self.failed["vote"].ravel().take(self.listener_cells)

    def told(self, values: np.ndarray) -> Samples:
        """One sample a storyteller turn, clustered by game."""
        b = self.batch
        return Samples(np.asarray(values, dtype=float), b.round_game, b.round_game,
                       self.teller)

    def voted(self, per_seat_round: np.ndarray, by_round: bool) -> Samples:
        """One sample a listener's seat-round, clustered by round (or by game)."""
        round_of, _, code = self.listeners
        game = self.listener_game
        values = per_seat_round.ravel().take(self.listener_cells).astype(float)
        return Samples(values, game, round_of if by_round else game, code)


def win_share(seats: Seats) -> Samples:
    """One sample a game of a name: the shares of its seats, summed (at most 1)."""
    b, p = seats.batch, seats.p
    _, share = seat_win_share(b)
    game_seat = (np.arange(b.games)[:, None] * p + seats.seat_code).ravel()
    game_share = np.bincount(game_seat, weights=share.ravel(), minlength=b.games * p)
    present = np.flatnonzero(np.bincount(game_seat, minlength=b.games * p) > 0)
    return Samples(np.clip(game_share[present], 0.0, 1.0), present // p,
                   np.arange(len(present)), present % p)


def points_per_game(seats: Seats) -> Samples:
    """One sample a seat-game: its final score."""
    b = seats.batch
    game = np.repeat(np.arange(b.games), b.n)
    return Samples(b.final_scores.ravel().astype(float), game, game, seats.codes)


def outcome(code: int) -> Callable[[Seats], Samples]:
    """The kernel of an outcome's rate (one function per outcome: ``outcome(c) is
    outcome(c)``, so that :meth:`Seats.samples` computes it once)."""
    return _OUTCOMES[code]


def _outcome_kernel(code: int) -> Callable[[Seats], Samples]:
    def kernel(seats: Seats) -> Samples:
        return seats.told((seats.batch.outcome_codes == code).astype(float))

    kernel.__doc__ = f"One sample a storyteller turn: 1 if it was {OUTCOME_NAMES[code]}."
    return kernel


_OUTCOMES = tuple(_outcome_kernel(code) for code in range(len(OUTCOME_NAMES)))
_SOME_FOUND = _OUTCOMES[OUTCOME_NAMES.index("some_found")]


def storyteller_points(seats: Seats) -> Samples:
    b = seats.batch
    return seats.told(b.points[np.arange(b.rounds), b.storyteller].astype(float))


def observed_find_rate(seats: Seats) -> Samples:
    """One sample a storyteller turn: the share of listeners who found its card."""
    b = seats.batch
    return seats.told(b.n_finders / max(b.n - 1, 1))


def listener_accuracy(seats: Seats) -> Samples:
    return seats.voted(seats.batch.found, by_round=True)


def decoy_votes(seats: Seats) -> Samples:
    return seats.voted(seats.batch.votes_received, by_round=False)


def listener_chance(seats: Seats) -> Samples:
    """One sample a vote: one over the cards the listener may vote for (the shown ones not
    its own)."""
    return seats.voted(seats.chance, by_round=True)


def listener_accuracy_own(seats: Seats) -> Samples:
    return seats.samples(listener_accuracy).keep(seats.own_vote)


def listener_chance_own(seats: Seats) -> Samples:
    return seats.samples(listener_chance).keep(seats.own_vote)


def some_found_rate_own(seats: Seats) -> Samples:
    b = seats.batch
    own_tell = ~seats.failed["tell"][np.arange(b.rounds), b.storyteller]
    return seats.samples(_SOME_FOUND).keep(own_tell)



def per_game(samples: Samples, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each player's mean sample in each game where it has one: ``(game, player, value)``,
    ordered by game, then player code."""
    keys = samples.game * p + samples.player
    width = int(keys.max()) + 1 if len(keys) else 0
    totals = np.bincount(keys, weights=samples.values, minlength=width)
    sizes = np.bincount(keys, minlength=width)
    used = np.flatnonzero(sizes)
    return used // max(p, 1), used % max(p, 1), totals[used] / sizes[used]


def player_per_game(kernel: Callable[[Seats], Samples], batch: GameBatch, player: str
                    ) -> dict[int, float]:
    """Player ``player``'s sample of a metric in each game of ``batch`` where it has one, by
    the game's ``record_index``."""
    seats = Seats(batch)
    if player not in seats.names:
        return {}
    game, code, value = per_game(kernel(seats), seats.p)
    mine = code == seats.names.index(player)
    return dict(zip(batch.record_index[game[mine]].tolist(), value[mine].tolist(),
                    strict=True))
