"""`arena leaderboard --from/--until/--category` through the CLI on a simulated store: the filtered boards hold
exactly the questions decided in the window on markets of the categories (counted from the stored forecast sets,
not by the code under test), the JSON names the filter, bad input is one line and exit 2, and a filtered board
leaves the unfiltered boards (and their caches) as they were."""

import json
from collections import Counter

import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.cli import main
from arena.scoring.headline import REF_HALF
from arena.store.tables import CohortRow, MemoRow, ForecastQuestionRow, MarketRow
from three_cohorts import LATER, simulate_three_cohorts


@pytest.fixture
def three(engine):  # type: ignore[no-untyped-def]
    simulate_three_cohorts(engine)
    return engine.url.render_as_string(hide_password=False), engine


def _asked(engine, day_from=None, day_until=None, categories=None) -> Counter:  # type: ignore[no-untyped-def]
    """cohort → questions of its stored forecast sets decided in [day_from, day_until] on markets of `categories`."""
    with Session(engine) as s:
        rows = s.connection().execute(
            select(CohortRow.name, ForecastQuestionRow.as_of, MarketRow.category)
            .join(CohortRow, CohortRow.id == ForecastQuestionRow.cohort_id)
            .join(MarketRow, MarketRow.id == ForecastQuestionRow.market_id)).all()
    out: Counter = Counter()
    for cohort, at, category in rows:
        day = at.date()
        if (day_from is None or day >= day_from) and (day_until is None or day <= day_until) and \
                (categories is None or category in categories):
            out[cohort] += 1
    return out


def _board(capsys, url, *extra):  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main(["leaderboard", "--db", url, "--format", "json", "--bootstrap", "20", "--as-of", LATER.isoformat(),
                 *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _half_asked(doc) -> dict:  # type: ignore[no-untyped-def]
    """cohort → the always-0.5 reference's asked questions (it answers every question of the board)."""
    return {c["name"]: next(r["n_asked"] for r in c["rows"] if r["agent"] == REF_HALF)
            for c in doc["cohorts"] if any(r["agent"] == REF_HALF for r in c["rows"])}


def test_window_and_category_select_the_right_questions(three, capsys):
    url, engine = three
    whole = _board(capsys, url)
    assert whole["filter"] is None
    assert _half_asked(whole) == dict(_asked(engine))
    with Session(engine) as s:
        days = sorted({t.date() for t in s.scalars(select(ForecastQuestionRow.as_of))})
    assert len(days) >= 3
    lo, hi = days[1], days[-2]
    with Session(engine) as s:
        stored = sorted(s.scalars(select(MemoRow.key).where(MemoRow.kind == "board")))
    assert stored  # the whole boards were kept
    windowed = _board(capsys, url, "--from", lo.isoformat(), "--until", hi.isoformat())
    with Session(engine) as s:
        assert sorted(s.scalars(select(MemoRow.key).where(MemoRow.kind == "board"))) == stored  # a filtered board is never stored
    assert windowed["filter"] == {"from": lo.isoformat(), "until": hi.isoformat(), "categories": []}
    expected = _asked(engine, lo, hi)
    assert 0 < sum(expected.values()) < sum(_asked(engine).values())
    assert _half_asked(windowed) == {c: n for c, n in expected.items() if n}
    for c in windowed["cohorts"]:  # money is not split by question: empty, never a whole cohort's
        assert all(r["pnl"] is None for r in c["rows"])

    both = _board(capsys, url, "--category", "sports", "--category", "politics", "--from", lo.isoformat())
    assert both["filter"]["categories"] == ["politics", "sports"]
    assert _half_asked(both) == {c: n for c, n in _asked(engine, lo, None, {"sports", "politics"}).items() if n}
    # a window with no question: every seat keeps its row, with nothing scored (null, never 0)
    empty = _board(capsys, url, "--from", "2099-01-01")
    assert [c["name"] for c in empty["cohorts"]] == [c["name"] for c in whole["cohorts"]]
    for c in empty["cohorts"]:
        assert {r["agent"] for r in c["rows"]} <= {r["agent"] for r in next(
            w for w in whole["cohorts"] if w["name"] == c["name"])["rows"]}
        assert all(r["n_asked"] == 0 and r["forecast_brier"] is None and r["pnl"] is None for r in c["rows"])
    # the unfiltered boards after the filtered ones are the same (a filter reaches no cache)
    assert _board(capsys, url) == whole


@pytest.mark.parametrize("args, words", [
    (["--from", "2026-13-01"], "--from '2026-13-01' is not a date"),
    (["--until", "soon"], "--until 'soon' is not a date"),
    (["--from", "2026-02-01", "--until", "2026-01-01"], "--from 2026-02-01 is after --until 2026-01-01"),
    (["--category", "astrology"], "unknown category 'astrology'"),
    (["--category", "sports", "--rank-by", "pnl"], "--rank-by pnl ranks by money"),
])
def test_bad_filters_are_one_line_and_exit_2(three, capsys, args, words):
    url, _ = three
    capsys.readouterr()
    assert main(["leaderboard", "--db", url, *args]) == 2
    out = capsys.readouterr()
    line = out.err.strip()
    assert "\n" not in line and line.startswith("arena: ") and " — " in line and words in line and out.out == ""
    if "category" in words:
        assert "politics" in line and "sports" in line  # the known categories are listed
