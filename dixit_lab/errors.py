"""The error of a user's input: a config, a results folder or a file that cannot be used.
Its message is one line naming the file, field or line at fault; the command line prints it
without a traceback (exit status 2)."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A config that cannot be run. The message names the file and the field path."""
