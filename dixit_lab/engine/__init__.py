"""Playing games: the reference engine (one game, step by step), the batched engine (many
games as arrays) and the compiled kernel. How a seat is run (a process, a sandbox) is
``dixit_lab.isolation``'s."""
