"""Plain-text rendering of the boards for the terminal (`arena leaderboard`, `arena demo`): the headline first —
forecast Brier with its 95 % interval, rank (ties as "1=") and tier — then skill against the market, then seed
001's bet-size metrics under their own names, coherence and money. The HTML site renders the same boards."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from arena.scoring.brier import BSS_MARKET_FLOOR, BSS_MARKET_MIN
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED

INTERVAL = "__interval__"  # a computed column: "[lo, hi]" of the forecast Brier

BOARD_TEXT_COLUMNS = [
    ("agent", "agent", "{}"),
    ("kind", "kind", "{}"),
    ("rank_label", "rank", "{}"),
    ("tier", "tier", "{:d}"),
    ("provisional", "prov", "{}"),
    ("forecast_brier", "F-Brier", "{:.3f}"),
    (INTERVAL, "95% CI", "{}"),
    ("n_forecasts", "n", "{:d}"),
    ("brier_minus_market", "F-mkt", "{:+.3f}"),
    ("bss_vs_market", "BSSmkt", "{:+.2f}"),
    ("log_score", "log", "{:.3f}"),
    ("spherical_score", "sph", "{:.3f}"),
    ("brier_adjusted", "adj-Brier", "{:.3f}"),
    ("irt_skill", "IRT", "{:+.2f}"),
    ("implied_brier", "S001 Brier", "{:.3f}"),
    ("implied_brier_band", "S001 band", "{}"),
    ("bss_vs_0_25", "S001 BSS.25", "{:+.2f}"),
    ("kelly_brier", "Brier-K", "{:.3f}"),
    ("stated_brier", "Brier-S", "{:.3f}"),
    ("coherence_gap", "gap", "{:.3f}"),
    ("contradicting_bets", "contra", "{:.0%}"),
    ("crowd_proxy", "proxy", "{:.4f}"),
    ("pnl", "P/L $", "{:+,.2f}"),
    ("return_pct", "return", "{:+.1f}%"),
    ("win_rate", "win", "{:.0%}"),
]
OVERALL_TEXT_COLUMNS = [("model", "model", "{}"), ("n_cohorts", "cohorts", "{:d}")] + BOARD_TEXT_COLUMNS[1:]

LEGEND = (
    "Ranked by the rank key (default F-Brier); '1=' marks a shared rank. "
    "F-Brier (the headline): Brier of each agent's stated P(YES) on its cohort's forecast set — the same questions "
    "for every agent — over resolved markets, lower is better; 95% CI: paired bootstrap resampling markets (across "
    "cohorts on the overall board: cohorts, then markets within them); tier: 1 + agents significantly better on "
    "the rank key (BH-adjusted bootstrap p < 0.05), same tier = not distinguishable. References (kind reference): "
    "always-0.5 and market (the YES price the agents saw) forecast the same questions inside the same bootstrap. "
    f"F-mkt: F-Brier minus the market's Brier on the same questions (< 0 beats the market, in -1..1); BSSmkt: "
    f"1 - F-Brier / market Brier, shown only where the market's Brier is at least {BSS_MARKET_FLOOR} (so within "
    f"{BSS_MARKET_MIN:.0f}..1), else '—' (too small to divide by). On the same questions: log: mean log loss "
    "(nats, lower is better, P(YES) clipped to [1e-6, 1-1e-6]); sph: mean spherical score (0..1, higher is better); "
    "adj-Brier: difficulty-adjusted Brier (two-way fixed effects, question + forecaster; the Brier on the average "
    "question, lower is better); IRT: Rasch-type skill from 1 - Brier (logits on the average question, higher is "
    "better); log and sph get bootstrap tiers when ranked by, adj-Brier and IRT are fitted over every row at once "
    "and have no tier. Seed 001's metrics, kept as defined: S001 Brier "
    "(P(YES) implied by bet size: bet / max bet), S001 band, S001 BSS.25 (skill vs 0.25). Brier-K: Kelly-implied "
    "P(YES); Brier-S: P(YES) stated with the bets; gap: mean |stated - Kelly-implied P(YES)| over the bets; "
    "contra: share of bets whose side contradicts the agent's own stated P(YES) vs the price paid; proxy: "
    "crowd-proxy (logit pool of the cohort's forecasts). "
    f"prov '*': provisional, fewer than {PROVISIONAL_MIN_RESOLVED} resolved forecasts. "
    "'—' means nothing to score yet (never 0)."
)


def _cell(value: object, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    try:
        if fmt == "{:d}":
            return fmt.format(int(value))  # type: ignore[call-overload]
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def _record(rec: dict[str, Any]) -> dict[str, Any]:
    lo, hi = rec.get("forecast_brier_lo"), rec.get("forecast_brier_hi")
    ok = all(isinstance(x, float) and not math.isnan(x) for x in (lo, hi))
    return {**rec, INTERVAL: f"[{lo:.3f}, {hi:.3f}]" if ok else None,
            "provisional": "*" if rec.get("provisional") is True else ""}


def table(df: pd.DataFrame, columns: list[tuple[str, str, str]]) -> str:
    cols = [(c, h, f) for c, h, f in columns if c in df.columns or c == INTERVAL]
    rows = [[h for _, h, _ in cols]]
    for rec in df.to_dict("records"):
        r = _record(rec)
        rows.append([_cell(r.get(c), f) for c, _, f in cols])
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def boards_report(boards: Any, overall: bool = True) -> str:
    """Every cohort board (`== name ==`, its status and rank key on the next line), then the overall board."""
    parts = []
    only = f"; {boards.track} track only" if getattr(boards, "track", None) else ""
    for c in boards.cohorts:
        parts.append(f"== {c.name} ==\n{c.status}; ranked by {boards.rank_by}{only}\n"
                     f"{table(c.rows, BOARD_TEXT_COLUMNS)}")
    if overall and len(boards.overall):
        parts.append("== overall (per model across cohorts) ==\n"
                     f"ranked by {boards.rank_by}{only}\n{table(boards.overall, OVERALL_TEXT_COLUMNS)}")
    return "\n\n".join(parts)


__all__ = ["BOARD_TEXT_COLUMNS", "LEGEND", "OVERALL_TEXT_COLUMNS", "boards_report", "table"]
