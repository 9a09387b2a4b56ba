"""Vector environment speed: agent steps/s of ``dixit_lab.env.vector_env`` against the
PettingZoo environment, in the same run, one core.

    python benchmarks/bench_vector_env.py [--seconds 1] [--tables 1024]

An *agent step* is one seat's action at one table: a ``step`` of the vector env is
``tables * players`` of them; a step of the parallel PettingZoo env is ``players`` of them
(one phase, the seats that do not decide passing); an AEC step is one. Every policy draws a
uniformly random legal action from the masks it is given, inside the timed loop: the
PettingZoo envs' seats with ``random_policy`` (one mask at a time), the vector env's rows
with :func:`random_legal` (every row's mask at once). Two clue lists: the whole default bank
(4,006 clue actions, the environments' default) and 64 clues of it (``clue_texts``, a
learner's vocabulary). The vector env runs with ``observations="compact"`` (card and clue
numbers for the feature vectors) and ``"flat"`` (the PettingZoo env's vectors). Medians of
three timings; the load average is printed with the figures. Not a test: figures depend on
the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import dixit_lab.env as dixit_env

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import aec_steps, parallel_steps  # the PettingZoo envs' loops

N_PLAYERS, RULES = 4, "classic"
_BITS = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.uint8)


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action of every row of ``masks`` (rows, actions) int8: the
    rank of a uniform number among the row's legal actions, found through the mask packed
    eight actions a byte."""
    rows = np.arange(len(masks))
    packed = np.packbits(masks.view(bool), axis=1)
    counts = np.int16 if masks.shape[1] < 2**15 else np.int32
    legal_before = np.cumsum(_BITS[packed], axis=1, dtype=counts)
    target = (rng.random(len(masks)) * legal_before[:, -1]).astype(counts)
    byte = np.argmax(legal_before > target[:, None], axis=1)
    earlier = np.where(byte > 0, legal_before[rows, np.maximum(byte - 1, 0)], 0)
    bits = np.unpackbits(packed[rows, byte][:, None], axis=1)
    bit = np.argmax(np.cumsum(bits, axis=1) > (target - earlier)[:, None], axis=1)
    return byte * 8 + bit


def vector_steps(tables: int, observations: str, clue_texts: list[str] | None,
                 seconds: float) -> tuple[float, float]:
    """Agent steps/s of the whole loop (policy and env), and of the env's ``step`` alone."""
    env = dixit_env.vector_env(tables, N_PLAYERS, RULES, observations=observations,
                               clue_texts=clue_texts)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    steps, in_env = 0, 0.0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        actions = random_legal(obs["action_mask"], rng)
        before = time.perf_counter()
        obs, *_ = env.step(actions)
        in_env += time.perf_counter() - before
        steps += env.num_envs
    return steps / elapsed, steps / in_env


def median_of(measure: Callable[[], float], repeats: int) -> float:
    return statistics.median(measure() for _ in range(repeats))


def medians_of(measure: Callable[[], tuple[float, float]], repeats: int
               ) -> tuple[float, float]:
    timings = [measure() for _ in range(repeats)]
    return (statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per timing")
    parser.add_argument("--tables", type=int, default=1024, help="tables of the vector env")
    parser.add_argument("--repeats", type=int, default=3, help="timings per figure")
    args = parser.parse_args()
    seconds, repeats, tables = args.seconds, args.repeats, args.tables
    bank = dixit_env.parallel_env(N_PLAYERS, RULES).encoder.clue_texts
    print(f"# dixit_lab vector env vs PettingZoo env, {N_PLAYERS} players {RULES}, random "
          f"legal actions from the masks, one core ({platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()}), embedder conse, deck dreams; "
          f"agent steps/s, medians of {repeats}")
    print(f"{'clue actions':>12} {'compact':>9} {'(step alone)':>12} {'flat':>7} "
          f"{'parallel':>9} {'AEC':>7} {'compact/parallel':>17} {'compact/AEC':>12} "
          f"{'flat/parallel':>14} {'load':>5}")
    for clue_texts in (None, list(bank[:64])):
        compact, alone = medians_of(
            lambda texts=clue_texts: vector_steps(tables, "compact", texts, seconds), repeats)
        flat, _ = medians_of(lambda texts=clue_texts: vector_steps(
            max(tables // 16, 1), "flat", texts, seconds), repeats)
        # a parallel step is one phase: every seat's action (the ones that do not decide pass)
        parallel = N_PLAYERS * median_of(lambda texts=clue_texts: parallel_steps(
            N_PLAYERS, RULES, seconds, texts), repeats)
        aec = median_of(lambda texts=clue_texts: aec_steps(N_PLAYERS, RULES, seconds, texts),
                        repeats)
        load = os.getloadavg()[0]
        clues = len(bank) if clue_texts is None else len(clue_texts)
        print(f"{clues:>12,} {compact:>9,.0f} {alone:>12,.0f} {flat:>7,.0f} {parallel:>9,.0f} "
              f"{aec:>7,.0f} {compact / parallel:>16.1f}x {compact / aec:>11.1f}x "
              f"{flat / parallel:>13.1f}x {load:>5.1f}")
    print(f"vector env: {tables} tables compact, {max(tables // 16, 1)} flat; '(step alone)': "
          f"the compact env's step without the policy; target >= 500,000 agent steps/s")


if __name__ == "__main__":
    main()
