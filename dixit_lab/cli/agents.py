"""``dixit-lab agents``: the registered agents, their parameters, their classes (an import
string, ``module:Class``: what a subclass imports) and what each does."""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
from typing import Any

from dixit_lab.core.agent import (
    AgentSpecError,
    agent_parameters,
    available_agents,
    get_agent_class,
)

__all__ = ["add_commands"]


def cmd_agents(args: argparse.Namespace) -> int:
    for name in available_agents():
        try:
            cls = get_agent_class(name)
        except AgentSpecError as error:  # a broken plugin costs only its own entry
            print(f"dixit-lab agents: {error}", file=sys.stderr)
            continue
        params = ", ".join(p.describe() for p in agent_parameters(cls))
        print(f"{name}({params})")
        print(f"    class {cls.__module__}:{cls.__qualname__}")
        for line in textwrap.wrap(_first_paragraph(cls.__doc__), width=92):
            print(f"    {line}")
    return 0


def _first_paragraph(doc: str | None) -> str:
    """A docstring's first paragraph as one line of plain text (no reST backticks/roles)."""
    paragraph = inspect.cleandoc(doc or "").split("\n\n")[0]
    text = " ".join(paragraph.split())
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)  # :class:`X` -> X
    return text.replace("``", "").replace("`", "")


def add_commands(sub: Any) -> None:
    """The family's sub-commands, on the parser's ``add_subparsers()``."""
    ag = sub.add_parser("agents", help="list the registered agents, their parameters and "
                                       "classes")
    ag.set_defaults(func=cmd_agents)
