"""Everything the tables of a results folder need, as sums that add up batch by batch.

:func:`batch_stats` summarises one :class:`~dixit_lab.records.batches.GameBatch` into a small
JSON-able :class:`GameStats` (per player name: the
:class:`~dixit_lab.stats.intervals.ClusterSums` of every metric's samples, as its kernel gives
them (:mod:`dixit_lab.stats.kernels`), counts, fault kinds and the first fault, find-rate sums;
per game only what
the ratings need, a few bytes); :meth:`GameStats.add` merges them in game order. The tables are
computed from the merged sums (:mod:`dixit_lab.stats.tables`), so a million games take the
memory of a batch, and the workers that played a chunk can summarise it where it is.

The sums are exact (integers, :mod:`dixit_lab.exact_sums`): a run adds them chunk by chunk,
``dixit-lab report`` batch by batch of another size, and both give the same tables to the
last digit. What a sum adds up is computed within one game (a game's share of the wins, a
round's find rate, a cluster's total), which no chunking splits.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dixit_lab.records.batches import GameBatch
from dixit_lab.stats import exact_sums
from dixit_lab.stats.catalogue import CATALOGUE, summed_metrics
from dixit_lab.stats.intervals import ClusterSums
from dixit_lab.stats.kernels import DECISIONS, Samples, Seats, seat_win_share
from dixit_lab.text_rule import shown_message

__all__ = ["METRIC_SUMS", "GameStats", "batch_stats"]

#: the metrics summed as ClusterSums: the catalogue's metrics with a kernel
METRIC_SUMS: tuple[str, ...] = summed_metrics()
_COUNTS = ("seats", "games", "storyteller_turns", "listener_turns", "faults", "share_sum",
           "predicted_sum", "predicted_turns", "unperceived", "decisions", "action_faults")
_BINS = 10


def _sums(keys: np.ndarray, values: np.ndarray, n_players: int) -> list[list[int]]:
    """The exact ClusterSums (6 sums each) per player of ``values`` whose cluster and player
    are encoded in ``keys = cluster * P + player`` (clusters numbered from 0 within the
    batch)."""
    width = int(keys.max()) + 1 if len(keys) else 0
    if width > 8 * len(keys) + 1024:  # sparse keys (many names): group by sorting
        unique, keys = np.unique(keys, return_inverse=True)
        width = len(unique)
    else:
        unique = None
    counted = np.bincount(keys, minlength=width)
    exact, count = exact_sums.group_sums, exact_sums.group_counts
    if counted.max(initial=0) <= 1:  # one sample a cluster (a listener's vote): no totals
        player = (keys if unique is None else unique[keys]) % n_players
        samples, sums = count(player, n_players), exact(player, values, n_players)
        columns = [samples, sums, samples, exact(player, values ** 2, n_players), sums,
                   samples]
        return [list(row) for row in zip(*columns, strict=True)] if n_players else []
    totals = np.bincount(keys, weights=values, minlength=width)  # within a cluster: a game
    used = np.flatnonzero(counted)
    player = (used if unique is None else unique[used]) % n_players
    totals, counted = totals[used], counted[used]
    sizes = counted.astype(np.float64)
    columns = [count(player, n_players, counted), exact(player, totals, n_players),
               count(player, n_players), exact(player, totals ** 2, n_players),
               exact(player, totals * sizes, n_players), count(player, n_players, counted ** 2)]
    return [list(row) for row in zip(*columns, strict=True)] if n_players else []


def _zero_sums() -> list[int]:
    return [0] * len(ClusterSums._fields)


@dataclass
class PlayerStats:
    """One player name's sums, exact (integers in units of 2**-1074: see
    :mod:`dixit_lab.exact_sums`); :attr:`counts`, :attr:`sums` and :attr:`bins` give them as
    floats."""

    exact_counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTS, 0))
    exact_sums: dict[str, list[int]] = field(
        default_factory=lambda: {name: _zero_sums() for name in METRIC_SUMS})
    specs: list[str] = field(default_factory=list)
    fault_kinds: dict[str, int] = field(default_factory=dict)
    #: per bin of predicted find rate: predicted, observed, turns
    exact_bins: list[list[int]] = field(default_factory=lambda: [[0, 0, 0] for _ in
                                                                 range(_BINS)])
    told: bool = False  # told at least once (a row of the find-rate table)
    #: the player's first fault (the lowest game, then round): ``game``, ``round`` (0-based,
    #: as the records count them), ``seat``, ``action``, ``kind`` and ``message`` (as
    #: :func:`~dixit_lab.text_rule.shown_message` shows it); None without faults
    first_fault: dict[str, Any] | None = None

    @property
    def counts(self) -> dict[str, float]:
        return {key: exact_sums.to_float(value) for key, value in self.exact_counts.items()}

    @property
    def sums(self) -> dict[str, ClusterSums]:
        return {key: ClusterSums(*map(exact_sums.to_float, values))
                for key, values in self.exact_sums.items()}

    @property
    def bins(self) -> np.ndarray:
        """(bins, 3): predicted, observed, turns."""
        return np.array([[exact_sums.to_float(value) for value in row]
                         for row in self.exact_bins]).reshape(_BINS, 3)

    def add(self, other: PlayerStats) -> None:
        for key, value in other.exact_counts.items():
            self.exact_counts[key] = self.exact_counts.get(key, 0) + value
        for key, values in other.exact_sums.items():
            mine = self.exact_sums.setdefault(key, _zero_sums())
            self.exact_sums[key] = [a + b for a, b in zip(mine, values, strict=True)]
        self.specs.extend(spec for spec in other.specs if spec not in self.specs)
        for kind, count in other.fault_kinds.items():
            self.fault_kinds[kind] = self.fault_kinds.get(kind, 0) + count
        self.exact_bins = [[a + b for a, b in zip(mine, theirs, strict=True)]
                           for mine, theirs in zip(self.exact_bins, other.exact_bins,
                                                   strict=True)]
        self.told = self.told or other.told
        if other.first_fault is not None and (self.first_fault is None or _when(
                other.first_fault) < _when(self.first_fault)):
            self.first_fault = other.first_fault

    def to_json(self) -> dict[str, Any]:
        code = exact_sums.to_json
        return {"counts": {k: code(v) for k, v in self.exact_counts.items()},
                "sums": {k: [code(x) for x in v] for k, v in self.exact_sums.items()},
                "specs": self.specs, "fault_kinds": self.fault_kinds,
                "bins": [[code(x) for x in row] for row in self.exact_bins],
                "told": self.told, "first_fault": self.first_fault}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlayerStats:
        read = exact_sums.from_json
        bins = data["bins"]
        if len(bins) != _BINS or any(len(row) != 3 for row in bins):
            raise ValueError(f"bins: expected {_BINS} rows of 3")
        return cls({**dict.fromkeys(_COUNTS, 0),
                    **{k: read(v) for k, v in data["counts"].items()}},
                   {k: [read(x) for x in v] for k, v in data["sums"].items()},
                   list(data["specs"]), dict(data["fault_kinds"]),
                   [[read(x) for x in row] for row in bins], bool(data["told"]),
                   _first_fault(data.get("first_fault")))


def _when(fault: dict[str, Any]) -> tuple[int, int]:
    return int(fault["game"]), int(fault["round"])


def _first_fault(data: Any) -> dict[str, Any] | None:
    """A first fault read back from JSON (checked: the sums of a part are read back)."""
    if data is None:
        return None
    fault = {key: int(data[key]) for key in ("game", "round", "seat")}
    return {**fault, **{key: shown_message(str(data[key]))
                        for key in ("action", "kind", "message")}}


@dataclass
class GameStats:
    """The sums of some games (see the module docstring); ``add`` the next games' in order."""

    games: int = 0
    rounds_total: int = 0
    rounds_min: int | None = None
    rounds_max: int | None = None
    faults: int = 0
    end_reasons: dict[str, int] = field(default_factory=dict)
    sizes: list[int] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    decks: list[str] = field(default_factory=list)
    players: dict[str, PlayerStats] = field(default_factory=dict)
    #: per game, for the ratings: its seats' player names (indices into ``rating_names``)
    #: and final scores, by table size
    rating_names: list[str] = field(default_factory=list)
    rating_games: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def add(self, other: GameStats) -> None:
        self.games += other.games
        self.rounds_total += other.rounds_total
        self.rounds_min = _opt(min, self.rounds_min, other.rounds_min)
        self.rounds_max = _opt(max, self.rounds_max, other.rounds_max)
        self.faults += other.faults
        for key, value in other.end_reasons.items():
            self.end_reasons[key] = self.end_reasons.get(key, 0) + value
        self.sizes.extend(x for x in other.sizes if x not in self.sizes)
        self.rules.extend(x for x in other.rules if x not in self.rules)
        self.decks.extend(x for x in other.decks if x not in self.decks)
        for name, stats in other.players.items():
            self.players.setdefault(name, PlayerStats()).add(stats)
        codes = {name: self._rating_code(name) for name in other.rating_names}
        lookup = np.array([codes[name] for name in other.rating_names], dtype=np.int32)
        for names, scores in other.rating_games:
            self.rating_games.append((lookup[names] if len(lookup) else names, scores))

    def _rating_code(self, name: str) -> int:
        if name not in self.rating_names:
            self.rating_names.append(name)
        return self.rating_names.index(name)

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "rounds_total": self.rounds_total,
                "rounds_min": self.rounds_min, "rounds_max": self.rounds_max,
                "faults": self.faults, "end_reasons": self.end_reasons, "sizes": self.sizes,
                "rules": self.rules, "decks": self.decks,
                "players": {k: v.to_json() for k, v in self.players.items()},
                "rating_names": self.rating_names,
                "rating_games": [[_pack(names), _pack(scores)]
                                 for names, scores in self.rating_games]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameStats:
        return cls(int(data["games"]), int(data["rounds_total"]), data["rounds_min"],
                   data["rounds_max"], int(data["faults"]), dict(data["end_reasons"]),
                   list(data["sizes"]), list(data["rules"]), list(data["decks"]),
                   {k: PlayerStats.from_json(v) for k, v in data["players"].items()},
                   list(data["rating_names"]),
                   [(_unpack(a), _unpack(b)) for a, b in data["rating_games"]])


