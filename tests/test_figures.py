"""``scripts/figures.py`` and the result figures the README and the docs quote: every marked
figure is ``docs/figures.json``'s, the results sections quote no figure that is not marked,
and the quickstart group, re-run here, gives the figures the file holds (so a change that
moves the figures without regenerating them fails)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import figure_marks  # noqa: E402  (scripts/ is not a package)
import figure_runs  # noqa: E402
import figures  # noqa: E402

#: sections whose every result figure must be marked: (file, heading that opens the section;
#: it ends at the next heading). docs/listeners.md's theory_of_mind_table section is not one
#: until its table is regenerated (`scripts/figures.py --only tom_table`): it says so.
RESULT_SECTIONS = (
    ("README.md", "## What the shipped experiments show"),
    ("docs/listener_model.md", "## Every table size"),
    ("docs/listener_model.md", "## Calibration, judged on held-out deals"),
    ("docs/listeners.md", "## Results (storyteller points per turn"),
)
# a decimal, a percentage or a signed number: a figure, unless it is marked
FIGURE = re.compile(r"(?<![\w.])[+−-]?\d+(?:[.,]\d+)+%?|(?<![\w.])\d+%")


def test_every_marked_figure_is_the_datas():
    """The README's and the docs' marked figures are, byte for byte, docs/figures.json's
    (`python scripts/figures.py --check` prints the same)."""
    assert figure_marks.differences(figure_marks.load_figures()) == []


def test_every_group_in_the_figures_file_says_where_it_comes_from():
    stored = figure_marks.load_figures()["groups"]
    assert {"quickstart", "storytellers", "noisy", "table_sizes", "listener_fit"} <= set(stored)
    assert set(stored) <= set(figures.GROUPS)
    for name, entry in stored.items():
        assert entry["seeds"] and entry["dixit_lab_version"] and entry["figures"], name
        for config in entry["configs"]:
            assert (REPO / config).is_file(), (name, config)


def _section(name: str, heading: str) -> str:
    text = (REPO / name).read_text(encoding="utf-8")
    assert heading in text, (name, heading)
    return re.split(r"^#{1,6} ", text.split(heading, 1)[1], flags=re.M)[0]  # to any heading


@pytest.mark.parametrize(("name", "heading"), RESULT_SECTIONS)
def test_the_results_sections_quote_no_unmarked_figure(name, heading):
    """Outside its marks, a results section holds no decimal and no percentage: every figure
    it quotes comes from the regeneration script (numbers in code spans, config values such
    as `ambiguity(target=0.5)` or a target `0.9`, are not results)."""
    text = figure_marks.unmarked(_section(name, heading))
    text = re.sub(r"`[^`]*`", "", text)          # code spans: names, specs, paths
    text = re.sub(r"\]\([^)]*\)", "]", text)      # link targets
    text = re.sub(r"95% ", "", text)  # the confidence level, not a result
    assert FIGURE.findall(text) == [], f"{name}, {heading}: unmarked figures"


def test_a_figure_that_moved_is_named_and_rewritten(tmp_path):
    """--check names the file, line and key of a quoted figure the data no longer gives, and
    the rewrite puts the data's back."""
    for name in figure_marks.MARKED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    data = figure_marks.load_figures()
    readme = tmp_path / "README.md"
    group, name = "quickstart", "pair.ambiguity-literal"
    mark = next(m for m in figure_marks.marks("README.md", readme.read_text(encoding="utf-8"))
                if m.key == f"{group}.{name}")
    data["groups"][group]["figures"][name] = {"text": "9.99 [9.98, 9.99]"}
    lines = figure_marks.differences(data, root=tmp_path)
    assert lines == [f"README.md:{mark.line}: {mark.key}: the file says {mark.text!r}, the "
                     f"data '9.99 [9.98, 9.99]'"]
    assert figure_marks.rewrite_files(data, root=tmp_path) == ["README.md"]
    assert figure_marks.differences(data, root=tmp_path) == []
    assert "9.99 [9.98, 9.99]" in readme.read_text(encoding="utf-8")


def test_the_quickstart_group_gives_the_figures_file_again(tmp_path):
    """The cheap group re-run: its figures and its printed table are the file's (after a
    change to the engine, the agents, the tables or the intervals that moves them, rerun
    `python scripts/figures.py --only quickstart`)."""
    fresh = figures.quickstart(tmp_path)
    stored = figure_marks.load_figures()["groups"]["quickstart"]
    assert fresh["seeds"] == stored["seeds"]
    for kind in ("figures", "tables"):
        assert {k: v["text"] for k, v in fresh[kind].items()} == \
            {k: v["text"] for k, v in stored[kind].items()}, kind


def test_the_storyteller_groups_compute_from_small_runs_of_their_configs(tmp_path, monkeypatch):
    """The groups that docs/figures.json does not hold yet run too: the theory_of_mind group
    on a 4-game copy of storyteller_duel.yaml (a small family of types), and its table holds
    each storyteller's difference, inside its own interval."""
    import yaml

    small = "theory_of_mind(embedders='conse,text', temperatures='0.2', noise_levels='0')"
    data = yaml.safe_load((REPO / "experiments" / "storyteller_duel.yaml").read_text())
    data["games"] = 4
    data["sweep"]["players.0.agent"] = [
        small if a == "theory_of_mind" else a for a in data["sweep"]["players.0.agent"]]
    experiments = tmp_path / "experiments"
    experiments.mkdir()
    (experiments / "storyteller_duel.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setattr(figure_runs, "EXPERIMENTS", experiments)
    monkeypatch.setattr(figures, "LISTENERS", figures.LISTENERS[:1])
    entry = figures.theory_of_mind(tmp_path / "scratch")
    table = entry["tables"]["table"]["text"].splitlines()
    assert len(table) == 3 and table[2].startswith("| `conse` (shared perception) | ")
    for agent in figures.TELLERS:
        difference = entry["figures"][f"duel.tom_minus.{agent}"]
        low, high = difference["interval"]
        assert low <= difference["value"] <= high and difference["text"] in table[2]
    assert entry["figures"]["duel.games"]["value"] == 4
