"""The boards as terminal text (`arena leaderboard`, `arena demo`), fitted to a width: columns are taken in
priority order — rank, name, the headline (forecast Brier with its 95 % interval), tier, Brier − market,
coverage, P/L, return, then the rest — as many as fit; `wide` takes them all. Tables are laid out by rich.

The width is the terminal's (`COLUMNS` when set, else the terminal of stdout), and 100 columns when stdout is not a
terminal (a pipe or a file), so saved output has the same predictable layout; `--wide` shows every column whatever
the width. The legend explains each column and is wrapped to the same width."""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from arena.read.shown_board import shown_board, shown_name
from arena.scoring.brier import BSS_MARKET_FLOOR, BSS_MARKET_MIN
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED

DEFAULT_WIDTH = 100  # columns when stdout is not a terminal and COLUMNS is unset
GAP = 2  # spaces between two columns


def terminal_width() -> int:
    """COLUMNS when set (a whole number), else the width of the terminal stdout writes to, else DEFAULT_WIDTH."""
    import os
    import sys

    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(20, int(env))
    try:
        if sys.stdout.isatty():
            return max(20, os.get_terminal_size(sys.stdout.fileno()).columns)
    except (AttributeError, OSError, ValueError):
        pass
    return DEFAULT_WIDTH


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _fmt(pattern: str) -> Callable[[dict[str, Any], str], str]:
    def cell(rec: dict[str, Any], key: str) -> str:
        value = rec.get(key)
        if _missing(value):
            return "—"
        try:
            return pattern.format(int(value)) if pattern == "{:d}" else pattern.format(value)
        except (ValueError, TypeError):
            return str(value)

    return cell


def _name(rec: dict[str, Any], key: str) -> str:
    return shown_name(str(rec.get(key, "")), rec.get("same_as")) + (" *" if rec.get("provisional") is True else "")


def _with_interval(rec: dict[str, Any], field: str, fmt: str) -> str:
    """`field` and its 95 % interval (`field_lo`, `field_hi`) in `fmt`; the value alone without an interval,
    "—" without a value."""
    value, lo, hi = rec.get(field), rec.get(f"{field}_lo"), rec.get(f"{field}_hi")
    if _missing(value):
        return "—"
    if any(_missing(x) for x in (lo, hi)):
        return format(value, fmt)
    return f"{value:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def _headline(rec: dict[str, Any], key: str) -> str:
    return _with_interval(rec, "forecast_brier", ".3f")


def _beyond(rec: dict[str, Any], key: str) -> str:
    """The encompassing coefficient with its interval (`scoring.beyond_market`), "—" where it was not fitted."""
    return _with_interval(rec, "beyond_market", "+.2f")


def _coverage(rec: dict[str, Any], key: str) -> str:
    asked, answered = rec.get("n_asked"), rec.get("n_answered")
    if _missing(asked) or _missing(answered):
        return "—"
    return f"{int(answered)}/{int(asked)}"


def _decision_value(rec: dict[str, Any], key: str) -> str:
    return _with_interval(rec, "decision_value", "+.2%")


@dataclass(frozen=True)
class Column:
    key: str  # the board column it shows (the first one it needs)
    header: str
    cell: Callable[[dict[str, Any], str], str]
    right: bool = True  # right-aligned (numbers)
    needs: tuple[str, ...] = ()  # shown only when the board has these columns (default: `key`)

    def available(self, columns: Sequence[str]) -> bool:
        return all(c in columns for c in (self.needs or (self.key,)))


