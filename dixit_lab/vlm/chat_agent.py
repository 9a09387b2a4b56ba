"""``ChatAgent``: the machinery of the agents that play through a chat-completions model.

One decision is: build the messages from the templates and the seat's view, ask the model
(through the exchange store, so a recorded reply is reused and a replay needs no server), read
the reply, and on a problem feed the error back and ask again, up to ``retries`` times. A
decision that still fails raises :class:`~dixit_lab.core.agent.AgentFailure` with its fault class,
and the engine plays its seeded fallback and records the fault. Each decision leaves a usage row
(tokens, latency, cost, exchanges, fault class) in :attr:`ChatAgent.usage`.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from dixit_lab.core.agent import (
    Agent,
    AgentFailure,
    Clue,
    GameContext,
    PublicRound,
    SubmitView,
    TellView,
    VoteView,
)
from dixit_lab.core.cards import Card
from dixit_lab.errors import UserError
from dixit_lab.vlm.client import Endpoint, complete
from dixit_lab.vlm.images import data_url, image_ref
from dixit_lab.vlm.parse import ReplyProblem, read_reply
from dixit_lab.vlm.prompts import Templates, answer_schema, table_fields
from dixit_lab.vlm.store import ReplayMiss, current_store, exchange_key

__all__ = ["AgentSetupError", "ChatAgent"]

_SEED_RANGE = 2**31


class AgentSetupError(UserError, RuntimeError):
    """A model agent that cannot play this game at all (e.g. a deck without images)."""


class ChatAgent(Agent):
    """Base of ``vlm`` and ``llm``; subclasses say how a card is shown (:meth:`card_parts`)."""

    #: tournaments play these agents' games concurrently (:mod:`dixit_lab.vlm.driver`)
    remote: ClassVar[bool] = True
    writes_free_text: ClassVar[bool] = True  # a model's clue is any text

    def __init__(self, *, model: str, base_url: str, api_key_env: str | None,
                 temperature: float | None, max_tokens: int | None, timeout: float,
                 retries: int, http_retries: int, backoff: float, concurrency: int,
                 response_format: str, send_seed: bool, price_in: float | None,
                 price_out: float | None, prompts: str | None, system_prompt: str | None,
                 tell_prompt: str | None, submit_prompt: str | None, vote_prompt: str | None,
                 retry_prompt: str | None) -> None:
        """The parameters common to every model agent (subclasses pass theirs on with
        :meth:`common`; see docs/vlm.md)."""
        for name, value in (("max_tokens", max_tokens), ("concurrency", concurrency)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        for name, value in (("retries", retries), ("http_retries", http_retries)):
            if value < 0:
                raise ValueError(f"{name} must be 0 or more, got {value}")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if response_format not in ("json_schema", "json_object", "none"):
            raise ValueError(f"response_format must be json_schema, json_object or none, got "
                             f"{response_format!r}")
        self.model = model
        self.endpoint = Endpoint(base_url, api_key_env, timeout, concurrency, http_retries,
                                 backoff)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.retries = retries
        self.response_format = response_format
        self.send_seed = send_seed
        self.price = (price_in, price_out)
        self.templates = Templates.load(prompts, system=system_prompt, tell=tell_prompt,
                                        submit=submit_prompt, vote=vote_prompt,
                                        retry=retry_prompt)
        self.usage: list[dict[str, Any]] = []
        self._table: dict[str, Any] = {}

    @staticmethod
    def common(arguments: dict[str, Any], *own: str) -> dict[str, Any]:
        """A subclass's ``locals()`` in ``__init__`` without ``self`` and its ``own``
        parameters: the keyword arguments of :class:`ChatAgent`."""
        return {key: value for key, value in arguments.items()
                if key not in ("self", "__class__", *own)}

    # -- what a subclass provides -------------------------------------------------------------

    def check_deck(self, context: GameContext) -> None:
        """Raise :class:`AgentSetupError` if this agent cannot perceive the game's deck."""

    def card_parts(self, cards: list[Card]) -> list[dict[str, Any]]:
        """Message parts that show ``cards`` numbered from 1 (images refer to
        :func:`~dixit_lab.vlm.images.image_ref` and are filled in by :meth:`wire`)."""
        raise NotImplementedError

    def wire(self, request: dict[str, Any]) -> bytes:
        """The request's body as sent (subclasses fill in the images)."""
        return json.dumps(request, ensure_ascii=False).encode("utf-8")

    # -- the game ------------------------------------------------------------------------------

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self.check_deck(context)
        self._table = table_fields(context.rules, context.n_players, context.seat)
        self.usage = []

    def tell(self, view: TellView) -> Clue:
        labels = list(range(1, len(view.hand) + 1))
        answer = self._decide("tell", view.round, labels, 1, view.hand, {
            **self._common(view), "hand_count": len(view.hand)})
        return Clue(view.hand[answer["card"] - 1], answer["clue"])

    def submit(self, view: SubmitView) -> list[int]:
        labels = list(range(1, len(view.hand) + 1))
        n = view.n_cards
        answer = self._decide("submit", view.round, labels, n, view.hand, {
            **self._common(view), "storyteller": view.storyteller + 1, "clue": view.clue,
            "hand_count": len(view.hand), "n_cards": n,
            "n_cards_text": "the card that fits the clue best" if n == 1
            else f"the {n} cards that fit the clue best"})
        chosen = answer["cards"] if "cards" in answer else [answer["card"]]
        return [view.hand[label - 1] for label in chosen]

    def vote(self, view: VoteView) -> int:
        own = [position + 1 for position in view.own_positions]
        allowed = self.context.rules.own_card_votes  # own cards are votes too
        labels = [label for label in range(1, len(view.display) + 1)
                  if allowed or label not in own]
        own_text = ("Card " if len(own) == 1 else "Cards ") + " and ".join(map(str, own)) + \
            (" is yours." if len(own) == 1 else " are yours.")
        answer = self._decide("vote", view.round, labels, 1, view.display, {
            **self._common(view), "storyteller": view.storyteller + 1, "clue": view.clue,
            "display_count": len(view.display), "own_positions": ", ".join(map(str, own)),
            "own_text": own_text})
        return answer["card"] - 1

    def _common(self, view: TellView | SubmitView | VoteView) -> dict[str, Any]:
        me = view.seat
        scores = ", ".join(f"player {seat + 1}{' (you)' if seat == me else ''}: {score}"
                           for seat, score in enumerate(view.scores))
        return {"round": view.round + 1, "scores": scores, "history": _history(view.history)}

    # -- one decision --------------------------------------------------------------------------

    def _decide(self, action: str, round_index: int, labels: list[int], n_cards: int,
                cards: tuple[int, ...], fields: dict[str, Any]) -> dict[str, Any]:
        """The model's answer (see :func:`~dixit_lab.vlm.parse.read_reply`), or
        :class:`AgentFailure` once the retries are spent."""
        name, schema, shown = answer_schema(action, labels, n_cards)
        values = {**self._table, **fields, "answer_format": shown}
        prompt = getattr(self.templates, action).format_map(values)
        deck = self.context.deck
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.templates.system.format_map(values)},
            {"role": "user", "content": self._user_content(
                prompt, self.card_parts([deck[card] for card in cards]))},
        ]
        params: dict[str, Any] = {}  # None: left to the server (e.g. models without them)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.send_seed:  # one draw per decision: distinct calls get distinct keys
            params["seed"] = int(self.context.uniforms.next() * _SEED_RANGE)
        if self.response_format == "json_schema":
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": name, "strict": True, "schema": schema}}
        elif self.response_format == "json_object":
            params["response_format"] = {"type": "json_object"}
        row: dict[str, Any] = {"round": round_index, "action": action, "exchanges": 0,
                               "recorded": 0, "prompt_tokens": 0, "completion_tokens": 0,
                               "latency_s": 0.0, "fault": None}
        self.usage.append(row)
        kind, message = "unparsable", ""
        for _ in range(self.retries + 1):
            outcome = self._exchange({"model": self.model, "messages": messages, **params}, row)
            if "error" in outcome:
                kind, message = outcome["error"]["kind"], outcome["error"]["message"]
                break  # the client has already retried what a retry can fix
            try:
                return read_reply(outcome, action, labels, n_cards)
            except ReplyProblem as problem:
                kind, message = problem.kind, str(problem)
            content = (outcome.get("message") or {}).get("content")
            messages = [*messages,
                        {"role": "assistant", "content": content if isinstance(content, str)
                         else ""},
                        {"role": "user", "content": self.templates.retry.format_map(
                            {**values, "error": message})}]
        row["fault"] = kind
        raise AgentFailure(kind, f"{message} (after {row['exchanges']} exchange(s) with "
                                 f"{self.model})")

    @staticmethod
    def _user_content(prompt: str, parts: list[dict[str, Any]]) -> Any:
        if all(part["type"] == "text" for part in parts):  # text-only: one plain string
            return "\n".join([prompt, *(part["text"] for part in parts)])
        return [{"type": "text", "text": prompt}, *parts]

    def _exchange(self, request: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
        store = current_store()
        key = exchange_key(request)
        outcome = store.get(key)
        if outcome is None:
            if store.mode == "replay":
                raise ReplayMiss(f"agent {getattr(self, 'spec', self.name)}: exchange {key[:12]} "
                                 f"was not recorded in {store.folder or 'memory'} (replay-only: "
                                 f"the prompt, model or parameters differ from the recorded "
                                 f"run, or the run was not finished)")
            outcome = complete(self.endpoint, self.wire(request))
            store.put(key, request, outcome)
        else:
            row["recorded"] += 1
        usage = outcome.get("usage") or {}
        row["exchanges"] += 1
        row["prompt_tokens"] += int(usage.get("prompt_tokens", 0))
        row["completion_tokens"] += int(usage.get("completion_tokens", 0))
        row["latency_s"] = round(row["latency_s"] + float(outcome.get("wall_s", 0.0)), 4)
        price_in, price_out = self.price
        if price_in is not None or price_out is not None:
            row["cost_usd"] = (row["prompt_tokens"] * (price_in or 0.0)
                               + row["completion_tokens"] * (price_out or 0.0)) / 1e6
        return outcome

    def drain_usage(self) -> list[dict[str, Any]]:
        """The usage rows of the decisions since the last call (or since ``begin_game``)."""
        rows, self.usage = self.usage, []
        return rows


def _history(history: tuple[PublicRound, ...]) -> str:
    lines = []
    for past in history:
        target = past.card_owner.index(past.storyteller)
        finders = sum(1 for vote in past.votes if vote == target)
        lines.append(f"Round {past.round + 1}: player {past.storyteller + 1} told "
                     f"\"{past.clue}\"; {finders} of {len(past.votes) - 1} found the card.")
    return "\n".join(lines) if lines else "(no round played yet)"


def image_parts(cards: list[Card], size: int, detail: str | None = None
                ) -> list[dict[str, Any]]:
    """Numbered image parts; the URL is the image's ref until :func:`wire_images`;
    ``detail`` (``low``, ``high``, ``auto``) is OpenAI's image detail, left out if None."""
    parts: list[dict[str, Any]] = []
    for number, card in enumerate(cards, start=1):
        image: dict[str, Any] = {"url": image_ref(card, size)}
        if detail is not None:
            image["detail"] = detail
        parts.append({"type": "text", "text": f"Card {number}:"})
        parts.append({"type": "image_url", "image_url": image})
    return parts


_REF = re.compile(r'"(sha256:[0-9a-f]{64}@\d+)"')


def wire_images(request: dict[str, Any], cards: dict[str, Card], size: int) -> bytes:
    """The request's body with each image ref replaced by the card's data URL (``cards``:
    ref -> card). The body is written once with the short refs and the URLs (cached, and
    plain base64: nothing to escape) are spliced in, rather than encoding them anew each time."""
    text = json.dumps(request, ensure_ascii=False)
    body = _REF.sub(lambda match: f'"{data_url(cards[match.group(1)], size)}"', text)
    return body.encode("utf-8")
