"""Hostile agents: each tries one attack of the Trust issue (issue 25) on the engine, the
other seats, the results folder or the next game, and reports what it got in its clues
(``report:{json}``), since a sandbox has no other way out. They play first cards and the
first allowed vote, unless an attack told them the storyteller's card: then they vote for it,
so that the find rate of their votes shows whether the attack worked (chance, or 1).

Entered by import string (``tests.hostile.proc:ProcSpy``); ``tests/test_trust_attacks.py``
runs each against ``isolation: sandbox`` (and ``process``, where the same defence holds).
"""
