"""Ratings of players from finished games: OpenSkill, a batch Plackett-Luce fit with
bootstrap intervals, and pairwise comparisons."""
