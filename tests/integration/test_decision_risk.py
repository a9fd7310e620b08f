"""Decision value and risk end to end (issue 31, item 4) on a simulated run, on SQLite and PostgreSQL: the JSON
boards carry decision_value (with its interval), sharpe, max_drawdown and pnl_at_bid; the market reference's
decision value is 0; marking at the bid never values a long book above the mid; the daily marks give Sharpe
and drawdown from the stored snapshots."""

import json
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.agents.baselines import demo_lineup
from arena.cli import main
from arena.domain.sizing import CohortRules
from arena.read.score import portfolios_frame
from arena.read.standings import JSON_FIELDS, boards_json, standings
from arena.scoring.headline import REF_HALF, REF_MARKET
from arena.store.tables import CohortRow
from arena.usecases.cohorts import LineupEntry
from arena.usecases.simulation import simulate
from arena.venues.simulated import SimulatedUniverse

START = datetime(2026, 1, 4, tzinfo=timezone.utc)
FIELDS = ("decision_value", "decision_value_lo", "decision_value_hi", "sharpe", "max_drawdown", "pnl_at_bid")


@pytest.fixture
def run(engine):
    universe = SimulatedUniverse.generate(5, START, weeks=3, markets_per_week=12)
    agents = demo_lineup(universe, 5)
    lineup = [LineupEntry(a.name, "scripted") for a in agents]
    simulate(engine, universe, {a.name: a for a in agents}, START, 1, CohortRules(decision_weeks=2), lineup,
             universe.end + timedelta(days=1), forecast_k=10)
    return engine, START + timedelta(days=13, hours=23, minutes=30)  # a cohort still open: positions held


def test_the_json_boards_carry_decision_value_and_risk(run):
    engine, t = run
    data = boards_json(standings(engine, t, n_boot=60))
    assert set(FIELDS) <= set(JSON_FIELDS)
    rows = {r["agent"]: r for r in data["cohorts"][0]["rows"]}
    for board in (list(rows.values()), data["overall"]):
        for r in board:
            assert set(FIELDS) <= set(r)
    assert rows[REF_MARKET]["decision_value"] == 0.0  # the price never bets against itself
    assert rows[REF_HALF]["decision_value"] is not None and rows[REF_HALF]["pnl_at_bid"] is None  # no book
    seats = [r for r in rows.values() if r["kind"] != "reference"]
    valued = [r for r in seats if r["decision_value"] is not None]
    assert len(valued) >= 3
    for r in valued:
        assert r["decision_value_lo"] <= r["decision_value"] <= r["decision_value_hi"]
    # two weeks of daily marks: every seat has a drawdown in [0, 1] and a Sharpe ratio (or a reason why not)
    for r in seats:
        assert 0.0 <= r["max_drawdown"] <= 1.0
        assert (r["sharpe"] is None) == (r["risk_note"] is not None)
    assert sum(r["sharpe"] is not None for r in seats) >= 3
    # the simulated venue records a bid below the mid: a held book is worth less at the bid, never more
    held = [r for r in seats if r["pnl_at_bid"] is not None and r["pnl_at_bid"] != r["pnl"]]
    assert held and all(r["pnl_at_bid"] < r["pnl"] for r in held)
    assert all(r["pnl_at_bid"] is None or r["pnl_at_bid"] <= r["pnl"] + 1e-9 for r in seats)
    overall = {r["model"]: r for r in data["overall"]}
    assert overall[REF_MARKET]["decision_value"] == 0.0


def test_a_seat_without_daily_marks_has_no_sharpe_and_says_why(run):
    engine, _ = run
    with Session(engine) as s:
        ids = list(s.scalars(select(CohortRow.id)))
        early = portfolios_frame(s, START + timedelta(hours=12), ids, point_in_time=True)
    assert early["sharpe"].isna().all() and early["max_drawdown"].isna().all()
    assert set(early["risk_note"]) == {"no daily mark yet"}


def test_the_cli_prints_and_exports_them(run, capsys, db_url):
    capsys.readouterr()
    assert main(["leaderboard", "--db", db_url, "--format", "json", "--bootstrap", "30",
                 "--as-of", "2026-01-17T23:30:00+00:00"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any(r["decision_value"] is not None for r in data["cohorts"][0]["rows"])
    assert main(["leaderboard", "--db", db_url, "--bootstrap", "30", "--as-of", "2026-01-17T23:30:00+00:00",
                 "--wide"]) == 0
    text = capsys.readouterr().out
    assert "DV [95% CI]" in text and "Sharpe" in text and "maxDD" in text and "P/L@bid" in text


def test_boards_rank_by_them_in_their_direction(run, capsys, db_url):
    capsys.readouterr()
    for key, higher in (("decision_value", True), ("max_drawdown", False)):
        assert main(["leaderboard", "--db", db_url, "--format", "json", "--bootstrap", "30", "--rank-by", key,
                     "--as-of", "2026-01-17T23:30:00+00:00"]) == 0
        data = json.loads(capsys.readouterr().out)
        rows = data["cohorts"][0]["rows"]
        values = [r[key] for r in rows if r[key] is not None]
        assert len(values) >= 3 and values == sorted(values, reverse=higher) and rows[0]["rank"] == 1
        assert all(r["tier"] is None for r in rows)  # no tier for these keys
