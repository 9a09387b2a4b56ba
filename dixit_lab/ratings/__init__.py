"""Ratings of players from finished games: OpenSkill, a batch Plackett-Luce fit with
bootstrap intervals, and pairwise comparisons."""

__all__ = ["BOOTSTRAP"]

#: the bootstrap replicates of every rating interval (``ratings.csv``, ``rating_pairs.csv``;
#: :func:`~dixit_lab.ratings.plackett_luce.bootstrap_interval`): 1,000 make the spread's
#: estimate steady (the 95% intervals of identical twins held 94.8-96.5% over 400
#: tournaments a setting, docs/statistics.md), for about 0.1 s more than 200 at 1,000 games
BOOTSTRAP = 1000
