"""Built-in agents. Importing this package registers them (see ``dixit_lab.agent``)."""

from agents import random_agent

__all__ = ["random_agent"]
