"""One entrant's league: its games against the reference pool, played block by block until its
anchored rating is as precise as asked or its budget is spent.

An entrant (any agent spec, a model seat included) sits at tables of the pool's size with
``table_size - 1`` pool members, in the pool's rules and deck. The games come in **blocks**:
``deals`` deals, each played ``table_size`` times with the seats rotated over it (a
``duplicate`` schedule: the luck of the deal and of the seat cancel within a deal). Block
``i`` seats the ``i``-th set of members of a fixed cycle through every set
(:func:`opponent_sets`), so the entrant meets the pool in the company the pool met itself in
when it was measured. Opponents are *not* chosen where they would tell most of the entrant
(the members nearest its estimate): in Dixit a player's odds against one member depend on
who else sits at the table, and seating the ambiguity storyteller with the three members
nearest it rated it +1.44 in two leagues, where the pool puts it at +0.80 (docs/league.md,
``benchmarks/league_anchoring.py``). What adapts is the length: after every cycle the rating
(:func:`~dixit_lab.ratings.anchored.anchored_rating`, its bootstrap over deals) stops the
entry once its interval is at most ``target_width`` wide, or a budget (``max_games``,
``max_seconds``, ``max_tokens``, ``max_cost_usd``) stops it.

The deals are **sealed**: every block is dealt from the entry's secret (128 bits from the OS,
or ``deal_secret``), which no seat knows while it plays; the secret is published in
``entrant.json`` when the entry ends, so that anyone can play the blocks again. A block is an
ordinary results folder (``blocks/NNN``, made by the runner: config, games, manifest, deal
secret), so an interrupted entry resumes where it stopped, with the blocks it would have
played.

Outside code (a ``file.py:Class``, another package's class or entry point) plays in a sandbox
unless ``isolation`` says otherwise; where no sandbox can be made, it is refused in one line.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dixit_lab.atomic import atomic_write_text
from dixit_lab.errors import ConfigError, UserError
from dixit_lab.league.pool import Pool, PoolMember

if TYPE_CHECKING:
    from dixit_lab.ratings.anchored import AnchoredRating

__all__ = ["BLOCKS", "ENTRANTS", "ENTRANT_FILE", "EntrantResult", "LeagueOptions", "enter",
           "fault_share", "parse_entrant", "play_block", "read_block", "spent"]

ENTRANT_FILE = "entrant.json"
ENTRANTS = "entrants"
BLOCKS = "blocks"
#: what an entrant may be called: its folder's name too
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class LeagueOptions:
    """How long an entry plays: until its interval is at most ``target_width`` wide, or
    ``max_games`` (or ``max_seconds`` of playing; a model entrant's ``max_tokens`` or
    ``max_cost_usd``, each block run under what is left of them) are spent; ``deals`` deals
    a block;
    ``isolation``: how the entrant is seated (None: a sandbox for outside code, in the
    engine's process for the package's own agents); where the games run."""

    target_width: float = 0.4
    max_games: int = 2000
    max_seconds: float | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    deals: int = 2
    isolation: str | None = None
    executor: str = "local"
    workers: int | None = None

    def __post_init__(self) -> None:
        if not self.target_width > 0:
            raise UserError(f"target_width must be above 0, got {self.target_width}")
        if self.max_games < 1 or self.deals < 1:
            raise UserError("max_games and deals must be at least 1")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise UserError(f"max_seconds must be above 0, got {self.max_seconds}")
        for name, value in (("max_tokens", self.max_tokens),
                            ("max_cost_usd", self.max_cost_usd)):
            if value is not None and not value > 0:
                raise UserError(f"{name} must be above 0, got {value}")
        if self.isolation not in (None, "none", "process", "sandbox"):
            raise UserError(f"isolation must be none, process or sandbox, got "
                            f"{self.isolation!r}")


@dataclass(frozen=True)
class Block:
    """A played block: its opponents (pool names), games, and the rating after it."""

    opponents: list[str]
    games: int
    strength: float
    ci_low: float
    ci_high: float
    seconds: float


@dataclass
class EntrantResult:
    """What ``entrant.json`` holds (see :func:`enter`)."""

    name: str
    spec: str
    pool_version: str
    status: str = "playing"                 # playing, done
    stopped: str = ""                       # why it stopped: interval, max_games, max_seconds
    strength: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    games: int = 0
    seconds: float = 0.0
    tokens: int = 0                         # a model entrant's prompt and completion tokens
    cost_usd: float = 0.0                   # and their cost (its price_in, price_out)
    fault_share: float = 0.0
    budget_spent: bool = False              # its tokens or cost ran out within a block
    isolation: str = "none"
    options: dict[str, Any] = field(default_factory=dict)
    blocks: list[dict[str, Any]] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    deal_secret: str | None = None          # published when the entry is done

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, allow_nan=True) + "\n"

    @classmethod
    def read(cls, path: Path) -> EntrantResult:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            record = cls(**data)
            problem = record._problem()
        except (OSError, ValueError, TypeError) as error:
            problem = str(error)
        if problem:
            raise ConfigError(f"{path} is not an entrant's record ({problem}); move it away "
                              f"to enter again")
        return record

    def _problem(self) -> str | None:
        """What is wrong with a record read from a file (a field of another type), or None."""
        kinds: dict[str, Any] = {
            "name": str, "spec": str, "pool_version": str, "status": str, "stopped": str,
            "strength": float, "ci_low": float, "ci_high": float, "games": int,
            "seconds": float, "tokens": int, "cost_usd": float, "fault_share": float,
            "budget_spent": bool, "isolation": str, "options": dict, "blocks": list,
            "provenance": dict}
        for key, kind in kinds.items():
            value = getattr(self, key)
            numeric = kind in (int, float) and isinstance(value, int | float) and not \
                isinstance(value, bool) and (kind is float or isinstance(value, int))
            if not (numeric or (kind not in (int, float) and isinstance(value, kind))):
                return f"{key} is {json.dumps(value)[:40]}, not {kind.__name__}"
        if self.status not in ("playing", "done"):
            return f"status is {self.status!r}, not playing or done"
        if not all(isinstance(block, dict) and isinstance(block.get("games"), int)
                   and isinstance(block.get("opponents"), list) for block in self.blocks):
            return "a block is not {opponents, games, ...}"
        if self.deal_secret is not None and not isinstance(self.deal_secret, str):
            return "deal_secret is not text"
        return None


def parse_entrant(text: str) -> tuple[str, str]:
    """``NAME=SPEC`` (or a bare spec that is a name itself, ``literal``) -> (name, spec)."""
    match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)=(.+)", text.strip())
    name, spec = (match.group(1), match.group(2).strip()) if match else (text.strip(),) * 2
    if not _NAME.fullmatch(name):
        raise UserError(f"entrant {text!r}: name it, NAME=SPEC (a name of letters, digits, "
                        f"'_', '.', '-', starting with a letter or digit, at most 64)")
    from dixit_lab.plugins.spec import parse_spec

    parse_spec(spec)  # a SpecError (one line) for a bad spec
    return name, spec


def _isolation(spec: str, options: LeagueOptions) -> str:
    from dixit_lab.run.provenance import plays_outside_code

    if options.isolation is not None:
        if options.isolation != "sandbox" and plays_outside_code(spec):
            print(f"warning: {spec} plays outside code with isolation: {options.isolation}, "
                  f"as asked: not a boundary, it can read what your user can (the entry's "
                  f"deal secret included: its deals are not sealed)", file=sys.stderr)
        return options.isolation
    if not plays_outside_code(spec):
        return "none"
    from dixit_lab.isolation.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem is not None:
        raise UserError(f"{problem}; {spec} plays outside code, which a league seats in a "
                        f"sandbox (give --isolation process to seat it in its own process, "
                        f"not a boundary, on purpose)")
    return "sandbox"


def _secret(folder: Path, pinned: str | None) -> str:
    from dixit_lab.core.seeding import SECRET_BYTES

    path = folder / "deal_secret"
    if path.is_file():
        kept = path.read_text(encoding="ascii").strip()
        if pinned is not None and pinned.lower() != kept.lower():
            raise UserError(f"{folder} was dealt from another deal secret than the one "
                            f"given; enter under another name")
        return kept
    if pinned is not None and not re.fullmatch(r"[0-9a-fA-F]{32}", pinned):
        raise UserError("a deal secret is 32 hex digits")
    secret = pinned.lower() if pinned is not None else os.urandom(SECRET_BYTES).hex()
    from dixit_lab.atomic import atomic_write

    atomic_write(path, lambda tmp: tmp.write_text(secret + "\n", encoding="ascii"), 0o600)
    return secret


def opponent_sets(pool: Pool, spec: str) -> list[tuple[str, ...]]:
    """The sets of ``table_size - 1`` pool members an entrant of ``spec`` meets, one a block
    in turn, in the pool's order: every set of the members, so that it meets each as often
    and in every company; an entrant that is a member (its spec is a member's) meets every
    set of the others, as that member did when the pool was measured (a copy of itself at
    the table changes its odds: two random players at one table help each other)."""
    import itertools

    same = same_member(pool, spec)
    return list(itertools.combinations([name for name in pool.names if name != same],
                                       pool.table_size - 1))


def same_member(pool: Pool, spec: str) -> str | None:
    """The member whose spec ``spec`` is (its canonical form), or None."""
    from dixit_lab.core.agent import canonical_spec
    from dixit_lab.plugins.spec import parse_spec

    def canonical(text: str) -> str:
        return canonical_spec(*parse_spec(text))

    wanted = canonical(spec)
    return next((m.name for m in pool.members if canonical(m.spec) == wanted), None)


def play_block(folder: Path, index: int, entrant: dict[str, Any], members: list[PoolMember],
               rules: str, deck: str, deals: int, secret: str, executor: str = "local",
               workers: int | None = None, budget: dict[str, Any] | None = None
               ) -> tuple[list[tuple[tuple[str, ...], tuple[float, ...]]], list[int], float]:
    """Block ``index`` of an entry into the results folder ``folder``: ``entrant`` (a
    config's player entry) and ``members`` at one table, ``deals`` deals each played once
    per seat (a duplicate schedule), dealt from ``secret`` and the block's number. Returns
    its games (players, scores), each one's deal (numbered across blocks) and the seconds it
    took (a block already played in the folder is read, not played again). ``budget``: the
    run's ``model_budget``."""
    from dixit_lab.run.experiment import parse_config
    from dixit_lab.run.runner import run_experiment

    size = 1 + len(members)
    config = parse_config({
        "name": f"{entrant['name']}-block-{index:03d}", "seed": index, "rules": rules,
        "deck": deck, "players": [entrant] + [member.player() for member in members],
        "games": deals * size, "schedule": {"kind": "duplicate"}, "deal_secret": secret,
        "executor": {"kind": executor, "workers": workers},
        **({"model_budget": budget} if budget else {})},
        f"league block {index} of {entrant['name']}")
    started = time.perf_counter()
    run_experiment(config, folder, show_progress=False, write_outputs=False)
    seconds = time.perf_counter() - started
    games, dealt = read_block(folder, index, size)
    return games, dealt, seconds


def read_block(folder: Path, index: int, size: int
               ) -> tuple[list[tuple[tuple[str, ...], tuple[float, ...]]], list[int]]:
    """The games of block ``index`` in ``folder`` (tables of ``size``) and each one's deal,
    numbered across blocks."""
    from dixit_lab.ratings.games import games_from_records
    from dixit_lab.records.files import find_records
    from dixit_lab.records.format import read_jsonl

    path = find_records(folder)
    if path is None:
        raise ConfigError(f"{folder} holds no games file")
    games = games_from_records(read_jsonl(path))
    return games, [index * 1_000_000 + g // size for g in range(len(games))]


def fault_share(folders: list[Path], name: str) -> float:
    """The share of the entrant's decisions its faults replaced, over its blocks."""
    seat = _seat_faults(folders, name)
    return seat.share if seat is not None else 0.0


def _seat_faults(folders: list[Path], name: str) -> Any:
    """The entrant's faults over ``folders`` (a ``SeatFaults``; None: it had none)."""
    from dixit_lab.records.batches import file_batches
    from dixit_lab.records.files import find_records
    from dixit_lab.report.faults import stats_faults
    from dixit_lab.stats.game_stats import GameStats, batch_stats

    stats = GameStats()
    for folder in folders:
        path = find_records(folder)
        if path is not None:
            for batch in file_batches(path):
                stats.add(batch_stats(batch))
    return next((seat for seat in stats_faults(stats) if seat.player == name), None)


def _budget_spent(folder: Path, name: str) -> bool:
    """Whether the entrant's budget ran out in the block of ``folder`` (a decision not sent
    because it would have passed it: a ``budget`` fault)."""
    seat = _seat_faults([folder], name)
    return seat is not None and seat.kinds.get("budget", 0) > 0


def _provenance(folder: Path, name: str) -> dict[str, Any]:
    """What the first block's config.yaml says made the entrant: the package, and the
    digests of its code when it is outside code."""
    import yaml

    try:
        data = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    code = [entry.get("code", []) for entry in data.get("agents_played") or []
            if entry.get("player") == name]
    return {"dixit_lab_version": data.get("dixit_lab_version"),
            "dixit_lab_code": data.get("dixit_lab_code"),
            "git_commit": data.get("git_commit"),
            "agent_code": code[0] if code else [],
            "deck_fingerprint": (data.get("deck_played") or {}).get("fingerprint")}


def enter(league: Path, name: str, spec: str, pool: Pool, options: LeagueOptions, *,
          deal_secret: str | None = None,
          say: Callable[[str], None] | None = None) -> EntrantResult:
    """Play ``name`` (agent ``spec``) against ``pool`` into ``league/entrants/<name>/`` until
    ``options`` stop it, and return its record (written to ``entrant.json`` after every
    block). An entrant already done is returned as it is (nothing is played); one entered
    with another spec is refused in one line; one interrupted goes on where it stopped."""
    from dixit_lab.ratings.anchored import AnchoredRating, anchored_rating
    from dixit_lab.records.integrity import FolderLock

    say = say or (lambda line: print(line, file=sys.stderr))
    if name in pool.names:
        raise UserError(f"entrant {name!r} has the name of a member of the reference pool; "
                        f"choose another")
    folder = league / ENTRANTS / name
    record_path = folder / ENTRANT_FILE
    folder.mkdir(parents=True, exist_ok=True)
    with FolderLock(folder, "league entry", "wait for it to finish or choose another name"):
        record = EntrantResult.read(record_path) if record_path.is_file() else None
        if record is not None:
            if record.spec != spec or record.pool_version != pool.version:
                raise UserError(f"entrant {name!r} was entered as {record.spec} against pool "
                                f"{record.pool_version} ({record_path}); enter {spec} under "
                                f"another name")
            if record.status == "done":
                say(f"{name}: already rated ({record.games} games), nothing to play")
                return record
            if record.options and record.options != asdict(options):
                changed = ", ".join(f"{key} {record.options.get(key)} -> {value}"
                                    for key, value in asdict(options).items()
                                    if record.options.get(key) != value)
                raise UserError(f"entrant {name!r} was started with other options ({changed}); "
                                f"give the same ones to go on, or enter under another name")
        isolation = _isolation(spec, options)
        secret = _secret(folder, deal_secret)
        if record is None:
            record = EntrantResult(name, spec, pool.version, isolation=isolation,
                                   options=asdict(options))
        games: list[tuple[tuple[str, ...], tuple[float, ...]]] = []
        deals: list[int] = []
        block_folders: list[Path] = []
        rating: AnchoredRating | None = None
        cycle = opponent_sets(pool, spec)
        entrant: dict[str, Any] = {"name": name, "agent": spec}
        if isolation != "none":
            entrant["isolation"] = isolation
        said: set[str] = set()  # the runner's notes, said once an entry, not once a block

        def block(index: int, deals_played: int, budget: dict[str, Any] | None = None
                  ) -> tuple[list[tuple[tuple[str, ...], tuple[float, ...]]], list[int], float]:
            chosen = [pool.member(member) for member in cycle[index % len(cycle)]]
            with _notes_once(said, f"{name}-block-{index:03d}: ", say):
                return play_block(folder / BLOCKS / f"{index:03d}", index, entrant, chosen,
                                  pool.rules, pool.deck, deals_played, secret,
                                  options.executor, options.workers, budget)

        for index, kept in enumerate(record.blocks):  # the blocks already rated
            block_folder = folder / BLOCKS / f"{index:03d}"
            played, dealt, _ = block(index, kept["games"] // pool.table_size)
            games += played
            deals += dealt
            block_folders.append(block_folder)
            rating = AnchoredRating(kept["strength"], kept["ci_low"], kept["ci_high"],
                                    len(games))
        while True:
            stop = _stop(record, rating, options, len(cycle), games, name)
            if stop:
                break
            index = len(record.blocks)
            chosen = cycle[index % len(cycle)]
            deals_left = -(-(options.max_games - record.games) // pool.table_size)
            played, dealt, seconds = block(index, min(options.deals, deals_left),
                                           _budget_left(record, options))
            block_folder = folder / BLOCKS / f"{index:03d}"
            games += played
            deals += dealt
            block_folders.append(block_folder)
            rating = anchored_rating(games, name, pool.strengths, clusters=deals)
            record.blocks.append(asdict(Block(list(chosen), len(played), rating.strength,
                                              rating.ci_low, rating.ci_high, seconds)))
            record.games, record.seconds = len(games), record.seconds + seconds
            record.tokens, record.cost_usd = spent(block_folders, name)
            if (options.max_tokens or options.max_cost_usd) and _budget_spent(block_folder,
                                                                              name):
                record.budget_spent = True
            record.strength, record.ci_low, record.ci_high = (
                rating.strength, rating.ci_low, rating.ci_high)
            if index == 0:
                record.provenance = _provenance(block_folder, name)
            atomic_write_text(record_path, record.to_json())
            line = (f"{name}: block {index + 1}, {record.games} games against "
                    f"{', '.join(chosen)}: {rating.strength:+.3f} "
                    f"[{rating.ci_low:+.3f}, {rating.ci_high:+.3f}]")
            if len(record.blocks) % len(cycle) == 0 and rating.width > options.target_width:
                more = math.ceil(record.games * (rating.width / options.target_width) ** 2
                                 ) - record.games  # an interval narrows as 1 / sqrt(games)
                line += (f"; width {options.target_width} in about {more:,} more games"
                         f" (~{record.seconds / record.games * more:.0f} s)")
            say(line)
        record.status, record.stopped = "done", stop
        record.fault_share = fault_share(block_folders, name)
        record.deal_secret = secret
        atomic_write_text(record_path, record.to_json())
    return record


@contextlib.contextmanager
def _notes_once(said: set[str], prefix: str, say: Callable[[str], None]) -> Iterator[None]:
    """What a block's run writes to stderr (the runner's notes: which engine plays, ...),
    each line said once an entry (``prefix``, the block's name, left out) through ``say``."""
    caught = io.StringIO()
    try:
        with contextlib.redirect_stderr(caught):
            yield
    finally:
        for line in caught.getvalue().splitlines():
            note = line.removeprefix(prefix)
            if note.strip() and note not in said:
                said.add(note)
                say(note)


def _stop(record: EntrantResult, rating: AnchoredRating | None, options: LeagueOptions,
          cycle: int, games: list[tuple[tuple[str, ...], tuple[float, ...]]], name: str
          ) -> str:
    """Why the entry stops now ("": it goes on). The interval stops it only at the end of a
    cycle of opponent sets (every member met as often) and once the entrant has both beaten
    and been beaten (before, its interval is the prior's, whatever its width)."""
    if (rating is not None and len(record.blocks) % cycle == 0
            and rating.width <= options.target_width and _won_and_lost(games, name)):
        return "interval"
    if record.games >= options.max_games:
        return "max_games"
    if options.max_seconds is not None and record.seconds >= options.max_seconds:
        return "max_seconds"
    tokens = options.max_tokens is not None and record.tokens >= options.max_tokens
    cost = options.max_cost_usd is not None and record.cost_usd >= options.max_cost_usd
    if tokens or cost or record.budget_spent:  # spent, or what is left is not a decision
        if options.max_tokens is None:
            return "max_cost_usd"
        if options.max_cost_usd is None:
            return "max_tokens"
        return "max_tokens" if record.tokens / options.max_tokens >= (
            record.cost_usd / options.max_cost_usd) else "max_cost_usd"
    return ""


def _budget_left(record: EntrantResult, options: LeagueOptions) -> dict[str, Any] | None:
    """The next block's ``model_budget``: what is left of the entry's."""
    budget: dict[str, Any] = {}
    if options.max_tokens is not None:
        budget["max_tokens_total"] = max(0, options.max_tokens - record.tokens)
    if options.max_cost_usd is not None:
        budget["max_cost_usd"] = max(0.0, options.max_cost_usd - record.cost_usd)
    return budget or None


def spent(folders: list[Path], name: str) -> tuple[int, float]:
    """The tokens (prompt and completion) and cost the entrant's model calls took over its
    blocks, from what each block's recorders say of it (``agents.csv``'s model columns)."""
    import math

    from dixit_lab.core.recording import recorder_columns

    tokens, cost = 0, 0.0
    for folder in folders:
        for frame in recorder_columns(folder):
            rows = frame[frame["player"] == name] if "player" in frame else frame.iloc[:0]
            for _, row in rows.iterrows():
                tokens += int(row.get("prompt_tokens", 0) or 0) + int(
                    row.get("completion_tokens", 0) or 0)
                value = row.get("cost_usd")
                cost += float(value) if value is not None and not math.isnan(
                    float(value)) else 0.0
    return tokens, cost


def _won_and_lost(games: list[tuple[tuple[str, ...], tuple[float, ...]]], name: str) -> bool:
    won = lost = False
    for players, scores in games:
        for seat, player in enumerate(players):
            if player == name:
                mine = scores[seat]
                won = won or any(mine > other for other in scores)
                lost = lost or any(mine < other for other in scores)
    return won and lost
