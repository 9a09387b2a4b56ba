"""How a seat is run: an agent the engine holds, or one in a process of its own or in a
sandbox, answering over a channel (what the engine knows of an agent it does not hold:
``trust``; the seat built from its isolation: ``seats``). Apart from the game: the engines
import nothing of it, and it imports nothing of them."""
