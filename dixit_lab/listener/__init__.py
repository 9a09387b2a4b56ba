"""The listener model: how listeners respond to a clue (exact, by Laplace transform), and
its fit on logged games."""
