"""Tests for dixit_lab.core.clues: the bundled bank, normalisation, loaders, errors, sampling."""

from __future__ import annotations

import csv
import hashlib
import random
import re
from pathlib import Path

import numpy as np
import pytest

from dixit_lab.core.clues import (
    CLUE_KINDS,
    CUSTOM_KIND,
    ClueBank,
    ClueBankError,
    available_clue_banks,
    clue_key,
    normalize_clue,
)

REPO_DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def default_bank() -> ClueBank:
    return ClueBank.load("default")


# ---------------------------------------------------------------- the bundled bank


def test_default_bank_is_large_distinct_and_has_every_kind(default_bank: ClueBank) -> None:
    assert len(default_bank) >= 3000
    assert len({t.casefold() for t in default_bank.texts}) == len(default_bank)
    counts = default_bank.kind_counts()
    assert set(counts) == set(CLUE_KINDS)
    assert all(counts[k] >= 50 for k in CLUE_KINDS), counts
    assert sum(counts.values()) == len(default_bank)


def test_default_csv_is_already_normalised_and_short() -> None:
    with (REPO_DATA / "clues" / "default.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= 3200
    for row in rows:
        text = row["text"]
        assert text == normalize_clue(text), text
        assert 1 <= len(text.split()) <= 8, text
        assert row["kind"] in CLUE_KINDS, row


def test_default_is_listed_and_loads_by_default(default_bank: ClueBank) -> None:
    assert "default" in available_clue_banks()
    assert ClueBank.load() == default_bank
    assert default_bank.name == "default"


def test_data_root_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "clues").mkdir()
    (tmp_path / "clues" / "tiny.csv").write_text("text,kind\nmoon,concrete_noun\n", "utf-8")
    monkeypatch.setenv("DIXIT_LAB_DATA", str(tmp_path))
    assert available_clue_banks() == ["tiny"]
    bank = ClueBank.load("tiny")
    assert bank.texts == ("moon",) and bank.kinds == ("concrete_noun",)


# ---------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  lighthouse  ", "lighthouse"),
        ("the   last\ttrain\n home", "the last train home"),
        ('"a door left open"', "a door left open"),
        ("'whoosh'", "whoosh"),
        ("\u201cthe keeper\u201d", "the keeper"),
        ("\u2018tick-tock\u2019", "tick-tock"),
        ('"The end."', "The end"),
        ("The end.", "The end"),
        ("falling;", "falling"),
        ("wait:", "wait"),
        ("why not?", "why not?"),
        ("hurray!", "hurray!"),
        ("and then\u2026", "and then\u2026"),
        ("and then...", "and then..."),
        ("Don't Panic", "Don't Panic"),  # inner apostrophe and case preserved
        ('"unmatched', '"unmatched'),
        ("cafe\u0301", "caf\u00e9"),  # NFC
        ("   ", ""),
        (".", ""),
    ],
)
def test_normalize_clue(raw: str, expected: str) -> None:
    assert normalize_clue(raw) == expected
    assert normalize_clue(expected) == expected  # idempotent


def test_clue_key_is_casefolded() -> None:
    assert clue_key("  Straße. ") == clue_key("STRASSE")


