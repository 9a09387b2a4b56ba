"""Observations, action masks and the action numbering of the Dixit environment.

NumPy only (no PettingZoo): the environment (:mod:`dixit_lab.env.parallel`) and the ``policy``
agent, which seats a trained policy in tournaments, build the same vectors from the same
seat's knowledge through this module.

One decision of the engine may take several *steps* of a policy, each one ``Discrete``
action: the storyteller picks a card (``TELL_CARD``), then a clue (``TELL_CLUE``); a listener
picks ``n_cards`` cards one step each (``SUBMIT``, two steps at three players), then votes
(``VOTE``). Actions are numbered::

    0                      pass (the only legal action of a seat that does not decide now)
    1 .. H                 hand slot 0 .. H-1
    1+H .. H+K             display position 0 .. K-1
    1+H+K .. H+K+C         clue C_j of the clue list

(H hand size, K displayed cards, C clues).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dixit_lab.core.agent import Clue, SubmitView, TellView, VoteView
from dixit_lab.core.cards import Deck, load_deck
from dixit_lab.core.rules import RuleSet, get_rules, max_round_points
from dixit_lab.embeddings import EmbeddingSpace, ModelUnavailableError, get_space

__all__ = [
    "STEP_NAMES",
    "SUBMIT",
    "TELL_CARD",
    "TELL_CLUE",
    "VOTE",
    "ActionLayout",
    "Encoder",
    "ObservationLayout",
    "SeatState",
    "table_encoder",
]

TELL_CARD, TELL_CLUE, SUBMIT, VOTE = 0, 1, 2, 3
STEP_NAMES = ("tell_card", "tell_clue", "submit", "vote")


@dataclass(frozen=True)
class ActionLayout:
    """The numbering of one ``Discrete(size)`` action space (see the module docstring)."""

    hand_size: int
    n_displayed: int
    n_clues: int

    @property
    def size(self) -> int:
        return 1 + self.hand_size + self.n_displayed + self.n_clues

    @property
    def hand_offset(self) -> int:
        return 1

    @property
    def display_offset(self) -> int:
        return 1 + self.hand_size

    @property
    def clue_offset(self) -> int:
        return 1 + self.hand_size + self.n_displayed

    def describe(self, action: int) -> str:
        """A reader's name for an action number."""
        if action == 0:
            return "pass"
        if 1 <= action < self.display_offset:
            return f"hand slot {action - 1}"
        if action < self.clue_offset:
            return f"display position {action - self.display_offset}"
        if action < self.size:
            return f"clue {action - self.clue_offset}"
        return f"action {action} (out of range 0..{self.size - 1})"


@dataclass(frozen=True)
class ObservationLayout:
    """Named slices of the flat observation vector: ``obs[layout.slice("hand")]``."""

    fields: tuple[tuple[str, int], ...]

    @property
    def size(self) -> int:
        return sum(width for _, width in self.fields)

    def slice(self, name: str) -> slice:
        start = 0
        for field, width in self.fields:
            if field == name:
                return slice(start, start + width)
            start += width
        raise KeyError(f"no observation field {name!r}; fields: "
                       f"{', '.join(f for f, _ in self.fields)}")


@dataclass
class SeatState:
    """What one seat knows at one step: its decision (if any) and the public table.

    ``chosen`` are the hand slots the seat already picked in this decision; ``own`` the
    display positions of its own cards; ``acting`` whether it decides now."""

    step: int
    acting: bool
    storyteller: int
    scores: Sequence[int]
    round: int
    hand: Sequence[int] = ()
    chosen: Sequence[int] = ()
    clue: str | None = None
    display: Sequence[int] = ()
    own: Sequence[int] = ()


