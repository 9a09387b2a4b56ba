"""The game's vocabulary: rules, randomness, cards, clue banks and the agent contract.

It knows nothing of how games are played or run."""
