"""``dixit-lab examples``: the example configs that ship in the package (the repository's
``experiments/``), listed or copied to a folder; and :func:`config_argument`, by which
``run`` and ``tune`` take a packaged example's name where a config file is expected."""

from __future__ import annotations

import argparse
import shutil
import textwrap
from pathlib import Path
from typing import Any

import yaml

from dixit_lab.bundled import UnknownExampleError, example_names, example_path
from dixit_lab.errors import UserError

__all__ = ["add_commands", "config_argument"]


#: the files in the working folder that a bare name could mean: itself, and with a suffix
_LOCAL_FORMS = ("{}", "{}.yaml", "{}.yml")


def config_argument(value: str, command: str = "run") -> str:
    """A config file as given, else the file of the packaged example named ``value`` (a bare
    name: no folder, no suffix). A bare name that is both a packaged example and a file here
    (``quickstart`` beside ``quickstart.yaml``, as ``examples copy`` leaves it) is refused,
    naming both and how to give each: neither silently wins."""
    path = Path(value)
    if path.suffix or len(path.parts) != 1:
        return value
    local = [form.format(value) for form in _LOCAL_FORMS if Path(form.format(value)).exists()]
    try:
        example = example_path(value)
    except UnknownExampleError as error:
        if path.exists():
            return value
        there = f" (there is {', '.join(local)})" if local else ""
        raise UserError(f"no config file {value!r} in {Path.cwd()}{there}, and "
                        f"{error}") from None
    if local:
        raise UserError(f"{value!r} names both the file {local[0]} here and the packaged "
                        f"example {value}: run `dixit-lab {command} ./{local[0]}` for the "
                        f"file, or `dixit-lab {command} {example}` for the example")
    return str(example)


def _description(path: Path) -> str:
    """What an example is, in one line: its ``description``, else the first sentence of the
    comment it opens with."""
    try:
        source = path.read_text(encoding="utf-8")
        data = yaml.safe_load(source) or {}
    except (OSError, yaml.YAMLError) as error:
        return f"(unreadable: {error})"
    text = data.get("description") if isinstance(data, dict) else None
    if text:
        return " ".join(str(text).split())
    comment = []
    for line in source.splitlines():
        if not line.startswith("#"):
            break
        comment.append(line.lstrip("#").strip())
    words = " ".join(" ".join(comment).split())
    return words.split(". ")[0].rstrip(".") + "." if words else ""


def cmd_list(args: argparse.Namespace) -> int:
    names = example_names()
    if not names:
        raise UserError("no packaged example configs found (a broken install? reinstall "
                        "dixit-lab)")
    width = max(len(name) for name in names)
    for name in names:
        lines = textwrap.wrap(_description(example_path(name)), width=96 - width - 2) or [""]
        print(f"{name:<{width}}  {lines[0]}")
        for line in lines[1:]:
            print(f"{'':<{width}}  {line}")
    print("\nrun one: dixit-lab run NAME; copy one to edit: dixit-lab examples copy NAME [FOLDER]")
    return 0


def cmd_copy(args: argparse.Namespace) -> int:
    source = example_path(args.name)
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is a file, not a folder")
    target = folder / source.name
    if target.exists() and not args.force:
        raise UserError(f"{target} exists; --force replaces it")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    print(f"wrote {target}  (run it: dixit-lab run {target})")
    return 0


def add_commands(sub: Any) -> None:
    """The family's sub-commands, on the parser's ``add_subparsers()``."""
    examples = sub.add_parser("examples", help="list the packaged example configs, or copy "
                                               "one to a folder")
    examples.set_defaults(func=cmd_list)
    actions = examples.add_subparsers(dest="action")
    listing = actions.add_parser("list", help="list the examples (the default)")
    listing.set_defaults(func=cmd_list)
    copy = actions.add_parser("copy", help="copy an example config to a folder")
    copy.add_argument("name", help="the example's name (see `dixit-lab examples`)")
    copy.add_argument("folder", nargs="?", default=".", help="where to (default: here)")
    copy.add_argument("--force", action="store_true", help="replace a file of that name")
    copy.set_defaults(func=cmd_copy)
