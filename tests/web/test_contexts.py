"""Page contexts against the database: P/L is the fold of the fills plus the positions marked at the latest
price (recomputed here through the domain ledger, not the services the contexts use), metrics are the scoring
library's, counts are the stored rows; and the formatting filters are exact."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest
from sqlalchemy import func, select
from sqlmodel import Session

from arena.domain.sizing import SIZING_VERSION
from arena.domain.valuation import value_position
from arena.money import Money
from arena.read.score import SCORING_VERSION, cohort_leaderboards, overall_leaderboard
from arena.store import repo
from arena.store.tables import AgentRow, CohortRow, DecisionRow, FillRow, PortfolioSnapshotRow
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.web.agent_page import agent_contexts
from arena.web.boards import load_standings
from arena.web.charts import CHART_MAX_POINTS
from arena.web.cohort_page import cohort_contexts
from arena.web.index_page import index_context
from arena.web.market_page import market_contexts
from arena.web.methodology_page import methodology_context
from arena.web.operations_page import operations_context
from arena.web.env import (
    date,
    dt,
    fraction_percent,
    money,
    number,
    page_path,
    percent,
    price,
    probability,
    shares,
    signed_money,
    slug,
)
from arena.web.paths import unslug


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# --- formatting ------------------------------------------------------------------------------------------------

def test_money_is_exact_and_rounds_half_even_to_the_cent():
    assert money(1_234_560_000) == "$1,234.56"
    assert money(0) == "$0.00"
    assert money(-1_234_560_000) == "-$1,234.56"
    assert money(10_000_000_000_000) == "$10,000,000.00"
    assert money(1_234_565_000) == "$1,234.56"  # half a cent: to the even cent
    assert money(1_234_575_000) == "$1,234.58"
    assert money(1_234_565_001) == "$1,234.57"
    assert money(-4_999) == "$0.00"  # rounds to zero: no "-$0.00"
    assert money(None) == "—"
    assert signed_money(10_000) == "+$0.01"
    assert signed_money(-10_000) == "-$0.01"
    assert signed_money(4_000) == "$0.00"
    assert money(2**62) == "$4,611,686,018,427.39"  # big integers stay exact (no float on the way)
    assert money(1_234, places=4) == "$0.0012" and money(1_250, places=4) == "$0.0012"  # half-even
    assert money(1_350, places=4) == "$0.0014" and money(-1_234_567, places=6) == "-$1.234567"
    with pytest.raises(TypeError):
        money(1.5)


def test_number_filters_show_a_dash_for_unknown_never_zero():
    nan = float("nan")
    assert percent(12.345) == "+12.3%" and percent(-5.0) == "-5.0%" and percent(nan) == "—"
    assert fraction_percent(0.5555) == "56%" and fraction_percent(nan) == "—"
    assert probability(0.12345) == "0.123" and probability(None) == "—"
    assert number(0.4, 2, True) == "+0.40" and number(nan) == "—"
    assert price(772_000) == "0.772" and price(500_000) == "0.50" and price(1_000_000) == "1.00"
    assert price(123_456) == "0.123456" and price(0) == "0.00" and price(None) == "—"
    assert shares(1_250_000_000) == "1,250.00" and shares(-1_832_620_000) == "-1,832.62"
    assert dt(datetime(2026, 1, 4, 0, 5)) == "2026-01-04 00:05 UTC"  # naive values are UTC already
    assert date(datetime(2026, 1, 4, 23, 0, tzinfo=timezone.utc)) == "2026-01-04"


def test_slugs_are_file_safe_injective_and_reversible():
    ids = ["sim:1", "sim_3a1", "polymarket:0xAB/cd", "manifold:é€ x", "a.b", "..", "cohort-2026-01-04", ""]
    slugs = [slug(i) for i in ids]
    assert len(set(slugs)) == len(ids)
    assert slug("sim:1") == "sim_3a1"
    for i, s in zip(ids, slugs):
        assert all(c.isalnum() or c in "-_" for c in s)
        if i:
            assert unslug(s) == i
    long_ids = ["x:" + "é" * 200, "x:" + "é" * 199 + "e"]
    assert len({slug(i) for i in long_ids}) == 2 and all(len(slug(i)) < 200 for i in long_ids)
    assert unslug("nope_zz") is None and unslug("a/b") is None
    assert page_path("market", "sim:1") == "markets/sim_3a1.html"
    with pytest.raises(ValueError):
        page_path("static", "../secret")


# --- contexts against the database ------------------------------------------------------------------------------

def _fold_pnl(s: Session, agent: AgentRow, cohort: CohortRow, as_of: datetime) -> tuple[int, int, int]:
    """(cash, positions value, P/L) in micro-USD: the agent's ledger folded from its fills, positions valued at
    the latest quote fetched by `as_of` (at cost when there is none)."""
    ledger = repo.ledger_for(s, agent, cohort)
    quotes = repo.latest_quotes(s, as_of, {p.market_id for p in ledger.open_positions()})
    value = 0
    for p in ledger.open_positions():
        q = quotes.get(p.market_id)
        pv = value_position(p, q.price(p.outcome) if q is not None else None)
        value += pv.value.micros
    total = ledger.cash + Money(value)
    return ledger.cash.micros, value, (total - Money(cohort.starting_cash_micros)).micros


def test_contexts_match_the_database(sim_arena):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    cohort_pages = cohort_contexts(engine, as_of)
    agent_pages = agent_contexts(engine, as_of)
    board = cohort_leaderboards(engine, as_of).set_index(["cohort", "agent"])
    with Session(engine) as s:
        cohorts = {c.id: c for c in s.scalars(select(CohortRow))}
        agents = list(s.scalars(select(AgentRow)))
        assert set(cohort_pages) == {c.name for c in cohorts.values()}
        assert set(agent_pages) == {a.id for a in agents}
        open_seen = 0
        for a in agents:
            cohort = cohorts[a.cohort_id]
            row = next(r for r in cohort_pages[cohort.name].rows if r.agent_id == a.id)
            cash, value, pnl = _fold_pnl(s, a, cohort, as_of)
            assert (row.cash_micros, row.positions_value_micros, row.pnl_micros) == (cash, value, pnl), a.name
            assert row.total_value_micros == cohort.starting_cash_micros + pnl
            open_seen += row.open_positions
            # every other metric is the scoring library's, unchanged
            lib = board.loc[(cohort.name, a.name)]
            for col in ("brier", "brier_kelly", "brier_stated", "bss_vs_0_25", "bss_vs_market", "crowd_proxy",
                        "win_rate", "return_pct"):
                assert _same(getattr(row, col), float(lib[col])), (a.name, col)
            assert (row.n_bets, row.n_resolved) == (int(lib["n_bets"]), int(lib["n_resolved"]))
            assert (row.brier_band, row.return_band) == (lib["brier_band"], lib["return_band"])
            assert math.isclose(row.pnl_micros / 1e6, float(lib["pnl"]), abs_tol=1e-6)
            assert row.provisional == (row.n_resolved < PROVISIONAL_MIN_RESOLVED)
            # the agent page shows the same row, every fill, every decision and every snapshot
            page = agent_pages[a.id]
            assert page.score == row
            n_fills = s.scalar(select(func.count()).select_from(FillRow).where(FillRow.agent_id == a.id))
            assert len(page.fills) == n_fills
            n_buys = s.scalar(select(func.count()).select_from(FillRow).where(
                FillRow.agent_id == a.id, FillRow.kind == "buy"))
            assert row.n_bets == n_buys
            n_dec = s.scalar(select(func.count()).select_from(DecisionRow).where(DecisionRow.agent_id == a.id))
            assert len(page.decisions) == n_dec
            assert len(page.open_positions) == row.open_positions
            assert sum(p.value_micros for p in page.open_positions) == value
            ledger = repo.ledger_for(s, a, cohort)
            realized = sum(c.realized_micros for c in page.closed_positions)
            assert realized == sum(p.realized.micros for p in ledger.positions.values() if not p.is_open)
            n_snap = s.scalar(select(func.count()).select_from(PortfolioSnapshotRow).where(
                PortfolioSnapshotRow.agent_id == a.id, PortfolioSnapshotRow.as_of <= as_of))
            assert n_snap > 0 and not page.equity.empty
            assert len(page.equity.series[0].points.split()) == min(n_snap, CHART_MAX_POINTS)
        assert open_seen > 0, "the arena is stopped mid-way: some positions are still open"
        # ranks follow the scoring library's order (Brier, best first)
        for name, page in cohort_pages.items():
            assert [r.agent for r in page.rows] == list(board.loc[name].index)
            assert [r.rank for r in page.rows] == list(range(1, len(page.rows) + 1))


def test_index_totals_and_the_other_pages(sim_arena):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    index = index_context(engine, as_of)
    overall = overall_leaderboard(engine, as_of)
    assert [r.model for r in index.overall] == list(overall["agent"])
    rows = load_standings(engine, as_of).rows.values()
    for r, lib in zip(index.overall, overall.to_dict("records")):
        assert r.total_pnl_micros == sum(a.pnl_micros for a in rows if a.agent == r.model)
        assert math.isclose(r.total_pnl_micros / 1e6, lib["total_pnl"], abs_tol=1e-5)
        assert _same(r.brier, float(lib["brier"]))
        assert len(r.agents) == r.cohorts == 2

    market = market_contexts(engine, as_of, [sim_arena.xss_market_id])[sim_arena.xss_market_id]
    assert market.market.question == sim_arena.xss_question  # stored as given; escaping is the template's job
    assert market.market.url == ""  # a javascript: address is never offered as a link
    with Session(engine) as s:
        n_trades = s.scalar(select(func.count()).select_from(FillRow).where(
            FillRow.market_id == sim_arena.xss_market_id))
    assert len(market.trades) == n_trades
    assert len(market.chart.markers) == sum(1 for t in market.trades if t.kind in ("buy", "sell"))
    assert not market.chart.empty

    agent = agent_contexts(engine, as_of, [sim_arena.xss_agent_id])[sim_arena.xss_agent_id]
    decision = next(d for d in agent.decisions if d.id == sim_arena.xss_decision_id)
    assert decision.reasoning == sim_arena.xss_reasoning
    assert [c.attempt for c in decision.calls] == [1, 2]
    assert decision.calls[0].raw_response == sim_arena.xss_raw and decision.calls[0].parsed == ""
    assert '"note": "<ok>"' in decision.calls[1].parsed
    assert [r.reason for r in decision.rejections] == ["bad_forecast"]
    assert all(0.0 <= a.implied_confidence <= 1.0 for a in decision.actions if a.type == "BET")

    method = methodology_context(engine)
    versions = {v.name: v.value for v in method.versions}
    assert versions["sizing"] == SIZING_VERSION and versions["scoring"] == SCORING_VERSION
    assert {"brier", "bss_vs_market", "crowd_proxy", "pnl"} <= {m.name for m in method.metrics}
    assert ("prompt (model calls)", "p-test", 2) in method.seen

    ops = operations_context(engine, as_of)
    assert [r.venue for r in ops.sync_runs] == ["manifold"] and ops.sync_errors[0].message == "not a number: <NaN>"
    assert {(j.job, j.runs, j.ok, j.failed) for j in ops.jobs} == {("mark", 2, 1, 1)}
    assert dict(ops.tables)["fills"] > 0


def test_contexts_of_an_empty_database(engine):
    as_of = datetime(2026, 1, 4, tzinfo=timezone.utc)
    index = index_context(engine, as_of)
    assert index.overall == () and index.cohorts == ()
    assert cohort_contexts(engine, as_of) == {} and agent_contexts(engine, as_of) == {}
    assert market_contexts(engine, as_of) == {}
    assert agent_contexts(engine, as_of, [42]) == {}