class Encoder:
    """Builds observation vectors and masks for one table (players, rules, space, clues).

    ``clue_texts`` are the storyteller's clue actions (texts of ``space.clues``; default: the
    whole bank). Card and clue features are the rows of the space's matrices, so a seat's
    observation holds only its own hand, the clue, the display and its own positions."""

    def __init__(self, space: EmbeddingSpace, n_players: int, rules: RuleSet,
                 clue_texts: Sequence[str] | None = None) -> None:
        rules.check_players(n_players)
        self.space = space
        self.n_players = n_players
        self.rules = rules
        self.hand_size = rules.hand_size_for(n_players)
        self.cards_per_player = rules.cards_per_player(n_players)
        self.n_displayed = rules.displayed_cards(n_players)
        if clue_texts is None:
            texts = space.clues.texts
            self.clue_rows = np.arange(len(texts), dtype=np.int64)
        else:
            missing = [text for text in clue_texts if text not in space.clues]
            if missing:
                raise ValueError(f"clue_texts: {missing[0]!r} is not in clue bank "
                                 f"{space.clues.name!r} (clue actions must come from the bank)")
            rows = [space.clue_index(text) for text in clue_texts]
            if not rows:
                raise ValueError("clue_texts: the storyteller needs at least one clue")
            if len(set(rows)) < len(rows):
                raise ValueError("clue_texts: a clue is listed twice")
            texts = tuple(space.clues.texts[row] for row in rows)  # the bank's spelling
            self.clue_rows = np.array(rows, dtype=np.int64)
        self.clue_texts = texts
        self.clue_action = {text: i for i, text in enumerate(texts)}
        #: (C, dim) features of the clue actions, in action order (public: the clue list)
        self.clue_vectors = space.clue_vectors[self.clue_rows]
        self.actions = ActionLayout(self.hand_size, self.n_displayed, len(texts))
        n, h, k, dim = n_players, self.hand_size, self.n_displayed, space.dim
        self.dim = dim
        self.layout = ObservationLayout((
            ("step", 4), ("acting", 1), ("storyteller", n), ("scores", n), ("round", 1),
            ("hand_present", h), ("hand_chosen", h), ("hand_similarity", h),
            ("clue_known", 1), ("clue", dim),
            ("display_present", k), ("display_own", k), ("display_similarity", k),
            ("hand", h * dim), ("display", k * dim),
        ))
        self._slices = {name: self.layout.slice(name) for name, _ in self.layout.fields}
        self.size = self.layout.size
        self.card_vectors = space.card_vectors
        self._clue_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        #: the clues outside the bank that could not be embedded (their features are zeros)
        self.unperceived: set[str] = set()
        pass_only = np.zeros(self.actions.size, dtype=np.int8)
        pass_only[0] = 1
        pass_only.flags.writeable = False
        self.pass_mask = pass_only

    # -- bounds ---------------------------------------------------------------------------

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of every observation entry, finite."""
        size = self.layout.size
        vector_bound = float(max(1.0, np.abs(self.space.card_vectors).max(),
                                 np.abs(self.space.clue_vectors).max()))
        low = np.full(size, -vector_bound, dtype=np.float32)
        high = np.full(size, vector_bound, dtype=np.float32)
        for name in ("step", "acting", "storyteller", "hand_present", "hand_chosen",
                     "clue_known", "display_present", "display_own"):
            low[self._slices[name]] = 0.0
            high[self._slices[name]] = 1.0
        rules = self.rules
        per_round = max_round_points(rules, self.n_players)
        low[self._slices["scores"]] = 0.0
        high[self._slices["scores"]] = float(per_round * rules.max_rounds)
        low[self._slices["round"]] = 0.0
        high[self._slices["round"]] = float(rules.max_rounds)
        return low, high

    # -- clues ----------------------------------------------------------------------------

    def clue_features(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(vector, similarity with every card) of a clue; zeros (with one warning) for a
        text outside the bank when the embedder's model is not installed."""
        cached = self._clue_cache.get(text)
        if cached is None:
            try:
                cached = (self.space.text_vector(text), self.space.text_similarity(text))
            except (KeyError, ModelUnavailableError) as error:
                if text not in self.unperceived:
                    self.unperceived.add(text)
                    warnings.warn(f"dixit_lab.env: cannot embed clue {text!r} ({error}); "
                                  f"its features are zeros", stacklevel=2)
                cached = (np.zeros(self.dim, dtype=np.float32),
                          np.zeros(len(self.space.deck), dtype=np.float32))
            self._clue_cache[text] = cached
        return cached

    # -- observations and masks -----------------------------------------------------------

    def observation(self, seat: int, state: SeatState) -> np.ndarray:
        """The flat float32 observation of ``seat`` (see :attr:`layout`)."""
        s, n = self._slices, self.n_players
        obs = np.zeros(self.size, dtype=np.float32)
        obs[s["step"].start + state.step] = 1.0
        obs[s["acting"].start] = float(state.acting)
        obs[s["storyteller"].start + (state.storyteller - seat) % n] = 1.0
        scores = state.scores
        obs[s["scores"]] = [scores[(seat + offset) % n] for offset in range(n)]
        obs[s["round"].start] = state.round
        similarity = None
        if state.clue is not None:
            vector, similarity = self.clue_features(state.clue)
            obs[s["clue_known"].start] = 1.0
            obs[s["clue"]] = vector
        self._cards(obs, "hand", state.hand, state.chosen, similarity)
        self._cards(obs, "display", state.display, state.own, similarity)
        return obs

    def _cards(self, obs: np.ndarray, row: str, cards: Sequence[int], flagged: Sequence[int],
               similarity: np.ndarray | None) -> None:
        """Fill a row of cards (``hand`` or ``display``): presence, flags (chosen slots or own
        positions), similarity with the clue, feature vectors."""
        count = len(cards)
        if not count:
            return
        s, indices = self._slices, list(cards)
        start = s[f"{row}_present"].start
        obs[start:start + count] = 1.0
        flags = s["hand_chosen" if row == "hand" else "display_own"].start
        for index in flagged:
            obs[flags + index] = 1.0
        start = s[row].start
        obs[start:start + count * self.dim] = self.card_vectors[indices].ravel()
        if similarity is not None:
            start = s[f"{row}_similarity"].start
            obs[start:start + count] = similarity[indices]

    def mask(self, state: SeatState) -> np.ndarray:
        """The int8 mask of the legal actions of a seat in ``state``."""
        if not state.acting:
            return self.pass_mask
        actions = self.actions
        mask = np.zeros(actions.size, dtype=np.int8)
        if state.step == TELL_CLUE:
            mask[actions.clue_offset:] = 1
        elif state.step == VOTE:
            start = actions.display_offset
            mask[start:start + len(state.display)] = 1
            for position in self.rules.barred_votes(state.own):
                mask[start + position] = 0
        else:
            mask[1:1 + len(state.hand)] = 1
            for slot in state.chosen:
                mask[1 + slot] = 0
        return mask

    # -- views of the agent API -----------------------------------------------------------

    def state_of_view(self, view: TellView | SubmitView | VoteView, chosen: Sequence[int] = (),
                      clue_step: bool = False) -> SeatState:
        """The :class:`SeatState` of a seat deciding on ``view`` (an agent API view)."""
        if isinstance(view, TellView):
            return SeatState(TELL_CLUE if clue_step else TELL_CARD, True, view.seat,
                             view.scores, view.round, view.hand, chosen)
        if isinstance(view, SubmitView):
            return SeatState(SUBMIT, True, view.storyteller, view.scores, view.round,
                             view.hand, chosen, view.clue)
        return SeatState(VOTE, True, view.storyteller, view.scores, view.round, view.hand,
                         (), view.clue, view.display, view.own_positions)

    def steps_of(self, view: TellView | SubmitView | VoteView) -> int:
        """How many policy steps the decision on ``view`` takes."""
        if isinstance(view, TellView):
            return 2
        if isinstance(view, SubmitView):
            return view.n_cards
        return 1

    def answer(self, view: TellView | SubmitView | VoteView, actions: Sequence[int]) -> Any:
        """The engine answer (a Clue, a list of cards, a position) of legal ``actions``."""
        offsets = self.actions
        if isinstance(view, TellView):
            card = view.hand[actions[0] - offsets.hand_offset]
            return Clue(card, self.clue_texts[actions[1] - offsets.clue_offset])
        if isinstance(view, SubmitView):
            return [view.hand[action - offsets.hand_offset] for action in actions]
        return actions[0] - offsets.display_offset

    def actions_of(self, view: TellView | SubmitView | VoteView, answer: Any) -> list[int]:
        """The policy actions that give an agent's ``answer`` (the inverse of :meth:`answer`).

        Raises ``ValueError`` for a clue outside the clue list or a card outside the hand."""
        offsets = self.actions
        if isinstance(view, TellView):
            if not isinstance(answer, Clue) or answer.card not in view.hand:
                raise ValueError(f"expected a Clue with a card of the hand {view.hand}, "
                                 f"got {answer!r}")
            action = self.clue_action.get(answer.text)
            if action is None:
                raise ValueError(f"clue {answer.text!r} is not one of the environment's "
                                 f"{len(self.clue_texts)} clue actions")
            return [offsets.hand_offset + view.hand.index(answer.card),
                    offsets.clue_offset + action]
        if isinstance(view, SubmitView):
            cards = list(answer) if isinstance(answer, list | tuple) else [answer]
            if len(cards) != view.n_cards or any(card not in view.hand for card in cards):
                raise ValueError(f"expected {view.n_cards} card(s) of the hand {view.hand}, "
                                 f"got {answer!r}")
            return [offsets.hand_offset + view.hand.index(card) for card in cards]
        return [offsets.display_offset + int(answer)]