# Priority order: what a narrow terminal keeps first. The name column is "agent" or "model" (`_columns`).
PRIORITY: tuple[Column, ...] = (
    Column("rank_label", "rank", _fmt("{}")),
    Column("@name", "agent", _name, right=False, needs=()),
    Column("forecast_brier", "F-Brier [95% CI]", _headline),
    Column("tier", "tier", _fmt("{:d}")),
    Column("brier_minus_market", "F-mkt", _fmt("{:+.3f}")),
    Column("n_asked", "answered", _coverage, needs=("n_asked", "n_answered")),
    Column("pnl", "P/L $", _fmt("{:+,.2f}")),
    Column("return_pct", "return", _fmt("{:+.1f}%")),
    Column("n_markets", "markets", _fmt("{:d}")),
    Column("n_forecasts", "n", _fmt("{:d}")),
    Column("n_cohorts", "cohorts", _fmt("{:d}")),
    Column("bss_vs_market", "BSSmkt", _fmt("{:+.2f}")),
    Column("beyond_market", "beyond [95% CI]", _beyond),
    Column("price_copy", "copy", _fmt("{:.2f}")),
    Column("kind", "kind", _fmt("{}"), right=False),
    Column("log_score", "log", _fmt("{:.3f}")),
    Column("spherical_score", "sph", _fmt("{:.3f}")),
    Column("brier_adjusted", "adj-Brier", _fmt("{:.3f}")),
    Column("irt_skill", "IRT", _fmt("{:+.2f}")),
    Column("decision_value", "DV [95% CI]", _decision_value),
    Column("pnl_at_bid", "P/L@bid $", _fmt("{:+,.2f}")),
    Column("sharpe", "Sharpe", _fmt("{:+.2f}")),
    Column("max_drawdown", "maxDD", _fmt("{:.1%}")),
    Column("implied_brier", "S001 Brier", _fmt("{:.3f}")),
    Column("implied_brier_band", "S001 band", _fmt("{}")),
    Column("bss_vs_0_25", "S001 BSS.25", _fmt("{:+.2f}")),
    Column("kelly_brier", "Brier-K", _fmt("{:.3f}")),
    Column("stated_brier", "Brier-S", _fmt("{:.3f}")),
    Column("coherence_gap", "gap", _fmt("{:.3f}")),
    Column("contradicting_bets", "contra", _fmt("{:.0%}")),
    Column("crowd_proxy", "proxy", _fmt("{:.4f}")),
    Column("win_rate", "win", _fmt("{:.0%}")),
)

GENERAL_LEGEND = (
    "Ranked by the rank key (default F-Brier); rows whose rank key prints the same share a rank ('2='); a name "
    f"followed by '*' is provisional (fewer than {PROVISIONAL_MIN_RESOLVED} resolved forecasts); 'A = B': A's "
    "forecasts equal the reference B's on every question, one row for both; '—' means "
    "nothing to score yet (never 0). References (kind reference): always-0.5 and market (the YES price the agents "
    "saw) forecast the same questions inside the same bootstrap."
)
LEGEND_ENTRIES: dict[str, str] = {
    "F-Brier [95% CI]": "F-Brier (the headline): Brier of each agent's stated P(YES) on its cohort's forecast set — "
    "the same questions for every agent — one observation per resolved market (the mean over its rounds), lower "
    "is better; 95% CI: paired bootstrap resampling markets (on the overall board distinct markets: a market "
    "shared by cohorts moves with all of them).",
    "tier": "1 + agents significantly better on the rank key (forecast keys: exact paired t-test on per-market "
    "differences, BH-adjusted p < 0.05, none below 10 shared markets or for provisional rows); same tier = not "
    "distinguishable.",
    "F-mkt": "F-Brier minus the market's Brier on the same questions (< 0 beats the market, in -1..1).",
    "answered": "questions the agent stated a P(YES) for / questions it was asked (an unanswered one is scored "
    "as 0.5).",
    "n": "forecasts scored.",
    "P/L $": "profit or loss of the portfolio, marked to market.",
    "return": "P/L over the starting bankroll.",
    "cohorts": "cohorts the model ran in (overall board).",
    "markets": "resolved markets scored (the headline's unit).",
    "BSSmkt": f"1 - F-Brier / market Brier, shown only where the market's Brier is at least {BSS_MARKET_FLOOR} "
    f"(so within {BSS_MARKET_MIN:.0f}..1), else '—' (too small to divide by).",
    "kind": "llm, baseline (scripted) or reference.",
    "log": "mean log loss on the same questions (nats, lower is better, P(YES) clipped to [1e-6, 1-1e-6]); gets "
    "bootstrap tiers when ranked by.",
    "sph": "mean spherical score (0..1, higher is better); gets bootstrap tiers when ranked by.",
    "adj-Brier": "difficulty-adjusted Brier (two-way fixed effects, question + forecaster; the Brier on the "
    "average question, lower is better); fitted over every row at once, no tier.",
    "IRT": "Rasch-type skill from 1 - Brier (logits on the average question, higher is better); no tier.",
    "DV [95% CI]": "decision value: mean return per question of quarter-Kelly bets (capped at the arena's "
    "max bet) on the stated forecasts at the prices seen, settled at resolution, as a share of the bankroll; an "
    "unanswered question does not bet; 95% CI resamples markets; comparable whatever the agent's own bets.",
    "P/L@bid $": "P/L with open positions marked at the bid (what selling them would fetch); '—' where a held "
    "position has no recorded bid.",
    "Sharpe": "mean / sd of the daily returns of the marked equity (per day, not annualised; '—' below 5 daily "
    "returns).",
    "maxDD": "maximum drawdown: the largest fall of the daily marked equity from a running peak (lower is better).",
    "beyond [95% CI]": "information beyond the market: coefficient of the stated logit in a logistic regression of "
    "the outcome on the shown price's logit and the stated logit (answered rows, P clipped to [0.01, 0.99]; > 0: "
    "the forecast knows something the price does not); 95% CI: markets resampled; '—' where it cannot be fitted "
    "(a copier of the price, a constant forecast, too few markets: the JSON's beyond_market_note says which).",
    "copy": "price-copy index: correlation of the stated logit with the shown price's logit (1 = copies the price).",
    "S001 Brier": "seed 001's metric, kept as defined: Brier of the P(YES) implied by bet size (bet / max bet).",
    "S001 band": "seed 001's verbal band of that Brier.",
    "S001 BSS.25": "seed 001's skill of that Brier against 0.25.",
    "Brier-K": "Brier of the Kelly-implied P(YES) of the bets.",
    "Brier-S": "Brier of the P(YES) stated with the bets.",
    "gap": "mean |stated - Kelly-implied P(YES)| over the bets.",
    "contra": "share of bets whose side contradicts the agent's own stated P(YES) vs the price paid.",
    "proxy": "crowd-proxy score (logit pool of the cohort's forecasts): ranks before markets resolve.",
    "win": "share of resolved bets that won.",
}
LEGEND = GENERAL_LEGEND + " " + " ".join(f"{h}: {t}" for h, t in LEGEND_ENTRIES.items())


