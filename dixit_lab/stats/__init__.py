"""Metrics of many games: the catalogue, each metric's kernel over a batch of games, sums that
add up chunk by chunk, intervals, the round table and the tables of agents.csv."""
