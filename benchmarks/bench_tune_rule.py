"""The tune elimination rule under nine equal candidates (no real difference): how often a
candidate is dropped, and how far the selected winner's search mean overstates the truth.

    python benchmarks/bench_tune_rule.py [--runs 400]

Compares the old rule (drop when a candidate's unpaired 95% interval lies below the leader's)
with the current one (paired by deal, Holm over candidates at alpha / looks). The per-deal
metric is deal luck (shared by the candidates) plus the candidate's own noise (sd 1).
"""

from __future__ import annotations

import argparse

import numpy as np

from dixit_lab.tune.search import Candidate, _eliminate


def _old_rule(alive: list[Candidate]) -> None:
    best = max(alive, key=lambda c: c.mean)
    for c in alive:
        if c.mean + c.half_width < best.mean - best.half_width:
            c.alive = False


def simulate(rule: str, runs: int, luck_sd: float = 1.0, effect: float = 0.0,
             looks: int = 10, per_look: int = 50, seed: int = 0) -> tuple[float, float, float]:
    """Share of runs that dropped the best candidate (candidate 0, better by ``effect``; with
    0 every candidate is best), the winner's bias in standard errors (``effect`` 0), and the
    share of runs that dropped every other candidate."""
    rng = np.random.default_rng(seed)
    dropped, bias, decided = 0, [], 0
    for _ in range(runs):
        candidates = [Candidate(float(v)) for v in range(9)]
        for look in range(looks):
            luck = rng.normal(0, luck_sd, per_look)
            for c in candidates:
                if c.alive:
                    shift = effect if c.value == 0 else 0.0
                    c.by_deal.update({look * per_look + i: float(x) for i, x in
                                      enumerate(luck + shift + rng.normal(0, 1, per_look))})
            alive = [c for c in candidates if c.alive]
            if rule == "old":
                _old_rule(alive)
            else:
                _eliminate(alive, 0.05, looks, look + 1)
        if effect:
            dropped += not candidates[0].alive
        else:
            dropped += any(not c.alive for c in candidates)
        decided += sum(c.alive for c in candidates) == 1
        best = max((c for c in candidates if c.alive), key=lambda c: c.mean)
        bias.append(best.mean / (best.half_width / 1.96))  # true mean 0, in standard errors
    return dropped / runs, float(np.mean(bias)), decided / runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
    args = parser.parse_args()
    for luck in (1.0, 0.0):
        print(f"deal luck sd {luck:g} (own noise sd 1):")
        for rule in ("old", "paired-holm"):
            share, bias, _ = simulate(rule, args.runs, luck)
            _, _, decided = simulate(rule, args.runs, luck, effect=0.4)
            print(f"  {rule:<12} equal candidates: a best one dropped in {share:.1%} of runs, "
                  f"winner overstated by {bias:.2f} SE; one better by 0.4: found alone in "
                  f"{decided:.0%} of runs")
    print("(the winner's re-evaluation on fresh deals has no such bias)")


if __name__ == "__main__":
    main()
