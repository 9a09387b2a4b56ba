"""``dixit-lab examples`` (list, copy) and a packaged example run by its name."""

from __future__ import annotations

import re
from pathlib import Path

from dixit_lab.bundled import example_names, example_path
from dixit_lab.cli.main import main


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


def test_a_file_in_the_working_folder_wins_over_the_example(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("quickstart").write_text("name: mine\nplayers: [random, random, random]\ngames: 2\n"
                                  "executor: {kind: local}\n")
    assert main(["run", "quickstart", "--quiet"]) == 0
    assert "mine: 2 games" in capsys.readouterr().out
