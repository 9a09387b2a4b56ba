"""One game as text, round by round, for a terminal (``dixit-lab show DIR --game N``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dixit_lab.records.format import GameRecord, player_names

if TYPE_CHECKING:
    from dixit_lab.core.cards import Deck

__all__ = ["show_game"]


# -- one game as text --------------------------------------------------------------------------


def _card_label(card: int, deck: Deck | None, caption_chars: int = 50) -> str:
    if deck is None or not 0 <= card < len(deck.cards):
        return f"card {card}"
    entry = deck.cards[card]
    if entry.caption:
        caption = entry.caption if len(entry.caption) <= caption_chars else (
            entry.caption[: caption_chars - 1].rstrip() + "…")
        return f"{entry.id}  “{caption}”"
    return entry.id


def show_game(record: GameRecord, deck: Deck | None = None) -> str:
    """A round-by-round, plain-text account of one game, for a terminal."""
    names = player_names(record)
    n = record.n_players
    seat_label = [f"seat {s}, {names[s]}" for s in range(n)]
    game = record.meta.get("game")
    title = f"Game {game}" if game is not None else "Game"
    lines = [
        f"{title}: {record.rules} rules, deck {record.deck}, {n} players, "
        f"{len(record.rounds)} rounds, ended by {record.end_reason.replace('_', ' ')}",
        "Seats: " + "; ".join(
            f"{s} {names[s]}" + (f" ({record.agents[s]})" if record.agents[s] != names[s] else "")
            for s in range(n)),
        "",
    ]
    name_width = max(len(label) for label in seat_label)
    for number, rnd in enumerate(record.rounds, start=1):
        teller = rnd.storyteller
        lines.append(f"Round {number}/{len(record.rounds)}   storyteller: "
                     f"{seat_label[teller]}   clue: \"{rnd.clue}\"")
        voters: dict[int, list[int]] = {}
        for seat, vote in enumerate(rnd.votes):
            if vote is not None:
                voters.setdefault(vote, []).append(seat)
        cards = [_card_label(card, deck) for card in rnd.display]
        card_width = min(max(len(c) for c in cards), 70)
        owner_width = max(len(seat_label[o]) for o in rnd.card_owner) + 4
        lines.append(f"       {'card':<{card_width}}  {'owner':<{owner_width}}voted by")
        for position, (card, owner) in enumerate(zip(cards, rnd.card_owner, strict=True)):
            mark = "*" if owner == teller else " "
            who = ", ".join(f"{names[s]} (seat {s})" for s in voters.get(position, [])) or "-"
            owner_text = f"({seat_label[owner]})"
            lines.append(f"  {mark}{position + 1:>2}. {card:<{card_width}}  "
                         f"{owner_text:<{owner_width}}{who}")
        finders = rnd.finders
        outcome = {"all_found": "all found the storyteller's card",
                   "some_found": "some but not all found it",
                   "none_found": "no one found it"}[rnd.outcome]
        lines.append(f"  * = storyteller's card.  Outcome: {outcome} "
                     f"({len(finders)} of {n - 1} voters)")
        for fault in rnd.faults:
            lines.append(f"  ! fault, seat {fault.seat} ({fault.action}): {fault.message}")
        lines.append(f"    {'player':<{name_width}}  points  total")
        for seat in range(n):
            role = "  (storyteller)" if seat == teller else ""
            lines.append(f"    {seat_label[seat]:<{name_width}}  {rnd.points[seat]:>+6d}"
                         f"  {rnd.scores[seat]:>5d}{role}")
        lines.append("")
    lines.append("Final scores:")
    order = sorted(range(n), key=lambda s: (-record.final_scores[s], s))
    for seat in order:
        crown = "  winner" if seat in record.winners else ""
        lines.append(f"    {seat_label[seat]:<{name_width}}  {record.final_scores[seat]:>5d}"
                     f"{crown}")
    winners = ", ".join(seat_label[s] for s in record.winners)
    shared = " (shared victory)" if len(record.winners) > 1 else ""
    lines.append(f"Winner{'s' if len(record.winners) > 1 else ''}: {winners}{shared}")
    return "\n".join(lines) + "\n"