def _columns(df: pd.DataFrame, name_key: str, rank_by: str | None = None) -> list[tuple[Column, str]]:
    """The board's displayable columns in priority order, each with the row key it reads; the rank key's column,
    when it is not already among the first, comes right after the tier."""
    cols = list(df.columns)
    out = []
    for c in PRIORITY:
        if c.key == "@name":
            out.append((Column(name_key, name_key, c.cell, right=False), name_key))
        elif c.available(cols):
            out.append((c, c.key))
    keys = [key for _, key in out]
    if rank_by in keys and "tier" in keys and keys.index(rank_by) > keys.index("tier"):
        out.insert(keys.index("tier") + 1, out.pop(keys.index(rank_by)))
    return out


def _render(headers: list[str], rows: list[list[str]], right: list[bool], width: int,
            whole: int = 0) -> str:
    """The table no wider than `width`, cells cut with an ellipsis where they must be — except in the first
    `whole` columns, which keep their longest cell (names a reader must be able to read)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    rule = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)
    table = Table(box=rule, show_edge=False, pad_edge=False, padding=(0, 0, 0, GAP - 1), highlight=False)
    for i, (h, r) in enumerate(zip(headers, right)):
        keep = max([len(h)] + [len(row[i]) for row in rows]) if i < whole else None
        table.add_column(h, justify="right" if r else "left", no_wrap=True, overflow="ellipsis", min_width=keep)
    for row in rows:
        table.add_row(*row)
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False, emoji=False,
            markup=False, soft_wrap=False).print(table)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines())


def table(df: pd.DataFrame, name_key: str = "agent", width: int | None = None, wide: bool = False,
          rank_by: str | None = None) -> tuple[str, int]:
    """The board as text no wider than `width` (default: the terminal's), its columns chosen by priority (all
    with `wide`; the rank key's after the tier); returns (text, columns left out)."""
    width = terminal_width() if width is None else width
    cols = _columns(df, name_key, rank_by)
    records = df.to_dict("records")
    cells = [[c.cell(rec, key) for rec in records] for c, key in cols]
    widths = [max([len(c.header)] + [len(v) for v in vals]) for (c, _), vals in zip(cols, cells)]
    chosen: list[int] = []
    used = 0
    for i, w in enumerate(widths):
        need = w + (GAP if chosen else 0)
        if wide or used + need <= width or i < 2:  # rank and name always
            chosen.append(i)
            used += need
        else:
            break  # priority order: a column is never shown when one before it is not
    render_width = used if wide else width
    text = _render([cols[i][0].header for i in chosen], [[cells[i][r] for i in chosen] for r in range(len(records))],
                   [cols[i][0].right for i in chosen], max(render_width, 1))
    return text, len(cols) - len(chosen)


@dataclass(frozen=True)
class Report:
    text: str
    hidden: int  # columns left out of the widest board
    headers: tuple[str, ...]  # the column headers shown on some board


def boards_report(boards: Any, overall: bool = True, *, width: int | None = None, wide: bool = False) -> str:
    """Every cohort board (`== name ==`, its status and rank key on the next line), then the overall board."""
    return render_boards(boards, overall, width=width, wide=wide).text


def render_boards(boards: Any, overall: bool = True, *, width: int | None = None, wide: bool = False) -> Report:
    width = terminal_width() if width is None else width
    parts = []
    hidden = 0
    headers: list[str] = []
    only = f"; {boards.track} track only" if getattr(boards, "track", None) else ""

    def add(title: str, status: str, df: pd.DataFrame, name_key: str) -> None:
        nonlocal hidden
        df = shown_board(df, boards.rank_by, name_key)  # a reference's twin is one row; ties as printed
        text, left_out = table(df, name_key, width, wide, boards.rank_by)
        hidden = max(hidden, left_out)
        head = text.splitlines()[0] if text else ""
        headers.extend(h for h in (c.header for c, _ in _columns(df, name_key)) if h in head)
        guard = pre_cutoff_line(df, name_key)
        parts.append(_wrap(title, width) + "\n" + _wrap(status, width) + "\n" + text
                     + "".join("\n" + _wrap(line, width) for line in guard.splitlines()))

    rooms = getattr(boards, "headroom", None) or {}
    leaks = getattr(boards, "leaks", None) or {}
    for c in boards.cohorts:
        add(f"== {c.name} ==", f"{c.status}; ranked by {boards.rank_by}{only}{headroom_line(rooms.get(c.name))}"
            f"{leak_line(leaks.get(c.name, ()))}", c.rows, "agent")
    if overall and len(boards.overall):
        add("== overall (per model across cohorts) ==", f"ranked by {boards.rank_by}{only}", boards.overall, "model")
    return Report("\n\n".join(parts), hidden, tuple(dict.fromkeys(headers)))


def pre_cutoff_line(df: pd.DataFrame, name_key: str = "agent") -> str:
    """The board's "pre-cutoff" line (the contamination guard, replays): per seat that declared a knowledge cutoff,
    the questions left out of its headline and their Brier, and per seat that declared a release, its model age
    at its first decision; "" when no row has either."""
    if "n_contaminated" not in df.columns:
        return ""
    cut, ages = [], []
    for rec in df.to_dict("records"):
        n, brier, age = rec.get("n_contaminated"), rec.get("pre_cutoff_brier"), rec.get("model_age_days")
        if not _missing(n):
            score = "—" if _missing(brier) else f"{float(brier):.3f}"
            cut.append(f"{rec[name_key]} {int(n)} question(s), F-Brier {score}")
        if not _missing(age):
            ages.append(f"{rec[name_key]} {int(age):+d} d")
    out = []
    if cut:
        out.append("pre-cutoff (outcome knowable before the model's knowledge cutoff; left out of the headline): "
                   + "; ".join(cut))
    if ages:
        out.append("model age at first decision: " + ", ".join(ages))
    return "\n".join(out)


def leak_line(leaks: Any) -> str:
    """"; N leaked questions left out (…)" of a cohort (`domain.leakage`), "" when none was flagged."""
    if not leaks:
        return ""
    reasons: dict[str, int] = {}
    for x in leaks:
        reasons[x.reason] = reasons.get(x.reason, 0) + 1
    n = len(leaks)
    return (f"; {n} leaked question{'s' if n != 1 else ''} left out ("
            + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) + "; listed in the JSON's leaks)")


