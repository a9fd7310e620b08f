"""Boards as a reader sees them (`arena.read.shown_board`, the site's headline table): a seat whose forecasts
equal a reference's on every question (`same_as`) is one row with it, rows whose rank key prints the same share a
rank, untrusted names stay escaped, and the coverage column appears when the board counts questions."""

from __future__ import annotations

import html
import math
import re

import pandas as pd

from arena.read.shown_board import (merge_twins, shown_board, shown_name, shown_rank_labels, shown_ranks,
                                    shown_values)
from arena.scoring.board import BOARD_COLUMNS
from arena.web.boards import headline
from arena.web.env import environment

NAN = math.nan


def _row(agent: str, kind: str, brier: float, rank_label: str, **extra: object) -> dict[str, object]:
    rec: dict[str, object] = {c: NAN for c in BOARD_COLUMNS}
    rec.update(agent=agent, kind=kind, forecast_brier=brier, forecast_brier_lo=brier - 0.01,
               forecast_brier_hi=brier + 0.01, rank_label=rank_label, rank=float(rank_label.rstrip("=") or "nan"),
               tier=1.0, provisional=False, n_forecasts=30.0, bss_vs_market_note="", implied_brier_band="n/a",
               pnl=12.5 if kind != "reference" else NAN, same_as=None)
    rec.update(extra)
    return rec


def board() -> pd.DataFrame:
    """A cohort board as the statistics will give it: market-follower's forecasts equal the market's on every
    question, oracle-a and oracle-b differ in the fourth decimal, and a hostile name."""
    return pd.DataFrame([
        _row("oracle-a", "baseline", 0.1801, "1"),
        _row("oracle-b", "baseline", 0.1804, "2"),
        _row("<b>x</b>", "llm", 0.2000, "3"),
        _row("market-follower", "baseline", 0.2400, "4=", same_as="market (reference)"),
        _row("market (reference)", "reference", 0.2400, "4="),
        _row("always-0.5 (reference)", "reference", 0.2500, "6"),
        _row("nothing-yet", "llm", NAN, ""),
    ]).drop(columns=["n_asked", "n_answered"])  # a board that does not count questions (the coverage test adds them)


def test_a_twin_is_one_row_and_printed_equal_scores_share_a_rank():
    shown = shown_board(board(), "forecast_brier")
    assert shown["agent"].tolist() == ["oracle-a", "oracle-b", "<b>x</b>", "market-follower",
                                       "always-0.5 (reference)", "nothing-yet"]
    assert shown["rank_label"].tolist() == ["1=", "1=", "3", "4", "5", None]
    assert shown_name("market-follower", "market (reference)") == "market-follower = market"
    assert shown_name("oracle-a", None) == "oracle-a" == shown_name("oracle-a", NAN)
    assert shown_name("always-0.5", "always-0.5 (reference)") == "always-0.5 = reference"
    # nothing to merge without the column, or when no seat names a reference; the input is never changed
    plain = board().drop(columns="same_as")
    assert merge_twins(plain, "agent") is plain
    assert len(board()) == 7


def test_ties_follow_the_printed_precision_and_the_key_direction():
    assert shown_values([0.12345, 0.1236, NAN, None], 3).tolist()[:2] == [0.123, 0.124]
    frame = pd.DataFrame({"agent": list("abcd"), "rank_label": ["1", "2", "3", "4"], "rank": [1, 2, 3, 4],
                          "bss_vs_market": [0.412, 0.409, 0.30, NAN]})
    # skill vs market is shown with 2 decimals and higher is better: 0.41 and 0.41 tie for first
    assert shown_ranks(frame, "bss_vs_market")["rank_label"].tolist() == ["1=", "1=", "3", None]
    assert shown_ranks(frame, "forecast_brier") is frame  # a board without the key is left as it is
    # a list ordered by a reported column (the "bets and money" boards): places as printed, unknown unplaced
    assert shown_rank_labels([0.1234, 0.1236, 0.2, NAN, NAN]) == ("1", "2", "3", "", "")
    assert shown_rank_labels([0.1231, 0.1234, 0.2, NAN]) == ("1=", "1=", "3", "")


def test_the_headline_table_shows_the_twin_once_with_the_tie_and_escapes_names():
    h = headline(board(), "forecast_brier", {"market-follower": "agents/4.html", "<b>x</b>": "agents/3.html"})
    macros = environment().get_template("_macros.html").module
    page = str(macros.headline_table(h, "headline", "../"))  # type: ignore[attr-defined]
    names = re.findall(r'<td class="name[^"]*" data-sort="([^"]*)"', page)
    assert [html.unescape(n) for n in names] == ["oracle-a", "oracle-b", "<b>x</b>", "market-follower",
                                                 "always-0.5 (reference)", "nothing-yet"]
    ranks = re.findall(r'data-kind="\w+">\s*<td class="num p1" data-sort="[^"]*">([^<]*)</td>', page)
    assert ranks == ["1=", "1=", "3", "4", "5", "—"]
    assert """<span class="twin" title="its forecasts equal market (reference)'s on every question: one row for """ \
           """both">= market</span>""" in page
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert ">Questions</th>" in page and ">Answered</th>" not in page  # no coverage columns on this board


def test_the_coverage_column_appears_when_the_board_counts_questions():
    frame = board().assign(n_asked=30.0, n_answered=[30, 28, 30, 30, 30, 30, NAN])
    h = headline(frame, "forecast_brier")
    assert h.coverage
    page = str(environment().get_template("_macros.html").module.headline_table(h, "headline", ""))  # type: ignore
    assert ">Answered</th>" in page and ">28/30</td>" in page


def test_model_pages_show_a_twin_once(sim_arena):
    """The overall board says market-follower's forecasts equal the market's (`same_as`, as the statistics set
    it): other models' meta-analyses list the pair once, as "market-follower = market"; market-follower's own page
    says so and leaves out its 0-everywhere comparison with the market; its page renders with the note."""
    from dataclasses import replace

    from arena.scoring.headline import REF_MARKET
    from arena.web.boards import load_standings
    from arena.web.env import page_path, render_page
    from arena.web.model_page import model_contexts

    engine, as_of = sim_arena.engine, sim_arena.as_of
    st = load_standings(engine, as_of, None, with_overall=True)
    assert st.boards is not None
    overall = st.boards.overall.copy()
    overall["same_as"] = [REF_MARKET if m == "market-follower" else None for m in overall["model"]]
    st = replace(st, boards=replace(st.boards, overall=overall))
    pages = model_contexts(engine, as_of, ["oracle-fair", "market-follower"], standings=st)
    other = [c.versus for c in pages["oracle-fair"].comparisons]
    assert "market-follower = market" in other and REF_MARKET not in other and "market-follower" not in other
    twin = pages["market-follower"]
    assert twin.overall is not None and twin.overall.shown_name == "market-follower = market"
    assert REF_MARKET not in [c.versus for c in twin.comparisons] and twin.comparisons
    text = render_page("model.html", twin, page_path("model", "market-follower"))
    assert 'id="twin"' in text and "“market-follower = market”" in text
    # without the column nothing is merged
    bare = replace(st, boards=replace(st.boards, overall=overall.drop(columns=["same_as"])))
    plain = model_contexts(engine, as_of, ["oracle-fair"], standings=bare)["oracle-fair"]
    assert REF_MARKET in [c.versus for c in plain.comparisons]
