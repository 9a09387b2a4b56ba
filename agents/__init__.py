"""Built-in agents. Importing this package registers them (see ``dixit_lab.agent``)."""

from agents import (
    ambiguity,
    calibrated,
    human,
    literal,
    pragmatic,
    random_agent,
    softmax_agent,
)

__all__ = ["ambiguity", "calibrated", "human", "literal", "pragmatic", "random_agent",
           "softmax_agent"]
