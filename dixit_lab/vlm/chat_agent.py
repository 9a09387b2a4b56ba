"""``ChatAgent``: the machinery of the agents that play through a chat-completions model.

The first decision meets the server (:mod:`dixit_lab.vlm.session`: its dialect, the response
format it accepts, the model it serves, whether it sees images). One decision is: build the
messages from the templates and the seat's view, ask the model (through the exchange store,
so a recorded reply is reused and a replay needs no server; charged to the seat's and the
run's budgets, :mod:`dixit_lab.vlm.ledger`), read the reply, and on a problem feed the error
back and ask again, up to ``retries`` times. A decision that still fails raises
:class:`~dixit_lab.core.agent.AgentFailure` with its fault class, and the engine plays its
seeded fallback and records the fault. Each decision leaves a usage row (tokens, latency,
cost, exchanges, fault class, response format, the model the server reported) in
:attr:`ChatAgent.usage`.
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
from dixit_lab.vlm.client import STOP, Endpoint, EndpointError, RunInterrupted, complete, get_json
from dixit_lab.vlm.dialects import DIALECTS, FORMATS, format_fields
from dixit_lab.vlm.images import data_url, image_ref
from dixit_lab.vlm.ledger import Budget, estimated_tokens, ledger_for
from dixit_lab.vlm.parse import ReplyProblem, read_reply
from dixit_lab.vlm.prompts import Templates, answer_schema, table_fields
from dixit_lab.vlm.session import ServerSession, check_model, negotiate
from dixit_lab.vlm.store import ReplayMiss, canonical_json, current_store, exchange_key

__all__ = ["REASONING_EFFORTS", "RESPONSE_FORMATS", "AgentSetupError", "ChatAgent"]

_SEED_RANGE = 2**31
#: what ``response_format`` may be: ``auto`` (the server's best, found by probing) or a format
RESPONSE_FORMATS: tuple[str, ...] = ("auto", *FORMATS)
#: the values of ``reasoning_effort`` (sent as the request's field, as OpenAI's and vLLM's
#: reasoning models take it)
REASONING_EFFORTS: tuple[str, ...] = ("minimal", "low", "medium", "high")


class AgentSetupError(UserError, RuntimeError):
    """A model agent that cannot play this game at all (e.g. a deck without images)."""


class ChatAgent(Agent):
    """Base of ``vlm`` and ``llm``; subclasses say how a card is shown (:meth:`card_parts`)."""

    remote: ClassVar[bool] = True
    #: its exchanges are recorded in the results folder, and its recorder plays a chunk's
    #: games concurrently (:mod:`dixit_lab.vlm.recorder`, :mod:`dixit_lab.vlm.driver`)
    recorder: ClassVar[str | None] = "exchanges"
    writes_free_text: ClassVar[bool] = True  # a model's clue is any text

    def __init__(self, *, model: str, base_url: str, api_key_env: str | None,
                 temperature: float | None, max_tokens: int | None, timeout: float,
                 retries: int, http_retries: int, backoff: float, concurrency: int,
                 response_format: str | None, dialect: str, on_model_mismatch: str,
                 send_seed: bool, price_in: float | None, price_out: float | None,
                 max_tokens_total: int | None, max_cost_usd: float | None,
                 prompts: str | None, system_prompt: str | None,
                 tell_prompt: str | None, submit_prompt: str | None, vote_prompt: str | None,
                 retry_prompt: str | None, top_p: float | None = None,
                 reasoning_effort: str | None = None,
                 enable_thinking: bool | None = None) -> None:
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
        if top_p is not None and not 0 < top_p <= 1:
            raise ValueError(f"top_p must be above 0 and at most 1, got {top_p}")
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)} "
                             f"(or None), got {reasoning_effort!r}")
        response_format = "none" if response_format is None else response_format
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {', '.join(RESPONSE_FORMATS)} "
                             f"(or None), got {response_format!r}")
        if dialect not in ("auto", *DIALECTS):
            raise ValueError(f"dialect must be auto or one of {', '.join(DIALECTS)}, got "
                             f"{dialect!r}")
        if on_model_mismatch not in ("warn", "error", "ignore"):
            raise ValueError(f"on_model_mismatch must be warn, error or ignore, got "
                             f"{on_model_mismatch!r}")
        for name, limit in (("max_tokens_total", max_tokens_total),
                            ("max_cost_usd", max_cost_usd)):
            if limit is not None and limit < 0:
                raise ValueError(f"{name} must be 0 or more, got {limit}")
        self.model = model
        self.endpoint = Endpoint(base_url, api_key_env, timeout, concurrency, http_retries,
                                 backoff)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_p = top_p
        self.reasoning_effort = reasoning_effort
        self.enable_thinking = enable_thinking
        self.retries = retries
        self.response_format = response_format
        self.dialect = dialect
        self.on_model_mismatch = on_model_mismatch
        self.send_seed = send_seed
        self.price = (price_in, price_out)
        self.budget = Budget(max_tokens_total, max_cost_usd)
        #: the name the seat's budget is kept under (the driver sets the player's name)
        self.ledger_name: str | None = None
        self.session: ServerSession | None = None
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

    def probe_parts(self) -> list[dict[str, Any]] | None:
        """The parts that show one card, to check that the server sees them (None: a text
        agent, nothing to check)."""
        return None

    # -- the server ----------------------------------------------------------------------------

    def _sampling(self) -> dict[str, Any]:
        params: dict[str, Any] = {}  # None: left to the server (e.g. models without them)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.top_p is not None:
            params["top_p"] = self.top_p
        if self.reasoning_effort is not None:  # OpenAI's and vLLM's reasoning models
            params["reasoning_effort"] = self.reasoning_effort
        if self.enable_thinking is not None:  # the chat template's switch (Qwen 3, vLLM ...)
            params["chat_template_kwargs"] = {"enable_thinking": self.enable_thinking}
        return params

    def server(self) -> ServerSession:
        """The session with this agent's server (negotiated once per process and store)."""
        if self.session is None:
            probe_params = {**self._sampling(), **({"seed": 0} if self.send_seed else {})}
            if "max_tokens" in probe_params:
                probe_params["max_tokens"] = min(probe_params["max_tokens"], 24)
            parts = self.probe_parts()
            key = (self.endpoint.base_url, self.endpoint.api_key_env, self.model, self.dialect,
                   self.response_format, canonical_json(probe_params),
                   canonical_json(parts) if parts else None)
            self.session = negotiate(key, model=self.model, dialect=self.dialect,
                                     response_format=self.response_format, params=probe_params,
                                     probe=self._probe, store=current_store(),
                                     image_parts=parts, on_mismatch=self.on_model_mismatch)
        return self.session

    def _probe(self, request: dict[str, Any], kind: str) -> dict[str, Any]:
        """One exchange that meets the server (through the store, charged to nobody)."""
        store = current_store()
        key = exchange_key(request)
        outcome = store.get(key)
        if outcome is None:
            if store.mode == "replay":
                raise ReplayMiss(f"agent {getattr(self, 'spec', self.name)}: the check of the "
                                 f"server ({kind}, exchange {key[:12]}) was not recorded in "
                                 f"{store.folder or 'memory'} (replay-only: a folder recorded "
                                 f"before servers were checked, or with other settings)")
            if STOP.is_set():
                raise RunInterrupted
            if kind == "models":
                listing = get_json(self.endpoint, "models")
                data = listing.get("data") if isinstance(listing, dict) else None
                outcome = {"models": {"data": [
                    {k: entry.get(k) for k in ("id", "owned_by")} for entry in data[:20]
                    if isinstance(entry, dict)]} if isinstance(data, list) else None}
            else:
                outcome = complete(self.endpoint, self.wire(request), request)
            store.put(key, request, outcome, {"probe": kind})
        return outcome

    # -- the game ------------------------------------------------------------------------------

    def begin_game(self, context: GameContext) -> None:
        super().begin_game(context)
        self.check_deck(context)
        self._table = table_fields(context.rules, context.n_players, context.seat)
        self.usage = []
        self.session = None  # the store may have changed: the process-wide cache decides

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
        barred = self.context.rules.barred_votes(view.own_positions)
        labels = [position + 1 for position in range(len(view.display))
                  if position not in barred]
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
        session = self.server()
        params = self._sampling()
        if self.send_seed:  # one draw per decision: distinct calls get distinct keys
            params["seed"] = int(self.context.uniforms.next() * _SEED_RANGE)
        params.update(format_fields(session.format, name, schema, n_cards))
        row: dict[str, Any] = {"round": round_index, "action": action, "exchanges": 0,
                               "recorded": 0, "prompt_tokens": 0, "completion_tokens": 0,
                               "unreported_usage": 0, "latency_s": 0.0, "fault": None,
                               "format": session.format, "served_model": None}
        self.usage.append(row)
        kind, message = "unparsable", ""
        for _ in range(self.retries + 1):
            request = {"model": self.model, "messages": messages, **params}
            outcome = self._exchange(request, row, session)
            if "error" in outcome:
                error = outcome["error"]
                if error.get("field") is not None:  # every request would be refused alike
                    raise EndpointError(f"the server of model {self.model!r} refused the "
                                        f"field {error['field']!r} of a decision: "
                                        f"{error['message'][:200]}")
                kind, message = error["kind"], error["message"]
                break  # the client has already retried what a retry can fix
            try:
                return read_reply(outcome, action, labels, n_cards)
            except ReplyProblem as problem:
                kind, message = problem.kind, str(problem)
            content = (outcome.get("message") or {}).get("content")
            messages = [*messages,
                        {"role": "assistant", "content": _sendable(content[:2000])
                         if isinstance(content, str) else ""},
                        {"role": "user", "content": _sendable(self.templates.retry.format_map(
                            {**values, "error": message}))}]
        row["fault"] = kind
        raise AgentFailure(kind, f"{message} (after {row['exchanges']} exchange(s) with "
                                 f"{self.model})")

    @staticmethod
    def _user_content(prompt: str, parts: list[dict[str, Any]]) -> Any:
        if all(part["type"] == "text" for part in parts):  # text-only: one plain string
            return "\n".join([prompt, *(part["text"] for part in parts)])
        return [{"type": "text", "text": prompt}, *parts]

    def _exchange(self, request: dict[str, Any], row: dict[str, Any],
                  session: ServerSession) -> dict[str, Any]:
        store = current_store()
        key = exchange_key(request)
        outcome = store.get(key)
        if outcome is None:
            if store.mode == "replay":
                raise ReplayMiss(f"agent {getattr(self, 'spec', self.name)}: exchange {key[:12]} "
                                 f"was not recorded in {store.folder or 'memory'} (replay-only: "
                                 f"the prompt, model or parameters differ from the recorded "
                                 f"run, or the run was not finished)")
            outcome = self._ask(store, key, request, session)
        else:
            row["recorded"] += 1
        usage = outcome.get("usage") or {}
        row["exchanges"] += 1
        for field in ("prompt_tokens", "completion_tokens"):
            count = usage.get(field)
            if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
                row[field] += count
        reasoning = usage.get("reasoning_tokens")  # of the completion's, where reported
        if isinstance(reasoning, int) and not isinstance(reasoning, bool) and reasoning >= 0:
            row["reasoning_tokens"] = row.get("reasoning_tokens", 0) + reasoning
        if "error" not in outcome and "usage_problem" in outcome:
            row["unreported_usage"] += 1
        row["latency_s"] = round(row["latency_s"] + float(outcome.get("wall_s", 0.0)), 4)
        price_in, price_out = self.price
        if price_in is not None or price_out is not None:
            row["cost_usd"] = (row["prompt_tokens"] * (price_in or 0.0)
                               + row["completion_tokens"] * (price_out or 0.0)) / 1e6
        served = outcome.get("model")
        if isinstance(served, str):
            row["served_model"] = served
            check_model(self.model, served, self.on_model_mismatch)
        return outcome

    def _cost(self, prompt: float, completion: float) -> float:
        price_in, price_out = self.price
        return (prompt * (price_in or 0.0) + completion * (price_out or 0.0)) / 1e6

    def _ask(self, store: Any, key: str, request: dict[str, Any], session: ServerSession
             ) -> dict[str, Any]:
        """Send ``request`` if the budgets allow it (else a ``budget`` outcome), charge what
        it spent, and record the outcome."""
        name = str(self.ledger_name or getattr(self, "spec", self.name))
        ledger = ledger_for(store)
        prompt, completion = estimated_tokens(request, None, self.max_tokens)
        reserved = (float(prompt + completion), self._cost(prompt, completion))
        about: dict[str, Any] = {"player": name, "dialect": session.dialect,
                                 "format": session.format}
        reason = ledger.reserve(name, *reserved, self.budget, Budget.of_run())
        if reason is not None:
            outcome: dict[str, Any] = {"error": {"kind": "budget", "message": reason}}
            store.put(key, request, outcome, about)
            return outcome
        try:
            if STOP.is_set():
                raise RunInterrupted
            outcome = complete(self.endpoint, self.wire(request), request)
        except BaseException:
            ledger.settle(name, reserved, (0.0, 0.0))
            raise
        usage = outcome.get("usage") or {}
        if "error" in outcome:
            spent = (0.0, 0.0)  # nothing answered (a server may still bill: not known here)
        elif "usage_problem" in outcome or not {"prompt_tokens", "completion_tokens"} <= set(
                usage):
            content = (outcome.get("message") or {}).get("content")
            estimate = estimated_tokens(request, content if isinstance(content, str) else "")
            spent = (float(sum(estimate)), self._cost(*estimate))
        else:
            spent = (float(usage["prompt_tokens"] + usage["completion_tokens"]),
                     self._cost(usage["prompt_tokens"], usage["completion_tokens"]))
        ledger.settle(name, reserved, spent)
        store.put(key, request, outcome, {**about, "charged": {
            "tokens": spent[0], "cost_usd": round(spent[1], 8)}})
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


_SURROGATE = re.compile("[\ud800-\udfff]")


def _sendable(text: str) -> str:
    """``text`` with each lone surrogate (a reply's JSON may escape one: it is no Unicode)
    as U+FFFD, so that a retry that quotes the reply can be encoded, keyed and stored."""
    return _SURROGATE.sub("\ufffd", text)


_REF = re.compile(r'"(sha256:[0-9a-f]{64}@\d+)"')


def wire_images(request: dict[str, Any], cards: dict[str, Card], size: int) -> bytes:
    """The request's body with each image ref replaced by the card's data URL (``cards``:
    ref -> card). The body is written once with the short refs and the URLs (cached, and
    plain base64: nothing to escape) are spliced in, rather than encoding them anew each time."""
    text = json.dumps(request, ensure_ascii=False)
    body = _REF.sub(lambda match: f'"{data_url(cards[match.group(1)], size)}"', text)
    return body.encode("utf-8")
