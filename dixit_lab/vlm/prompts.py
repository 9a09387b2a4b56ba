"""Prompt templates of the model agents, filled from the rules in force, and reply schemas.

Templates are ``str.format`` strings (write ``{{`` and ``}}`` for literal braces). Every
template may use the fields of :func:`table_fields` (the rules and the table) and of the
decision at hand (see :data:`DECISION_FIELDS`). A user overrides any of them with a YAML file
of ``system``/``tell``/``submit``/``vote``/``retry`` keys or with one template string each
(``@path`` reads the string from a file).
"""

from __future__ import annotations

import string
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dixit_lab.core import rules as core_rules
from dixit_lab.core.rules import RuleSet

__all__ = ["DECISION_FIELDS", "DEFAULT_TEMPLATES", "Templates", "answer_schema", "table_fields"]

SYSTEM = (
    "You are playing the board game Dixit with {n_players} players; you are player {me}. "
    "Each round one player, the storyteller, chooses a card of their hand and gives a clue "
    "about it: a word, a phrase, a title or a quote. Every other player then adds "
    "{per_player_text} from their own hand to match the clue; the storyteller's card and "
    "these cards are shuffled and laid out face up, numbered. The other players then vote "
    "for the card they think is the storyteller's; {vote_rule_text}. "
    "Scoring: if all or none of the voters find the storyteller's card, the storyteller scores "
    "{all_or_none_storyteller_text} and every other player {all_or_none_points}"
    "{all_found_text}; otherwise the storyteller scores {storyteller_points} and every finder "
    "{finder_points}{lone_finder_text}. "
    "{bonus_text}So the best clue is found by some players but not by all. {end_text}"
    "Always answer with the JSON object asked for, and nothing else."
)
TELL = (
    "Round {round}. Scores: {scores}. You are the storyteller. Your hand is the {hand_count} "
    "cards below, numbered 1 to {hand_count}. Choose one of them and write a clue for it. "
    "Reply with JSON: {answer_format}"
)
SUBMIT = (
    "Round {round}. Scores: {scores}. The storyteller, player {storyteller}, gave the clue: "
    "\"{clue}\". Your hand is the {hand_count} cards below, numbered 1 to {hand_count}. "
    "Choose {n_cards_text}, so that the other players take yours for the storyteller's. "
    "Reply with JSON: {answer_format}"
)
VOTE = (
    "Round {round}. The storyteller, player {storyteller}, gave the clue: \"{clue}\". The "
    "{display_count} cards below are on the table, numbered 1 to {display_count}. "
    "{own_text} Vote for the card you think is the storyteller's; {own_vote_text}. "
    "Reply with JSON: {answer_format}"
)
RETRY = ("Your reply could not be used: {error}. Answer again, with only the JSON object: "
         "{answer_format}")

#: The fields each decision adds to :func:`table_fields` (all templates get ``answer_format``).
DECISION_FIELDS: dict[str, tuple[str, ...]] = {
    "tell": ("round", "scores", "hand_count", "history"),
    "submit": ("round", "scores", "storyteller", "clue", "hand_count", "n_cards",
               "n_cards_text", "history"),
    "vote": ("round", "scores", "storyteller", "clue", "display_count", "own_positions",
             "own_text", "history"),
    "retry": ("error",),
}
_KINDS = ("system", "tell", "submit", "vote", "retry")


@dataclass(frozen=True)
class Templates:
    system: str = SYSTEM
    tell: str = TELL
    submit: str = SUBMIT
    vote: str = VOTE
    retry: str = RETRY

    @classmethod
    def load(cls, file: str | None = None, **strings: str | None) -> Templates:
        """The defaults, overridden by a YAML ``file`` and then by template strings
        (``@path`` reads a file); each template is checked for unknown fields."""
        templates = cls()
        if file:
            from dixit_lab.run.config_yaml import load_yaml

            path = Path(file)
            if not path.is_file():
                raise ValueError(f"prompts file {path} does not exist")
            data = load_yaml(path.read_text(encoding="utf-8"), str(path)) or {}
            unknown = sorted(set(data) - set(_KINDS)) if isinstance(data, dict) else ["?"]
            if unknown:
                raise ValueError(f"{path}: expected a mapping with keys among "
                                 f"{', '.join(_KINDS)}; got {', '.join(map(str, unknown))}")
            templates = replace(templates, **{k: str(v) for k, v in data.items()})
        for kind, text in strings.items():
            if text is not None:
                if text.startswith("@"):
                    path = Path(text[1:])
                    if not path.is_file():
                        raise ValueError(f"{kind} prompt file {path} does not exist")
                    text = path.read_text(encoding="utf-8")
                templates = replace(templates, **{kind: text})
        for kind in _KINDS:
            _check(kind, getattr(templates, kind))
        return templates


