"""A bare-Python Dixit game loop: the speed baseline of the reference engine.

The classic rules with random players and nothing else: deal from a shuffled 84-card deck,
hands of 6 (7 at 3 players, two cards each then), a random card from each hand, a shuffled
display, random votes for a card not one's own, the full scoring (all or none, some but not
all, the vote bonus) and the refill; the game ends after the refill that draws the last card.
No views, no records, no checks: what any engine must at least do, written plainly, so that
``bench_engine.py`` can say what share of it the reference engine reaches in the same run.
"""

from __future__ import annotations

import random


def play_bare_game(n_players: int, seed: int, deck_size: int = 84) -> tuple[list[int], int]:
    """One game; returns the scores and the number of rounds."""
    rng = random.Random(seed)
    pile = list(range(deck_size))
    rng.shuffle(pile)
    hand_size = 7 if n_players == 3 else 6
    per_listener = 2 if n_players == 3 else 1
    hands = [[pile.pop() for _ in range(hand_size)] for _ in range(n_players)]
    scores = [0] * n_players
    storyteller = rounds = 0
    while True:
        rounds += 1
        owner: dict[int, int] = {}
        for seat in range(n_players):
            hand = hands[seat]
            for _ in range(1 if seat == storyteller else per_listener):
                owner[hand.pop(rng.randrange(len(hand)))] = seat
        display = list(owner)
        rng.shuffle(display)
        received = [0] * n_players
        found = []
        for seat in range(n_players):
            if seat == storyteller:
                continue
            choices = [card for card in display if owner[card] != seat]
            voted_for = owner[choices[rng.randrange(len(choices))]]
            if voted_for == storyteller:
                found.append(seat)
            else:
                received[voted_for] += 1
        if 0 < len(found) < n_players - 1:
            scores[storyteller] += 3
            for seat in found:
                scores[seat] += 3
        else:
            for seat in range(n_players):
                if seat != storyteller:
                    scores[seat] += 2
        for seat in range(n_players):
            scores[seat] += received[seat]
        last_drawn = False
        for seat in range(n_players):
            hand = hands[seat]
            while len(hand) < hand_size and pile:
                hand.append(pile.pop())
                last_drawn = not pile
        if last_drawn or not pile:
            return scores, rounds
        storyteller = (storyteller + 1) % n_players
