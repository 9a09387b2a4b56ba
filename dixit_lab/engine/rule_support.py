"""Which rules each engine plays: the one check that refuses a rule an engine cannot play, in
one sentence that the engine, the runner and the docs' table all use.

The reference engine (``engine/game.py``) plays every rule the rules accept; the vector
environment (``env/vector.py``) does too. The batched engines play every rule but the ones
listed in :data:`NOT_PLAYED`, where the check of each engine's entry (``play_batch``,
``play_compiled``) and the runner's choice of engine (``TableSetup.engine_choice``) meet the
same sentence. ``tests/engine/test_rule_support.py`` plays every preset x option x table size
on every engine, and checks docs/rules.md's table against :data:`NOT_PLAYED`.
"""

from __future__ import annotations

from dixit_lab.core.rules import RuleSet

__all__ = ["ENGINES", "NOT_PLAYED", "rules_problem"]

#: the engines that play games, with the reference first; ``vector`` is the vector
#: environment (an environment steps the game for learners; it plays the same rules)
ENGINES: tuple[str, ...] = ("reference", "batched", "compiled", "vector")

#: by engine: the (rule option, value) pairs it does not play, and why. Empty: every engine
#: plays every rule (the last refusal, ``deck_exhausted: play_out_hands`` on the batched
#: engines, went when they learnt hands of unequal lengths); a rule an engine cannot play
#: goes here, and docs/rules.md's table says it
NOT_PLAYED: dict[str, dict[tuple[str, object], str]] = {}


def rules_problem(engine: str, rules: RuleSet) -> str | None:
    """Why ``engine`` (one of :data:`ENGINES`) does not play games under ``rules``, one
    sentence (None: it plays them)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; engines: {', '.join(ENGINES)}")
    for (option, value), why in NOT_PLAYED.get(engine, {}).items():
        if getattr(rules, option) == value:
            return (f"the {engine} engine does not play {option}={value!r} ({why}); the "
                    f"reference engine does")
    return None
