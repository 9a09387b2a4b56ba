"""Record the golden model tournament replayed by ``tests/test_golden_vlm.py``.

Run ``python tests/golden_vlm/make_golden.py`` after a change that is meant to change what the
model agents send (prompts, parameters, seeding): it plays the tournament against the local
stub server (misbehaving on purpose) and rewrites ``tests/golden_vlm/tournament/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import run_experiment
from dixit_lab.vlm.stub import StubServer

FOLDER = Path(__file__).resolve().parent / "tournament"
KEEP = {"config.yaml", "games.jsonl", "agents.csv", "exchanges"}


def main() -> None:
    if FOLDER.exists():
        shutil.rmtree(FOLDER)
    with StubServer(slow_seconds=0.6) as server:
        common = f"base_url={server.base_url}, timeout=0.3, backoff=0.01, http_retries=1"
        config = parse_config({
            "name": "golden-vlm", "seed": 2026, "deck": "dreams", "games": 3,
            "rules": {"preset": "classic", "options": {"max_rounds": 4}},
            "players": [
                {"name": "vision", "agent": f"vlm(model=mixed, {common}, image_size=256, "
                                            f"price_in=0.15, price_out=0.6)"},
                {"name": "text", "agent": f"llm(model=mixed, {common})"},
                {"name": "plain", "agent": f"vlm(model=good, {common}, "
                                           f"response_format=json_object)"},
                {"name": "dice", "agent": "random"},
            ],
            "executor": {"kind": "local"}, "records": "jsonl",
        })
        run_experiment(config, FOLDER, show_progress=False)
    for path in FOLDER.iterdir():
        if path.name not in KEEP:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    print(f"wrote {FOLDER}")


if __name__ == "__main__":
    main()
