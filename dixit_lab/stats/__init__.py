"""Metrics of many games: the catalogue, sums that add up chunk by chunk, intervals, the
round table and the tables of agents.csv."""
