"""Columnar batches of game records: every derived array equals what the record objects say,
whatever the table size; a games file that is not whole is refused naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dixit_lab.records.batches import OUTCOME_NAMES, file_batches, record_batches
from dixit_lab.records.format import read_jsonl, write_jsonl
from dixit_lab.run.experiment import ConfigError, parse_config
from dixit_lab.run.runner import run_experiment


def _records(tmp_path: Path, players: int, games: int, seed: int = 3) -> list:
    config = {"name": f"b{players}", "seed": seed, "games": games, "deck": "dreams",
              "players": ["literal", "random", "softmax", "random", "literal"][:players],
              "executor": {"kind": "local"}}
    folder = tmp_path / f"p{players}-{seed}"
    run_experiment(parse_config(config), folder, show_progress=False, write_outputs=False)
    return list(read_jsonl(folder))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> list:
    tmp = tmp_path_factory.mktemp("batches")
    return _records(tmp, 3, 6) + _records(tmp, 5, 7)  # three players show 5 cards


def test_batch_arrays_equal_the_records(mixed) -> None:
    batches = list(record_batches(mixed, batch_games=4))
    seen = 0
    for batch in batches:
        for position, index in enumerate(batch.record_index):
            record = mixed[index]
            rounds = np.flatnonzero(batch.round_game == position)
            assert len(rounds) == len(record.rounds) and batch.n == record.n_players
            for row, rnd in zip(rounds, record.rounds, strict=True):
                assert tuple(batch.display[row]) == rnd.display
                assert batch.n_finders[row] == len(rnd.finders)
                assert OUTCOME_NAMES[batch.outcome_codes[row]] == rnd.outcome
                assert [v if v >= 0 else None for v in batch.votes[row]] == list(rnd.votes)
                for seat in range(batch.n):
                    own = [i for i, o in enumerate(rnd.card_owner) if o == seat]
                    received = sum(1 for v in rnd.votes if v is not None and v in own)
                    assert batch.votes_received[row, seat] == received
            assert tuple(batch.final_scores[position]) == record.final_scores
            seen += 1
    assert seen == len(mixed) and {b.n for b in batches} == {3, 5}


def test_a_vote_on_ones_own_card_is_received_by_nobody() -> None:
    """Under own_card_votes (dixitworld_as_run) a seat's vote on its own card is not a vote it
    drew: votes_received (decoy_votes_per_turn, rounds.parquet) counts other players' votes,
    as the scoring does."""
    from dixit_lab.core.cards import Deck
    from dixit_lab.core.rules import get_rules
    from dixit_lab.engine.game import play_game
    from tests.engine.test_game import Cheater, randoms

    agents = randoms(4)
    agents[2] = Cheater("vote_own")
    record = play_game(agents, get_rules("dixitworld_as_run"), Deck.numbered(84), 5)
    (batch,) = record_batches([record])
    for row, rnd in enumerate(record.rounds):
        for seat in range(4):
            others = sum(1 for voter, v in enumerate(rnd.votes)
                         if v is not None and voter != seat and rnd.card_owner[v] == seat)
            assert batch.votes_received[row, seat] == others
    told = [row for row, rnd in enumerate(record.rounds) if rnd.storyteller != 2]
    assert all(record.rounds[row].card_owner[record.rounds[row].votes[2]] == 2 for row in told)


def test_a_tampered_file_is_refused_naming_the_line(tmp_path, mixed) -> None:
    five = [r for r in mixed if r.n_players == 5]
    path = tmp_path / "games.jsonl"
    write_jsonl(five, path)
    assert sum(b.games for b in file_batches(path)) == len(five)
    lines = path.read_text().splitlines()
    cases = {
        "again": [*lines[:3], lines[2], *lines[3:]],
        "missing": [*lines[:2], *lines[3:]],
        "edited": [*lines[:4], json.dumps({**json.loads(lines[4]), "winners": [0, 1, 2]}),
                   *lines[5:]],
        "whole": [*lines[:5], lines[5][:200]],
    }
    lines_at = {"again": 4, "missing": 3, "edited": 5, "whole": 6}
    for problem, tampered in cases.items():
        path.write_text("\n".join(tampered) + "\n")
        with pytest.raises(ConfigError, match=rf"games.jsonl, line {lines_at[problem]}: "
                                              rf".*{problem if problem != 'edited' else ''}"):
            list(file_batches(path, batch_games=3))
