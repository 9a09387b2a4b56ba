"""The result figures the README and the docs quote, regenerated from the shipped configs.

    nice -n 10 python scripts/figures.py [--only GROUP ...] [--scratch DIR] [--keep]
    python scripts/figures.py --check      # which quoted figure no longer matches
    python scripts/figures.py --rewrite    # the docs' marked figures from docs/figures.json

Each group runs shipped configs of ``experiments/`` (offline, into a scratch folder) and
computes its figures from the results folders: each with its value, its 95% interval where
it has one and the text the docs quote. ``docs/figures.json`` keeps every group's figures
with its configs, seeds, package version and git commit; the marked figures of the README
and the docs (``scripts/figure_marks.py``) are then rewritten from it. Where the docs state a
pattern (how far predicted and observed find rates are apart, on which side), the group runs
its config at several seeds and the figures are the spread over them.

Groups: quickstart (seconds), storytellers, noisy, table_sizes, listener_fit (read from the
shipped listener model, no game played), theory_of_mind (the storyteller configs'
theory_of_mind points, on the reference engine), tom_table (the largest: 68 points of the
reference engine) and pair_coverage (the rating intervals' coverage study, minutes).
``scripts/figure_runs.py`` plays the configs; ``tests/test_figures.py``
checks the docs against ``docs/figures.json`` and re-runs the quickstart group.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figure_marks
from figure_runs import (
    EXPERIMENTS,
    TELLER,
    ci_figure,
    config_seed,
    figure,
    num,
    number_figure,
    percent_figure,
    range_figure,
    run_config,
    run_points,
    teller_row,
    told,
)

from dixit_lab import __version__
from dixit_lab.run.experiment import read_yaml_file
from dixit_lab.stats.intervals import paired_difference, wilson_from_effective
from dixit_lab.stats.sweep_pairs import per_game_values

ROOT = figure_marks.ROOT
METRIC = "storyteller_points_per_turn"
#: the seeds of the patterns: each config's own seed first, then three more
EXTRA_SEEDS = (1001, 1002, 1003)

Figures = dict[str, dict[str, Any]]


# -- the groups ---------------------------------------------------------------------------------

def quickstart(scratch: Path) -> dict[str, Any]:
    """The quickstart's table as ``dixit-lab run`` prints it, and rating_pairs.csv's pairs
    that the README quotes."""
    from dixit_lab.cli.common import print_agents

    folder = run_config("quickstart", scratch)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_agents(folder)
    pairs = pd.read_csv(folder / "rating_pairs.csv")
    figures: Figures = {}
    for first, second in (("ambiguity", "literal"), ("pragmatic", "literal")):
        row = pairs[(pairs.player_a == first) & (pairs.player_b == second)]
        sign = 1.0
        if row.empty:  # the stronger comes first in the file
            row, sign = pairs[(pairs.player_a == second) & (pairs.player_b == first)], -1.0
        row = row.iloc[0]
        low, high = sorted((sign * row["ci_low"], sign * row["ci_high"]))
        figures[f"pair.{first}-{second}"] = ci_figure(sign * row["difference"], low, high,
                                                      signed=True)
    table = printed.getvalue().rstrip("\n")
    return {"configs": ["experiments/quickstart.yaml"], "seeds": [config_seed("quickstart")],
            "figures": figures, "tables": {"printed": figure(table)}}


def _duel_figures(points: Sequence[tuple[str, Path]], prefix: str, figures: Figures
                  ) -> dict[str, dict[int, float]]:
    """Per storyteller of a duel-shaped sweep's ``points``: points per turn, outcomes, find
    rates; and the per-game values (for the paired differences)."""
    values = {}
    for agent, point in points:
        row = teller_row(point)
        key = f"{prefix}.{agent}"
        figures[f"{key}.points"] = ci_figure(row[METRIC], row[f"{METRIC}_ci_low"],
                                             row[f"{METRIC}_ci_high"])
        for outcome in ("all_found", "some_found", "none_found"):
            figures[f"{key}.{outcome}"] = percent_figure(row[f"{outcome}_rate"])
        figures[f"{key}.observed"] = ci_figure(row["observed_find_rate"],
                                               row["observed_find_rate_ci_low"],
                                               row["observed_find_rate_ci_high"])
        figures[f"{key}.observed.value"] = number_figure(row["observed_find_rate"])
        predicted = row.get("predicted_find_rate")
        figures[f"{key}.predicted"] = (number_figure(predicted) if pd.notna(predicted)
                                       else figure("–"))
        if pd.notna(predicted):
            inside = row["observed_find_rate_ci_low"] <= predicted \
                <= row["observed_find_rate_ci_high"]
            figures[f"{key}.gap"] = number_figure(row["observed_find_rate"] - predicted, 3,
                                                  signed=True)
            figures[f"{key}.prediction"] = figure("inside" if inside else "outside",
                                                  bool(inside))
        figures[f"{key}.turns"] = figure(f"{int(row['storyteller_turns']):,}",
                                         int(row["storyteller_turns"]))
        values[agent] = per_game_values(point, [TELLER], METRIC)[TELLER]
    tuned = [figures[f"{prefix}.{agent}.points"]["value"] for agent in values
             if agent not in ("literal", "theory_of_mind")]
    if tuned:
        figures[f"{prefix}.tuned.points"] = range_figure(tuned)
    games = int(pd.read_csv(points[0][1] / "agents.csv")["games"].max())
    figures[f"{prefix}.games"] = figure(f"{games:,}", games)
    return values


LISTENERS = (("duel", "storyteller_duel", "`conse` (shared perception)"),
             ("cross", "cross_perception", "`text` (cross perception)"),
             ("noisy", "noisy_listeners", "`conse` + noise 0.05"))
MODELLED = ("ambiguity", "pragmatic", "calibrated")
TELLERS = ("literal", *MODELLED)


def _outcome_row(figures: Figures, key: str, spec: str) -> str:
    return (f"| `{spec}` | {figures[key + '.turns']['text']} | "
            f"{figures[key + '.points']['text']} | "
            + " | ".join(figures[f"{key}.{o}"]["text"]
                         for o in ("all_found", "some_found", "none_found"))
            + f" | {figures[key + '.observed']['text']} / {figures[key + '.predicted']['text']} |")


def storytellers(scratch: Path) -> dict[str, Any]:
    """storyteller_duel.yaml and cross_perception.yaml without their theory_of_mind point
    (the group theory_of_mind plays it): each storyteller against four softmax listeners who
    perceive as the storytellers do or through another space; and the clustered listener
    accuracy of docs/statistics.md (cross_perception's literal point)."""
    figures: Figures = {}
    points = {prefix: told(name, scratch, TELLERS) for prefix, name, _ in LISTENERS[:2]}
    for prefix, chosen in points.items():
        _duel_figures(chosen, prefix, figures)
    duel = ["| storyteller | turns | points / turn | all found | some found | none found | "
            "find rate observed / predicted |", "|---|---|---|---|---|---|---|"]
    duel += [_outcome_row(figures, f"duel.{agent}", str(teller_row(point)["agent"]))
             for agent, point in points["duel"]]
    table = ["| listeners | config | games | " + " | ".join(TELLERS) + " |",
             "|---|---|---|" + "---|" * len(TELLERS)]
    for prefix, name, label in LISTENERS[:2]:
        table.append(f"| {label} | `{name}.yaml` | {figures[prefix + '.games']['text']} | "
                     + " | ".join(figures[f"{prefix}.{t}.points"]["text"] for t in TELLERS)
                     + " |")
    observed = [figures[f"cross.{a}.observed"]["value"] for a in MODELLED]
    nobody = [figures[f"cross.{a}.none_found"]["value"] for a in MODELLED]
    figures["cross.modelled.observed"] = range_figure(observed)
    figures["cross.modelled.predicted"] = range_figure(
        [figures[f"cross.{a}.predicted"]["value"] for a in MODELLED])
    figures["cross.modelled.none_found"] = figure(
        f"{100 * min(nobody):.0f}–{100 * max(nobody):.0f}%", [min(nobody), max(nobody)])
    literal = dict(points["cross"])["literal"]
    agents = pd.read_csv(literal / "agents.csv")
    row = agents[agents["player"] == "softmax-text"].iloc[0]
    rate, votes = float(row["listener_accuracy"]), int(row["listener_turns"])
    low, high = wilson_from_effective(rate, votes)
    clustered = row["listener_accuracy_ci_high"] - row["listener_accuracy_ci_low"]
    figures["cross.accuracy.clustered"] = ci_figure(rate, row["listener_accuracy_ci_low"],
                                                    row["listener_accuracy_ci_high"], 3)
    figures["cross.accuracy.unclustered"] = figure(f"[{low:.3f}, {high:.3f}]", None,
                                                   (low, high))
    figures["cross.accuracy.width_ratio"] = figure(f"{clustered / (high - low):.2f}×",
                                                   float(clustered / (high - low)))
    return {"configs": [f"experiments/{name}.yaml" for _, name, _ in LISTENERS[:2]],
            "seeds": [config_seed(name) for _, name, _ in LISTENERS[:2]], "figures": figures,
            "tables": {"duel": figure("\n".join(duel)), "points": figure("\n".join(table))}}


def noisy(scratch: Path) -> dict[str, Any]:
    """noisy_listeners.yaml without its theory_of_mind point: listeners with perception noise
    (the reference engine plays every point)."""
    figures: Figures = {}
    _duel_figures(told("noisy_listeners", scratch, TELLERS), "noisy", figures)
    return {"configs": ["experiments/noisy_listeners.yaml"],
            "seeds": [config_seed("noisy_listeners")], "figures": figures}


def theory_of_mind(scratch: Path) -> dict[str, Any]:
    """The theory_of_mind points of the three storyteller configs (its 36-type default, on
    the reference engine), and theory_of_mind minus each other storyteller, paired by
    game."""
    figures: Figures = {}
    table = ["| listeners | theory_of_mind | " + " | ".join(f"− {t}" for t in TELLERS) + " |",
             "|---|---|" + "---|" * len(TELLERS)]
    for prefix, name, label in LISTENERS:
        chosen = told(name, scratch, ("theory_of_mind", *TELLERS))
        values = _duel_figures(chosen, prefix, figures)
        tom = values["theory_of_mind"]
        for agent in TELLERS:
            other = values[agent]
            common = sorted(set(tom) & set(other))
            d = paired_difference([tom[g] for g in common], [other[g] for g in common])
            figures[f"{prefix}.tom_minus.{agent}"] = ci_figure(d.mean, d.low, d.high,
                                                               signed=True)
        table.append(f"| {label} | {figures[prefix + '.theory_of_mind.points']['text']} | "
                     + " | ".join(figures[f"{prefix}.tom_minus.{t}"]["text"] for t in TELLERS)
                     + " |")
    return {"configs": [f"experiments/{name}.yaml" for _, name, _ in LISTENERS],
            "seeds": [config_seed(name) for _, name, _ in LISTENERS], "figures": figures,
            "tables": {"table": figure("\n".join(table))}}


def _calibration_rows(points: Sequence[tuple[dict[str, Any], Path]]) -> pd.DataFrame:
    """One row per point of an ambiguity sweep: players, target, predicted, observed and its
    interval."""
    rows = []
    for _, folder in points:
        row = teller_row(folder)
        config = read_yaml_file(folder / "config.yaml", strict=False)["experiment"]
        players = sum(int(p.get("count", 1)) for p in config["players"])
        target = re.search(r"target=([\d.]+)", str(row["agent"]))
        assert target is not None, f"{folder}: not an ambiguity(target=...) storyteller"
        rows.append({"players": players, "target": float(target[1]),
                     "predicted": row["predicted_find_rate"],
                     "observed": row["observed_find_rate"],
                     "low": row["observed_find_rate_ci_low"],
                     "high": row["observed_find_rate_ci_high"],
                     "points": row[METRIC], "points_low": row[f"{METRIC}_ci_low"],
                     "points_high": row[f"{METRIC}_ci_high"]})
    return pd.DataFrame(rows)


def table_sizes(scratch: Path) -> dict[str, Any]:
    """ambiguity_table_sizes.yaml at its seed and three more: how far apart, and on which
    side, predicted and observed find rates are at each table size; and
    ambiguity_sweep.yaml's points by target."""
    seeds = [config_seed("ambiguity_table_sizes"), *EXTRA_SEEDS]
    frames = []
    for seed in seeds:
        points = run_points("ambiguity_table_sizes", scratch, seed)
        frames.append(_calibration_rows(points).assign(seed=seed))
    runs = pd.concat(frames, ignore_index=True)
    runs["seed"] = pd.Categorical(runs["seed"], categories=seeds, ordered=True)  # their order
    runs["gap"] = runs["observed"] - runs["predicted"]
    runs["outside"] = (runs["predicted"] < runs["low"]) | (runs["predicted"] > runs["high"])
    figures: Figures = {"seeds": figure(", ".join(map(str, seeds)), seeds)}
    per_seed = runs.groupby(["players", "seed"], observed=True).agg(
        worst=("gap", lambda g: g.abs().max()), mean=("gap", "mean"),
        above=("gap", lambda g: int((g > 0).sum())), outside=("outside", "sum"),
        targets=("gap", "size")).reset_index()
    summary = ["| players | worst gap (each seed) | mean gap (each seed) | targets observed "
               "above predicted (each seed) | targets whose prediction is outside the "
               "interval (each seed) |", "|---|---|---|---|---|"]
    for players, group in per_seed.groupby("players"):
        key = f"p{players}"
        targets = int(group["targets"].iloc[0])
        figures[f"{key}.worst"] = number_figure(group["worst"].max(), 3)
        figures[f"{key}.mean"] = range_figure(group["mean"].tolist(), 3, signed=True)
        figures[f"{key}.above"] = figure(
            ", ".join(str(int(a)) for a in group["above"]) + f" of {targets}",
            [int(a) for a in group["above"]])
        at = runs[runs.players == players]
        figures[f"{key}.gaps"] = range_figure(at["gap"].tolist(), 3, signed=True)
        for side, chosen in (("low", at["target"] < 0.45), ("high", at["target"] > 0.55)):
            figures[f"{key}.{side}_targets"] = number_figure(at[chosen]["gap"].mean(), 3,
                                                             signed=True)
        summary.append(
            f"| {players} | " + ", ".join(num(w, 3) for w in group["worst"]) + " | "
            + ", ".join(num(m, 3, True) for m in group["mean"]) + " | "
            + ", ".join(f"{int(a)}/{targets}" for a in group["above"]) + " | "
            + ", ".join(f"{int(o)}/{targets}" for o in group["outside"]) + " |")
    small = per_seed[per_seed.players <= 5]
    figures["p3to5.worst"] = number_figure(small["worst"].max(), 3)
    shipped = runs[runs.seed == seeds[0]]
    targets = ["| target | " + " | ".join(f"{p} players" for p in sorted(shipped.players.unique()))
               + " |", "|---|" + "---|" * shipped.players.nunique()]
    for target in (0.1, 0.3, 0.5, 0.7, 0.9):
        cells = []
        for _, row in shipped[np.isclose(shipped.target, target)].sort_values(
                "players").iterrows():
            cells.append(f"{row.predicted:.3f} / {row.observed:.3f} "
                         f"[{row.low:.3f}, {row.high:.3f}]")
        targets.append(f"| {target} | " + " | ".join(cells) + " |")
    six = runs[runs.players == 6]
    below = int(sum((g["gap"] < 0).all() for _, g in six.groupby("seed", observed=True)))
    figures["p6.below_all_seeds"] = figure(str(below), below)
    sweep = _calibration_rows(run_points("ambiguity_sweep", scratch))
    best = sweep.loc[sweep["points"].idxmax()]
    figures["sweep.best_target"] = number_figure(best["target"], 1)
    figures["sweep.best_points"] = ci_figure(best["points"], best["points_low"],
                                             best["points_high"])
    last = sweep.loc[sweep["target"].idxmax()]
    figures["sweep.points_0.9"] = ci_figure(last["points"], last["points_low"],
                                            last["points_high"])
    second = sweep.drop(index=best.name).loc[lambda s: s["points_high"] >= best["points_low"]]
    figures["sweep.near_best"] = figure(
        ", ".join(f"{t:.1f}" for t in sorted([best["target"], *second["target"]])),
        sorted([float(best["target"]), *second["target"].astype(float)]))
    return {"configs": ["experiments/ambiguity_table_sizes.yaml",
                        "experiments/ambiguity_sweep.yaml"],
            "seeds": seeds, "figures": figures,
            "tables": {"summary": figure("\n".join(summary)),
                       "targets": figure("\n".join(targets))}}


def _tom_script() -> Any:
    import importlib.util

    path = EXPERIMENTS / "theory_of_mind_table.py"
    spec = importlib.util.spec_from_file_location("theory_of_mind_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass looks its module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def tom_table(scratch: Path) -> dict[str, Any]:
    """theory_of_mind_table.yaml: the table of docs/listeners.md and the README's summary of
    it (ranges over the cells of each kind of audience)."""
    script = _tom_script()
    rows = script.table_rows(run_config("theory_of_mind_table", scratch))
    figures: Figures = {}

    def cells(column: str, audience: Callable[[str], bool]) -> list[Any]:
        return [r[column] for r in rows if audience(str(r["audience"])) and r[column]]

    kinds: dict[str, Callable[[str], bool]] = {
        "text": lambda a: a == "text", "ridge": lambda a: a == "ridge",
        "noisy": lambda a: a == "noisy", "warm": lambda a: a == "T0.2",
        "cold": lambda a: a == "T0.01", "mixed": lambda a: a.startswith("mixed")}
    for kind, audience in kinds.items():
        for role in ("pragmatic", "oracle"):
            diffs = cells(f"minus {role}", audience)
            if not diffs:
                continue
            figures[f"{kind}.minus_{role}"] = range_figure([d.mean for d in diffs],
                                                           signed=True)
            figures[f"{kind}.minus_{role}.above"] = figure(
                str(sum(d.low > 0 for d in diffs)), sum(d.low > 0 for d in diffs))
            figures[f"{kind}.minus_{role}.below"] = figure(
                str(sum(d.high < 0 for d in diffs)), sum(d.high < 0 for d in diffs))
            figures[f"{kind}.cells"] = figure(str(len(diffs)), len(diffs))
    oracle = [r["minus oracle"] for r in rows if r["minus oracle"]]
    figures["oracle.cells"] = figure(str(len(oracle)), len(oracle))
    figures["oracle.beaten"] = figure(str(sum(d.low > 0 for d in oracle)),
                                      sum(d.low > 0 for d in oracle))
    games = sorted({int(r["games"]) for r in rows})
    figures["games"] = figure(", ".join(f"{g:,}" for g in games), games)
    return {"configs": ["experiments/theory_of_mind_table.yaml"],
            "seeds": [config_seed("theory_of_mind_table")], "figures": figures,
            "tables": {"table": figure(script.markdown(rows))}}


def listener_fit(scratch: Path) -> dict[str, Any]:
    """The shipped listener model's held-out evaluation, as ``dixit-lab fit-listener
    --config experiments/listener_training.yaml`` recorded it in the model's ``info`` (no
    game is played: refitting would change the shipped model)."""
    model = ROOT / "data" / "listener_models" / "softmax-conse.json"
    info = json.loads(model.read_text(encoding="utf-8"))["info"]
    held, fitted, analytic = info["holdout"], info["fitted"], info["analytic_model"]
    figures: Figures = {
        "holdout": figure(f"{held['deals']} deals, {held['games']:,} games, "
                          f"{held['votes']:,} votes", [held["deals"], held["games"],
                                                       held["votes"]]),
        "log_loss.analytic": number_figure(analytic["log_loss"], 4),
        "log_loss.fitted": number_figure(fitted["log_loss"], 4),
        "mean.analytic": number_figure(analytic["mean_predicted"], 3),
        "mean.fitted": number_figure(fitted["mean_predicted"], 3),
        "mean.observed": number_figure(fitted["mean_observed"], 3)}
    by_voters = info["by_voters"]
    figures["by_voters"] = figure("; ".join(
        f"{voters}: {v['fitted']['mean_predicted']:.3f} / "
        f"{v['analytic_model']['mean_predicted']:.3f} vs {v['fitted']['mean_observed']:.3f}"
        for voters, v in sorted(by_voters.items(), key=lambda item: int(item[0]))), None)
    over = [v["analytic_model"]["mean_predicted"] - v["analytic_model"]["mean_observed"]
            for voters, v in by_voters.items() if int(voters) >= 5]  # 6 to 8 players
    figures["analytic_over.6to8"] = range_figure(over)
    return {"configs": ["experiments/listener_training.yaml"],
            "seeds": [config_seed("listener_training")], "figures": figures,
            "model": str(model.relative_to(ROOT))}


def pair_coverage(scratch: Path) -> dict[str, Any]:
    """The coverage study of the rating intervals (``benchmarks/coverage_pairs.py`` at its
    defaults): identical twins over 400 fresh tournaments a setting; no results folder."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from coverage_pairs import SCHEDULES, coverage

    rows = ["| schedule | games | pair intervals holding 0 | player intervals holding 0 |",
            "|---|---|---|---|"]
    figures: Figures = {}
    for schedule in SCHEDULES:
        for games in (30, 200):
            c = coverage(schedule, games, 400)
            rows.append(f"| {schedule} | {games} | {c.pairs:.1%} (± {c.pairs_se:.1%}) | "
                        f"{c.players:.1%} (± {c.players_se:.1%}) |")
            figures[f"{schedule}.{games}.pairs"] = figure(f"{c.pairs:.1%}", c.pairs)
            figures[f"{schedule}.{games}.players"] = figure(f"{c.players:.1%}", c.players)
    return {"configs": ["benchmarks/coverage_pairs.py"], "seeds": ["10000-10399"],
            "figures": figures, "tables": {"coverage": figure("\n".join(rows))}}


GROUPS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "quickstart": quickstart, "storytellers": storytellers, "noisy": noisy,
    "theory_of_mind": theory_of_mind, "listener_fit": listener_fit,
    "table_sizes": table_sizes, "tom_table": tom_table, "pair_coverage": pair_coverage}


#: groups that play into another group's scratch folder (the same sweeps' points)
SHARES = {"noisy": "storytellers", "theory_of_mind": "storytellers"}


# -- the command --------------------------------------------------------------------------------

def git_commit() -> str | None:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() or None


def regenerate(groups: Sequence[str], scratch: Path) -> dict[str, Any]:
    """Run ``groups`` into ``scratch``; ``docs/figures.json`` with their entries replaced
    (read once they are computed, so that runs of other groups meanwhile are kept)."""
    entries = {}
    for name in groups:
        start = time.monotonic()
        print(f"{name}: running", file=sys.stderr, flush=True)
        entry = GROUPS[name](scratch / SHARES.get(name, name))
        entry.update(dixit_lab_version=__version__, git_commit=git_commit())
        entries[name] = entry
        print(f"{name}: {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)
    figures = figure_marks.load_figures()
    figures["groups"] = dict(sorted({**figures["groups"], **entries}.items()))
    return figures


def write_figures(figures: dict[str, Any], path: Path = figure_marks.FIGURES) -> None:
    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float):
            return None if math.isnan(value) else round(value, 6)
        return value

    path.write_text(json.dumps(plain(figures), indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(GROUPS), metavar="GROUP",
                        help=f"regenerate these groups only ({', '.join(GROUPS)})")
    parser.add_argument("--check", action="store_true",
                        help="run nothing: list every quoted figure that differs from "
                             "docs/figures.json (exit 1 if any)")
    parser.add_argument("--rewrite", action="store_true",
                        help="run nothing: rewrite the docs' figures from docs/figures.json")
    parser.add_argument("--scratch", type=Path,
                        help="where the results folders go (default: a temporary folder, "
                             "removed at the end unless --keep)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.check:
        lines = figure_marks.differences(figure_marks.load_figures())
        print("\n".join(lines) or "every quoted figure is the data's")
        return 1 if lines else 0
    if not args.rewrite:
        scratch = args.scratch or Path(tempfile.mkdtemp(prefix="dixit-figures-"))
        start = time.monotonic()
        try:
            write_figures(regenerate(args.only or list(GROUPS), scratch))
        finally:
            if args.scratch is None and not args.keep:
                shutil.rmtree(scratch, ignore_errors=True)
        print(f"wrote {figure_marks.FIGURES.relative_to(ROOT)} in "
              f"{time.monotonic() - start:.0f} s", file=sys.stderr)
    changed = figure_marks.rewrite_files(figure_marks.load_figures())
    print("rewrote " + (", ".join(changed) if changed else "nothing: the docs agree"),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
