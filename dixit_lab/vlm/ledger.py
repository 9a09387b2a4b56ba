"""Budgets of the model agents: tokens and dollars per seat (``max_tokens_total``,
``max_cost_usd`` of an agent) and per run (the config's ``model_budget``, for every model
seat together).

Every request the model agents of a process send is charged to a :class:`Ledger`, one per
exchange store: before it is sent, the request *reserves* what it may cost (its prompt,
estimated at 4 characters a token, and ``max_tokens`` of reply), so that requests in flight
at once cannot overspend together; once answered, the reservation is replaced by what the
server reports (or by the estimate, when it reports no valid token counts). A request that
would pass a budget is not sent: the decision is a fault of kind ``budget`` (the engine plays
its seeded fallback) and that outcome is recorded like a reply, so a replay makes the same
decisions. A resumed run (``auto`` mode) starts from what the folder's recorded exchanges
spent; ``--record-only`` starts from nothing.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["Budget", "Ledger", "estimated_tokens", "ledger_for"]


@dataclass(frozen=True)
class Budget:
    """Limits on what a seat, or a run, spends (None: no limit)."""

    max_tokens_total: int | None = None
    max_cost_usd: float | None = None

    @classmethod
    def of_run(cls) -> Budget:
        """The run's budget, as the runner opened the exchange store
        (:func:`dixit_lab.vlm.store.exchange_session`)."""
        from dixit_lab.vlm.store import run_budget

        data = run_budget()
        if not data:
            return cls()
        return cls(data.get("max_tokens_total"), data.get("max_cost_usd"))

    def __bool__(self) -> bool:
        return self.max_tokens_total is not None or self.max_cost_usd is not None

    def passed(self, tokens: float, cost: float, what: str) -> str | None:
        """Why ``tokens`` and ``cost`` pass this budget (None if they do not)."""
        if self.max_tokens_total is not None and tokens > self.max_tokens_total:
            return (f"{what} budget reached: this request would bring it to {tokens:,.0f} "
                    f"tokens, over max_tokens_total {self.max_tokens_total:,}")
        if self.max_cost_usd is not None and cost > self.max_cost_usd:
            return (f"{what} budget reached: this request would bring it to ${cost:.4f}, "
                    f"over max_cost_usd ${self.max_cost_usd:g}")
        return None


def estimated_tokens(request: dict[str, Any], reply_text: str | None = None,
                     max_tokens: int | None = None) -> tuple[int, int]:
    """(prompt, completion) tokens estimated at 4 characters a token (85 an image), the
    completion as ``reply_text`` or else ``max_tokens`` (else 1,000)."""
    images = 0
    text = 0
    for message in request.get("messages", ()):
        content = message.get("content")
        if isinstance(content, str):
            text += len(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    images += 1
                elif isinstance(part, dict) and isinstance(part.get("text"), str):
                    text += len(part["text"])
    prompt = text // 4 + 1 + 85 * images
    if reply_text is not None:
        return prompt, len(reply_text) // 4 + 1
    return prompt, max_tokens if max_tokens is not None else 1000


class Ledger:
    """What the seats of one exchange store spent, and reserved, in this process."""

    def __init__(self, spent: dict[str, tuple[float, float]] | None = None) -> None:
        self._lock = threading.Lock()
        self._spent: dict[str, list[float]] = {name: list(v) for name, v in
                                               (spent or {}).items()}
        self._reserved: dict[str, list[float]] = {}

    def _total(self, table: dict[str, list[float]], name: str | None) -> tuple[float, float]:
        rows = [table[name]] if name is not None and name in table else \
            list(table.values()) if name is None else []
        return sum(r[0] for r in rows), sum(r[1] for r in rows)

    def reserve(self, name: str, tokens: float, cost: float, seat: Budget,
                run: Budget) -> str | None:
        """Reserve ``tokens`` and ``cost`` for ``name``'s request, or say which budget it
        would pass (and reserve nothing)."""
        with self._lock:
            for budget, who, what in ((seat, name, f"seat {name!r}"), (run, None, "run")):
                if not budget:
                    continue
                spent = self._total(self._spent, who)
                held = self._total(self._reserved, who)
                reason = budget.passed(spent[0] + held[0] + tokens, spent[1] + held[1] + cost,
                                       what)
                if reason:
                    return reason
            row = self._reserved.setdefault(name, [0.0, 0.0])
            row[0] += tokens
            row[1] += cost
            return None

    def settle(self, name: str, reserved: tuple[float, float], spent: tuple[float, float]
               ) -> None:
        """Replace a reservation by what the request spent."""
        with self._lock:
            row = self._reserved.setdefault(name, [0.0, 0.0])
            row[0] -= reserved[0]
            row[1] -= reserved[1]
            total = self._spent.setdefault(name, [0.0, 0.0])
            total[0] += spent[0]
            total[1] += spent[1]

    def spent(self, name: str | None = None) -> tuple[float, float]:
        """(tokens, dollars) spent by ``name`` (None: every seat)."""
        with self._lock:
            return self._total(self._spent, name)


_LEDGERS: dict[tuple[str | None, str], Ledger] = {}
_LOCK = threading.Lock()


def ledger_for(store: Any) -> Ledger:
    """The ledger of ``store`` (an :class:`~dixit_lab.vlm.store.ExchangeStore`): one per store
    in a process, starting, in ``auto`` mode, from what its recorded exchanges spent."""
    key = (str(store.folder), store.mode)
    with _LOCK:
        ledger = _LEDGERS.get(key)
        if ledger is None:
            spent = store.recorded_spend() if store.mode == "auto" else {}
            ledger = _LEDGERS[key] = Ledger(spent)
        return ledger


def _reset_after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    for ledger in _LEDGERS.values():
        ledger._lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)
