"""Rendering of the Dixit environment: the public table as text (``ansi``) or as an image
(``rgb_array``, the card images laid out with Pillow).

Only public information is drawn: the phase, the storyteller, the scores, the clue once told,
the display once laid out, and the last reveal (owners, votes, points). A hand is drawn only
for the seat the environment was asked to show (``render_seat``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from dixit_lab.env.encoding import STEP_NAMES, SeatState

if TYPE_CHECKING:
    from dixit_lab.core.agent import PublicRound
    from dixit_lab.core.cards import Deck
    from dixit_lab.engine.game import Phase
    from dixit_lab.env.encoding import Encoder
    from dixit_lab.records.format import GameRecord


class DixitParallelEnv(Protocol):
    """What the pictures read of an environment (:class:`dixit_lab.env.parallel.
    DixitParallelEnv` has it; named by a protocol, so that the two modules do not import each
    other)."""

    possible_agents: list[str]
    deck: Deck
    encoder: Encoder
    render_seat: int | None
    public_rounds: list[PublicRound]
    record: GameRecord | None
    _phase: Phase | None
    _states_now: list[SeatState]

__all__ = ["render_ansi", "render_rgb"]

CARD = 96        # thumbnail side, pixels
GAP = 8
LINE = 14        # text line height
BACKGROUND = (28, 32, 44)
TEXT = (235, 235, 235)
HIGHLIGHT = (250, 200, 80)


def _public(env: DixitParallelEnv) -> SeatState | None:
    """The public table now: the state of a seat that does not decide (in every phase the
    storyteller or the listeners do not)."""
    states = getattr(env, "_states_now", None)
    if env._phase is None or not states:
        return None
    return next(state for state in states if not state.acting)


def _lines(env: DixitParallelEnv) -> tuple[list[str], SeatState | None]:
    names = env.possible_agents
    state = _public(env)
    lines: list[str] = []
    if state is None:
        if env.record is None:
            return ["Dixit: no game yet (call reset())"], None
        scores = env.record.final_scores
        winners = ", ".join(names[s] for s in env.record.winners)
        lines.append(f"Dixit: game over after {len(env.record.rounds)} rounds "
                     f"({env.record.end_reason}); winner(s): {winners}")
    else:
        scores = tuple(state.scores)
        lines.append(f"Dixit: round {state.round + 1}, storyteller {names[state.storyteller]}, "
                     f"phase {STEP_NAMES[state.step]}")
        lines.append(f"clue: {state.clue!r}" if state.clue is not None else "clue: (not told)")
    lines.append("scores: " + "  ".join(f"{name}: {score}" for name, score in zip(
        names, scores, strict=True)))
    return lines, state


def _card_id(env: DixitParallelEnv, card: int) -> str:
    return env.deck.cards[card].id


def render_ansi(env: DixitParallelEnv) -> str:
    """The public table as a few lines of text."""
    lines, state = _lines(env)
    names = env.possible_agents
    if state is not None and state.display:
        lines.append("display: " + "  ".join(f"{i + 1}:{_card_id(env, card)}"
                                             for i, card in enumerate(state.display)))
    if env.public_rounds:
        last = env.public_rounds[-1]
        told = last.card_owner.index(last.storyteller)
        lines.append(f"last reveal (round {last.round + 1}, clue {last.clue!r}): storyteller's "
                     f"card {told + 1}")
        for i, (card, owner) in enumerate(zip(last.display, last.card_owner, strict=True)):
            voters = [names[s] for s, vote in enumerate(last.votes) if vote == i]
            lines.append(f"  {i + 1}:{_card_id(env, card)} of {names[owner]}; votes: "
                         f"{', '.join(voters) or '-'}")
        lines.append("  points: " + "  ".join(f"{name} +{points}" for name, points in zip(
            names, last.points, strict=True)))
    hand = _shown_hand(env)
    if hand is not None:
        lines.append(f"{names[env.render_seat or 0]}'s hand: "
                     + "  ".join(_card_id(env, card) for card in hand))
    return "\n".join(lines)


def _shown_hand(env: DixitParallelEnv) -> tuple[int, ...] | None:
    seat = env.render_seat
    states = getattr(env, "_states_now", None)
    if seat is None or env._phase is None or not states:
        return None
    hand = tuple(states[seat].hand)
    return hand or None


@functools.lru_cache(maxsize=512)
def _thumbnail(path: Path | None, label: str) -> Image.Image:
    if path is None:
        image = Image.new("RGB", (CARD, CARD), (70, 80, 110))
        ImageDraw.Draw(image).text((8, CARD // 2 - 6), label, fill=TEXT,
                                   font=ImageFont.load_default())
        return image
    with Image.open(path) as source:
        return source.convert("RGB").resize((CARD, CARD))


def _face_down() -> Image.Image:
    image = Image.new("RGB", (CARD, CARD), (60, 50, 90))
    ImageDraw.Draw(image).rectangle((6, 6, CARD - 7, CARD - 7), outline=(150, 130, 200), width=2)
    return image


def render_rgb(env: DixitParallelEnv) -> np.ndarray:
    """The public table as an (H, W, 3) uint8 image: text lines on top, then the display (or
    the last reveal, labelled with owners and votes), then the shown hand if any."""
    lines, state = _lines(env)
    names = env.possible_agents
    columns = max(env.encoder.n_displayed, env.encoder.hand_size)
    width = GAP + columns * (CARD + GAP)
    header = GAP + 3 * LINE
    height = header + 2 * (CARD + 2 * LINE + GAP) + GAP
    canvas = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    font = ImageFont.load_default()
    for i, line in enumerate(lines[:3]):
        draw.text((GAP, GAP + i * LINE), line[: width // 6], fill=TEXT, font=font)
    top = header
    row: list[tuple[int | None, str, str]]
    if state is not None and state.display:
        seat = env.render_seat
        own = env._states_now[seat].own if seat is not None else ()
        row = [(card, f"{i + 1}" + (f" ({names[seat or 0]}'s)" if i in own else ""), "")
               for i, card in enumerate(state.display)]
        title = "display"
    elif env.public_rounds:
        last = env.public_rounds[-1]
        row = [(card, f"{i + 1}: {names[owner]}" + (" *" if owner == last.storyteller else ""),
                f"votes {sum(vote == i for vote in last.votes)}")
               for i, (card, owner) in enumerate(zip(last.display, last.card_owner,
                                                     strict=True))]
        title = f"last reveal (round {last.round + 1}, clue {last.clue!r}; * storyteller)"
    else:
        row = [(None, "", "")] * env.encoder.n_displayed
        title = "display (face down)"
    draw.text((GAP, top), title[: width // 6], fill=HIGHLIGHT, font=font)
    _draw_row(env, canvas, draw, font, row, top + LINE)
    hand = _shown_hand(env)
    if hand is not None:
        top += CARD + 2 * LINE + GAP
        draw.text((GAP, top), f"{names[env.render_seat or 0]}'s hand", fill=HIGHLIGHT, font=font)
        _draw_row(env, canvas, draw, font, [(card, f"slot {i}", "")
                                            for i, card in enumerate(hand)], top + LINE)
    return np.asarray(canvas, dtype=np.uint8)


def _draw_row(env: DixitParallelEnv, canvas: Image.Image, draw: ImageDraw.ImageDraw,
              font: ImageFont.ImageFont | ImageFont.FreeTypeFont,
              row: list[tuple[int | None, str, str]], top: int) -> None:
    for i, (card, label, note) in enumerate(row):
        left = GAP + i * (CARD + GAP)
        if card is None:
            image = _face_down()
        else:
            info = env.deck.cards[card]
            image = _thumbnail(info.image, info.id)
        canvas.paste(image, (left, top))
        draw.text((left, top + CARD + 2), label[:18], fill=TEXT, font=font)
        if note:
            draw.text((left, top + CARD + 2 + LINE), note[:18], fill=TEXT, font=font)
