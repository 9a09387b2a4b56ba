"""Playing games: the reference engine (one game, step by step), the batched engine (many
games as arrays) and agents in a process of their own."""
