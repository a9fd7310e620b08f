"""The terminal boards: columns chosen by priority to fit a width, never a later column without an earlier one."""

import math
from types import SimpleNamespace

import pandas as pd

from arena.report import PRIORITY, render_boards, table


def board(n: int = 4) -> pd.DataFrame:
    rows = []
    for i in range(n):
        rows.append({"agent": f"agent-{i}", "kind": "llm", "rank": i + 1, "rank_label": str(i + 1), "tier": 1,
                     "provisional": i == 3, "forecast_brier": 0.1 + i / 100, "forecast_brier_lo": 0.05,
                     "forecast_brier_hi": 0.2, "n_forecasts": 40, "brier_minus_market": -0.01,
                     "n_asked": 40, "n_answered": 38 - i, "pnl": 1234.5 * (i - 1), "return_pct": 12.3,
                     "implied_brier": 0.2, "crowd_proxy": math.nan, "win_rate": 0.5, "same_as": None})
    return pd.DataFrame(rows)


def test_columns_come_in_priority_order_and_fit_the_width():
    df = board()
    for width in (40, 60, 80, 100, 140):
        text, hidden = table(df, "agent", width=width)
        lines = text.splitlines()
        assert max(len(ln) for ln in lines) <= width, width
        shown = lines[0].split()
        assert shown[:2] == ["rank", "agent"]
        cells = [c.strip() for c in lines[0].split("  ") if c.strip()]
        # in priority order, and never a column without every available column before it
        available = [c.header for c in PRIORITY if c.key == "@name" or c.available(list(df.columns))]
        assert cells == available[:len(cells)] and hidden == len(available) - len(cells)
    narrow, hidden_narrow = table(df, "agent", width=60)
    wide, hidden_wide = table(df, "agent", wide=True)
    assert hidden_narrow > 0 == hidden_wide and "win" in wide.splitlines()[0] and "win" not in narrow
    assert "38/40" in wide and "agent-3 *" in wide  # coverage answered/asked; provisional marked on the name
    assert "0.100 [0.050, 0.200]" in narrow  # the headline with its interval, in one cell
    ranked, _ = table(df, "agent", width=70, rank_by="pnl")
    head = [c.strip() for c in ranked.splitlines()[0].split("  ") if c.strip()]
    assert head[:5] == ["rank", "agent", "F-Brier [95% CI]", "tier", "P/L $"]  # the rank key after the tier


def test_a_row_equal_to_a_reference_says_so():
    df = board(2)
    df.loc[1, "same_as"] = "market (reference)"
    text, _ = table(df, "agent", wide=True)
    assert "agent-1 = market" in text and "(reference)" not in text


def _boards(df: pd.DataFrame) -> SimpleNamespace:
    return SimpleNamespace(cohorts=[SimpleNamespace(name="c1", status="open", rows=df)], overall=pd.DataFrame(),
                           rank_by="forecast_brier", track=None)


def test_the_report_shows_a_twin_once_and_printed_equal_scores_as_ties():
    df = board(4)
    ref = {**df.iloc[1].to_dict(), "agent": "market (reference)", "kind": "reference", "rank_label": "2=",
           "pnl": math.nan}
    df = pd.concat([df, pd.DataFrame([ref])], ignore_index=True)
    df.loc[1, ["same_as", "rank_label"]] = ["market (reference)", "2="]
    df.loc[2, "forecast_brier"] = 0.1104  # prints as 0.110, like agent-1's
    df.loc[1, "forecast_brier"] = 0.1101
    df.loc[3, "rank_label"] = "5"
    text = render_boards(_boards(df), overall=False, width=100).text
    rows = {ln.split()[1]: ln.split()[0] for ln in text.splitlines()[4:]}
    assert "market" not in rows and rows == {"agent-0": "1", "agent-1": "2=", "agent-2": "2=", "agent-3": "4"}
    assert "agent-1 = market" in text and text.count("0.110 [") == 2
