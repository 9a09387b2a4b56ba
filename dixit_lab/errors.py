"""The errors of a user's input: a config, a command's arguments, a results folder or a file
that cannot be used. Each message is one line naming the file, field, line or agent at fault;
the command line prints it without a traceback (exit status 2). Any other exception is a bug
of the harness (or of an agent's code) and keeps its traceback."""

from __future__ import annotations

__all__ = ["CPU_TORCH", "ConfigError", "UserError", "install_hint"]


class UserError(Exception):
    """A user's input that cannot be used; the message says what and where, in one line."""


class ConfigError(UserError, ValueError):
    """A config or a results folder that cannot be run. The message names the file and the
    field path (or the line)."""


#: a torch and torchvision that import together on a CPU-only machine (the pair
#: ``.ci/constraints.txt`` pins; a bare ``torch`` pulls a CUDA build of several GB)
CPU_TORCH = ("pip install torch==2.14.1 torchvision==0.29.1 "
             "--index-url https://download.pytorch.org/whl/cpu")


def install_hint(extra: str, torch: bool = False) -> str:
    """How to install an optional stack: the extra from the package index (and from a
    clone), and for a ``torch`` stack the CPU torch pair to install first."""
    hint = f"pip install 'dixit-lab[{extra}]' (from a clone: pip install -e '.[{extra}]')"
    if torch:
        hint += f"; on a CPU-only machine first: {CPU_TORCH}"
    return hint