def table_encoder(n_players: int, rules: str | RuleSet, deck: str | Deck, embedder: str,
                  clues: str, clue_texts: Sequence[str] | None, space: EmbeddingSpace | None,
                  rule_options: dict[str, Any]) -> tuple[RuleSet, Deck, Encoder]:
    """The rules, deck and :class:`Encoder` of an environment's table, from its options (the
    parallel and the vector environments take the same): ``rules`` a preset name with
    ``rule_options`` or a :class:`RuleSet`, ``deck`` a name or a :class:`Deck`, the space of
    ``embedder`` and ``clues`` unless ``space`` is given."""
    if isinstance(rules, RuleSet):
        if rule_options:
            raise ValueError(f"rule options {sorted(rule_options)} need a preset name, "
                             f"not a RuleSet")
    else:
        rules = get_rules(rules, **rule_options)
    deck = load_deck(deck) if isinstance(deck, str) else deck
    if space is None:
        if not deck.has_images:
            raise ValueError(f"deck {deck.name!r} has no images to embed; use an "
                             f"image deck such as 'dreams', or pass space=")
        space = get_space(embedder, deck, clues)
    if len(space.deck) != len(deck):
        raise ValueError(f"space has {len(space.deck)} cards but deck {deck.name!r} "
                         f"has {len(deck)}")
    encoder = Encoder(space, n_players, rules, clue_texts)
    deck.check_playable(n_players, encoder.hand_size, encoder.n_displayed)
    return rules, deck, encoder
