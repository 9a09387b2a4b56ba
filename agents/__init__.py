"""Built-in agents. Importing this package registers them (see ``dixit_lab.agent``)."""

from agents import (
    ambiguity,
    calibrated,
    literal,
    pragmatic,
    random_agent,
    softmax_agent,
    theory_of_mind,
)

__all__ = ["ambiguity", "calibrated", "literal", "pragmatic", "random_agent", "softmax_agent",
           "theory_of_mind"]