def _check(kind: str, template: str) -> None:
    allowed = set(TABLE_FIELDS) | {"answer_format"}
    if kind != "system":
        allowed |= set(DECISION_FIELDS[kind])
    try:
        names = {field for _, field, _, _ in string.Formatter().parse(template) if field}
    except ValueError as error:
        raise ValueError(f"{kind} prompt: {error} (write {{{{ and }}}} for literal braces)"
                         ) from None
    unknown = sorted(names - allowed)
    if unknown:
        raise ValueError(f"{kind} prompt: unknown field(s) {', '.join(unknown)}; allowed: "
                         f"{', '.join(sorted(allowed))}")


DEFAULT_TEMPLATES = Templates()

TABLE_FIELDS = ("n_players", "me", "hand_size", "cards_per_player", "per_player_text",
                "displayed", "all_or_none_storyteller_text", "all_or_none_points",
                "all_found_points", "all_found_text",
                "storyteller_points", "finder_points",
                "lone_finder_points", "lone_finder_text", "vote_bonus_cap", "cap_text",
                "vote_bonus_points", "vote_bonus_text", "bonus_text", "vote_rule_text",
                "own_vote_text", "target_score", "end_text")


def table_fields(rules: RuleSet, n_players: int, seat: int) -> dict[str, Any]:
    """The fields every template may use: the table and the rules in force."""
    per = rules.cards_per_player(n_players)
    lone = rules.lone_finder_points
    teller = core_rules.search_points(rules, n_players)[0]  # the storyteller's points by finders
    none_found, all_found_teller = teller[0], teller[-1]
    cap = rules.vote_bonus_cap
    target = rules.target_score
    all_found = rules.all_found_points
    bonus = f"{rules.vote_bonus_points} point" + ("" if rules.vote_bonus_points == 1 else "s")
    cap_text = "" if cap is None else f", at most {cap} such point{'' if cap == 1 else 's'} " \
        "per round"
    own_votes = rules.own_card_votes
    paid = rules.vote_bonus_points > 0 and cap != 0  # else no vote ever earns a bonus
    counted = "other player's vote" if own_votes else "vote"  # one's own vote earns nothing
    return {
        "n_players": n_players,
        "me": seat + 1,
        "hand_size": rules.hand_size_for(n_players),
        "cards_per_player": per,
        "per_player_text": "a card" if per == 1 else f"{per} cards",
        "displayed": rules.displayed_cards(n_players),
        "all_or_none_storyteller_text": str(none_found) if none_found == all_found_teller
        else f"{none_found} when none find it and {all_found_teller} when all do",
        "all_or_none_points": rules.all_or_none_points,
        "all_found_points": all_found,
        "all_found_text": "" if all_found is None else
        f" ({all_found} each instead when all of them find it)",
        "storyteller_points": rules.storyteller_points,
        "finder_points": rules.finder_points,
        "lone_finder_points": lone,
        "lone_finder_text": "" if lone is None else
        f" ({lone} each instead when exactly one player finds it)",
        "vote_bonus_cap": cap,
        "vote_bonus_points": rules.vote_bonus_points,
        "vote_bonus_text": bonus,
        "cap_text": cap_text,
        "bonus_text": "" if not paid else
        f"Every player other than the storyteller also scores {bonus} for each {counted} on "
        f"their own card{cap_text}. ",
        "vote_rule_text": "a player may also vote for their own card, but that vote never "
        "finds the storyteller's card" if own_votes else "nobody may vote for their own card",
        "own_vote_text": "you may also vote for your own, though it is not the storyteller's"
        if own_votes else "you may not vote for your own",
        "target_score": target,
        "end_text": ("" if target is None else
                     f"The game ends after the round in which a player reaches {target} points. ")
        + ("" if not rules.fixed_hands else
           "Every round is played from the same hands: the cards played go back to their "
           f"owners' hands. The game lasts {rules.max_rounds} rounds. "),
    }


def answer_schema(action: str, labels: list[int], n_cards: int = 1) -> tuple[str, dict[str, Any],
                                                                              str]:
    """(schema name, JSON schema, answer format shown in the prompt) of a decision whose card
    numbers may be ``labels``."""
    card = {"type": "integer", "enum": labels}
    if action == "tell":
        properties: dict[str, Any] = {"card": card, "clue": {"type": "string"}}
        shown = '{"card": <number of your card>, "clue": "<your clue>"}'
    elif action == "submit" and n_cards > 1:
        properties = {"cards": {"type": "array", "items": card}}
        shown = '{"cards": [' + ", ".join(f"<number {i + 1}>" for i in range(n_cards)) + "]}"
    else:
        properties = {"card": card}
        shown = '{"card": <number of the card>}'
    schema = {"type": "object", "properties": properties, "required": list(properties),
              "additionalProperties": False}
    return f"dixit_{action}", schema, shown
