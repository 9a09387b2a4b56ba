"""Decisions per second, tokens per second and latency per decision against the real model
server (llama-cpp-python serving Gemma 3 270M, as ``scripts/real_model.py`` sets it up), at
concurrency 1, 2 and 4.

    python benchmarks/bench_real_model.py [--dir ~/.cache/dixit-lab/real-model] [--requests 4]

The requests are the decisions the real-model game recorded (``--dir/results/exchanges``: run
``scripts/real_model.py`` first), sent again through the project's client
(:func:`dixit_lab.vlm.client.complete`) to a fresh server, ``--requests`` at each level, at
most ``concurrency`` in flight. The server computes one request at a time (llama-cpp-python
holds a lock around the model), so concurrency adds queueing, not throughput: the figures
show how much.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dixit_lab.vlm.client import Endpoint, complete

ROOT = Path(__file__).resolve().parent.parent


def _real_model() -> Any:
    spec = importlib.util.spec_from_file_location("real_model",
                                                  ROOT / "scripts" / "real_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recorded_requests(folder: Path) -> list[dict[str, Any]]:
    requests = []
    for path in sorted((folder / "results" / "exchanges").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if "probe" not in entry and "error" not in entry["outcome"]:
                requests.append(entry["request"])
    if not requests:
        raise SystemExit(f"no recorded decisions under {folder}/results/exchanges: run "
                         f"scripts/real_model.py first")
    return requests


def level(url: str, requests: list[dict[str, Any]], concurrency: int) -> dict[str, float]:
    endpoint = Endpoint(url, timeout=600.0, concurrency=concurrency, retries=0)
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        outcomes = list(pool.map(lambda r: complete(endpoint, r), requests))
    wall = time.perf_counter() - started
    failed = [o for o in outcomes if "error" in o]
    if failed:
        raise SystemExit(f"{len(failed)} requests failed: {failed[0]['error']}")
    tokens = sum(o["usage"].get("prompt_tokens", 0) + o["usage"].get("completion_tokens", 0)
                 for o in outcomes)
    latencies = [o["wall_s"] for o in outcomes]
    return {"concurrency": concurrency, "requests": len(outcomes),
            "decisions_per_s": round(len(outcomes) / wall, 4),
            "tokens_per_s": round(tokens / wall, 1),
            "latency_s_mean": round(statistics.mean(latencies), 2),
            "latency_s_max": round(max(latencies), 2), "wall_s": round(wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path,
                        default=Path.home() / ".cache" / "dixit-lab" / "real-model")
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    folder = args.dir.expanduser()
    real = _real_model()
    requests = recorded_requests(folder)
    python = real.server_env(folder)
    model = real.assemble(python, folder)
    with real.serve(python, model, real.free_port(), args.threads,
                    folder / "bench-server.log") as url:
        complete(Endpoint(url, timeout=600.0, retries=0), requests[0])  # warm the server
        rows = []
        for concurrency in (1, 2, 4):
            batch = [requests[i % len(requests)] for i in range(args.requests)]
            rows.append(level(url, batch, concurrency))
            print(json.dumps(rows[-1]), flush=True)
    base = rows[0]
    for row in rows[1:]:
        print(f"concurrency {row['concurrency']}: decisions/s x"
              f"{row['decisions_per_s'] / base['decisions_per_s']:.2f}, latency x"
              f"{row['latency_s_mean'] / base['latency_s_mean']:.2f} of concurrency 1")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