def _opt(pick: Any, a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else pick(a, b)


def _pack(array: np.ndarray) -> list[Any]:
    return [array.dtype.str, list(array.shape), base64.b64encode(array.tobytes()).decode()]


def _unpack(packed: list[Any]) -> np.ndarray:
    dtype, shape, text = packed
    return np.frombuffer(base64.b64decode(text), dtype=dtype).reshape(shape).copy()


def batch_stats(batch: GameBatch, predicted: np.ndarray | None = None) -> GameStats:
    """The sums of one batch; ``predicted`` is each round's predicted find rate of its
    storyteller (NaN where it has no model; see :mod:`dixit_lab.stats.find_rates`)."""
    import pyarrow.compute as pc

    n, g, r = batch.n, batch.games, batch.rounds
    seats = Seats(batch)
    codes, names, p, seat_code = seats.codes, seats.names, seats.p, seats.seat_code
    stats = GameStats(games=g, rounds_total=r, faults=len(batch.fault_round),
                      sizes=[n] if g else [])
    per_game = np.bincount(batch.round_game, minlength=g)
    if g:
        stats.rounds_min, stats.rounds_max = int(per_game.min()), int(per_game.max())
    for key, value in zip(*_counts(batch.end_reason), strict=True):
        stats.end_reasons[key] = value
    stats.rules = list(dict.fromkeys(pc.unique(batch.rules).to_pylist()))
    stats.decks = list(dict.fromkeys(pc.unique(batch.deck).to_pylist()))

    def count(keys: np.ndarray, weights: np.ndarray | None = None) -> list[int]:
        if weights is None or weights.dtype.kind in "iub":  # counts: integers
            return exact_sums.group_counts(keys, p, weights)
        return exact_sums.group_sums(keys, weights, p)

    metric: dict[str, list[list[int]]] = {}
    samples: dict[str, Samples] = {}
    summed: dict[int, list[list[int]]] = {}  # by the samples (an _own metric: often the same)
    for name in METRIC_SUMS:
        kernel = CATALOGUE[name].kernel
        assert kernel is not None  # METRIC_SUMS: the metrics with a kernel
        found = samples[name] = seats.samples(kernel)
        if id(found) not in summed:  # the samples stay alive in ``samples``: ids are theirs
            summed[id(found)] = _sums(found.cluster * p + found.player, found.values, p)
        metric[name] = [list(row) for row in summed[id(found)]]
    _, share = seat_win_share(batch)
    teller = seats.teller
    listener_code = seats.listeners[2]
    failed = seats.failed
    seat_round_code = seat_code[batch.round_game].ravel()  # (R * n,) each seat-round's player

    def per_seat_round(values: np.ndarray) -> list[int]:
        """The sums of (R, n) integer counts by player (none, as a batched engine's faults
        usually are: zeros without a pass over them)."""
        return count(seat_round_code, values.ravel()) if values.any() else [0] * p

    counts = {
        "seats": count(codes), "games": count(samples["win_share"].player),
        "storyteller_turns": count(teller), "listener_turns": count(listener_code),
        "faults": per_seat_round(batch.faults),
        "unperceived": per_seat_round(batch.unperceived),
        "share_sum": count(codes, share.ravel()),
        # a tell; a submit and a vote (exact sums: added element by element)
        "decisions": [a + 2 * b for a, b in zip(count(teller), count(listener_code),
                                                strict=True)],
        "action_faults": per_seat_round(np.stack([failed[action] for action in DECISIONS])
                                        .sum(axis=0, dtype=np.int64)),
    }
    if predicted is None:
        predicted = np.full(r, np.nan)
    finite = np.isfinite(predicted)
    counts["predicted_sum"] = count(teller[finite], predicted[finite])
    counts["predicted_turns"] = count(teller[finite])
    bins = np.clip(np.digitize(predicted[finite], np.linspace(0, 1, _BINS + 1)) - 1, 0,
                   _BINS - 1)
    bin_keys = teller[finite] * _BINS + bins
    observed = samples["observed_find_rate"].values  # one a round
    binned = [exact_sums.group_sums(bin_keys, w, p * _BINS)
              for w in (predicted[finite], observed[finite], np.ones(int(finite.sum())))]
    kinds, firsts = _faults(batch, seat_code, p)
    spec_pairs = _specs(batch, codes, p)
    told = np.bincount(teller, minlength=p) > 0
    for code, name in enumerate(names):
        stats.players[name] = PlayerStats(
            {key: values[code] for key, values in counts.items()},
            {key: values[code] for key, values in metric.items()},
            spec_pairs[code], kinds[code],
            [[column[code * _BINS + b] for column in binned] for b in range(_BINS)],
            bool(told[code]), firsts[code])
    stats.rating_names = names
    small = np.int16 if p < 2**15 and batch.final_scores.max(initial=0) < 2**15 else np.int32
    stats.rating_games = [(seat_code.astype(small), batch.final_scores.astype(small))]
    return stats


def _counts(values: Any) -> tuple[list[str], list[int]]:
    import pyarrow.compute as pc

    counted = pc.value_counts(values).to_pylist()
    return [row["values"] for row in counted], [int(row["counts"]) for row in counted]


def _faults(batch: GameBatch, seat_code: np.ndarray, p: int
            ) -> tuple[list[dict[str, int]], list[dict[str, Any] | None]]:
    """Each player's faults by kind, and its first fault (a Python object per player, none
    per game: a batch's faults are in game and round order)."""
    kinds: list[dict[str, int]] = [{} for _ in range(p)]
    firsts: list[dict[str, Any] | None] = [None] * p
    if not len(batch.fault_round):
        return kinds, firsts
    games = batch.round_game[batch.fault_round]
    players = seat_code[games, batch.fault_seat]
    for code, kind in zip(players.tolist(), batch.fault_kinds.to_pylist(), strict=True):
        kinds[code][kind] = kinds[code].get(kind, 0) + 1
    codes, first = np.unique(players, return_index=True)
    for code, index in zip(codes.tolist(), first.tolist(), strict=True):
        message = batch.fault_messages[index].as_py() if batch.fault_messages is not None \
            else None
        firsts[code] = {
            "game": int(batch.game[games[index]]),
            "round": int(batch.round_number[batch.fault_round[index]]),
            "seat": int(batch.fault_seat[index]),
            "action": shown_message(str(batch.fault_actions[index].as_py())
                                    if batch.fault_actions is not None else "?"),
            "kind": shown_message(str(batch.fault_kinds[index].as_py())),
            "message": shown_message(message or "")}
    return kinds, firsts


def _specs(batch: GameBatch, codes: np.ndarray, p: int) -> list[list[str]]:
    """Each player's agent specs in order of first appearance."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(batch.agents)
    spec_codes = np.asarray(encoded.indices, dtype=np.int64)
    specs = encoded.dictionary.to_pylist()
    pairs = codes * len(specs) + spec_codes
    _, first = np.unique(pairs, return_index=True)
    out: list[list[str]] = [[] for _ in range(p)]
    for position in np.sort(first):
        out[int(codes[position])].append(str(specs[int(spec_codes[position])]))
    return out
