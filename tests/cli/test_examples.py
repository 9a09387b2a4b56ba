"""``dixit-lab examples`` (list, copy) and a packaged example run by its name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dixit_lab.bundled import example_names, example_path
from dixit_lab.cli.examples import config_argument
from dixit_lab.cli.main import main
from dixit_lab.run.experiment import load_config


def test_examples_lists_every_packaged_config_with_what_it_is(capsys) -> None:
    assert main(["examples"]) == 0
    listing = capsys.readouterr().out
    starts = [line.split()[0] for line in listing.splitlines() if line and not line[0].isspace()]
    assert starts[:len(example_names())] == example_names()
    assert re.search(r"^quickstart +Five agents on the bundled `dreams` deck", listing, re.M)
    assert re.search(r"^rule_variants +The same five agents under the three rule presets",
                     listing, re.M)
    assert main(["examples", "list"]) == 0
    assert capsys.readouterr().out == listing


def test_copy_writes_the_file_and_never_overwrites_unasked(tmp_path, capsys) -> None:
    assert main(["examples", "copy", "quickstart", str(tmp_path / "mine")]) == 0
    copied = tmp_path / "mine" / "quickstart.yaml"
    assert copied.read_bytes() == example_path("quickstart").read_bytes()
    assert f"wrote {copied}" in capsys.readouterr().out
    assert main(["examples", "copy", "quickstart", str(tmp_path / "mine")]) == 2
    assert "exists; --force replaces it" in capsys.readouterr().err
    assert main(["examples", "copy", "--force", "quickstart", str(tmp_path / "mine")]) == 0
    (tmp_path / "file").write_text("x")
    assert main(["examples", "copy", "quickstart", str(tmp_path / "file")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_unknown_names_are_one_line_naming_what_exists(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["examples", "copy", "quickstrat"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no packaged example 'quickstrat'" in err
    assert "quickstart" in err
    assert main(["run", "quickstrat"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert f"no config file 'quickstrat' in {tmp_path}, and no packaged example" in err


def test_the_quickstart_runs_by_name_from_an_empty_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "quickstart", "--quiet", "--executor", "local"]) == 0
    out = capsys.readouterr().out
    assert "quickstart: 1000 games" in out
    assert (Path("results") / "quickstart" / "report.md").is_file()


@pytest.mark.parametrize("local", ["quickstart.yaml", "quickstart.yml", "quickstart"])
@pytest.mark.parametrize("command", ["run", "tune"])
def test_a_name_that_is_both_an_example_and_a_file_here_is_refused(tmp_path, capsys,
                                                                   monkeypatch, local,
                                                                   command):
    """Before: ``run quickstart`` beside an edited quickstart.yaml ran the packaged example
    without a word (and a file named ``quickstart`` silently won over it)."""
    monkeypatch.chdir(tmp_path)
    Path(local).write_text("name: mine\nplayers: [random, random, random]\ngames: 2\n"
                           "executor: {kind: local}\n")
    assert main([command, "quickstart"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert (f"'quickstart' names both the file {local} here and the packaged example "
            f"quickstart: run `dixit-lab {command} ./{local}` for the file, or "
            f"`dixit-lab {command} {example_path('quickstart')}` for the example") in err
    assert not Path("results").exists()


def test_each_of_the_two_runs_by_the_command_the_refusal_gives(tmp_path, capsys,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("quickstart.yaml").write_text("name: mine\nplayers: [random, random, random]\n"
                                       "games: 2\nexecutor: {kind: local}\n")
    assert main(["run", "./quickstart.yaml", "--quiet"]) == 0
    assert "mine: 2 games" in capsys.readouterr().out
    example = str(example_path("quickstart"))  # the packaged file, by its path
    assert config_argument(example, "run") == example
    assert load_config(example).name == "quickstart"


def test_a_name_that_is_no_example_is_a_file_here_or_says_what_is(tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("mine").write_text("name: mine\nplayers: [random, random, random]\ngames: 2\n"
                            "executor: {kind: local}\n")
    assert main(["run", "mine", "--quiet"]) == 0  # a file without a suffix, as given
    assert "mine: 2 games" in capsys.readouterr().out
    Path("other.yaml").write_text("name: other\n")
    assert main(["run", "other"]) == 2
    err = capsys.readouterr().err
    assert f"no config file 'other' in {tmp_path} (there is other.yaml), and no packaged " \
           f"example 'other'" in err
