"""The table of a play run: the games, driven through the engine's :class:`GameSteps`, with
people at the ``human`` seats.

One driver thread plays the games. At each phase it publishes the people's pending decisions
first, then computes the agents' decisions (while the people think, the page showing who is
still thinking), then waits for the people's moves, which arrive from the web server's
threads through :meth:`PlayTable.act`. Each seat's page reads :meth:`PlayTable.seat_view`:
what that seat may know, and nothing else.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dixit_lab.core.agent import Agent, PublicRound, SubmitView, VoteView
from dixit_lab.core.cards import load_deck
from dixit_lab.core.seeding import deal_seed
from dixit_lab.engine.game import GameSteps, Phase, agent_answer
from dixit_lab.isolation.seats import make_seat_agent
from dixit_lab.records.format import GameRecord
from dixit_lab.run.experiment import ConfigError, ExperimentConfig
from dixit_lab.run.tournament import GameSpec
from dixit_lab.web.decisions import DecisionLog, human_players
from dixit_lab.web.moves import CLUE_LIMIT, IllegalMove, check_move
from dixit_lab.web.results import PlayFolder
from dixit_lab.web.views import cards_json, public_round_json

__all__ = ["HumanSeat", "PlayTable", "Stopped", "untrusted_by_default"]

_NOTHING = object()


def untrusted_by_default(data: Any) -> tuple[Any, list[str]]:
    """A play config (its YAML data) whose agent seats are untrusted unless a player says
    otherwise (``isolation: none`` seats an agent in the server's process, where it could
    reach the people's tokens and hands): ``sandbox`` where this machine can make one. Where
    it cannot, a built-in agent plays in ``process`` (with the one line that says why), and a
    player of outside code (a ``file.py:Class``, another package's ``module:Class`` or entry
    point) is refused (:class:`ConfigError`, one line) unless the config gives it an
    ``isolation:`` by name; a player of outside code seated so outside a sandbox gets a
    warning line. Returns the data and the lines to show."""
    from dixit_lab.isolation.sandbox import sandbox_problem
    from dixit_lab.plugins.spec import format_spec, parse_spec
    from dixit_lab.run.provenance import plays_outside_code

    players = data.get("players") if isinstance(data, dict) else None
    if not isinstance(players, list):
        return data, []
    problem: str | None = None
    probed = False
    lines: list[str] = []
    changed = False
    entries = []
    for entry in players:
        entry = {"agent": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict) or not isinstance(entry.get("agent"), str):
            entries.append(entry)
            continue
        try:
            name, inline = parse_spec(entry["agent"])
            given = entry.get("params")
            params: dict[str, Any] = given if isinstance(given, dict) else {}
            outside = plays_outside_code(format_spec(name, {**inline, **params}))
        except ValueError:
            name, outside = "", False  # the config's check names the bad spec
        who = f"player {entry.get('name') or entry['agent']!r}"
        if "isolation" in entry:
            if outside and entry["isolation"] in ("process", "none"):
                where = ("in its own process, not a boundary: it can read what your user "
                         "can" if entry["isolation"] == "process" else "in the server's own "
                         "process")
                lines.append(f"warning: {who} plays outside code with isolation: "
                             f"{entry['isolation']}, as the config asks: {where}, the "
                             f"people's tokens and hands included")
        elif name != "human":
            if not probed:
                problem, probed = sandbox_problem(), True
            if problem is not None and outside:
                raise ConfigError(f"{problem}; {who} plays outside code, which dixit-lab "
                                  f"play seats next to people only in a sandbox (give it "
                                  f"isolation: process to seat it in its own process, not a "
                                  f"boundary, on purpose)")
            entry = {**entry, "isolation": "sandbox" if problem is None else "process"}
            changed = changed or problem is not None
        entries.append(entry)
    if problem and changed:
        lines.insert(0, f"{problem}; the table's built-in agents play with isolation: process "
                        f"instead (their own processes: not a boundary)")
    return {**data, "players": entries}, lines


class Stopped(Exception):
    """The server is shutting down: the game in progress is abandoned (not saved)."""


@dataclass
class HumanSeat:
    """A person's seat: its private token and what it knows of the current round."""

    token: str
    player: int                       # pool seat (the config's players, expanded)
    name: str
    seat: int | None = None           # seat at the table of the current game
    pending: Any = None               # the engine's Decision this seat must take
    answer: Any = _NOTHING
    hand: tuple[int, ...] = ()
    clue: str | None = None
    n_cards: int = 1
    display: tuple[int, ...] = ()
    own_positions: tuple[int, ...] = ()
    played: list[int] = field(default_factory=list)
    vote: int | None = None
    saw_over: bool = False            # its page has been told that the games are over

    def new_round(self) -> None:
        self.clue, self.display, self.own_positions, self.played, self.vote = None, (), (), [], None


class PlayTable:
    """The games of a play run, and every seat's view of them."""

    def __init__(self, config: ExperimentConfig, folder: PlayFolder) -> None:
        self.config = config
        self.rules = config.rule_set()
        self.deck = load_deck(config.deck)
        seats = config.seats()
        self.names = [name for name, _ in seats]   # in the records and tables
        self.specs = [spec for _, spec in seats]
        self.public = config.public_names()         # what the seats see of each other
        self.isolation = config.isolation()
        self._untrusted: dict[int, Agent] = {}
        players = human_players(config)
        if not players:
            raise ConfigError(f"config {config.name!r} has no seat for a person: add a player "
                              f"{{name: you, agent: human}}")
        self.folder = folder
        self.humans = [HumanSeat(secrets.token_urlsafe(24), player, self.public[player])
                       for player in players]
        self.by_token = {human.token: human for human in self.humans}
        self.cond = threading.Condition()
        self.version = 0
        self.game: GameSpec | None = None
        self.players: tuple[str, ...] = ()
        self.history: list[PublicRound] = []
        self.last_round: dict[str, Any] | None = None
        self.round = 0
        self.storyteller: int | None = None
        self.waiting: set[int] = set()
        self.finished: list[dict[str, Any]] = []
        self.over = False
        self.error: str | None = None
        self.stopping = False
        #: called (from whichever thread changed the table, holding :attr:`cond`) after each
        #: change and at :meth:`stop`; they must not block
        self.listeners: list[Callable[[], None]] = []

    # -- the driver thread ------------------------------------------------------------------

    def _agent(self, player: int) -> Agent:
        """The agent of a pool seat: a fresh one each game in the engine's process; an
        untrusted one kept for the run (its sandbox forks a fresh process each game)."""
        isolation = self.isolation[player]
        if not isolation.untrusted:
            return make_seat_agent(self.specs[player])
        if player not in self._untrusted:
            self._untrusted[player] = make_seat_agent(self.specs[player], isolation,
                                                      self.config.deck)
        return self._untrusted[player]

    def run(self) -> None:
        """Play every missing game, then write the tables and the report."""
        try:
            for spec in self.folder.missing():
                self._play(spec)
            self.folder.finish()
        except Stopped:
            return
        except Exception as error:
            with self.cond:  # for the pages: the seats by their public names, not specs
                message = str(error)
                for agent, public in sorted(zip(self.specs, self.public, strict=True),
                                            key=lambda pair: -len(pair[0])):
                    message = message.replace(agent, public)
                self.error = f"{type(error).__name__}: {message}"
                self._changed()
            raise
        finally:
            for kept in self._untrusted.values():
                close = getattr(kept, "close", None)  # an isolated agent's process
                if close is not None:
                    close()
            with self.cond:
                self.over = True
                self._changed()

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
            self._tell_listeners()

    def _changed(self) -> None:
        self.version += 1
        self.cond.notify_all()
        self._tell_listeners()

    def _tell_listeners(self) -> None:
        for listener in self.listeners:
            listener()

    def _human_at(self, seat: int) -> HumanSeat | None:
        for human in self.humans:
            if human.seat == seat:
                return human
        return None

    def _play(self, spec: GameSpec) -> None:
        names = tuple(self.specs[player] for player in spec.seats)
        meta = {"game": spec.index, "deal": spec.deal,
                "players": [self.names[player] for player in spec.seats]}
        players = tuple(self.public[player] for player in spec.seats)
        steps = GameSteps(names, self.rules, self.deck,
                          deal_seed(self.config.seed, spec.deal, self.folder.secret),
                          on_illegal=self.config.on_illegal, meta=meta, players=players,
                          first_player_seat=spec.first_player_seat)
        with self.cond:
            self.game, self.players, self.history = spec, players, []
            self.round, self.storyteller, self.waiting = 0, None, set()
            for human in self.humans:
                human.seat = spec.seats.index(human.player) if human.player in spec.seats \
                    else None
                human.hand, human.pending, human.answer = (), None, _NOTHING
                human.n_cards = self.rules.cards_per_player(len(players))
                human.new_round()
            self._changed()
        agents: dict[int, Agent] = {}
        for seat, player in enumerate(spec.seats):
            if self._human_at(seat) is None:
                agents[seat] = self._agent(player)
                try:  # as play_game does: an agent's exception is a fault of the game
                    agents[seat].begin_game(steps.context(seat))
                except Exception as error:
                    steps.hook_failed(seat, "begin_game", error)
        record, decisions = self._steps(steps, agents, spec.index)
        self.folder.save(spec.index, record, decisions)
        with self.cond:
            self.finished.append({"game": spec.index, "players": list(players),
                                  "final_scores": list(record.final_scores),
                                  "winners": list(record.winners),
                                  "end_reason": record.end_reason})
            self._changed()

    def _steps(self, steps: GameSteps, agents: dict[int, Agent], game: int
               ) -> tuple[GameRecord, list[str]]:
        """Answer the engine's events to the end of the game: (record, people's decisions)."""
        log = DecisionLog()
        event = steps.start()
        while event is not None:
            if isinstance(event, Phase):
                event = steps.send(self._phase(event, agents, game, log))
                continue
            for seat, agent in agents.items():
                try:
                    agent.observe(event)
                except Exception as error:
                    steps.hook_failed(seat, "observe", error)
            with self.cond:
                self.history.append(event)
                self.last_round = {"game": game, **public_round_json(self.deck, event)}
                for human in self.humans:
                    human.new_round()
                self._changed()
            event = steps.send(None)
        assert steps.record is not None  # the game is over
        return steps.record, log.lines

    def _phase(self, phase: Phase, agents: dict[int, Agent], game: int, log: DecisionLog
               ) -> list[Any]:
        answers: list[Any] = [None] * len(phase.decisions)
        people: dict[int, HumanSeat] = {}
        with self.cond:
            self.round = phase.decisions[0].view.round
            if phase.action == "tell":
                self.storyteller = phase.decisions[0].seat
            self.waiting = {decision.seat for decision in phase.decisions}
            first = phase.decisions[0].view
            if isinstance(first, VoteView):  # the display is laid out for the table to see
                teller = self._human_at(first.storyteller)
                display = first.display
                if teller is not None and teller.played:
                    teller.display = display
                    teller.own_positions = (display.index(teller.played[0]),)
            for index, decision in enumerate(phase.decisions):
                human = self._human_at(decision.seat)
                if human is None:
                    continue
                people[index] = human
                view = decision.view
                human.pending, human.answer, human.hand = decision, _NOTHING, view.hand
                if isinstance(view, SubmitView | VoteView):
                    human.clue = view.clue
                if isinstance(view, SubmitView):
                    human.n_cards = view.n_cards
                if isinstance(view, VoteView):
                    human.display, human.own_positions = view.display, view.own_positions
            self._changed()
        for index, decision in enumerate(phase.decisions):
            if index in people:
                continue
            answers[index] = agent_answer(agents[decision.seat], decision)
            with self.cond:
                self.waiting.discard(decision.seat)
                self._changed()
        with self.cond:
            while any(human.answer is _NOTHING for human in people.values()):
                if self.stopping:
                    raise Stopped
                self.cond.wait(timeout=1.0)
            for index, human in people.items():
                decision = phase.decisions[index]
                answers[index] = human.answer
                log.add(game, decision.seat, decision.action, decision.view, human.answer)
                human.pending, human.answer = None, _NOTHING
            self._changed()
        return answers

    # -- the web server's side --------------------------------------------------------------

    def seat(self, token: str) -> HumanSeat:
        """The seat of a token (``KeyError`` for an unknown token)."""
        return self.by_token[token]

    def act(self, human: HumanSeat, body: Any) -> None:
        """Take a person's move, or raise :class:`IllegalMove` naming the rule it breaks."""
        with self.cond:
            decision = human.pending
            if self.over or decision is None or human.answer is not _NOTHING:
                raise IllegalMove("turn", "it is not this seat's turn: wait for the others",
                                  409)
            answer = check_move(decision.action, decision.view, body, self.rules)
            human.answer = answer
            if decision.action == "tell":
                human.played, human.clue = [answer.card], answer.text
            elif decision.action == "submit":
                human.played = list(answer)
            else:
                human.vote = answer
            self.waiting.discard(decision.seat)
            self._changed()

    def all_seen_over(self) -> bool:
        """Whether every seat's page has been told that the games are over."""
        with self.cond:
            return all(human.saw_over for human in self.humans)

    def moved_past(self, after: int) -> bool:
        """Whether the table has changed since version ``after`` (or is stopping)."""
        return self.version > after or self.stopping

    def seat_view(self, human: HumanSeat) -> dict[str, Any]:
        """Everything the seat may know now, as JSON: its hand, the clue it heard, the display
        it votes on, public scores and history; never another seat's cards or an owner."""
        with self.cond:
            deck, n = self.deck, len(self.players)
            deciding = human.pending is not None and human.answer is _NOTHING
            phase = "over" if self.over else human.pending.action if deciding else "wait"
            human.saw_over = human.saw_over or phase == "over"
            scores = list(self.history[-1].scores) if self.history else [0] * n
            hand = [card for card in human.hand if card not in human.played]
            return {
                "version": self.version,
                "name": human.name,
                "seat": human.seat,
                "players": list(self.players),
                "game": self.game.index if self.game else None,
                "games": len(self.folder.specs),
                "phase": phase,
                "round": self.round,
                "max_rounds": self.rules.max_rounds,
                "target_score": self.rules.target_score,
                "storyteller": self.storyteller,
                "hand": cards_json(deck, hand),
                "n_cards": human.n_cards,
                "clue": human.clue,
                "clue_limit": CLUE_LIMIT,
                "display": cards_json(deck, human.display),
                "own_positions": list(human.own_positions),
                "own_card_votes": self.rules.own_card_votes,
                # the positions this seat may not vote for: the page asks, never works it out
                "barred_votes": list(self.rules.barred_votes(human.own_positions)),
                "played": cards_json(deck, human.played),
                "vote": human.vote,
                "scores": scores,
                "waiting_for": [self.players[seat] for seat in sorted(self.waiting)
                                if seat != human.seat],
                "history": [public_round_json(deck, public) for public in self.history],
                "last_round": self.last_round,
                "finished": list(self.finished),
                "error": self.error,
            }
