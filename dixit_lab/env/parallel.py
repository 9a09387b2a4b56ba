"""``DixitParallelEnv``: a game of Dixit as a PettingZoo ``ParallelEnv``, one step a phase.

The engine's :class:`~dixit_lab.engine.game.GameSteps` plays the game; this module only turns its
phases into steps. A step is one phase of the round (or one sub-step of it: the storyteller
picks a card, then a clue; at three players a listener submits its two cards in two steps);
every seat that does not decide passes (action 0). Answers reach the engine only when the
whole phase has been played, so nothing leaks through the order of play.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from dixit_lab.core.agent import GameContext, PublicRound, TellView, VoteView
from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import RuleSet
from dixit_lab.core.seeding import GameSeed, game_seed
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab.engine.answer_checks import (
    as_int as _as_action,  # the engine's reading of an integer answer
)
from dixit_lab.engine.game import Decision, Failure, GameSteps, Phase
from dixit_lab.env.encoding import (
    SUBMIT,
    TELL_CARD,
    TELL_CLUE,
    VOTE,
    ActionLayout,
    SeatState,
    table_encoder,
)
from dixit_lab.records.format import GameRecord

__all__ = ["DixitParallelEnv", "check_seed"]

Reward = Literal["points", "rank"]
_STEP_OF = {"submit": SUBMIT, "vote": VOTE}


class DixitParallelEnv(ParallelEnv):
    """Dixit for ``n_players`` learners (``player_0`` ...), one ``Discrete`` action each.

    ``rules`` is a preset name (rule options such as ``target_score=10`` go in
    ``**rule_options``) or a :class:`RuleSet`; ``deck`` a deck name or :class:`Deck`;
    ``embedder`` and ``clues`` choose the embedding space of the card and clue features
    (``space`` gives one directly); ``clue_texts`` restricts the storyteller's clue actions
    to some texts of the bank. ``reward="points"`` pays each round's points when the round
    is revealed; ``"rank"`` pays once, at the end: (opponents below - opponents above) /
    (n_players - 1). ``on_illegal="raise"`` raises ``ValueError`` on an action outside the
    mask; ``"fallback"`` hands the engine a failure, which it records as a fault and
    replaces by a seeded legal action (a seat that does not decide may then send anything).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "dixit_v0", "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": True, "render_fps": 1}

    def __init__(self, n_players: int = 4, rules: str | RuleSet = "classic",
                 deck: str | Deck = "dreams", embedder: str = "conse",
                 render_mode: str | None = None, *, clues: str = "default",
                 clue_texts: Sequence[str] | None = None, space: EmbeddingSpace | None = None,
                 reward: Reward = "points", on_illegal: Literal["raise", "fallback"] = "raise",
                 render_seat: int | None = None, **rule_options: Any) -> None:
        self.rules, self.deck, self.encoder = table_encoder(
            n_players, rules, deck, embedder, clues, clue_texts, space, rule_options)
        if reward not in ("points", "rank"):
            raise ValueError(f"reward must be 'points' or 'rank', got {reward!r}")
        if on_illegal not in ("raise", "fallback"):
            raise ValueError(f"on_illegal must be 'raise' or 'fallback', got {on_illegal!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} "
                             f"or None, got {render_mode!r}")
        if render_seat is not None and not 0 <= render_seat < n_players:
            raise ValueError(f"render_seat must be a seat 0..{n_players - 1} or None, "
                             f"got {render_seat!r}")
        self.n_players = n_players
        self.reward_mode = reward
        self.on_illegal = on_illegal
        self.render_mode = render_mode
        self.render_seat = render_seat
        self.possible_agents = [f"player_{seat}" for seat in range(n_players)]
        self.agents: list[str] = []
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        low, high = self.encoder.bounds()
        # one space object per environment, the same at every call (attributes, not a
        # functools.cache on the methods: that cache is the class's and kept every environment
        # ever made alive, ~6 MB each)
        self._observation_space = spaces.Dict({
            "observation": spaces.Box(low, high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (self.encoder.actions.size,), dtype=np.int8),
        })
        self._action_space = spaces.Discrete(self.encoder.actions.size)
        self._base_seed: int | None = None
        self._resets = 0
        self.game: GameSteps | None = None
        self.games_started = 0
        self.public_rounds: list[PublicRound] = []
        self.record: GameRecord | None = None
        self._phase: Phase | None = None
        self._substep = 0
        self._picks: dict[int, list[int]] = {}
        self._failed: dict[int, Failure] = {}
        self._masks: list[np.ndarray] = []

    # -- spaces -----------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        self._seat(agent)
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:
        self._seat(agent)
        return self._action_space

    def _seat(self, agent: str) -> int:
        try:
            return self._seat_of[agent]
        except KeyError:
            raise KeyError(f"unknown agent {agent!r}; agents: "
                           f"{', '.join(self.possible_agents)}") from None

    # -- the game ---------------------------------------------------------------------------

    def next_seed(self, seed: int | None) -> GameSeed:
        """The game seed of a reset: ``seed`` itself (the game ``play_game(..., seed)``
        plays), then ``game_seed(seed, 1)``, ``game_seed(seed, 2)`` ... on resets without a
        seed; fresh entropy if the environment was never seeded. A seed that is not a
        non-negative integer (``1.5``, ``'7'``, ``True``) is refused, never rounded or parsed."""
        if seed is not None:
            seed = check_seed(seed)
            self._base_seed, self._resets = seed, 1
            return seed
        if self._base_seed is None:
            entropy = np.random.SeedSequence().entropy
            assert isinstance(entropy, int)
            self._base_seed, self._resets = entropy, 1
            return entropy
        self._resets += 1
        return game_seed(self._base_seed, self._resets - 1)

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        self.game = GameSteps(self.possible_agents, self.rules, self.deck,
                              self.next_seed(seed), on_illegal=self.on_illegal,
                              players=self.possible_agents)
        self.games_started += 1
        self.public_rounds = []
        self.record = None
        self.agents = self.possible_agents[:]
        event = self._skip_reveals(self.game.start())
        assert event is not None, "a game ends before its first round"
        self._begin_phase(event)
        observations = self._observations()
        return observations, {agent: {} for agent in self.agents}

    def context(self, agent: str) -> GameContext:
        """What ``agent``'s seat learns at the start of the game (``Agent.begin_game``)."""
        if self.game is None:
            raise RuntimeError("call reset() first")
        return self.game.context(self._seat(agent))

    def decision(self, agent: str) -> tuple[Decision, int] | None:
        """``agent``'s pending decision and its sub-step (0, 1), or None if it passes now."""
        seat = self._seat(agent)
        if self._phase is None or seat in self._failed:
            return None
        for decision in self._phase.decisions:
            if decision.seat == seat:
                return decision, self._substep
        return None

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float],
                                                        dict[str, bool], dict[str, bool],
                                                        dict[str, dict[str, Any]]]:
        if not self.agents or self._phase is None:
            raise RuntimeError("the game is over; call reset()")
        phase, layout = self._phase, self.encoder.actions
        deciding = {decision.seat: decision for decision in phase.decisions
                    if decision.seat not in self._failed}
        picks: dict[int, int] = {}
        failed: dict[int, Failure] = {}
        for seat, agent in enumerate(self.possible_agents):
            given = actions.get(agent)
            action = _as_action(given)
            if seat not in deciding:
                if given is not None and action != 0 and self.on_illegal == "raise":
                    raise ValueError(f"{agent} does not decide now and must pass (action 0), "
                                     f"got {_describe(layout, given, action)}")
                continue
            mask = self._masks[seat]
            if action is not None and 0 <= action < layout.size and mask[action]:
                picks[seat] = action
                continue
            message = (f"{agent}, round {deciding[seat].view.round + 1}, {phase.action}: "
                       f"{_describe(layout, given, action)} is not legal now "
                       f"({int(mask.sum())} legal actions in the mask)")
            if self.on_illegal == "raise":
                raise ValueError(message)  # before any change: the step can be retried
            failed[seat] = Failure("illegal", message)
        for seat, action in picks.items():
            self._picks[seat].append(action)
        self._failed.update(failed)
        self._substep += 1
        rewards = dict.fromkeys(self.agents, 0.0)
        if self._substep == self._substeps(phase):
            answers = [self._failed.get(decision.seat)
                       or self.encoder.answer(decision.view, self._picks[decision.seat])
                       for decision in phase.decisions]
            assert self.game is not None
            event = self._skip_reveals(self.game.send(answers), rewards)
            if event is None:
                return self._game_over(rewards)
            self._begin_phase(event)
        else:
            self._update_masks()
        false = dict.fromkeys(self.agents, False)
        return (self._observations(), rewards, false, dict(false),
                {agent: {} for agent in self.agents})

    def _skip_reveals(self, event: Phase | PublicRound | None,
                      rewards: dict[str, float] | None = None) -> Phase | None:
        """Answer the reveals (collecting their points) up to the next phase or the end."""
        assert self.game is not None
        while isinstance(event, PublicRound):
            self.public_rounds.append(event)
            if rewards is not None and self.reward_mode == "points":
                for seat, points in enumerate(event.points):
                    rewards[self.possible_agents[seat]] += float(points)
            event = self.game.send(None)
        return event

    def _game_over(self, rewards: dict[str, float]) -> tuple[Any, ...]:
        assert self.game is not None and self.game.record is not None
        self.record = record = self.game.record
        scores = record.final_scores
        if self.reward_mode == "rank":
            n = self.n_players
            for seat, agent in enumerate(self.possible_agents):
                below = sum(score < scores[seat] for score in scores)
                above = sum(score > scores[seat] for score in scores)
                rewards[agent] = (below - above) / (n - 1)
        truncated = record.end_reason == "max_rounds"
        last = self.public_rounds[-1]
        final = SeatState(VOTE, False, last.storyteller, scores, len(record.rounds))
        encoder = self.encoder
        observations = {agent: {"observation": encoder.observation(seat, final),
                                "action_mask": encoder.pass_mask}
                        for seat, agent in enumerate(self.possible_agents)}
        terminations = dict.fromkeys(self.agents, not truncated)
        truncations = dict.fromkeys(self.agents, truncated)
        infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agents = []
        self._phase = None
        return observations, rewards, terminations, truncations, infos

    # -- phases and observations ------------------------------------------------------------

    def _substeps(self, phase: Phase) -> int:
        if phase.action == "tell":
            return 2
        if phase.action == "submit":
            return self.encoder.cards_per_player
        return 1

    def _begin_phase(self, phase: Phase) -> None:
        self._phase = phase
        self._substep = 0
        self._picks = {decision.seat: [] for decision in phase.decisions}
        self._failed = {}
        self._update_masks()

    def _states(self) -> list[SeatState]:
        """Every seat's :class:`SeatState` now: its view if it decides, else its hand and the
        public table (phase, storyteller, scores, round, and the clue and display once
        public)."""
        phase = self._phase
        assert phase is not None
        encoder, hand_offset = self.encoder, self.encoder.actions.hand_offset
        view = phase.decisions[0].view
        step = (TELL_CLUE if self._substep else TELL_CARD) if phase.action == "tell" \
            else _STEP_OF[phase.action]
        storyteller = view.seat if isinstance(view, TellView) else view.storyteller
        public = SeatState(step, False, storyteller, view.scores, view.round,
                           clue=getattr(view, "clue", None),
                           display=view.display if isinstance(view, VoteView) else ())
        # a seat that does not decide still holds its own hand
        game = self.game
        assert game is not None
        states = [dataclasses.replace(public, hand=game.hand(seat))
                  for seat in range(self.n_players)]
        for decision in phase.decisions:
            if decision.seat not in self._failed:
                chosen = [action - hand_offset for action in self._picks[decision.seat]]
                states[decision.seat] = encoder.state_of_view(decision.view, chosen,
                                                              clue_step=step == TELL_CLUE)
        return states

    def _update_masks(self) -> None:
        self._states_now = self._states()
        self._masks = [self.encoder.mask(state) for state in self._states_now]

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        encoder, masks = self.encoder, self._masks
        return {agent: {"observation": encoder.observation(seat, self._states_now[seat]),
                        "action_mask": masks[seat]}
                for seat, agent in enumerate(self.possible_agents)}

    # -- rendering --------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        from dixit_lab.env.render import render_ansi, render_rgb

        if self.render_mode is None:
            import warnings

            warnings.warn("render() called without a render_mode; pass render_mode='ansi', "
                          "'rgb_array' or 'human'", stacklevel=2)
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self)
        text = render_ansi(self)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.game = None
        self._phase = None


def check_seed(seed: object) -> int:
    """``seed`` as an ``int`` if it is a non-negative integer (a NumPy integer too), else a
    ``TypeError`` (``1.5``, ``'7'``, ``True``: not integers) or ``ValueError`` (negative)
    naming it."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be a non-negative integer or None, got {seed!r} "
                        f"({type(seed).__name__})")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed}")
    return int(seed)


def _describe(layout: ActionLayout, given: Any, action: int | None) -> str:
    if given is None:
        return "no action"
    return layout.describe(action) if action is not None else f"action {given!r}"
