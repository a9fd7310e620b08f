"""Plain-text rendering of leaderboards for the terminal (the HTML site renders the same frames)."""

from __future__ import annotations

import math

import pandas as pd

COHORT_COLUMNS = [
    ("agent", "agent", "{}"),
    ("n_bets", "bets", "{:d}"),
    ("n_resolved", "res", "{:d}"),
    ("brier", "Brier", "{:.3f}"),
    ("brier_band", "band", "{}"),
    ("brier_kelly", "Brier-K", "{:.3f}"),
    ("brier_stated", "Brier-S", "{:.3f}"),
    ("bss_vs_0_25", "BSS.25", "{:+.2f}"),
    ("bss_vs_market", "BSSmkt", "{:+.2f}"),
    ("crowd_proxy", "proxy", "{:.4f}"),
    ("pnl", "P/L $", "{:+,.2f}"),
    ("return_pct", "return", "{:+.1f}%"),
    ("return_band", "band", "{}"),
    ("win_rate", "win", "{:.0%}"),
]

OVERALL_COLUMNS = [
    ("agent", "model", "{}"),
    ("cohorts", "cohorts", "{:d}"),
    ("n_resolved", "resolved bets", "{:d}"),
    ("brier", "Brier (pooled)", "{:.3f}"),
    ("mean_return_pct", "mean return", "{:+.1f}%"),
    ("total_pnl", "total P/L $", "{:+,.2f}"),
]

LEGEND = (
    "Brier: implied-confidence Brier of seed 001 (bet / max bet → P(YES)); Brier-K: Kelly-implied P(YES); "
    "Brier-S: stated P(YES); BSS.25 / BSSmkt: skill vs always-0.5 and vs the market price on the same bets; "
    "proxy: crowd-proxy (logit pool of the cohort's forecasts, lower is closer to the crowd). Lower Brier is "
    "better; '—' means nothing to score yet (never 0)."
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


def table(df: pd.DataFrame, columns: list[tuple[str, str, str]]) -> str:
    cols = [(c, h, f) for c, h, f in columns if c in df.columns]
    rows = [[h for _, h, _ in cols]]
    for rec in df.to_dict("records"):
        rows.append([_cell(rec.get(c), f) for c, _, f in cols])
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cohort_report(board: pd.DataFrame) -> str:
    parts = []
    for cohort, group in board.groupby("cohort", sort=False):
        parts.append(f"== {cohort} ==\n{table(group, COHORT_COLUMNS)}")
    return "\n\n".join(parts)


def overall_report(board: pd.DataFrame) -> str:
    return "== overall (per model across cohorts) ==\n" + table(board, OVERALL_COLUMNS)
