"""Meeting a server once: its dialect, the response format it accepts, the model it serves
and, for an agent that shows images, whether the model sees them.

The first decision of a model agent settles these for every agent of the process that calls
the same server with the same settings (a :class:`ServerSession`), by a few small *probe*
exchanges made one after the other, before any decision is asked:

1. with ``dialect=auto``, ``GET /v1/models``: its ``owned_by`` names the kind of server
   (:func:`~dixit_lab.vlm.dialects.guess_dialect`) and its ids the models served;
2. with ``response_format=auto``, a one-line request in each format of the dialect's order
   (:data:`~dixit_lab.vlm.dialects.DIALECTS`) until one is not refused: an answer that names
   the format's field (``response_format``, ``grammar``) moves on to the next format, once for
   the run, and the refusal is kept in the session;
3. for ``vlm``, the same text with and without one card's image: an image the server refuses
   (an error naming ``image_url``) or drops (fewer than :data:`MIN_IMAGE_TOKENS` more prompt
   tokens) stops the run on its first request with one line, instead of a tournament of
   decisions taken blind.

Probes go through the exchange store like decisions, so a replay meets the same server
offline, and whatever order the games' threads start in, the session is the same. Each
session is appended to ``<exchanges>/servers/sessions.jsonl`` (the report's "Model
servers").
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dixit_lab.vlm.client import EndpointError
from dixit_lab.vlm.dialects import DIALECTS, FORMATS, format_fields, guess_dialect
from dixit_lab.vlm.prompts import answer_schema
from dixit_lab.vlm.store import ExchangeStore, canonical_json

__all__ = ["MIN_IMAGE_TOKENS", "SESSIONS_FILE", "ServerSession", "check_model",
           "model_matches", "negotiate", "read_sessions"]

#: the fewest prompt tokens an image must add for the server to be taken to see it (vision
#: models spend 64 to 1,500 tokens on a 256-pixel image)
MIN_IMAGE_TOKENS = 16
SESSIONS_FILE = "servers/sessions.jsonl"
_PROBE_SYSTEM = "You answer with JSON only."
_PROBE_TEXT = 'This is a check of the reply format. Reply with this JSON object: {"card": 1}'
_IMAGE_TEXT = "This is a check that images arrive. Reply with this JSON object: {\"card\": 1}"


@dataclass(frozen=True)
class ServerSession:
    """What a run knows of a server (see the module doc)."""

    model: str                 # the model asked for
    dialect: str | None        # named or discovered (None: not known)
    dialect_source: str        # told | discovered | unknown
    format: str                # the response format every decision uses
    refused: tuple[tuple[str, str], ...] = ()  # (format, the server's answer), in order
    served_model: str | None = None  # the model id the server reported
    images: str = "n/a"        # seen | unknown (...) | n/a (a text agent) | not checked

    def describe(self) -> str:
        """One line for a person: the format and why, the model served, the images."""
        why = "; ".join(f"{fmt} refused ({answer})" for fmt, answer in self.refused)
        dialect = self.dialect or "unknown dialect"
        return (f"{self.model}: {dialect} ({self.dialect_source}), response format "
                f"{self.format}{f' after {why}' if why else ''}; serves "
                f"{self.served_model or '(not reported)'}; images {self.images}")


#: a function that makes a probe exchange: (request, probe kind) -> outcome
Probe = Callable[[dict[str, Any], str], dict[str, Any]]

_SESSIONS: dict[tuple[Any, ...], ServerSession] = {}
_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple[Any, ...], threading.Lock] = {}
_WARNED: set[tuple[str, str]] = set()


def negotiate(key: tuple[Any, ...], *, model: str, dialect: str, response_format: str,
              params: dict[str, Any], probe: Probe, store: ExchangeStore,
              image_parts: list[dict[str, Any]] | None, on_mismatch: str) -> ServerSession:
    """The session of ``key`` (the server, the model and the settings that shape requests),
    negotiated once per process and store; ``params`` are the sampling fields the decisions
    send (the probes send the same, so that a refused ``seed`` shows at once), ``probe``
    makes an exchange, ``image_parts`` (None for a text agent) the parts showing one card."""
    full = (*key, str(store.folder), store.mode)
    with _LOCK:
        known = _SESSIONS.get(full)
        if known is not None:
            return known
        lock = _KEY_LOCKS.setdefault(full, threading.Lock())
    with lock:  # one negotiation a server; the other threads wait for it
        known = _SESSIONS.get(full)
        if known is None:
            known = _negotiate(model, dialect, response_format, params, probe, image_parts,
                               on_mismatch)
            _SESSIONS[full] = known
            _record(store, known)
    return known


def _negotiate(model: str, dialect: str, response_format: str, params: dict[str, Any],
               probe: Probe, image_parts: list[dict[str, Any]] | None,
               on_mismatch: str) -> ServerSession:
    served: str | None = None
    source = "told"
    found: str | None = dialect
    if dialect == "auto":
        listing = probe({"method": "GET", "path": "models", "model": model}, "models")
        found = guess_dialect(listing.get("models"))
        source = "discovered" if found else "unknown"
        ids: list[str] = [entry["id"] for entry in
                          (listing.get("models") or {}).get("data") or ()
                          if isinstance(entry, dict) and isinstance(entry.get("id"), str)]
        served = next((i for i in ids if model_matches(model, i)), ids[0] if ids else None)
    order = (response_format,) if response_format != "auto" else \
        DIALECTS.get(found or "", FORMATS)
    refused: list[tuple[str, str]] = []
    chosen = order[-1]
    name, schema, _ = answer_schema("vote", [1], 1)
    for format_ in order:
        if format_ == "none" or response_format != "auto":
            chosen = format_  # nothing to refuse, or the format asked for (no probing)
            break
        outcome = probe({"model": model, "messages": [
            {"role": "system", "content": _PROBE_SYSTEM},
            {"role": "user", "content": _PROBE_TEXT}], **params,
            **format_fields(format_, name, schema)}, "format")
        field = (outcome.get("error") or {}).get("field")
        if field in ("response_format", "grammar"):
            refused.append((format_, outcome["error"]["message"][:300]))
            continue
        if field is not None:
            raise EndpointError(_refused_message(model, field, outcome["error"]["message"]))
        served = outcome.get("model") or served
        chosen = format_
        break
    if served is not None:
        check_model(model, served, on_mismatch)
    images = "n/a" if image_parts is None else _images(model, params, probe, image_parts)
    return ServerSession(model, found, source, chosen, tuple(refused), served, images)


def _images(model: str, params: dict[str, Any], probe: Probe,
            parts: list[dict[str, Any]]) -> str:
    """Whether the model sees images: the same text with and without one image."""
    counts = []
    for content in ([{"type": "text", "text": _IMAGE_TEXT}],
                    [{"type": "text", "text": _IMAGE_TEXT}, *parts]):
        outcome = probe({"model": model, "messages": [{"role": "user", "content": content}],
                         **params}, "images")
        error = outcome.get("error") or {}
        if error.get("field") == "image_url":
            raise EndpointError(f"the server of model {model!r} refuses images "
                                f"({error['message'][:200]}): serve a vision model, or "
                                f"play the text-only 'llm' agent")
        if error.get("field") is not None:
            raise EndpointError(_refused_message(model, error["field"], error["message"]))
        if error:
            return f"unknown (the check failed: {error.get('message', '')[:120]})"
        tokens = (outcome.get("usage") or {}).get("prompt_tokens")
        if tokens is None:
            return "unknown (the server reports no token counts)"
        counts.append(tokens)
    added = counts[1] - counts[0]
    if added < MIN_IMAGE_TOKENS:
        raise EndpointError(
            f"the server of model {model!r} drops images: a request with one card image "
            f"counted {counts[1]} prompt tokens, {added} more than without it (at least "
            f"{MIN_IMAGE_TOKENS} for an image that arrives; {counts[0]} for the text alone); "
            f"serve a vision model (e.g. llama.cpp with --mmproj, a chat format that takes "
            f"images), or play the text-only 'llm' agent")
    return f"seen ({added} prompt tokens an image)"


def _refused_message(model: str, field: str, answer: str) -> str:
    hint = {"seed": "send_seed=false", "temperature": "temperature=None",
            "max_tokens": "max_tokens=None"}.get(field, "response_format=none")
    return (f"the server of model {model!r} refuses the request field {field!r} "
            f"({answer[:200]}); set {hint} in the agent's parameters")


def model_matches(asked: str, reported: str) -> bool:
    """Whether the model id a server reports is the model asked for: the same id, a dated or
    tagged version of it (``gpt-4o-mini`` -> ``gpt-4o-mini-2024-07-18``, ``qwen2.5vl:7b`` ->
    ``qwen2.5vl:7b-q4``), or the same id under an organisation prefix."""
    a, r = asked.lower(), reported.lower()
    if a == r or r.split("/")[-1] == a.split("/")[-1]:
        return True
    return r.startswith(a) and r[len(a)] in "-:@."


def check_model(asked: str, reported: str, on_mismatch: str) -> None:
    """Warn (once per pair and process) or raise when the server reports another model."""
    if on_mismatch == "ignore" or model_matches(asked, reported):
        return
    message = (f"model agent asked for model {asked!r} but the server reports {reported!r} "
               f"(the records keep both; on_model_mismatch=error makes this an error, "
               f"=ignore silences it)")
    if on_mismatch == "error":
        raise EndpointError(message)
    with _LOCK:
        if (asked, reported) in _WARNED:
            return
        _WARNED.add((asked, reported))
    warnings.warn(message, RuntimeWarning, stacklevel=2)


def _record(store: ExchangeStore, session: ServerSession) -> None:
    if store.folder is None or store.mode == "replay":
        return
    path = store.folder / SESSIONS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(canonical_json(asdict(session)) + "\n")


def read_sessions(folder: str | Path) -> list[dict[str, Any]]:
    """The sessions recorded in an exchange folder, each once, in order."""
    path = Path(folder) / SESSIONS_FILE
    if not path.is_file():
        return []
    seen: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if isinstance(entry, dict):
            seen.setdefault(canonical_json(entry), entry)
    return list(seen.values())


def _reset_after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    _KEY_LOCKS.clear()


os.register_at_fork(after_in_child=_reset_after_fork)
