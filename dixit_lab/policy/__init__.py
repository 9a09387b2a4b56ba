"""The building blocks of decisions that agents (third parties' too) are written with: one
primitive per step, for one game (pure Python) and for many games at once (NumPy)."""
