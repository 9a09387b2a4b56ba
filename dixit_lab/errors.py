"""The errors of a user's input: a config, a command's arguments, a results folder or a file
that cannot be used. Each message is one line naming the file, field, line or agent at fault;
the command line prints it without a traceback (exit status 2). Any other exception is a bug
of the harness (or of an agent's code) and keeps its traceback."""

from __future__ import annotations

__all__ = ["ConfigError", "UserError"]


class UserError(Exception):
    """A user's input that cannot be used; the message says what and where, in one line."""


class ConfigError(UserError, ValueError):
    """A config or a results folder that cannot be run. The message names the file and the
    field path (or the line)."""
