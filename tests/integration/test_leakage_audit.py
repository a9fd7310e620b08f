"""The leakage audit end to end: a planted question whose exclusive-group sibling had resolved YES before its round
is flagged, left out of the headline (counted in `n_leaked`), listed in the JSON's `leaks` and on the cohort page;
a clean set is scored exactly as before."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import pytest
from sqlmodel import Session

from arena.cli import main
from arena.domain.decision import Decision
from arena.domain.sizing import CohortRules
from arena.read.standings import boards_json, standings
from arena.store.engine import session_scope
from arena.store.frames import forecast_set_frame, question_leaks
from arena.usecases import decide
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.usecases.simulation import ReplayTimeVenue, VenueSync
from arena.venues.replay import ReplayVenue, parse_record

UTC = timezone.utc
R1, R2 = datetime(2025, 1, 2, 0, 5, tzinfo=UTC), datetime(2025, 1, 9, 0, 5, tzinfo=UTC)


def line(mid: str, resolution: int, last: date, p: float, group: str = "") -> dict:
    days = (last - date(2025, 1, 1)).days + 1
    history = [[(date(2025, 1, 1) + timedelta(days=i)).isoformat(), p] for i in range(days)]
    out = {"platform": "polymarket", "market_id": mid, "question": f"Will {mid} be the winner?",
           "resolution": resolution, "first_resolved_observation_date": (last + timedelta(days=1)).isoformat(),
           "market_close_datetime": "2025-01-25T00:00:00+00:00", "history": history}
    if group:
        out["group_id"] = group
    return out


class Stater:
    """States 0.2 on every asked question — but 0.9 on g0 in the second round (the planted leaked question)."""

    name = "stater"

    def decide(self, view):
        second = view.as_of >= R2
        return Decision(forecasts={m: (0.9 if second and m == "replay:g0" else 0.2) for m in view.forecast_set})


def run(engine, g1_last: date):
    """A cohort with two rounds over an exclusive group {g0, g1} (g1 wins) and a stand-alone market c; g1's last
    point is `g1_last`, so its YES resolution is recorded two days later."""
    records = [line("g1", 1, g1_last, 0.5, "g"), line("g0", 0, date(2025, 1, 20), 0.3, "g"),
               line("c", 1, date(2025, 1, 20), 0.6)]
    sync = VenueSync(ReplayTimeVenue(ReplayVenue([parse_record(r) for r in records])))
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, R1, CohortRules(), [LineupEntry("stater")], R1)
    t = datetime(2025, 1, 2, tzinfo=UTC)
    while t <= datetime(2025, 1, 23, tzinfo=UTC):
        sync(engine, t)
        for r in (R1, R2):
            if r.date() == t.date():
                (out,) = decide.run_round(engine, cohort, {"stater": Stater()}, f"{r:%Y-%m-%d}", r, concurrency=1)
                assert out.status == "hold"
        t += timedelta(days=1)
    return cohort


AT = datetime(2025, 1, 30, tzinfo=UTC)


def test_a_member_whose_sibling_resolved_yes_is_flagged_and_left_out_of_the_headline(engine):
    cohort = run(engine, date(2025, 1, 3))  # g1 resolves YES, recorded on 2025-01-05: before the second round
    with Session(engine) as s:
        leaks = question_leaks(s, [cohort.id], AT)
        kept = forecast_set_frame(s, [cohort.id], AT)
        every = forecast_set_frame(s, [cohort.id], AT, leaked=True)
    assert leaks[["round", "market_id", "reason", "other_market_id"]].values.tolist() == [
        ["2025-01-09", "replay:g0", "sibling_resolved_yes", "replay:g1"]]
    assert sorted(every["question"]) == sorted(["replay:g1@2025-01-02", "replay:g0@2025-01-02",
                                                "replay:c@2025-01-02", "replay:g0@2025-01-09",
                                                "replay:c@2025-01-09"])
    assert "replay:g0@2025-01-09" not in set(kept["question"]) and len(kept) == 4
    boards = standings(engine, AT, n_boot=50, cache=False)
    rows = boards.cohorts[0].rows.set_index("agent")
    # the headline without the leaked question: per market g1 0.64, g0 0.04 (first round only), c 0.64
    assert rows.loc["stater", "forecast_brier"] == pytest.approx((0.64 + 0.04 + 0.64) / 3)
    assert rows.loc["stater", "n_forecasts"] == 4 and rows.loc["stater", "n_leaked"] == 1
    assert rows.loc["market (reference)", "n_leaked"] == 1  # the references were scored on the same questions
    doc = boards_json(boards)
    (c,) = doc["cohorts"]
    assert c["leaks"] == [{"round": "2025-01-09", "market_id": "replay:g0", "reason": "sibling_resolved_yes",
                           "other_market_id": "replay:g1"}]
    assert next(r for r in c["rows"] if r["agent"] == "stater")["n_leaked"] == 1
    assert next(r for r in doc["overall"] if r["model"] == "stater")["n_leaked"] == 1
    # the frame and board caches agree with the direct read, stored and then taken from the store
    for _ in range(2):
        assert boards_json(standings(engine, AT, n_boot=50, cache=True)) == doc


def test_a_clean_set_is_untouched(engine):
    cohort = run(engine, date(2025, 1, 20))  # g1 resolves after both rounds: nothing given away
    with Session(engine) as s:
        assert question_leaks(s, [cohort.id], AT).empty
        kept = forecast_set_frame(s, [cohort.id], AT)
        every = forecast_set_frame(s, [cohort.id], AT, leaked=True)
    assert (every["leak_reason"] == "").all()
    assert every.drop(columns=["leak_reason", "leak_other"]).equals(kept)
    boards = standings(engine, AT, n_boot=50)
    rows = boards.cohorts[0].rows.set_index("agent")
    # every question scored: g1 0.64 twice, g0 mean(0.04, 0.81), c 0.64 twice
    assert rows.loc["stater", "forecast_brier"] == pytest.approx((0.64 + (0.04 + 0.81) / 2 + 0.64) / 3)
    assert rows.loc["stater", "n_forecasts"] == 6 and rows.loc["stater", "n_leaked"] == 0
    assert boards_json(boards)["cohorts"][0]["leaks"] == []


def test_the_cohort_page_lists_the_flags(engine, db_url, tmp_path):
    run(engine, date(2025, 1, 3))
    site = tmp_path / "site"
    assert main(["render", "--out", str(site), "--at", AT.isoformat(), "--db", db_url]) == 0
    (page,) = [p for p in (site / "cohorts").glob("*.html") if "statistics" not in p.name]
    html = page.read_text(encoding="utf-8")
    assert 'id="leaks-table"' in html and "Will g0 be the winner?" in html
    assert "another member of its exclusive group had resolved YES" in html and "Will g1 be the winner?" in html
    (api,) = (site / "api" / "cohorts").glob("*.json")
    assert json.loads(api.read_text(encoding="utf-8"))["leaks"][0]["market_id"] == "replay:g0"


def test_the_terminal_board_says_how_many_questions_were_left_out(engine, db_url, capsys):
    run(engine, date(2025, 1, 3))
    capsys.readouterr()
    assert main(["leaderboard", "--db", db_url, "--as-of", AT.isoformat(), "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert "1 leaked question left out (sibling_resolved_yes 1; listed in the JSON's leaks)" in " ".join(out.split())