def test_normalize_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        normalize_clue(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------- from_texts / dedup


def test_case_insensitive_dedup_keeps_first() -> None:
    bank = ClueBank.from_texts(
        ["Moonlight", "moonlight.", " MOONLIGHT ", "owl", '"Owl"', "fox"],
        kinds=["a", "b", "c", "d", "e", "f"],
    )
    assert bank.texts == ("Moonlight", "owl", "fox")
    assert bank.kinds == ("a", "d", "f")
    assert bank.dropped_duplicates == 3
    assert bank.name == "custom"


def test_from_texts_kinds_default_and_single() -> None:
    assert ClueBank.from_texts(["a", "b"]).kinds == (CUSTOM_KIND, CUSTOM_KIND)
    assert ClueBank.from_texts(["a", "b"], kinds="emotion").kinds == ("emotion", "emotion")


def test_from_texts_skips_empty_and_counts() -> None:
    bank = ClueBank.from_texts(["", "  ", "star", "."])
    assert bank.texts == ("star",)
    assert bank.skipped_empty == 3


def test_from_texts_errors() -> None:
    with pytest.raises(ClueBankError, match="3 texts but 2 kinds"):
        ClueBank.from_texts(["a", "b", "c"], kinds=["x", "y"])
    with pytest.raises(ValueError, match=r"'mine'.*no clues left"):
        ClueBank.from_texts(["", "  ", '""'], name="mine")


def test_constructor_rejects_duplicates_and_mismatch() -> None:
    with pytest.raises(ClueBankError, match="duplicates clue 0"):
        ClueBank("b", ("Owl", "owl"), ("x", "x"))
    with pytest.raises(ClueBankError, match="2 texts but 1 kinds"):
        ClueBank("b", ("a", "b"), ("x",))
    with pytest.raises(ClueBankError, match="empty"):
        ClueBank("b", (), ())


def test_equality_ignores_bookkeeping_counts() -> None:
    a = ClueBank.from_texts(["x", "X", "y"])
    b = ClueBank.from_texts(["x", "y"])
    assert a.dropped_duplicates == 1 and b.dropped_duplicates == 0
    assert a == b and hash(a) == hash(b)


# ---------------------------------------------------------------- user files


def test_txt_bank(tmp_path: Path) -> None:
    path = tmp_path / "my clues.txt"
    path.write_text(
        "\ufeff# my clues\n\nthe last train home\n  Whoosh.  \n# another comment\n"
        "WHOOSH\n\n\u201cA door left open\u201d\n",
        encoding="utf-8",
    )
    bank = ClueBank.load(path)
    assert bank.name == "my clues"
    assert bank.texts == ("the last train home", "Whoosh", "A door left open")
    assert set(bank.kinds) == {CUSTOM_KIND}
    assert bank.dropped_duplicates == 1
    assert bank.skipped_empty == 0
    assert ClueBank.load(str(path)) == bank


def test_csv_bank_with_and_without_kind(tmp_path: Path) -> None:
    path = tmp_path / "bank.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "Text", "Kind"])
        writer.writerow([1, "easy come, easy go", "idiom"])
        writer.writerow([2, "", "idiom"])
        writer.writerow([3, "lantern", ""])
        writer.writerow([4, "  ", "emotion"])
        writer.writerow([5, "Lantern", "concrete_noun"])
        writer.writerow([6, "line one\nline two", "phrase"])
    bank = ClueBank.load(path)
    assert bank.texts == ("easy come, easy go", "lantern", "line one line two")
    assert bank.kinds == ("idiom", CUSTOM_KIND, "phrase")
    assert bank.skipped_empty == 2
    assert bank.dropped_duplicates == 1

    plain = tmp_path / "plain.csv"
    plain.write_text("text\nowl\nfox\n", encoding="utf-8")
    assert ClueBank.load(plain).kinds == (CUSTOM_KIND, CUSTOM_KIND)


# ---------------------------------------------------------------- error paths


def test_unknown_bundled_name_lists_available() -> None:
    with pytest.raises(ValueError, match=r"unknown bundled clue bank 'nope'.*available:.*default"):
        ClueBank.load("nope")


def test_missing_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.txt"
    with pytest.raises(FileNotFoundError, match=r"absent\.txt"):
        ClueBank.load(path)


def test_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "clues.json"
    path.write_text('["owl"]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"clues\.json.*unknown clue bank extension '\.json'"):
        ClueBank.load(path)


def test_csv_missing_text_column_lists_columns(tmp_path: Path) -> None:
    path = tmp_path / "wrong.csv"
    path.write_text("clue,kind\nowl,concrete_noun\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"wrong\.csv.*no 'text' column.*'clue', 'kind'"):
        ClueBank.load(path)


def test_csv_without_header(tmp_path: Path) -> None:
    path = tmp_path / "blank.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"blank\.csv.*empty CSV"):
        ClueBank.load(path)


@pytest.mark.parametrize(
    ("filename", "content"),
    [
        ("empty.txt", "# only comments\n\n   \n"),
        ("quotes.txt", '""\n.\n'),
        ("empty.csv", "text,kind\n,idiom\n  ,emotion\n"),
    ],
)
def test_empty_bank_after_normalisation(tmp_path: Path, filename: str, content: str) -> None:
    path = tmp_path / filename
    path.write_text(content, encoding="utf-8")
    pattern = re.escape(filename) + r".*no clues left"
    with pytest.raises(ValueError, match=pattern):
        ClueBank.load(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.txt.*not UTF-8"):
        ClueBank.load(path)


# ---------------------------------------------------------------- lookup


def test_index_round_trip(default_bank: ClueBank) -> None:
    for i in (0, 1, len(default_bank) // 2, len(default_bank) - 1):
        text = default_bank.texts[i]
        assert default_bank.index(text) == i
        assert default_bank.index(f'  "{text.upper()}."  ') == i
        assert text in default_bank
        assert default_bank[i] == text
    assert default_bank.index("lighthouse") == default_bank.texts.index("lighthouse")
    assert default_bank.kind_of("lighthouse") == "concrete_noun"


def test_index_missing_raises_clear_keyerror(default_bank: ClueBank) -> None:
    with pytest.raises(KeyError, match="not in clue bank 'default'"):
        default_bank.index("zzqx not a clue")
    assert "zzqx not a clue" not in default_bank
    assert 42 not in default_bank


# ---------------------------------------------------------------- subset / sample


def test_subset(default_bank: ClueBank) -> None:
    sub = default_bank.subset(kinds=["idiom", "title"])
    assert set(sub.kinds) == {"idiom", "title"}
    counts = default_bank.kind_counts()
    assert len(sub) == counts["idiom"] + counts["title"]
    order = [default_bank.index(t) for t in sub.texts]
    assert order == sorted(order)
    assert len(default_bank.subset("emotion")) == counts["emotion"]
    with pytest.raises(ValueError, match=r"no clues of kind 'poem'.*kinds present"):
        default_bank.subset(["idiom", "poem"])


def test_sample_deterministic(default_bank: ClueBank) -> None:
    a = default_bank.sample(25, np.random.default_rng(1234))
    b = default_bank.sample(25, np.random.default_rng(1234))
    c = default_bank.sample(25, np.random.default_rng(4321))
    assert a.texts == b.texts and a.kinds == b.kinds
    assert a.texts != c.texts
    assert len(set(a.texts)) == 25
    assert all(default_bank.kind_of(t) == k for t, k in zip(a.texts, a.kinds, strict=True))


def test_sample_does_not_touch_global_state(default_bank: ClueBank) -> None:
    py_state = random.getstate()
    np.random.seed(0)  # noqa: NPY002 - checking that the legacy global state is untouched
    expected = np.random.random()  # noqa: NPY002
    np.random.seed(0)  # noqa: NPY002
    default_bank.sample(10, np.random.default_rng(7))
    assert np.random.random() == expected  # noqa: NPY002
    assert random.getstate() == py_state


def test_sample_errors(default_bank: ClueBank) -> None:
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        default_bank.sample(3, 42)  # type: ignore[arg-type]
    small = ClueBank.from_texts(["a", "b"])
    with pytest.raises(ValueError, match="cannot sample 3 clues from 2"):
        small.sample(3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="cannot sample 0"):
        small.sample(0, np.random.default_rng(0))


# ---------------------------------------------------------------- content hash


def test_content_hash_stable_and_sensitive() -> None:
    texts = ["owl", "the last train home", "whoosh"]
    bank = ClueBank.from_texts(texts, name="one")
    expected = hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()
    assert bank.content_hash == expected
    # same normalised content, different name/kinds/spelling of the input -> same key
    same = ClueBank.from_texts([" owl ", '"the last train home."', "whoosh"], "x", name="two")
    assert same.content_hash == expected
    changed = ClueBank.from_texts(["owl", "the last train home", "whoosh!"])
    assert changed.content_hash != expected
    reordered = ClueBank.from_texts(["whoosh", "owl", "the last train home"])
    assert reordered.content_hash != expected


def test_default_content_hash_is_stable(default_bank: ClueBank) -> None:
    assert ClueBank.load("default").content_hash == default_bank.content_hash
    assert len(default_bank.content_hash) == 64
    assert "default" in repr(default_bank) and str(len(default_bank)) in repr(default_bank)
