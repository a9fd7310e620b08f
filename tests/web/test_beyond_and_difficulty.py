"""Issue 31 items 1 and 7 through the paths users take, on small simulated arenas (SQLite and PostgreSQL):
`arena leaderboard --format json` carries beyond_market, its interval, its note and price_copy on every row; the
model and agent pages show them; `arena export` writes question_difficulty.csv (formula cells neutralised) and
the market page shows the difficulty of each resolved forecast-set question it was."""

import json
from datetime import datetime

import pandas as pd
import pytest

from markupsafe import escape
from sqlalchemy import select
from sqlmodel import Session

from arena.cli import main
from arena.read.question_difficulty import question_difficulties
from arena.scoring.beyond_market import NOTE_COPY
from arena.scoring.headline import REF_MARKET
from arena.scoring.question_difficulty import COLUMNS
from arena.store.tables import AgentRow
from arena.web.env import page_path
from arena.web.one_page import render_path

FIELDS = ("beyond_market", "beyond_market_lo", "beyond_market_hi", "beyond_market_note", "price_copy")


# one cohort of the demo with enough resolved markets (PROVISIONAL_MIN_RESOLVED) for the regression
DEMO = ["demo", "--seed", "3", "--cohorts", "1", "--decision-weeks", "3", "--markets-per-week", "20",
        "--forecast-k", "15"]


def test_leaderboard_json_and_model_page_carry_information_beyond_the_market(db_url, capsys):
    from arena.store.engine import make_engine

    assert main([*DEMO, "--db", db_url]) == 0
    capsys.readouterr()
    # the terminal board: the coefficient with its interval and the copy index, beside skill vs the market
    assert main(["leaderboard", "--wide", "--db", db_url]) == 0
    header = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("rank "))
    assert header.index("BSSmkt") < header.index("beyond [95% CI]") < header.index("copy")
    assert main(["leaderboard", "--format", "json", "--db", db_url]) == 0  # the draws the site uses
    doc = json.loads(capsys.readouterr().out)
    rows = [r for c in doc["cohorts"] for r in c["rows"]]
    assert rows and doc["overall"]
    for r in rows + doc["overall"]:
        assert set(FIELDS) <= set(r)
        # a number and its interval, or null with the reason (never a number without one of the two)
        assert (r["beyond_market"] is None) == (r["beyond_market_note"] is not None) or r["beyond_market_lo"] is None
        if r["beyond_market_lo"] is not None:
            assert r["beyond_market_lo"] <= r["beyond_market"] <= r["beyond_market_hi"]
        assert r["price_copy"] is None or -1.0 <= r["price_copy"] <= 1.0
    market = [r for r in rows if r["agent"] == REF_MARKET]
    assert market and all(r["beyond_market"] is None and r["beyond_market_note"] == NOTE_COPY
                          and r["price_copy"] == pytest.approx(1.0) for r in market)
    assert any(r["beyond_market"] is not None for r in rows), "some seat of the demo is fitted"
    # the model page shows its overall row's coefficient (or the reason) and the price-copy index
    row = next(r for r in doc["overall"] if r["beyond_market_lo"] is not None)
    at = datetime.fromisoformat(doc["as_of"])
    engine = make_engine(db_url)
    try:
        _, html = render_path(engine, page_path("model", row["model"]), at)
        card = html[html.index('id="model-beyond-market"'):]
        card = card[:card.index("</div>")]
        assert f"{row['beyond_market']:+.2f}" in card and f"[{row['beyond_market_lo']:+.2f}, " in card
        assert f"price copy {row['price_copy']:.2f}" in card
        # and each seat's agent page its cohort row's, or the reason it has none
        with Session(engine) as s:
            seats = s.execute(select(AgentRow.id, AgentRow.name)).all()
        cohort_rows = {r["agent"]: r for r in doc["cohorts"][0]["rows"]}
        for aid, name in seats:
            _, html = render_path(engine, page_path("agent", aid), at)
            card = html[html.index('id="agent-beyond-market"'):]
            card = card[:card.index("</div>")]
            r = cohort_rows[name]
            if r["beyond_market"] is not None:
                assert f"{r['beyond_market']:+.2f}" in card
            else:
                assert escape(r["beyond_market_note"]) in card
    finally:
        engine.dispose()


