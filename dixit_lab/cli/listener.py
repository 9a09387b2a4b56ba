"""``dixit-lab fit-listener``: fit the ``calibrated`` agent's listener model on played games."""

from __future__ import annotations

import argparse
from typing import Any

from dixit_lab.cli.common import check_output_file, open_share, positive_number
from dixit_lab.errors import UserError

__all__ = ["add_commands"]


def _play_training(config_path: str) -> str:
    """Play (or complete) the games of a training config into its default results folder —
    an experiment or a sweep — and return that folder: the fit records the config, not the
    folder, as the model's source."""
    from dixit_lab.run.runner import run_file

    result = run_file(config_path, show_progress=False)
    return str(getattr(result, "folder", result))


def cmd_fit_listener(args: argparse.Namespace) -> int:
    from dixit_lab.listener.fit import fit_listener

    if bool(args.results) == bool(args.config):
        raise UserError("fit-listener: give results folders or --config (one of the two)")
    check_output_file(args.out, "--out")
    if args.plot:
        check_output_file(args.plot, "--plot")
    if args.config:
        args.results = [_play_training(args.config)]
    fitted = fit_listener(args.results, embedder=args.embedder, clue_bank=args.clues,
                          temperature=args.temperature, regularization=args.regularization,
                          listeners=args.listener, holdout=args.holdout,
                          sources=[args.config] if args.config else None)
    path = fitted.save(args.out)
    info = fitted.info
    print(f"fitted on {info['votes']} listener votes ({info['rounds_skipped']} rounds skipped); "
          f"held out: {info['holdout']['deals']} deals ({info['holdout']['games']} games), "
          f"{info['holdout']['votes']} votes")
    print(f"{'held out':<16} {'log loss':>9} {'brier':>7} {'mean p':>7} {'observed':>8}")
    for label, key in (("analytic model", "analytic_model"), ("fitted model", "fitted")):
        m = info[key]
        print(f"{label:<16} {m['log_loss']:>9.4f} {m['brier']:>7.4f} {m['mean_predicted']:>7.3f} "
              f"{m['mean_observed']:>8.3f}")
    if args.plot:
        from dixit_lab.listener.fit_eval import plot_reliability

        print(f"wrote {plot_reliability(info, args.plot)}")
    print(f"wrote {path}")
    return 0


def add_commands(sub: Any) -> None:
    """The family's sub-commands, on the parser's ``add_subparsers()``."""
    fit = sub.add_parser("fit-listener",
                         help="fit the calibrated agent's listener model on logged games")
    fit.add_argument("results", nargs="*", help="results folders or games.jsonl files")
    fit.add_argument("--config", help="a training config: play its games, then fit on them")
    fit.add_argument("--holdout", type=open_share, default=0.2,
                     help="share of deals held out, with all their games, to evaluate the "
                          "fit (default 0.2)")
    fit.add_argument("--plot", help="write a held-out reliability diagram (PNG) here")
    fit.add_argument("--out", required=True, help="where to write the model (JSON)")
    fit.add_argument("--embedder", default="conse", help="the space the features come from")
    fit.add_argument("--clues", default="default", help="the clue bank the games used")
    fit.add_argument("--temperature", type=positive_number, default=0.05,
                     help="temperature of the analytic model used as a feature")
    fit.add_argument("--listener", action="append",
                     help="learn from the votes of this player name, agent spec or agent "
                          "name only (repeatable; default: every listener)")
    fit.add_argument("--regularization", type=positive_number, default=1.0,
                     help="inverse L2 strength of the logistic regression (C)")
    fit.set_defaults(func=cmd_fit_listener)
