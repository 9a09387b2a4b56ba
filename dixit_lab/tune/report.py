"""What ``dixit-lab tune`` says: ``tune.csv``, ``tune.json``, ``tune.png`` and the verdict line
of the terminal, all from the same candidates (see :mod:`dixit_lab.tune.search`, which
writes them).

The verdict is **best** when one candidate is left in the race and **tied** when several
are: the games do not separate them, and every output names them all.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from dixit_lab.atomic import atomic_write, atomic_write_text
from dixit_lab.run.experiment import TuneConfig
from dixit_lab.tune.candidates import (
    Candidate,
    alpha_split,
    numeric,
    paired_by_deal,
    search_leader,
    value_text,
)

__all__ = ["CSV_COLUMNS", "verdict", "verdict_line", "write_outputs"]

CSV_COLUMNS = ("value", "games", "mean", "half_width_95", "ci_low", "ci_high", "alive",
               "p_versus_leader", "dropped_after_look", "confirm_games", "confirm_mean",
               "confirm_ci_low", "confirm_ci_high", "confirm_versus_leader",
               "confirm_versus_leader_low", "confirm_versus_leader_high",
               "confirm_p_versus_leader", "verdict")


def verdict(candidates: list[Candidate]) -> str:
    """``best`` (one candidate left in the race) or ``tied`` (several)."""
    return "best" if sum(c.alive for c in candidates) == 1 else "tied"


def confirm_leader(candidates: list[Candidate]) -> Candidate | None:
    """The candidate in the race with the highest confirmation mean (None without one)."""
    confirmed = [c for c in candidates if c.alive and c.confirm_by_deal]
    return max(confirmed, key=lambda c: c.confirmed()[0]) if confirmed else None


def _status(candidate: Candidate, candidates: list[Candidate]) -> str:
    return verdict(candidates) if candidate.alive else "dropped"


def _fixed(number: float) -> str:
    """Four decimals (the metrics' intervals are wider than 0.001); NaN blank, inf written."""
    if math.isnan(number):
        return ""
    return f"{number:.4f}" if math.isfinite(number) else str(number)


def _csv(candidates: list[Candidate]) -> str:
    leader = confirm_leader(candidates)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in candidates:
        dropped = "confirmation" if c.dropped_in_confirmation else (c.dropped_after or "")
        row: list[Any] = [value_text(c.value), len(c.samples), _fixed(c.mean), _fixed(c.half_width),
                          _fixed(c.mean - c.half_width), _fixed(c.mean + c.half_width), c.alive,
                          _fixed(c.p_value), dropped]
        if c.confirm_by_deal:
            mean, low, high = c.confirmed()
            versus = [math.nan] * 4
            if leader is not None and c is not leader:
                result = paired_by_deal(c.confirm_by_deal, leader.confirm_by_deal)
                versus = [result.mean, result.low, result.high, result.p_value]
            row += [len(c.confirm_by_deal), *map(_fixed, (mean, low, high, *versus))]
        else:
            row += [""] * 8
        writer.writerow([*row, _status(c, candidates)])
    return buffer.getvalue()


def write_outputs(folder: Path, settings: TuneConfig, candidates: list[Candidate],
                  played: int, confirmed: dict[str, Any] | None = None) -> None:
    """``tune.csv``, ``tune.json`` and ``tune.png`` of the search so far."""
    atomic_write_text(folder / "tune.csv", _csv(candidates))
    in_race = [c for c in candidates if c.alive]
    leader = search_leader(candidates)
    alpha_search, _ = alpha_split(settings)
    summary: dict[str, Any] = {
        "parameter": settings.parameter, "metric": settings.metric,
        "player": settings.player, "games_played": played, "alpha": settings.alpha,
        "alpha_search": alpha_search, "verdict": verdict(candidates),
        "best_value": in_race[0].value if len(in_race) == 1 else None,
        "still_in_race": [c.value for c in in_race],
        "search_leader": {"value": leader.value, "mean": leader.mean,
                          "ci": [leader.mean - leader.half_width,
                                 leader.mean + leader.half_width],
                          "note": "the search's highest mean: biased upwards"}}
    if confirmed:
        best = confirm_leader(candidates)
        summary["confirmed"] = {**confirmed, "leader_value": best.value if best else None}
    atomic_write_text(folder / "tune.json", json.dumps(summary, indent=2) + "\n")
    _plot(folder, settings, candidates)


def verdict_line(settings: TuneConfig, candidates: list[Candidate],
                 confirmed: dict[str, Any] | None) -> str:
    """The terminal's summary: the best value, or every value still tied, with the search's
    mean ± 95% half-width of each and the confirmation's interval and differences."""
    in_race = [c for c in candidates if c.alive]

    def described(c: Candidate) -> str:
        text = f"{value_text(c.value)}: {settings.metric} {c.mean:.3f} ± " \
               f"{c.half_width:.3f} (search, {len(c.samples)} games"
        if c.confirm_by_deal:
            mean, low, high = c.confirmed()
            text += f"; {mean:.3f} [{low:.3f}, {high:.3f}] on {len(c.confirm_by_deal)} " \
                    "fresh deals"
        return text + ")"

    lines = []
    if len(in_race) == 1:
        lines.append(f"best value: {described(in_race[0])}")
    else:
        tied = ", ".join(value_text(c.value) for c in in_race)
        lines.append(f"tied: {tied} cannot be separated by these games, so no single value "
                     f"is best")
        lines += [f"  {described(c)}" for c in in_race]
    lines.append("  (± is the 95% interval half-width of the search's mean, which is biased "
                 "upwards; [ ] the 95% interval on fresh deals)")
    leader = confirm_leader(candidates)
    differences = (confirmed or {}).get("differences", [])
    if leader is not None and differences:
        lines.append(f"  on the fresh deals, against their leader {value_text(leader.value)} "
                     "(every pair in tune.json):")
    for d in differences:
        if leader is not None and leader.value in (d["a"], d["b"]):
            sign = 1 if d["b"] == leader.value else -1  # as (other - leader)
            other = d["a"] if sign == 1 else d["b"]
            low, high = sorted((sign * d["ci"][0], sign * d["ci"][1]))
            lines.append(f"    {value_text(other)} − {value_text(leader.value)} = "
                         f"{sign * d['difference']:+.3f} "
                         f"[{low:+.3f}, {high:+.3f}], p = {d['p_value']:.3f}"
                         + (": separated" if d["separated"] else ""))
    return "\n".join(lines)


def _plot(folder: Path, settings: TuneConfig, candidates: list[Candidate]) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    # numbers on a number line; a categorical parameter's values at 0, 1, ... by name
    on_line = numeric([c.value for c in candidates])
    xs = [c.value if on_line else float(i) for i, c in enumerate(candidates)]
    at = dict(zip((id(c) for c in candidates), xs, strict=True))
    means = [c.mean for c in candidates]
    errors = [c.half_width if math.isfinite(c.half_width) else 0 for c in candidates]
    colors = ["tab:green" if c.alive else "tab:gray" for c in candidates]
    ax.errorbar(xs, means, yerr=errors, fmt="none", ecolor="0.6", capsize=3)
    ax.scatter(xs, means, c=colors, zorder=3,
               label="search: green in the race, grey dropped (biased upwards)")
    ax.plot(xs, means, color="0.7", zorder=1)
    confirmed = [c for c in candidates if c.confirm_by_deal]
    if confirmed:
        step = (max(xs) - min(xs)) / max(len(xs) - 1, 1) * 0.15
        intervals = [c.confirmed() for c in confirmed]
        ax.errorbar([at[id(c)] + step for c in confirmed], [i[0] for i in intervals],
                    yerr=[[i[0] - i[1] for i in intervals], [i[2] - i[0] for i in intervals]],
                    fmt="D", mfc="white", color="black", capsize=3, zorder=4,
                    label="confirmation (fresh deals)")
        ax.legend(fontsize=8, loc="lower center")
    if not on_line:
        ax.set_xticks(xs, [value_text(c.value) for c in candidates], fontsize=8)
    ax.set_xlabel(settings.parameter)
    ax.set_ylabel(f"{settings.metric.replace('_', ' ')}\n({settings.player}: mean, 95% CI)")
    in_race = [value_text(c.value) for c in candidates if c.alive]
    title = (f"best value: {in_race[0]}" if len(in_race) == 1 else
             f"tied, cannot be separated: {', '.join(in_race)}")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    # the title also goes into the file's Title text chunk, where a script can read it
    atomic_write(folder / "tune.png", lambda tmp: fig.savefig(
        tmp, format="png", dpi=120, metadata={"Title": title}))
