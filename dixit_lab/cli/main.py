"""The ``dixit-lab`` command line: the parser, assembled from the families of commands, and
``main``, which turns a user's error into one line (exit status 2) and leaves a bug its
traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from dixit_lab.cli.agents import add_commands as add_agents
from dixit_lab.cli.data import add_commands as add_data
from dixit_lab.cli.examples import add_commands as add_examples
from dixit_lab.cli.experiments import add_commands as add_experiments
from dixit_lab.cli.league import add_commands as add_league
from dixit_lab.cli.listener import add_commands as add_listener
from dixit_lab.cli.simulate import add_commands as add_simulate
from dixit_lab.errors import UserError

__all__ = ["build_parser", "main"]


class _OneLineParser(argparse.ArgumentParser):
    """A parser whose user mistakes are one line (the command, what is wrong), not the usage
    block followed by the error; its sub-commands' parsers are of the same kind."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="dixit-lab", description="The dixit_lab command line: seeded Dixit games between "
                                      "agents, their tables, ratings and reports.")
    parser.add_argument("--traceback", action="store_true",
                        help="show the traceback of a user's error too (for a bug report)")
    sub = parser.add_subparsers(dest="command", required=True)
    add_simulate(sub)
    add_listener(sub)
    add_experiments(sub)
    add_league(sub)
    add_examples(sub)
    add_data(sub)
    from dixit_lab.web.commands import add_commands as add_web_commands  # play, view

    add_web_commands(sub)
    add_agents(sub)
    return parser


def _interrupt_on_sigterm() -> object:
    """SIGTERM (a job scheduler, ``kill``, a container stopping) behaves like Ctrl-C: the
    worker pool is stopped, the saved games are kept and one line says so. Returns the
    previous handler (None off the main thread, where no handler can be set)."""
    import signal
    import threading

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, interrupt)


def _os_error(error: OSError) -> str:
    """One line for a file the command could not read or write."""
    where = " -> ".join(str(name) for name in (error.filename, error.filename2) if name)
    reason = error.strerror or type(error).__name__
    return f"{where}: {reason}" if where else str(error)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = _interrupt_on_sigterm()
    try:
        return int(args.func(args))
    except UserError as error:
        if args.traceback:
            raise
        print(f"dixit-lab {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return 0
    except OSError as error:  # a file or folder that cannot be written or read
        if args.traceback:
            raise
        print(f"dixit-lab {args.command}: error: {_os_error(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
