"""``DixitVectorEnv``: many Dixit tables stepped at once over NumPy arrays, for learning code.

A Gymnasium ``VectorEnv`` whose sub-environments are the seats: row ``table * n + seat`` is
seat ``seat`` (``player_<seat>``) of table ``table``, so ``num_envs = tables * n_players`` and
one shared (self-play) policy sees an ordinary vector of masked ``Discrete`` environments. An
*agent step* is one seat's action at one table; one ``step`` call is ``num_envs`` of them.
Every table is at the same step of its round (``tell_card``, ``tell_clue``, ``submit`` per
card, ``vote``: the PettingZoo environment's steps), which Dixit allows because every round
has the same steps and a game ends only after a vote. Autoreset is ``SAME_STEP``: the step that
ends a table's game returns the first observation of its next game, with the game's final
observation in ``infos["final_obs"]`` (``infos["_final_obs"]`` says which rows).

Table ``i`` plays the games of a PettingZoo environment reset with ``seed + i`` and then reset
without a seed after each game: the same observations, masks, rewards, terminations and
truncations (``tests/env/test_vector.py``). The games are played by
:mod:`dixit_lab.env.vector_tables`; the observations are the :class:`Encoder`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dixit_lab.core.cards import Deck
from dixit_lab.core.rules import RuleSet
from dixit_lab.core.seeding import game_seed
from dixit_lab.embeddings import EmbeddingSpace
from dixit_lab.env.encoding import STEP_NAMES, SUBMIT, TELL_CARD, TELL_CLUE, VOTE, table_encoder
from dixit_lab.env.parallel import check_seed
from dixit_lab.env.vector_tables import VectorTables, round_steps

__all__ = ["COMPACT_FIELDS", "DixitVectorEnv"]

Observations = Literal["flat", "compact"]
#: the observation fields a compact observation leaves out (their card and clue numbers
#: stand for them: ``hand``, ``display``, ``clue``)
FEATURE_FIELDS = ("clue", "hand", "display")
#: the fields of a compact observation's ``observation`` vector, in order
COMPACT_FIELDS = ("step", "acting", "storyteller", "scores", "round", "hand_present",
                  "hand_chosen", "hand_similarity", "clue_known", "display_present",
                  "display_own", "display_similarity")


class DixitVectorEnv(VectorEnv):
    """``num_tables`` Dixit tables of ``n_players`` learners; options as for
    :class:`~dixit_lab.env.parallel.DixitParallelEnv` (``rules`` and rule options, ``deck``,
    ``embedder``, ``clues``, ``clue_texts``, ``space``, ``reward``).

    ``observations="flat"``: each row's ``{"observation", "action_mask"}`` is the PettingZoo
    environment's, the flat vector of ``encoder.layout``. ``"compact"``: the feature vectors
    are left out and the card and clue numbers given instead (``hand``, ``display``: card
    numbers, -1 for none; ``clue``: the clue action, -1 before the clue is public), with the
    other fields in ``observation`` (:data:`COMPACT_FIELDS`);
    :meth:`flat_observations` turns it into the flat vectors, the same bytes. The arrays
    returned are the environment's buffers, rewritten by the next ``step``: copy what you
    keep (and do not write into them: the next step reads them). An illegal action (outside
    its row's mask, a non-pass action of a seat that does not decide) raises ``ValueError``
    naming the table, agent, round, step and action, before anything changes."""

    def __init__(self, num_tables: int = 64, n_players: int = 4,
                 rules: str | RuleSet = "classic", deck: str | Deck = "dreams",
                 embedder: str = "conse", *, clues: str = "default",
                 clue_texts: Sequence[str] | None = None, space: EmbeddingSpace | None = None,
                 reward: Literal["points", "rank"] = "points",
                 observations: Observations = "flat", **rule_options: Any) -> None:
        if isinstance(num_tables, bool) or not isinstance(num_tables, int) or num_tables < 1:
            raise ValueError(f"num_tables must be a positive integer, got {num_tables!r}")
        if reward not in ("points", "rank"):
            raise ValueError(f"reward must be 'points' or 'rank', got {reward!r}")
        for option in ("on_illegal", "render_mode", "render_seat"):
            if option in rule_options:
                raise ValueError(f"{option}: the vector environment has no such option (it "
                                 f"raises on an illegal action and does not render); the "
                                 f"parallel environment has it")
        if observations not in ("flat", "compact"):
            raise ValueError(f"observations must be 'flat' or 'compact', got {observations!r}")
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
        self.rules, self.deck, self.encoder = table_encoder(
            n_players, rules, deck, embedder, clues, clue_texts, space, rule_options)
        encoder, layout = self.encoder, self.encoder.actions
        self.num_tables, self.n_players = num_tables, n_players
        self.num_envs = num_tables * n_players
        self.reward_mode, self.observation_mode = reward, observations
        self.possible_agents = [f"player_{seat}" for seat in range(n_players)]
        self.tables = VectorTables(num_tables, n_players, self.rules, len(self.deck))
        self.steps = round_steps(encoder.cards_per_player)
        self._at = 0
        low, high = encoder.bounds()
        columns = [np.arange(encoder.layout.slice(name).start, encoder.layout.slice(name).stop)
                   for name in COMPACT_FIELDS]
        self._small_columns = np.concatenate(columns)
        # the compact fields as runs of adjacent columns of the flat layout:
        # (flat start, compact start, width)
        self._runs: list[tuple[int, int, int]] = []
        for at, column in enumerate(self._small_columns.tolist()):
            if self._runs and sum(self._runs[-1][::2]) == column:
                start, small, width = self._runs[-1]
                self._runs[-1] = (start, small, width + 1)
            else:
                self._runs.append((column, at, 1))
        self._small = {name: slice(start, start + column.size) for name, column, start in
                       zip(COMPACT_FIELDS, columns,
                           np.cumsum([0] + [c.size for c in columns[:-1]]).tolist(),
                           strict=True)}
        mask_space = spaces.Box(0, 1, (layout.size,), dtype=np.int8)
        cards = len(self.deck)
        if observations == "flat":
            self.single_observation_space = spaces.Dict({
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": mask_space})
        else:
            h, k = encoder.hand_size, encoder.n_displayed
            self.single_observation_space = spaces.Dict({
                "observation": spaces.Box(low[self._small_columns], high[self._small_columns],
                                          dtype=np.float32),
                "hand": spaces.Box(-1, cards - 1, (h,), dtype=np.int64),
                "display": spaces.Box(-1, cards - 1, (k,), dtype=np.int64),
                "clue": spaces.Box(-1, layout.n_clues - 1, (), dtype=np.int64),
                "action_mask": mask_space})
        self.single_action_space = spaces.Discrete(layout.size)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # card and clue features with a row of zeros at -1 (no card, no clue)
        space_ = encoder.space
        self._card_rows = np.vstack([encoder.card_vectors,
                                     np.zeros((1, encoder.dim), np.float32)])
        self._clue_rows = np.vstack([encoder.clue_vectors,
                                     np.zeros((1, encoder.dim), np.float32)])
        similarity = np.asarray(space_.similarity, dtype=np.float32)[encoder.clue_rows]
        self._similarity = np.hstack([similarity, np.zeros((len(similarity), 1), np.float32)])
        t, n = num_tables, n_players
        self._obs = np.zeros((t, n, self._small_columns.size), dtype=np.float32)
        self._masks = np.zeros((t, n, layout.size), dtype=np.int8)
        self._games = np.zeros(t, dtype=np.int64)
        self._base: int | None = None
        self.rows = np.arange(self.num_envs)
        self._flat: np.ndarray | None = None

    # -- seeding ----------------------------------------------------------------------------

    def _next_seeds(self, rows: np.ndarray) -> list[int | np.random.SeedSequence]:
        """The seeds of the next games of tables ``rows``: ``base + i``, then
        ``game_seed(base + i, 1)``, ``game_seed(base + i, 2)`` ... (the PettingZoo env's)."""
        assert self._base is not None
        seeds: list[int | np.random.SeedSequence] = []
        for row in rows.tolist():
            games = int(self._games[row])
            start = self._base + row
            seeds.append(start if games == 0 else game_seed(start, games))
            self._games[row] = games + 1
        return seeds

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Deal a game at every table: table ``i`` the game ``parallel_env(...).reset(seed=seed
        + i)`` plays; without a seed, every table's next game (fresh entropy if never seeded)."""
        if seed is not None:
            self._base = check_seed(seed)
            self._games[:] = 0
        elif self._base is None:
            entropy = np.random.SeedSequence().entropy
            assert isinstance(entropy, int)
            self._base = entropy
        rows = np.arange(self.num_tables)
        self.tables.deal_seeds(rows, self._next_seeds(rows))
        self._at = 0
        self._masks[:] = 0
        return self._observe(), {}

    # -- stepping ---------------------------------------------------------------------------

    @property
    def step_kind(self) -> int:
        """The step every table is at (``encoding.TELL_CARD`` ...)."""
        return self.steps[self._at]

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                          np.ndarray, dict[str, Any]]:
        if self._base is None:
            raise RuntimeError("call reset() first")
        chosen = self._check(actions)
        tables, layout, kind = self.tables, self.encoder.actions, self.step_kind
        rows = np.arange(self.num_tables)
        rewards = np.zeros((self.num_tables, self.n_players), dtype=np.float64)
        ended = np.zeros(self.num_tables, dtype=bool)
        truncated = ended
        if kind == TELL_CARD:
            tables.tell_card(chosen[rows, tables.storyteller] - layout.hand_offset)
        elif kind == TELL_CLUE:
            tables.tell_clue(chosen[rows, tables.storyteller] - layout.clue_offset)
        elif kind == SUBMIT:
            tables.submit(self._at - 2, chosen - layout.hand_offset)
        else:
            points, ended, truncated = tables.vote(chosen - layout.display_offset)
            if self.reward_mode == "points":
                rewards[:] = points
        self._at = (self._at + 1) % len(self.steps)
        infos: dict[str, Any] = {}
        if ended.any():
            done = np.flatnonzero(ended)
            if self.reward_mode == "rank":
                scores = tables.scores[done]
                below = (scores[:, None, :] < scores[:, :, None]).sum(axis=2)
                above = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)
                rewards[done] = (below - above) / (self.n_players - 1)
            infos["final_obs"] = self._final_observations(ended)
            infos["_final_obs"] = np.repeat(ended, self.n_players)
            tables.deal_seeds(done, self._next_seeds(done))
        n = self.n_players
        terminations = np.repeat(ended & ~truncated, n)
        return (self._observe(), rewards.reshape(-1), terminations, np.repeat(truncated, n),
                infos)

    def _check(self, actions: Any) -> np.ndarray:
        """The actions as (tables, n) ints, or ``ValueError`` naming the first illegal one."""
        given = np.asarray(actions)
        if given.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions (one per table and seat), got "
                             f"an array of shape {given.shape}")
        if given.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {given.dtype}")
        size = self.encoder.actions.size
        inside = (given >= 0) & (given < size)
        legal = inside.copy()
        flat_masks = self._masks.reshape(self.num_envs, size)
        legal[inside] = flat_masks[self.rows[inside], given[inside]] == 1
        if not legal.all():
            row = int(np.flatnonzero(~legal)[0])
            self._illegal(row, int(given[row]), flat_masks[row])
        return given.reshape(self.num_tables, self.n_players).astype(np.int64, copy=False)

    def _illegal(self, row: int, action: int, mask: np.ndarray) -> None:
        table, seat = divmod(row, self.n_players)
        agent, layout = self.possible_agents[seat], self.encoder.actions
        described = layout.describe(action) if action >= 0 else f"action {action}"
        if mask[0]:
            raise ValueError(f"table {table}, {agent} does not decide now and must pass "
                             f"(action 0), got {described}")
        raise ValueError(f"table {table}, {agent}, round {int(self.tables.round[table]) + 1}, "
                         f"{STEP_NAMES[self.step_kind]}: {described} is not legal now "
                         f"({int(mask.sum())} legal actions in the mask)")

    # -- observations -----------------------------------------------------------------------

    def _observe(self) -> dict[str, np.ndarray]:
        """Fill the observation and mask buffers for the step every table is at."""
        tables, kind, f = self.tables, self.step_kind, self._small
        obs, masks, layout = self._obs, self._masks, self.encoder.actions
        n, h, k = self.n_players, tables.hand_size, tables.shown
        t_rows = np.arange(self.num_tables)
        acting = tables.acting(kind)
        public = slice(f["storyteller"].start, f["round"].stop)
        if kind == TELL_CARD:  # a round begins: the public fields change (only) now
            obs[:] = 0.0
            self._public(obs, tables.storyteller, tables.scores, tables.round)
        else:
            obs[:, :, :public.start] = 0.0
            obs[:, :, public.stop:] = 0.0
        obs[:, :, f["step"].start + kind] = 1.0
        obs[:, :, f["acting"].start] = acting
        present = np.arange(h) < tables.hand_len[:, :, None]
        obs[:, :, f["hand_present"]] = present
        obs[:, :, f["hand_chosen"]] = tables.chosen
        clue_known = kind in (SUBMIT, VOTE)
        if clue_known:
            similarity = self._similarity[tables.clue]                    # (T, deck + 1)
            width = similarity.shape[1]  # a missing card (-1) reads the last column, zeros
            cells = np.where(present, tables.hands, width - 1) + (t_rows * width)[:, None, None]
            obs[:, :, f["hand_similarity"]] = similarity.reshape(-1)[cells]
            obs[:, :, f["clue_known"].start] = 1.0
        own = np.zeros((self.num_tables, n, k), dtype=bool)
        if kind == VOTE:
            own = acting[:, :, None] & (tables.card_owner[:, None, :] == np.arange(n)[None, :,
                                                                                       None])
            obs[:, :, f["display_present"]] = 1.0
            obs[:, :, f["display_own"]] = own
            obs[:, :, f["display_similarity"]] = similarity[t_rows[:, None],
                                                            tables.display][:, None, :]
        # the masks: pass, hand slots, display positions; the clue actions at tell_clue only
        end = layout.clue_offset
        masks[:, :, :end] = 0
        masks[:, :, 0] = ~acting
        if kind in (TELL_CARD, SUBMIT):
            masks[:, :, 1:1 + h] = acting[:, :, None] & present & ~tables.chosen
        elif kind == VOTE:
            legal = acting[:, :, None] & ~self.rules.barred_vote_mask(own)
            masks[:, :, layout.display_offset:end] = legal
        teller = tables.storyteller
        if kind == TELL_CLUE:
            masks[t_rows, teller, end:] = 1
        elif self.steps[self._at - 1] == TELL_CLUE:  # the same storytellers, one step on
            masks[t_rows, teller, end:] = 0
        rows = self.num_envs
        out = {"observation": obs.reshape(rows, -1),
               "hand": np.where(present, tables.hands, -1).reshape(rows, h),
               "display": np.broadcast_to(tables.display[:, None, :],
                                          (self.num_tables, n, k)).reshape(rows, k),
               "clue": np.repeat(np.where(clue_known, tables.clue, -1), n),
               "action_mask": masks.reshape(rows, -1)}
        return self._shaped(out)

    def _public(self, obs: np.ndarray, storyteller: np.ndarray, scores: np.ndarray,
                rounds: np.ndarray) -> None:
        """The public fields of every seat of the tables of ``obs``: the storyteller from
        the seat, the scores from the seat on, the round."""
        n, f = self.n_players, self._small
        seats = np.arange(n)
        tables = np.arange(len(storyteller))[:, None]
        obs[tables, seats[None, :], f["storyteller"].start
            + (storyteller[:, None] - seats[None, :]) % n] = 1.0
        twice = np.concatenate([scores, scores], axis=1)  # seat s reads columns s .. s+n-1
        step = twice.strides[1]
        obs[:, :, f["scores"]] = np.lib.stride_tricks.as_strided(
            twice, (len(twice), n, n), (twice.strides[0], step, step), writeable=False)
        obs[:, :, f["round"].start] = rounds[:, None]

    def _final_observations(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The last observation of the games that ``ended`` (zeros on the other rows): the
        PettingZoo environment's at its end (the vote step, nobody deciding, the final
        scores and the number of rounds played; only pass is legal)."""
        tables, n = self.tables, self.n_players
        obs = np.zeros_like(self._obs)
        self._public(obs, tables.storyteller, tables.scores, tables.round)
        obs[:, :, self._small["step"].start + VOTE] = 1.0
        obs[~ended] = 0.0
        masks = np.zeros((self.num_envs, self.encoder.actions.size), dtype=np.int8)
        masks[np.repeat(ended, n), 0] = 1
        rows, h, k = self.num_envs, tables.hand_size, tables.shown
        return self._shaped({"observation": obs.reshape(rows, -1),
                             "hand": np.full((rows, h), -1, dtype=np.int64),
                             "display": np.full((rows, k), -1, dtype=np.int64),
                             "clue": np.full(rows, -1, dtype=np.int64),
                             "action_mask": masks}, buffer=False)

    def _shaped(self, compact: dict[str, np.ndarray], buffer: bool = True
                ) -> dict[str, np.ndarray]:
        """The observations in the environment's form (flat: into its buffer, or into a new
        array without ``buffer``)."""
        if self.observation_mode == "compact":
            return compact
        if self._flat is None:
            self._flat = np.empty((self.num_envs, self.encoder.size), dtype=np.float32)
        out = self._flat if buffer else None
        return {"observation": self.flat_observations(compact, out),
                "action_mask": compact["action_mask"]}

    def flat_observations(self, compact: Mapping[str, np.ndarray],
                          out: np.ndarray | None = None) -> np.ndarray:
        """The flat observation vectors (rows, ``encoder.size``) of compact observations: the
        PettingZoo environment's, byte for byte (written into ``out`` if given)."""
        encoder, layout = self.encoder, self.encoder.layout
        small = np.asarray(compact["observation"])
        rows = small.shape[0]
        flat = np.empty((rows, encoder.size), dtype=np.float32) if out is None else out
        for start, at, width in self._runs:  # every column is written: no zeroing first
            flat[:, start:start + width] = small[:, at:at + width]
        flat[:, layout.slice("clue")] = self._clue_rows[np.asarray(compact["clue"])]
        for field in ("hand", "display"):
            cards = np.asarray(compact[field])
            flat[:, layout.slice(field)] = self._card_rows[cards].reshape(rows, -1)
        return flat

    def close(self, **kwargs: Any) -> None:
        """Nothing to release (no process, no file)."""
