"""``vlm`` and ``llm``: agents that play every role through an OpenAI-compatible
chat-completions endpoint (vLLM, Ollama, llama.cpp's server, OpenAI, OpenRouter ...).

``vlm`` shows the model the card images; ``llm`` shows a text model the cards' captions. See
``docs/vlm.md`` and :mod:`dixit_lab.vlm.chat_agent` for what a decision does.
"""

from __future__ import annotations

from typing import Any, Literal

from dixit_lab.core.agent import GameContext, register_agent
from dixit_lab.core.cards import Card
from dixit_lab.vlm.chat_agent import AgentSetupError, ChatAgent, image_parts, wire_images
from dixit_lab.vlm.images import image_ref

__all__ = ["LlmAgent", "VlmAgent"]

ReplyFormat = Literal["auto", "json_schema", "json_object_schema", "grammar", "json_object",
                      "none"]
Dialect = Literal["auto", "openai", "vllm", "ollama", "llama-server", "llama-cpp-python"]
Mismatch = Literal["warn", "error", "ignore"]
Effort = Literal["minimal", "low", "medium", "high"]


@register_agent("vlm")
class VlmAgent(ChatAgent):
    """Asks a vision-language model, showing the cards as images (``image_size`` pixels at
    most); writes free-text clues. Needs ``pip install 'dixit-lab[vlm]'``."""

    def __init__(self, model: str, base_url: str = "http://127.0.0.1:8000/v1",
                 api_key_env: str | None = None, temperature: float | None = 0.7,
                 max_tokens: int | None = 300, image_size: int = 512,
                 image_detail: Literal["low", "high", "auto"] | None = None, timeout: float = 60.0,
                 retries: int = 2, http_retries: int = 3, backoff: float = 0.5,
                 concurrency: int = 8, response_format: ReplyFormat | None = "auto",
                 dialect: Dialect = "auto", on_model_mismatch: Mismatch = "warn",
                 check_images: bool = True, send_seed: bool = True,
                 price_in: float | None = None, price_out: float | None = None,
                 max_tokens_total: int | None = None, max_cost_usd: float | None = None,
                 prompts: str | None = None, system_prompt: str | None = None,
                 tell_prompt: str | None = None, submit_prompt: str | None = None,
                 vote_prompt: str | None = None, retry_prompt: str | None = None,
                 top_p: float | None = None, reasoning_effort: Effort | None = None,
                 enable_thinking: bool | None = None) -> None:
        if image_size < 16:
            raise ValueError(f"image_size must be at least 16 pixels, got {image_size}")
        super().__init__(**self.common(locals(), "image_size", "image_detail", "check_images"))
        self.image_size = image_size
        self.image_detail = image_detail
        self.check_images = check_images
        self._by_ref: dict[str, Card] = {}

    def check_deck(self, context: GameContext) -> None:
        if not context.deck.has_images:
            raise AgentSetupError(f"agent 'vlm' shows card images, but deck {context.deck.name!r} "
                             f"has none; use an image deck such as 'dreams', or the 'llm' "
                             f"agent with captions")

    def card_parts(self, cards: list[Card]) -> list[dict[str, Any]]:
        for card in cards:
            self._by_ref.setdefault(image_ref(card, self.image_size), card)
        return image_parts(cards, self.image_size, self.image_detail)

    def wire(self, request: dict[str, Any]) -> bytes:
        return wire_images(request, self._by_ref, self.image_size)

    def probe_parts(self) -> list[dict[str, Any]] | None:
        """The deck's first card, to check that the server sees images (``check_images``)."""
        return self.card_parts([self.context.deck[0]]) if self.check_images else None


@register_agent("llm")
class LlmAgent(ChatAgent):
    """Asks a text model, showing each card as its caption (``caption`` or the shorter
    ``alt_caption`` of the deck's cards.csv); writes free-text clues. Needs
    ``pip install 'dixit-lab[vlm]'``."""

    def __init__(self, model: str, base_url: str = "http://127.0.0.1:8000/v1",
                 api_key_env: str | None = None, temperature: float | None = 0.7,
                 max_tokens: int | None = 300,
                 caption: Literal["caption", "alt_caption"] = "caption", timeout: float = 60.0,
                 retries: int = 2, http_retries: int = 3, backoff: float = 0.5,
                 concurrency: int = 8, response_format: ReplyFormat | None = "auto",
                 dialect: Dialect = "auto", on_model_mismatch: Mismatch = "warn",
                 send_seed: bool = True, price_in: float | None = None,
                 price_out: float | None = None, max_tokens_total: int | None = None,
                 max_cost_usd: float | None = None,
                 prompts: str | None = None, system_prompt: str | None = None,
                 tell_prompt: str | None = None, submit_prompt: str | None = None,
                 vote_prompt: str | None = None, retry_prompt: str | None = None,
                 top_p: float | None = None, reasoning_effort: Effort | None = None,
                 enable_thinking: bool | None = None) -> None:
        super().__init__(**self.common(locals(), "caption"))
        self.caption = caption

    def check_deck(self, context: GameContext) -> None:
        missing = [card.id for card in context.deck if not getattr(card, self.caption)]
        if missing:
            raise AgentSetupError(f"agent 'llm' shows each card's {self.caption}, but deck "
                             f"{context.deck.name!r} has none for {len(missing)} card(s) (first: "
                             f"{missing[0]}); add them to its cards.csv")

    def card_parts(self, cards: list[Card]) -> list[dict[str, Any]]:
        return [{"type": "text", "text": f"Card {number}: {getattr(card, self.caption)}"}
                for number, card in enumerate(cards, start=1)]
