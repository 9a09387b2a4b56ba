"""Schedules: seat balance, duplicate deals, sampled tables; chunks are order-free."""

from __future__ import annotations

from collections import Counter

import pytest

from dixit_lab.core.rules import get_rules
from dixit_lab.run.executors import chunked, run_chunks
from dixit_lab.run.tournament import GameFailed, TableSetup, play_chunk, schedule_games


def test_rotation_puts_every_player_in_every_seat_equally():
    specs = schedule_games("rotation", 5, 5, 50, seed=1)
    counts = Counter((spec.seats[seat], seat) for spec in specs for seat in range(5))
    assert set(counts.values()) == {10}
    assert len({spec.deal for spec in specs}) == 50


def test_duplicate_replays_each_deal_with_seats_rotated():
    specs = schedule_games("duplicate", 4, 4, 12, seed=1)
    by_deal: dict[int, list] = {}
    for spec in specs:
        by_deal.setdefault(spec.deal, []).append(spec.seats)
    assert len(by_deal) == 3
    for seatings in by_deal.values():
        assert len(seatings) == 4
        for seat in range(4):  # over one deal each player sits in each seat once
            assert sorted(s[seat] for s in seatings) == [0, 1, 2, 3]


def test_sampled_tables_are_seeded_subsets():
    specs = schedule_games("sampled", 8, 5, 200, seed=4)
    assert all(len(set(s.seats)) == 5 and max(s.seats) < 8 for s in specs)
    assert specs == schedule_games("sampled", 8, 5, 200, seed=4)
    assert specs != schedule_games("sampled", 8, 5, 200, seed=5)
    appearances = Counter(seat for spec in specs for seat in spec.seats)
    assert min(appearances.values()) > 80  # each of 8 plays about 125 of 200 games


def test_bad_schedules():
    with pytest.raises(ValueError, match="needs the pool"):
        schedule_games("rotation", 6, 5, 10, 0)
    with pytest.raises(ValueError, match="unknown schedule"):
        schedule_games("league", 5, 5, 10, 0)


SETUP = TableSetup(seed=9, rules=get_rules("classic"), deck="numbered-84",
                   names=("a", "b", "c", "d"), specs=("random",) * 4, on_illegal="raise",
                   engine="reference")


def test_results_do_not_depend_on_chunking_or_workers():
    specs = schedule_games("rotation", 4, 4, 24, seed=9)
    one = dict(line for chunk in run_chunks(SETUP, chunked(specs, 24), "local")
               for line in chunk)
    many = dict(line for chunk in run_chunks(SETUP, chunked(specs, 5), "process", 2)
                for line in chunk)
    reversed_order = dict(play_chunk(SETUP, list(reversed(specs))))
    assert one == many == reversed_order
    assert len(one) == 24


def test_the_first_player_tells_first_wherever_the_schedule_seats_it():
    """Under ``first_storyteller: first_player`` every game's first storyteller is the seat of
    pool seat 0 (the config's first player), on the reference and the batched engine alike: in
    a duplicate schedule's third game (DixitWorld's second phase: the hands reversed) it sits
    at seat 2 and tells first."""
    from dixit_lab.records.format import GameRecord

    specs = schedule_games("duplicate", 4, 4, 4, seed=9)
    assert [spec.first_player_seat for spec in specs] == [0, 3, 2, 1]
    lines = {}
    for engine in ("reference", "batched"):
        setup = TableSetup(seed=9, rules=get_rules("dixitworld"), deck="dreams",
                           names=("a", "b", "c", "d"), specs=("random",) * 4,
                           on_illegal="raise", engine=engine)
        lines[engine] = dict(play_chunk(setup, specs))
        for spec in specs:
            record = GameRecord.from_json(lines[engine][spec.index])
            first = record.rounds[0].storyteller
            assert record.meta["players"][first] == "a" and first == spec.first_player_seat
    assert lines["reference"] == lines["batched"]


def test_a_failing_game_is_named():
    setup = TableSetup(seed=9, rules=get_rules("classic"), deck="numbered-84",
                       names=("a", "b", "c", "d"), specs=("literal",) * 4, on_illegal="raise",
                       engine="reference")
    with pytest.raises(GameFailed, match=r"game 0 \(players \['a', 'b', 'c', 'd'\]\).*has none"):
        play_chunk(setup, schedule_games("rotation", 4, 4, 1, seed=9))


def test_the_batched_engines_keep_the_agents_of_a_bounded_number_of_setups(monkeypatch):
    """A sweep of a thousand points or a tune of a thousand candidates must not keep every
    setup's agents (a model storyteller's tables are tens of MB: +81 MB a tune candidate,
    never freed): the most recent AGENT_SETUPS are kept, a setup played again within them is
    not built again, and forget_agents drops them all."""
    from dixit_lab.run import tournament

    monkeypatch.setattr(tournament, "_SHARED", {})
    setups = [TableSetup(seed=1, rules=get_rules("classic"), deck="dreams",
                         names=("a", "b", "c"),
                         specs=(f"softmax(temperature={0.1 * (k + 1):.1f})", "random",
                                "random"),
                         on_illegal="fallback", engine="batched")
              for k in range(tournament.AGENT_SETUPS + 3)]
    specs = list(schedule_games("rotation", 3, 3, 2, 1))
    for setup in setups:
        play_chunk(setup, specs)
    assert len(tournament._SHARED) == tournament.AGENT_SETUPS
    kept = setups[-tournament.AGENT_SETUPS:]
    assert list(tournament._SHARED) == [setup.key for setup in kept]
    agents = dict(tournament._SHARED[kept[0].key])
    play_chunk(kept[0], specs)  # kept: the same agents, now the most recent
    assert tournament._SHARED[kept[0].key] == agents
    assert list(tournament._SHARED)[-1] == kept[0].key
    play_chunk(setups[0], specs)  # dropped: built again, and the oldest kept one goes
    assert setups[0].key in tournament._SHARED and kept[1].key not in tournament._SHARED
    tournament.forget_agents()
    assert not tournament._SHARED


_BUILT = {"path": None}


def _counting_literal():
    from dixit_lab.core.agent import register_agent
    from dixit_lab_agents.literal import LiteralAgent

    @register_agent("test-counted-literal")
    class Counted(LiteralAgent):
        """literal, writing the pid of every process that builds one."""

        def __init__(self) -> None:
            super().__init__()
            if _BUILT["path"] is not None:
                with open(_BUILT["path"], "a", encoding="utf-8") as out:
                    out.write(f"{__import__('os').getpid()}\n")

    return Counted


def test_a_run_builds_its_agents_once_and_its_workers_none(tmp_path):
    """The engine is chosen once per setup, on the agents the games are played with, and the
    choice travels with the setup: forked workers build no agent (the quickstart built 342
    agents, 80 in each worker, before; 27 now)."""
    import os

    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    _counting_literal()
    _BUILT["path"] = tmp_path / "built.txt"
    try:
        config = parse_config({"name": "once", "seed": 3, "games": 60, "deck": "dreams",
                               "players": ["test-counted-literal", "random", "softmax"],
                               "executor": {"kind": "process", "workers": 2,
                                            "chunk_size": 5}})
        run_experiment(config, tmp_path / "out", show_progress=False)
    finally:
        _BUILT["path"], built = None, (tmp_path / "built.txt").read_text().split()
    here = str(os.getpid())
    assert set(built) == {here}, f"workers built agents: {sorted(set(built) - {here})}"
    assert len(built) <= 5, f"{len(built)} agents built for one run"
