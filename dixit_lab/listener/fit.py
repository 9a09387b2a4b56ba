"""A listener model learned from logged games, stored as plain JSON.

``fit_listener`` reads game records, computes for every (round, listener) the features of the
storyteller's (card, clue) pair as the storyteller could have computed them before telling,
and fits a logistic regression (scikit-learn) of "this listener found the card". The fitted
model is saved as JSON (no pickle) and loaded by the ``calibrated`` agent, which uses it
instead of the analytic model of :mod:`dixit_lab.listener.model`.

Features of a pair (card ``c`` of the hand ``H``, clue ``k``):

``similarity``   s(k, c), the clue–card similarity;
``margin``       s(k, c) − max over the rest of the hand of s(k, ·);
``deck_rank``    the share of the deck's other cards less similar to the clue than ``c``;
``model_logit``  the logit of the analytic model's find probability (``temperature``) in
                 the round of the turn;
``voters``       the number of listeners.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dixit_lab.bundled import data_root
from dixit_lab.core.cards import Deck, load_deck
from dixit_lab.core.rules import RuleSet
from dixit_lab.listener.model import deck_rank_fraction, listener_model
from dixit_lab.records.format import GameRecord, player_names, read_jsonl
from dixit_lab.run.experiment import ConfigError

__all__ = [
    "FEATURES",
    "FeatureTable",
    "FittedListener",
    "fit_listener",
    "pair_features",
    "resolve_model_path",
    "training_rows",
]

FEATURES: tuple[str, ...] = ("similarity", "margin", "deck_rank", "model_logit", "voters")
FORMAT = "dixit-lab-listener-model/1"
_EPS = 1e-4


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), _EPS, 1 - _EPS)
    return np.log(p / (1 - p))


class FeatureTable:
    """Per-space, per-table-shape precomputations for :func:`pair_features`."""

    def __init__(self, space: Any, temperature: float, rules: RuleSet, n_players: int) -> None:
        self.space = space
        self.similarity_by_card = np.ascontiguousarray(np.asarray(space.similarity).T,
                                                       dtype=np.float64)
        self.rank = deck_rank_fraction(space.similarity)
        self.model = listener_model(space, temperature, rules, n_players,
                                    temperature)  # softmax decoys, as the population
        self._logits: dict[int, np.ndarray] = {}
        self.voters = n_players - 1

    def model_logit(self, round_index: int) -> np.ndarray:
        """(cards, clues) the logit of the analytic model's find probability in that round."""
        key = self.model.position_key(round_index)
        logit = self._logits.get(key)
        if logit is None:
            logit = self._logits[key] = _logit(self.model.find_at(round_index))
        return logit


def pair_features(table: FeatureTable, hand: Sequence[int], round_index: int,
                  clues: slice | np.ndarray | int = slice(None)) -> dict[str, np.ndarray]:
    """Features of every (card of ``hand``, clue) pair in round ``round_index``: arrays of
    shape (len(hand), n_clues) (or (len(hand),) for a single clue index)."""
    rows = list(hand)
    sim = table.similarity_by_card[rows][:, clues]
    if len(rows) > 1:
        order = np.sort(sim, axis=0)
        best, second = order[-1], order[-2]
        others = np.where(sim >= best, second, best)
    else:
        others = np.zeros_like(sim)
    return {
        "similarity": sim,
        "margin": sim - others,
        "deck_rank": np.asarray(table.rank[rows][:, clues], dtype=np.float64),
        "model_logit": table.model_logit(round_index)[rows][:, clues],
        "voters": np.full(sim.shape, float(table.voters)),
    }