def test_export_and_market_page_publish_question_difficulty(sim_arena, db_url, tmp_path, capsys, monkeypatch):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    fitted = question_difficulties(engine, as_of)
    assert len(fitted) and fitted["outcome_yes"].notna().all()
    out = tmp_path / "csv"
    assert main(["export", "--out", str(out), "--as-of", as_of.isoformat(), "--db", db_url]) == 0
    assert "question_difficulty.csv" in capsys.readouterr().out
    csv = pd.read_csv(out / "question_difficulty.csv", dtype={"cohort": str, "market_id": str, "round": str})
    assert list(csv.columns) == list(COLUMNS) and len(csv) == len(fitted)
    assert (csv["n_forecasters"] >= 2).all() and csv["cohort"].tolist() == fitted["cohort"].tolist()
    assert csv["difficulty"].to_numpy() == pytest.approx(fitted["difficulty"].to_numpy(), abs=1e-12)
    # the market page lists the market's rows, with the same numbers as shown
    mid = str(fitted["market_id"].iloc[0])
    _, html = render_path(engine, page_path("market", mid), as_of)
    table = html[html.index('id="difficulty-table"'):html.index("</table>", html.index('id="difficulty-table"'))]
    mine = fitted[fitted["market_id"] == mid]
    assert table.count("<tr>") == len(mine) + 1  # the header row and one per (cohort, round)
    for r in mine.itertuples():
        assert f"{r.difficulty:+.3f}" in table and f"{r.irt_difficulty:+.2f}" in table and str(r.round) in table
    # a market never in a resolved forecast set says so
    other = sim_arena.xss_market_id
    if other not in set(fitted["market_id"]):
        _, html = render_path(engine, page_path("market", other), as_of)
        assert "Not a resolved forecast-set question of any cohort yet." in html

    # a cohort name a spreadsheet would run is written as text
    from arena.read import question_difficulty as qd

    evil = fitted.assign(cohort="=HYPERLINK(\"http://x\")")
    monkeypatch.setattr(qd, "question_difficulties", lambda *a, **k: evil)
    assert main(["export", "--out", str(tmp_path / "evil"), "--as-of", as_of.isoformat(), "--db", db_url]) == 0
    cells = pd.read_csv(tmp_path / "evil" / "question_difficulty.csv", dtype=str)["cohort"]
    assert set(cells) == {"'=HYPERLINK(\"http://x\")"}


def test_methodology_defines_both_with_worked_examples(engine):
    from arena.web.instrument_examples import beyond_market_example, question_difficulty_example

    _, html = render_path(engine, "methodology.html", datetime(2026, 3, 1))
    beyond = html[html.index('id="beyond-market"'):html.index('id="question-difficulty"')]
    ex = beyond_market_example()
    rows = dict(ex.rows)
    assert ex.title in beyond and rows["informed: beyond_market [95 %]"] in beyond
    # the planted informed seat's interval excludes 0; the copier gets no number; the noisy seat's holds 0
    lo = float(rows["informed: beyond_market [95 %]"].split("[")[1].split(",")[0])
    assert lo > 0 and rows["copier: beyond_market"].startswith("—") and rows["copier: price_copy"] == "1.00"
    noise_lo, noise_hi = (float(x) for x in rows["noise: beyond_market [95 %]"].split("[")[1].rstrip("]").split(","))
    assert noise_lo < 0 < noise_hi
    hard = html[html.index('id="question-difficulty"'):]
    qd = dict(question_difficulty_example().rows)
    # hand-computed: mean Briers 0.110625, 0.215625, 0.2375 → minus their mean 0.187917
    assert qd["difficulty A, B, C (mean Brier − mean over questions)"] == "-0.0773, +0.0277, +0.0496"
    assert "-0.0773, +0.0277, +0.0496" in hard and "question_difficulty.csv" in hard
    assert 'href="#beyond-market"' in html  # the column list points at the definition
