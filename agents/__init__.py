"""Built-in agents. Importing this package registers them (see ``dixit_lab.agent``)."""

from agents import (
    ambiguity,
    calibrated,
    chat_agents,
    literal,
    pragmatic,
    random_agent,
    softmax_agent,
)

__all__ = ["ambiguity", "calibrated", "chat_agents", "literal", "pragmatic", "random_agent",
           "softmax_agent"]
