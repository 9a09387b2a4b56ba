"""Several leagues' games pooled into one rating a player: ``dixit-lab league OUT --combine
A B ...``. Folders pool only when they rate against the same pool version (the same rules,
deck and table size; the deck each entry played has the pool's fingerprint), and an entrant
of one name is the same agent in each (its spec and the digests of the code that played it);
anything else is refused in one line naming the folders. Every block of every entry of a
name is read again and one anchored rating fitted over them all, its bootstrap over the
deals of every folder (a folder's deals are its own: its secret dealt them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dixit_lab.atomic import atomic_write_text
from dixit_lab.errors import ConfigError
from dixit_lab.league.entry import BLOCKS, ENTRANTS, EntrantResult, fault_share, read_block
from dixit_lab.league.leaderboard import LEAGUE_FILE, entrants, open_league, write_leaderboard
from dixit_lab.ratings.anchored import anchored_rating

__all__ = ["combine"]


def _code(entry: EntrantResult) -> tuple[Any, ...]:
    """What played an entrant: the package's sources, and its own code's files."""
    provenance = entry.provenance or {}
    files = tuple(sorted((item.get("path"), item.get("sha256"))
                         for item in provenance.get("agent_code") or []))
    return (provenance.get("dixit_lab_code"), files)


def combine(out: Path, sources: list[Path]) -> list[EntrantResult]:
    """Pool the finished entries of the leagues ``sources`` into the league folder ``out``
    (see the module docstring); returns the pooled entrants."""
    if not sources:
        raise ConfigError("--combine needs at least one league folder")
    versions = {}
    for source in sources:
        if not (source / LEAGUE_FILE).is_file():
            raise ConfigError(f"{source} is not a league folder (no {LEAGUE_FILE})")
        versions[source] = open_league(source).version
    first = sources[0]
    for source, version in versions.items():
        if version != versions[first]:
            raise ConfigError(f"{source} rates against pool {version} and {first} against "
                              f"pool {versions[first]}: two scales cannot be pooled")
    if out.resolve() in {source.resolve() for source in sources}:
        raise ConfigError(f"{out} is one of the leagues to combine; choose another folder")
    pool = open_league(out, versions[first])
    by_name: dict[str, list[tuple[Path, EntrantResult]]] = {}
    for source in sources:
        for entry in entrants(source):
            if entry.status != "done":
                continue
            fingerprint = (entry.provenance or {}).get("deck_fingerprint")
            if fingerprint not in (None, pool.deck_fingerprint):
                raise ConfigError(f"{source}: entrant {entry.name!r} played another deck than "
                                  f"the pool's {pool.deck!r} (fingerprint {fingerprint})")
            by_name.setdefault(entry.name, []).append((source, entry))
    pooled = []
    for name, entries in sorted(by_name.items()):
        (source, entry), *others = entries
        for other_source, other in others:
            if other.spec != entry.spec:
                raise ConfigError(f"entrant {name!r} is {entry.spec} in {source} and "
                                  f"{other.spec} in {other_source}; rename one to pool them")
            if _code(other) != _code(entry):
                raise ConfigError(f"entrant {name!r} was played by other code in {source} "
                                  f"and {other_source} (the package's or its own files' "
                                  f"digests differ); rename one to pool them")
        games: list[Any] = []
        deals: list[int] = []
        folders = []
        for number, (where, item) in enumerate(entries):
            for index in range(len(item.blocks)):
                block = where / ENTRANTS / name / BLOCKS / f"{index:03d}"
                played, dealt = read_block(block, index, pool.table_size)
                games += played
                deals += [number * 1_000_000_000 + deal for deal in dealt]
                folders.append(block)
        rating = anchored_rating(games, name, pool.strengths, clusters=deals)
        record = EntrantResult(
            name, entry.spec, pool.version, status="done", stopped="pooled",
            strength=rating.strength, ci_low=rating.ci_low, ci_high=rating.ci_high,
            games=len(games), seconds=sum(item.seconds for _, item in entries),
            fault_share=fault_share(folders, name), isolation=entry.isolation,
            provenance={**(entry.provenance or {}), "pooled_from": [
                {"folder": str(where.resolve()), "games": item.games,
                 "strength": item.strength, "deal_secret": item.deal_secret}
                for where, item in entries]})
        folder = out / ENTRANTS / name
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / "entrant.json", record.to_json())
        pooled.append(record)
    write_leaderboard(out, pool)
    return pooled
