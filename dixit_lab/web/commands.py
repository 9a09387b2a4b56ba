"""``dixit-lab play`` and ``dixit-lab view``: their arguments and what they do."""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dixit_lab.errors import UserError, install_hint

if TYPE_CHECKING:
    from dixit_lab.run.experiment import ExperimentConfig
    from dixit_lab.web.results import PlayFolder

__all__ = ["add_commands", "cmd_play", "cmd_view"]

_MISSING = f"the web pages need fastapi and uvicorn: {install_hint('web')} ({{error}})"
GRACE_SECONDS = 30.0  # the server stays up this long after the last game, for the last pages


def _web_modules() -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as error:
        raise UserError(_MISSING.format(error=error)) from None


def cmd_play(args: argparse.Namespace) -> int:
    _web_modules()
    from dixit_lab.run.experiment import ConfigError, parse_config, read_yaml_file
    from dixit_lab.web.decisions import human_players
    from dixit_lab.web.results import PlayFolder
    from dixit_lab.web.table import untrusted_by_default

    data, notes = untrusted_by_default(read_yaml_file(args.config))
    for note in notes:
        print(note, file=sys.stderr)
    config = parse_config(data, str(args.config))
    if config.sweep:
        raise ConfigError(f"{args.config}: play runs one table; remove the sweep section")
    if not human_players(config):
        raise ConfigError(f"{args.config}: players: no seat for a person; add a player "
                          f"{{name: you, agent: human}}")
    from dixit_lab.web.server import bind

    sock = bind(args.host, args.port)  # before the folder: an address in use writes nothing
    try:  # the folder's lock is held until the server has stopped: one writer a folder
        with PlayFolder(config, Path(args.out) if args.out else config.results_dir()) \
                as folder:
            return _play(args, config, folder, sock)
    finally:
        sock.close()


def _play(args: argparse.Namespace, config: ExperimentConfig, folder: PlayFolder,
          sock: socket.socket) -> int:
    """Serve the table of ``config`` on ``sock`` until its games are over (or Ctrl-C)."""
    from dixit_lab.web.play_app import play_app
    from dixit_lab.web.server import loopback_hosts, serve, url_host
    from dixit_lab.web.table import PlayTable

    if folder.complete:
        print(f"all {len(folder.specs)} game(s) are already in {folder.folder}; choose another "
              f"--out to play again")
        return 0
    table = PlayTable(config, folder)
    served = sock.getsockname()[1]
    server = serve(play_app(table, loopback_hosts(args.host)), on_stop=table.stop)
    urls = [f"http://{url_host(args.host)}:{served}/play/{human.token}" for human in table.humans]
    for human, url in zip(table.humans, urls, strict=True):
        print(f"{human.name}: {url}")
    print(f"{len(folder.missing())} game(s) to play; results go to {folder.folder}. Meant for "
          f"a trusted network: anyone with a seat's URL plays that seat.", flush=True)

    def drive() -> None:
        try:
            table.run()
        except Exception as error:  # shown on the pages too
            print(f"dixit-lab play: error: {error}", file=sys.stderr, flush=True)
        else:
            if folder.complete:
                print(f"all games played: results in {folder.folder} (report: "
                      f"{folder.folder / 'report.md'})", flush=True)
        deadline = time.monotonic() + GRACE_SECONDS
        while not table.stopping and time.monotonic() < deadline and not table.all_seen_over():
            time.sleep(0.2)
        time.sleep(1.0)  # let the last answers go out
        server.should_exit = True

    driver = threading.Thread(target=drive, name="dixit-lab-table", daemon=True)
    driver.start()
    if not args.no_browser:
        webbrowser.open(urls[0])
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        table.stop()
        driver.join(timeout=5)
        sock.close()
    if not folder.complete:
        print(f"stopped: {len(folder.games)} of {len(folder.specs)} game(s) are saved in "
              f"{folder.folder}; the same command plays the rest", file=sys.stderr)
        return 2 if table.error else 130
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    _web_modules()
    from dixit_lab.web.league_app import is_league, league_app
    from dixit_lab.web.server import bind, loopback_hosts, serve, url_host
    from dixit_lab.web.view_app import ResultsIndex, view_app

    folder = Path(args.results)
    if is_league(folder):
        app = league_app(folder, loopback_hosts(args.host))
        what = f"the leaderboard of league {folder}"
    else:
        index = ResultsIndex.open(args.results)
        app = view_app(index, loopback_hosts(args.host))
        what = f"{index.folder} ({len(index.runs)} run(s))"
    sock = bind(args.host, args.port)
    served = sock.getsockname()[1]
    server = serve(app)
    url = f"http://{url_host(args.host)}:{served}/"
    print(f"viewing {what} at {url}  (Ctrl-C to stop)", flush=True)
    if not args.no_browser:
        webbrowser.open(url)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0


def port(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535, or 0 for any free one."""
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port from 1 to 65535 (0: any free "
                                         f"port), got {value}")
    return value


def _common(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: loopback only; e.g. 0.0.0.0 for a "
                             "trusted LAN)")
    parser.add_argument("--port", type=port, default=default,
                        help=f"port (default {default}; 0: any free port)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")


def add_commands(sub: Any) -> None:
    """Register ``play`` and ``view`` on the ``dixit-lab`` subparsers."""
    play = sub.add_parser("play", help="play a config with human seats in the browser")
    play.add_argument("config", help="experiment YAML with a player {name: you, agent: human}")
    play.add_argument("--out", help="results folder (default: the config's out, or "
                                    "results/<name>)")
    _common(play, 8765)
    play.set_defaults(func=cmd_play)

    view = sub.add_parser("view", help="browse a results folder, or a league's leaderboard, in "
                                       "the browser")
    view.add_argument("results", help="results folder (a sweep's too), or a league folder")
    _common(view, 8766)
    view.set_defaults(func=cmd_view)
