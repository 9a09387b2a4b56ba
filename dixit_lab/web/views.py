"""JSON for the pages: cards, revealed rounds and whole game records.

A card is shown by its deck index, the position of the card in the deck's published card list
(``cards.csv``): ``{"card": 17, "image": "/cards/17", "alt": "..."}``. The index says which
card it is, which the image itself shows anyway; it says nothing about the shuffled deal, the
other hands or who owns a displayed card. Everything secret stays in the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dixit_lab.core.agent import PublicRound
from dixit_lab.core.cards import Deck
from dixit_lab.records.format import GameRecord, RoundRecord, player_names

__all__ = ["card_json", "cards_json", "public_round_json", "record_json"]


def card_json(deck: Deck, index: int, prefix: str = "/cards") -> dict[str, Any]:
    """One card for a page: its index, its image URL (None for a numbered deck) and a text
    alternative (the deck's short caption, else its id)."""
    card = deck.cards[index]
    return {
        "card": index,
        "id": card.id,
        "image": f"{prefix}/{index}" if card.image is not None else None,
        "alt": card.alt_caption or card.caption or card.id,
    }


def cards_json(deck: Deck, indices: Sequence[int], prefix: str = "/cards") -> list[dict[str, Any]]:
    return [card_json(deck, index, prefix) for index in indices]


def public_round_json(deck: Deck, public: PublicRound, prefix: str = "/cards"
                      ) -> dict[str, Any]:
    """A revealed round, as every seat learns it."""
    teller = public.storyteller
    teller_position = public.card_owner.index(teller)
    return {
        "round": public.round,
        "storyteller": teller,
        "clue": public.clue,
        "display": cards_json(deck, public.display, prefix),
        "card_owner": list(public.card_owner),
        "storyteller_position": teller_position,
        "votes": list(public.votes),
        "finders": [seat for seat, vote in enumerate(public.votes) if vote == teller_position],
        "points": list(public.points),
        "scores": list(public.scores),
    }


def _round_json(deck: Deck, number: int, rnd: RoundRecord, prefix: str) -> dict[str, Any]:
    public = PublicRound(number, rnd.storyteller, rnd.clue, rnd.display, rnd.card_owner,
                         rnd.votes, rnd.points, rnd.scores)
    data = public_round_json(deck, public, prefix)
    data["outcome"] = rnd.outcome
    data["storyteller_hand"] = cards_json(deck, rnd.storyteller_hand, prefix)
    data["faults"] = [fault.to_dict() for fault in rnd.faults]
    return data


def record_json(record: GameRecord, deck: Deck, prefix: str = "/cards") -> dict[str, Any]:
    """A finished game, everything included (for the viewer of a results folder)."""
    return {
        "game": record.meta.get("game"),
        "rules": record.rules,
        "deck": record.deck,
        "players": list(player_names(record)),
        "agents": list(record.agents),
        "rounds": [_round_json(deck, number, rnd, prefix)
                   for number, rnd in enumerate(record.rounds)],
        "final_scores": list(record.final_scores),
        "winners": list(record.winners),
        "end_reason": record.end_reason,
    }