@dataclass(frozen=True)
class FittedListener:
    """A logistic regression of "one listener finds the card" on :data:`FEATURES`."""

    embedder: str
    clue_bank: str
    temperature: float
    coef: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    features: tuple[str, ...] = FEATURES
    info: dict[str, Any] = field(default_factory=dict)

    def logits(self, features: dict[str, np.ndarray]) -> np.ndarray:
        total = np.full(np.shape(features[self.features[0]]), self.intercept, dtype=np.float64)
        for name, coef, mean, scale in zip(self.features, self.coef, self.mean, self.scale,
                                           strict=True):
            total = total + coef * (features[name] - mean) / scale
        return total

    def probability(self, features: dict[str, np.ndarray]) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logits(features)))

    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "embedder": self.embedder,
            "clue_bank": self.clue_bank,
            "temperature": self.temperature,
            "features": list(self.features),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "mean": list(self.mean),
            "scale": list(self.scale),
            "info": self.info,
        }
        return json.dumps(data, indent=2, sort_keys=False) + "\n"

    def save(self, path: str | Path) -> Path:
        from dixit_lab.atomic import atomic_write_text

        return atomic_write_text(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> FittedListener:
        source = resolve_model_path(path)
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ConfigError(f"{source}: not a JSON listener model ({error})") from None
        if data.get("format") != FORMAT:
            raise ConfigError(f"{source}: field 'format' must be {FORMAT!r}, "
                             f"got {data.get('format')!r}")
        features = tuple(data.get("features", ()))
        if features != FEATURES:
            raise ConfigError(f"{source}: field 'features' must be {list(FEATURES)}, "
                             f"got {list(features)}")
        try:
            fitted = cls(
                embedder=str(data["embedder"]),
                clue_bank=str(data["clue_bank"]),
                temperature=float(data["temperature"]),
                coef=tuple(float(x) for x in data["coef"]),
                intercept=float(data["intercept"]),
                mean=tuple(float(x) for x in data["mean"]),
                scale=tuple(float(x) for x in data["scale"]),
                features=features,
                info=dict(data.get("info", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ConfigError(f"{source}: missing or bad field {error}") from None
        for name in ("coef", "mean", "scale"):
            if len(getattr(fitted, name)) != len(FEATURES):
                raise ConfigError(f"{source}: field {name!r} needs {len(FEATURES)} numbers")
        return fitted


def resolve_model_path(name_or_path: str | Path) -> Path:
    """A path, or the name of a model shipped under ``data/listener_models``."""
    path = Path(name_or_path)
    if path.suffix == ".json" or path.exists():
        if not path.is_file():
            raise FileNotFoundError(f"listener model {path} does not exist")
        return path
    shipped = data_root() / "listener_models" / f"{name_or_path}.json"
    if not shipped.is_file():
        available = sorted(p.stem for p in (data_root() / "listener_models").glob("*.json"))
        raise FileNotFoundError(f"no listener model {str(name_or_path)!r}: not a file, and not "
                                f"a shipped model (shipped: {', '.join(available) or 'none'})")
    return shipped


def _records(paths: Iterable[str | Path]) -> Iterable[tuple[GameRecord, Deck]]:
    """Each game under ``paths`` with the deck it was played with: the deck its results
    folder's config.yaml records (by path and content, :func:`~dixit_lab.records.decks.
    folder_deck`); for a games.jsonl without a config.yaml next to it, the deck its records
    name."""
    from dixit_lab.records.decks import folder_deck

    found: dict[Path, tuple[Path, Path]] = {}  # each games file once, and where it was found
    for entry in paths:
        path = Path(entry)
        files = sorted([*path.rglob("games.jsonl"), *path.rglob("games.jsonl.zst")]) \
            if path.is_dir() else [path]
        if not files:
            raise FileNotFoundError(f"{path}: no games.jsonl(.zst) found")
        for file in files:
            _, first = found.setdefault(file.resolve(), (file, path))
            if first is not path:  # its games would count twice
                raise ConfigError(f"{file} is given twice (under {first} and under {path}): "
                                  f"give each results folder once")
    for file, _ in found.values():
        deck = folder_deck(file.parent) if (file.parent / "config.yaml").is_file() else None
        for number, record in enumerate(read_jsonl(file), start=1):
            game_deck = deck or load_deck(record.deck)
            if record.deck != game_deck.name:
                raise ConfigError(f"{file}, line {number}: game of deck {record.deck!r}, "
                                  f"but {file.parent / 'config.yaml'} records the deck "
                                  f"{game_deck.name!r}")
            yield record, game_deck


def deal_key(record: GameRecord) -> tuple[int, ...]:
    """The deal a game was played from: its experiment seed and deal index (``seed`` and
    ``spawn_key``), shared by every game of that deal at every table size."""
    return (record.seed, *record.spawn_key)


def training_rows(games: Iterable[tuple[GameRecord, Deck]], embedder: str, clue_bank: str,
                  temperature: float, listeners: Sequence[str] | None = None,
                  groups: list[tuple[int, int, tuple[int, ...]]] | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Features (rows, len(FEATURES)), outcomes (rows,), the analytic model's probability
    (rows,), and the number of rounds skipped (clue outside the bank, no hand recorded), from
    ``games``: (record, the deck it was played with). With ``listeners``, only the votes of
    seats whose player name, agent spec or agent name (``softmax`` for
    ``softmax(temperature=0.1)``) is one of them count. ``groups``, if given, receives the
    (game position, round, :func:`deal_key`) of every row."""
    wanted = set(listeners) if listeners else None
    from dixit_lab.embeddings import get_space

    tables: dict[tuple[str, int, RuleSet], FeatureTable] = {}
    features: list[list[float]] = []
    outcomes: list[float] = []
    analytic: list[float] = []
    skipped = 0
    for game, (record, deck) in enumerate(games):
        n = record.n_players
        rules = RuleSet(**record.rule_options)
        key = (deck.fingerprint, n, rules)
        table = tables.get(key)
        if table is None:
            space = get_space(embedder, deck, clue_bank)
            table = tables[key] = FeatureTable(space, temperature, rules, n)
        for index, rnd in enumerate(record.rounds):
            if not rnd.storyteller_hand or rnd.clue not in table.space.clues:
                skipped += 1
                continue
            clue = table.space.clue_index(rnd.clue)
            hand = list(rnd.storyteller_hand)
            values = pair_features(table, hand, index, clue)
            row = hand.index(rnd.storyteller_card)
            vector = [float(values[name][row]) for name in FEATURES]
            target = rnd.display.index(rnd.storyteller_card)
            p = float(table.model.find_at(index)[rnd.storyteller_card, clue])
            names = player_names(record)
            for seat, vote in enumerate(rnd.votes):
                if vote is None:
                    continue
                if wanted is not None and not wanted & {names[seat], record.agents[seat],
                                                        record.agents[seat].split("(")[0]}:
                    continue
                features.append(vector)
                outcomes.append(float(vote == target))
                analytic.append(p)
                if groups is not None:
                    groups.append((game, index, deal_key(record)))
    return (np.asarray(features, dtype=np.float64).reshape(-1, len(FEATURES)),
            np.asarray(outcomes), np.asarray(analytic), skipped)


def fit_listener(paths: Sequence[str | Path], *, embedder: str = "conse",
                 clue_bank: str = "default", temperature: float = 0.05,
                 regularization: float = 1.0, listeners: Sequence[str] | None = None,
                 holdout: float = 0.2, sources: Sequence[str] | None = None
                 ) -> FittedListener:
    """Fit the listener model on the games found under ``paths`` (results folders or
    ``games.jsonl`` files), from the votes of every listener or of the agent specs given in
    ``listeners`` only. Every ``1 / holdout``-th deal is held out with all its games (a deal
    is an experiment seed and deal index: the games of a sweep's points and table sizes share
    them; :func:`~dixit_lab.listener.fit_eval.holdout_mask`): the model is fitted on the
    other deals' games, and ``info`` reports its log loss, Brier score and reliability table
    on the held-out games (next to the analytic model's) as well as in-sample. ``sources``
    (default ``paths``) is what ``info`` records as the data's origin, e.g. the config that
    made it."""
    from sklearn.linear_model import LogisticRegression

    from dixit_lab.embeddings import make_embedder
    from dixit_lab.listener.fit_eval import holdout_mask, reliability_table, scores

    for name, value in (("temperature", temperature), ("regularization", regularization)):
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(f"fit-listener: {name} must be a finite number above 0, got "
                              f"{value}")

    groups: list[tuple[int, int, tuple[int, ...]]] = []
    x, y, analytic, skipped = training_rows(_records(paths), embedder, clue_bank, temperature,
                                            listeners, groups)
    if len(y) < 50 or y.min() == y.max():
        raise ConfigError(f"not enough usable rounds to fit a listener model: {len(y)} listener "
                         f"votes ({skipped} rounds skipped: clue outside the bank or no hand "
                         f"recorded); found rate {y.mean() if len(y) else float('nan'):.2f}")
    keys = np.asarray([(game, index) for game, index, _ in groups],
                      dtype=np.int64).reshape(-1, 2)
    deals = [deal for _, _, deal in groups]
    held = holdout_mask(deals, holdout)
    train = ~held
    if held.sum() < 20 or y[train].min() == y[train].max():
        raise ConfigError(f"too few deals to hold {holdout:.0%} out: {int(held.sum())} held-out "
                         f"votes; log more games")
    mean = x[train].mean(axis=0)
    scale = x[train].std(axis=0)
    scale[scale == 0] = 1.0
    classifier = LogisticRegression(C=regularization, max_iter=1000)
    classifier.fit((x[train] - mean) / scale, y[train])
    fitted_p = classifier.predict_proba((x - mean) / scale)[:, 1]
    rounds = keys[:, 0] * 10_000 + keys[:, 1]
    voters = x[:, FEATURES.index("voters")]
    info = {
        "votes": len(y),
        "rounds_skipped": int(skipped),
        "sources": [str(p) for p in (sources or paths)],
        "listeners": list(listeners) if listeners else "all",
        "holdout": {"share": holdout,
                    "rule": "every round(1/share)-th deal (experiment seed, deal index) held "
                            "out with all its games",
                    "deals": len({deal for deal, out in zip(deals, held, strict=True) if out}),
                    "games": len(np.unique(keys[held, 0])), "votes": int(held.sum())},
        "voters_seen": sorted({int(v) for v in voters}),
        "fitted": scores(fitted_p[held], y[held]),
        "analytic_model": scores(analytic[held], y[held]),
        "fitted_in_sample": scores(fitted_p[train], y[train]),
        "reliability_fitted": reliability_table(fitted_p[held], y[held], rounds[held]),
        "reliability_analytic": reliability_table(analytic[held], y[held], rounds[held]),
        "by_voters": {str(int(v)): {"fitted": scores(fitted_p[held & (voters == v)],
                                                     y[held & (voters == v)]),
                                    "analytic_model": scores(analytic[held & (voters == v)],
                                                             y[held & (voters == v)])}
                      for v in np.unique(voters[held])},
    }
    return FittedListener(
        embedder=make_embedder(embedder).id,
        clue_bank=clue_bank,
        temperature=float(temperature),
        coef=tuple(float(c) for c in classifier.coef_[0]),
        intercept=float(classifier.intercept_[0]),
        mean=tuple(float(m) for m in mean),
        scale=tuple(float(s) for s in scale),
        info=info,
    )
