"""The dialects of OpenAI-compatible servers: how each asks for a reply of a given shape.

Servers agree on ``/chat/completions`` but not on structured output:

- ``json_schema``: ``response_format: {type: json_schema, json_schema: {name, strict,
  schema}}`` (OpenAI, vLLM, Ollama, llama.cpp's ``llama-server``);
- ``json_object_schema``: ``response_format: {type: json_object, schema}`` (llama-cpp-python,
  which answers ``json_schema`` with HTTP 500);
- ``grammar``: ``grammar``, a GBNF grammar of the answer (llama.cpp's servers);
- ``json_object``: ``response_format: {type: json_object}`` (any JSON, no schema: most
  servers);
- ``none``: nothing, the prompt alone asks for the JSON (every server).

A dialect is the order in which a kind of server is asked (:data:`DIALECTS`); an unknown
server is asked in :data:`FORMATS` order. :func:`guess_dialect` reads a dialect from the
``owned_by`` of ``GET /v1/models``.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DIALECTS", "FORMATS", "format_fields", "grammar", "guess_dialect"]

#: every format, in the order an unknown server is asked
FORMATS: tuple[str, ...] = ("json_schema", "json_object_schema", "grammar", "json_object",
                            "none")
#: the formats each kind of server is asked for, best first
DIALECTS: dict[str, tuple[str, ...]] = {
    "openai": ("json_schema", "json_object", "none"),
    "vllm": ("json_schema", "json_object", "none"),
    "ollama": ("json_schema", "json_object", "none"),
    "llama-server": ("json_schema", "grammar", "json_object", "none"),
    "llama-cpp-python": ("json_object_schema", "grammar", "json_object", "none"),
}
#: ``owned_by`` of ``/v1/models`` -> dialect
_OWNERS = {"vllm": "vllm", "llamacpp": "llama-server", "me": "llama-cpp-python",
           "library": "ollama", "ollama": "ollama", "openai": "openai", "system": "openai",
           "openai-internal": "openai"}


def guess_dialect(models: Any) -> str | None:
    """The dialect a ``GET /v1/models`` answer shows (None if it shows none)."""
    data = models.get("data") if isinstance(models, dict) else None
    owners = [entry.get("owned_by") for entry in data or () if isinstance(entry, dict)]
    for owner in owners:
        if isinstance(owner, str) and owner.lower() in _OWNERS:
            return _OWNERS[owner.lower()]
    return None


def format_fields(format_: str, name: str, schema: dict[str, Any], n_cards: int = 1
                  ) -> dict[str, Any]:
    """The request fields that ask for a reply of ``schema`` (``n_cards`` in a ``cards``
    list) in ``format_``."""
    if format_ == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "strict": True, "schema": schema}}}
    if format_ == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if format_ == "grammar":
        return {"grammar": grammar(schema, n_cards)}
    if format_ == "json_object":
        return {"response_format": {"type": "json_object"}}
    if format_ == "none":
        return {}
    raise ValueError(f"unknown response format {format_!r}; allowed: {', '.join(FORMATS)}")


def _literal(text: str) -> str:
    return json.dumps(text)  # a GBNF string literal is a JSON string


def grammar(schema: dict[str, Any], n_cards: int = 1) -> str:
    """A GBNF grammar of the answers :func:`~dixit_lab.vlm.prompts.answer_schema` describes:
    ``{"card": n}``, ``{"card": n, "clue": "..."}`` or ``{"cards": [n, ...]}``, the card
    numbers among the schema's, a clue of 1 to 120 characters."""
    properties = schema["properties"]
    key = "cards" if "cards" in properties else "card"
    labels = properties["cards"]["items"]["enum"] if key == "cards" else \
        properties["card"]["enum"]
    card = " | ".join(_literal(str(label)) for label in labels)
    if key == "cards":
        items = ' ws "," ws '.join(["card"] * max(n_cards, 1))
        value = f'"[" ws {items} ws "]"'
    else:
        value = "card"
    root = f'"{{" ws {_literal(chr(34) + key + chr(34))} ws ":" ws {value}'
    if "clue" in properties:
        root += f' ws "," ws {_literal(chr(34) + "clue" + chr(34))} ws ":" ws clue'
    lines = [f'root ::= {root} ws "}}"', f"card ::= {card}", 'ws ::= [ ]?']
    if "clue" in properties:
        lines.append('clue ::= "\\"" [^"\\\\\\n]{1,120} "\\""')
    return "\n".join(lines) + "\n"
