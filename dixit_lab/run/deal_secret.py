"""A run's deal secret: what makes the deals of a run with an untrusted seat impossible to
recompute from the seed.

A seat that knows the seed (it is in the config, in the records, on the command line) and its
own hand could otherwise find the whole deal by brute force (a few thousand seeds a second).
When any seat is untrusted (``isolation: process`` or ``sandbox``, a person, a model), every
deal key mixes 128 bits from the OS (:func:`~dixit_lab.core.seeding.deal_seed`), drawn once and kept
in ``<results>/deal_secret`` (mode 0600, in a folder that is 0700 while the run goes), so
that resume and replay reproduce the games byte for byte. A config may pin the secret
(``deal_secret:``, 32 hex digits: a competition that publishes it afterwards). A run whose
seats are all trusted has no secret: its games come from the config's seed alone, as ever.
"""

from __future__ import annotations

import os
from pathlib import Path

from dixit_lab.atomic import atomic_write
from dixit_lab.core.seeding import SECRET_BYTES
from dixit_lab.errors import ConfigError
from dixit_lab.plugins.spec import parse_spec
from dixit_lab.run.experiment import ExperimentConfig

__all__ = ["SECRET_FILE", "folder_secret", "run_secret", "untrusted_seats"]

SECRET_FILE = "deal_secret"
_PEOPLE = ("human",)  # agents a person plays


def untrusted_seats(config: ExperimentConfig) -> list[str]:
    """The players of ``config`` that are untrusted (empty: a trusted run), by name."""
    from dixit_lab.isolation.seats import seat_info

    untrusted = []
    for player in config.players:
        isolation = player.seat_isolation()
        if isolation.untrusted or parse_spec(player.agent)[0] in _PEOPLE or seat_info(
                player.spec(), isolation, config.deck).untrusted:
            untrusted.append(player.display_name())
    return untrusted


def folder_secret(folder: Path) -> bytes | None:
    """The secret kept in a results folder, or None (a trusted run's folder)."""
    path = folder / SECRET_FILE
    if not path.exists():
        return None
    try:
        secret = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        raise ConfigError(f"{path} is not a deal secret (32 hex digits); the games of this "
                          f"folder cannot be reproduced without it") from None
    if len(secret) != SECRET_BYTES:
        raise ConfigError(f"{path} is not a deal secret (32 hex digits)")
    return secret


def run_secret(config: ExperimentConfig, folder: Path, untrusted: bool | None = None
               ) -> bytes | None:
    """The deal secret of a run into ``folder``: the one the folder keeps (resume), else the
    config's pinned one, else for a run with an untrusted seat 128 new bits from the OS,
    written to the folder; None for a trusted run without a pinned secret."""
    kept = folder_secret(folder)
    pinned = bytes.fromhex(config.deal_secret) if config.deal_secret else None
    if kept is not None:
        if pinned is not None and pinned != kept:
            raise ConfigError(f"{folder / SECRET_FILE}: this folder's games were dealt with "
                              f"another deal_secret than the config's; choose another --out")
        return kept
    if untrusted is None:
        untrusted = bool(untrusted_seats(config))
    if pinned is None and not untrusted:
        return None
    secret = pinned or os.urandom(SECRET_BYTES)

    atomic_write(folder / SECRET_FILE,
                 lambda temporary: temporary.write_text(secret.hex() + "\n", encoding="ascii"),
                 mode=0o600)  # written to a file mkstemp made 0600: never readable by others
    return secret
