"""Embedding benchmarks (prints figures; not a test).

    python benchmarks/bench_embeddings.py [--quick]

1. Throughput of each embedder on this machine: images/s and texts/s (model already loaded,
   cache bypassed). ``clip`` uses a random-init ViT-B-32: speed only, its vectors mean nothing.
2. Start-up of the default space (conse, dreams, default clue bank) from the shipped files:
   cold (a fresh Python process, imports included) and warm (same process, files re-read)
   and the memo hit of ``get_space``.
3. Retrieval on each bundled deck: each card's ``alt_caption`` is embedded as a text and the
   deck's cards are ranked by similarity; recall@1, recall@5 and the median rank of the right
   card (1 = best; chance: recall@1 = 1/84, median rank ~42).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dixit_lab.core.cards import available_decks, load_deck
from dixit_lab.core.clues import ClueBank
from dixit_lab.embeddings import (
    EmbeddingSpace,
    ModelUnavailableError,
    clear_spaces,
    get_space,
    make_embedder,
)


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds:8.1f}/s ({n} in {seconds:.2f} s)"


def throughput(quick: bool) -> None:
    print("== throughput (CPU, torch threads:", _torch_threads(), ")")
    deck = load_deck("dreams")
    cards = list(deck.cards[:16] if quick else deck.cards)
    texts = list(ClueBank.load("default").texts[:500 if quick else 2000])
    specs = ["conse", "text", "clip(model=ViT-B-32, pretrained=None)"]
    for spec in specs:
        embedder = make_embedder(spec)
        start = time.perf_counter()
        embedder.embed_texts(texts[:8])  # load the model
        load = time.perf_counter() - start
        start = time.perf_counter()
        embedder.embed_texts(texts)
        text_time = time.perf_counter() - start
        line = f"{spec:40s} load {load:5.1f} s | texts {_rate(len(texts), text_time)}"
        if spec == "text" and not all(card.caption for card in cards):
            line += " | images: n/a (deck has no captions yet)"
        else:
            embedder.embed_images(cards[:2])
            start = time.perf_counter()
            embedder.embed_images(cards)
            line += f" | images {_rate(len(cards), time.perf_counter() - start)}"
        print(line)


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def startup() -> None:
    print("== start-up of the default space (conse, dreams, default) from shipped files")
    code = ("import time; t = time.perf_counter(); "
            "from dixit_lab.embeddings import get_space; import sys; "
            "s = get_space('conse', 'dreams', 'default'); "
            "print(time.perf_counter() - t, 'torch' in sys.modules)")
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    colds, walls = [], []
    for _ in range(3):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True, env=env, cwd=root).stdout.split()
        walls.append(time.perf_counter() - start)
        colds.append(float(out[0]))
        torch_loaded = out[1]
    print(f"cold: {min(colds) * 1000:.0f} ms in-process (imports + load), "
          f"{min(walls) * 1000:.0f} ms wall for `python -c` incl. interpreter start "
          f"(best of 3); torch imported: {torch_loaded}")
    warm = []
    for _ in range(5):
        clear_spaces()
        start = time.perf_counter()
        get_space("conse", "dreams", "default")
        warm.append(time.perf_counter() - start)
    start = time.perf_counter()
    get_space("conse", "dreams", "default")
    memo = time.perf_counter() - start
    print(f"warm: {min(warm) * 1000:.0f} ms (same process, files re-read); "
          f"get_space memo hit: {memo * 1e6:.0f} us")


def _ranks(space: EmbeddingSpace, queries: list[str]) -> np.ndarray:
    vectors = space.embedder.embed_texts(queries)
    scores = vectors @ space.card_vectors.T
    right = scores[np.arange(len(queries)), np.arange(len(queries))]
    return 1 + np.sum(scores > right[:, None], axis=1)


def retrieval() -> None:
    print("== alt_caption -> image retrieval (rank of the right card among the deck)")
    specs = ["conse", "ridge", "text", *_available_clip()]
    for deck_name in available_decks():
        deck = load_deck(deck_name)
        missing = [card.id for card in deck.cards if not card.alt_caption]
        if missing:
            print(f"{deck_name}: skipped, {len(missing)}/{len(deck)} cards have no alt_caption")
            continue
        queries = [card.alt_caption or "" for card in deck.cards]
        for spec in specs:
            if spec == "text" and not all(card.caption for card in deck.cards):
                print(f"{deck_name:14s} {spec:10s} skipped: cards without caption")
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                space = EmbeddingSpace.load(spec, deck, "default")
            ranks = _ranks(space, queries)
            print(f"{deck_name:14s} {spec:10s} recall@1 {np.mean(ranks <= 1):.3f}  "
                  f"recall@5 {np.mean(ranks <= 5):.3f}  median rank "
                  f"{statistics.median(ranks.tolist()):.1f}  (n={len(ranks)})")


def _available_clip() -> list[str]:
    os.environ["HF_HUB_OFFLINE"] = "1"  # only look in the local caches
    found = []
    for tag in ("laion2b_s34b_b79k", "openai"):
        spec = f"clip(model=ViT-B-32, pretrained={tag})"
        try:
            make_embedder(spec).embed_texts(["probe"])
            found.append(spec)
        except ModelUnavailableError:
            pass
    if not found:
        print("clip: no pretrained weights available on this machine (no internet, empty "
              "open_clip / Hugging Face cache) -> clip retrieval not measured")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer items for throughput")
    args = parser.parse_args()
    throughput(args.quick)
    startup()
    retrieval()


if __name__ == "__main__":
    main()