RISK_SHOWN = ("rank_label", "same_as", "provisional", "decision_value", "decision_value_lo", "decision_value_hi", "pnl",
              "pnl_at_bid", "sharpe", "max_drawdown")


def risk_report(boards: Any, *, width: int | None = None) -> Report:
    """The overall board's decision value and risk columns alone, in the board's order (what `arena demo` prints
    under the boards, so the columns `--wide` would show far right are seen)."""
    width = terminal_width() if width is None else width
    if not len(boards.overall):
        return Report("", 0, ())
    df = shown_board(boards.overall, boards.rank_by, "model")
    df = df[["model", *(c for c in RISK_SHOWN if c in df.columns)]]
    text, hidden = table(df, "model", width, False, boards.rank_by)
    head = text.splitlines()[0] if text else ""
    headers = tuple(c.header for c, _ in _columns(df, "model") if c.header in head)
    title = "== decision value and risk (per model, in the board's order) =="
    return Report(_wrap(title, width) + "\n" + text, hidden, headers)


def _sig3(x: float) -> str:
    """A non-negative amount to three significant digits ("0.0303", "0.935", "12.4"); "—" when unknown."""
    if _missing(x):
        return "—"
    if x <= 0:
        return "0"
    return f"{x:.{max(1, 2 - math.floor(math.log10(x)))}f}"


