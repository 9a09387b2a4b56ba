"""Who sits in an untrusted seat: the canonical spec the engine computes from what the config
wrote, never what the seat's child says it is.

A child in ``isolation: process`` or ``sandbox`` builds the agent the config names and
answers the canonical spec its agent ended with (the parameters checked against the agent's
type hints, which only the child may import). The engine keeps what it can know itself: the
name as the config wrote it and the config's values, in sorted order
(:func:`~dixit_lab.core.agent.canonical_spec`). From the child's answer it takes one thing,
checked: the type of a value its parameter turned into another of the same value (an integer
given for a float parameter is recorded ``1.0``, as the engine records it for a trusted
seat). Any other difference (another name, another parameter, another value, a text longer
than the written spec can grow to) is a child that claims to be another agent: the seat is
refused (:class:`~dixit_lab.core.agent.AgentSpecError`). Records, ``config.yaml``, the
players' names and the digests of the code that plays (:mod:`dixit_lab.run.provenance`) are
all made from this spec, so no child names itself or another entrant.
"""

from __future__ import annotations

from typing import Any

from dixit_lab.core.agent import AgentSpecError, canonical_spec
from dixit_lab.plugins.spec import SpecError, parse_spec
from dixit_lab.text_rule import shown_message

__all__ = ["seat_spec"]

_SHOWN = 80  # characters of a child's claim a refusal shows


def _longest(written: str) -> int:
    """The longest canonical spec ``written`` can honestly become: each integer may gain
    ``.0`` and each value a quoting and separators (``[1,2]`` -> ``[1.0, 2.0]``)."""
    return 4 * len(written) + 64


def _same(written: Any, claimed: Any) -> bool:
    """Whether ``claimed`` is ``written``'s value: the same type and value, or an integer
    that its parameter made a float of the same value; lists and mappings item by item."""
    if isinstance(written, bool) or isinstance(claimed, bool):
        return type(written) is type(claimed) and written == claimed
    if isinstance(written, int) and isinstance(claimed, float):
        return claimed == written
    if type(written) is not type(claimed):
        return False
    if isinstance(written, list | tuple):
        return len(written) == len(claimed) and all(
            _same(w, c) for w, c in zip(written, claimed, strict=True))
    if isinstance(written, dict):
        return written.keys() == claimed.keys() and all(
            _same(written[key], claimed[key]) for key in written)
    return bool(written == claimed)


def seat_spec(written: str, claimed: object) -> str:
    """The canonical spec of the agent ``written`` names, made here from ``written``;
    ``claimed``, what the seat's child says its agent's canonical spec is, only lends a
    value's type (see the module docstring). Raises :class:`AgentSpecError` when the child
    claims another agent."""
    name, values = parse_spec(written)  # the config's spec, parsed when it was read
    problem = None
    if not isinstance(claimed, str):
        problem = "sent no spec"
    elif len(claimed) > _longest(written):
        problem = f"claims a spec of {len(claimed):,} characters"
    else:
        try:
            claimed_name, claimed_values = parse_spec(claimed)
        except (SpecError, RecursionError):
            claimed_name, claimed_values = "", {}
        if claimed_name != name or claimed_values.keys() != values.keys() or not all(
                _same(values[key], claimed_values[key]) for key in values):
            problem = f"says it is '{shown_message(claimed, _SHOWN)}'"
        else:
            values = claimed_values
    if problem is not None:
        raise AgentSpecError(f"agent {written!r}: its process {problem}, not the agent the "
                             f"config seats; refused")
    return canonical_spec(name, values)