def frontier_report(frontier: pd.DataFrame, *, width: int | None = None) -> str:
    """The cost–skill frontier (`scoring.frontier.FRONTIER_COLUMNS`) as a titled table: each model's USD per 1,000
    resolved forecasts and Brier − market with their 95 % intervals, its calls, whether it is on the frontier and
    the probability that another model is both cheaper and better; then the rule."""
    from arena.scoring.frontier import FRONTIER_RULE

    width = terminal_width() if width is None else width
    title = _wrap("== cost–skill frontier (per model with a reported call cost) ==", width)
    if not len(frontier):
        return title + "\nno model call has reported a cost yet"

    def skill(v: float) -> str:
        return "—" if _missing(v) else f"{v:+.3f}"

    rows = []
    for rec in frontier.to_dict("records"):
        usd = [_sig3(1000 * rec[k]) for k in ("cost_usd", "cost_usd_lo", "cost_usd_hi")]
        rows.append([str(rec["model"]), f"{usd[0]} [{usd[1]}, {usd[2]}]",
                     f"{skill(rec['brier_minus_market'])} [{skill(rec['brier_minus_market_lo'])}, "
                     f"{skill(rec['brier_minus_market_hi'])}]",
                     f"{int(rec['n_calls']):,}", f"{int(rec['n_resolved']):,}",
                     "yes" if rec["on_frontier"] else "no",
                     "—" if _missing(rec["p_dominated"]) else f"{rec['p_dominated']:.2f}"])
    headers = ["model", "$/1k resolved [95% CI]", "F-mkt [95% CI]", "calls", "resolved", "frontier", "P(dom)"]
    text = _render(headers, rows, [False, True, True, True, True, False, True], width, whole=1)
    rule = (f"$/1k resolved: USD per 1,000 resolved forecasts; F-mkt: Brier − market (lower is better); "
            f"P(dom): p_dominated. {FRONTIER_RULE[0].upper()}{FRONTIER_RULE[1:]}.")
    return f"{title}\n{text}\n{_wrap(rule, width)}"


def headroom_line(room: Any) -> str:
    """"; headroom: …" of a cohort's forecast sets (`scoring.headroom`), "" when none was asked."""
    if room is None or not room.n_questions:
        return ""

    def num(x: float | None) -> str:
        return "—" if x is None else f"{x:.3f}"

    return (f"; headroom: {room.in_band_share:.0%} of {room.n_questions} questions in band, market Brier "
            f"{num(room.market_brier)}, always-0.5 {num(room.half_brier)} ({room.n_resolved} of {room.n_markets} "
            f"markets resolved), detectable difference {num(room.min_detectable_difference)}")


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width=max(20, width), break_on_hyphens=False)) or text


def legend(width: int | None = None, headers: Sequence[str] | None = None) -> str:
    """The legend wrapped to `width`: the general rules, then one entry per column (those in `headers`, else all)."""
    width = terminal_width() if width is None else width
    lines = [_wrap(GENERAL_LEGEND, width)]
    for header, text in LEGEND_ENTRIES.items():
        if headers is None or header in headers:
            lines.append(textwrap.fill(f"{header}: {text}", width=max(20, width), subsequent_indent="  ",
                                       break_on_hyphens=False))
    return "\n".join(lines)


def hint(report: Report, width: int | None = None) -> str:
    """The line under the boards when the legend is not printed: how to see the rest."""
    width = terminal_width() if width is None else width
    more = (f"{report.hidden} more column{'s' if report.hidden != 1 else ''} with --wide; " if report.hidden else "")
    return _wrap(f"{more}--legend explains every column.", width)


__all__ = ["DEFAULT_WIDTH", "LEGEND", "LEGEND_ENTRIES", "PRIORITY", "Report", "boards_report", "frontier_report",
           "hint", "legend",
           "render_boards", "risk_report", "table", "terminal_width"]
