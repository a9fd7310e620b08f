"""The contamination guard end to end (issue 30 item 1): a replay with two LLM seats (the local stand-in) whose
knowledge cutoffs differ. Planted markets: one resolved before the later cutoff, one whose price settled beyond
0.98 before it, one that settled and came back, one resolved exactly at the cutoff instant, two plain. The later
seat loses the first two to its cutoff: `arena replay run` says so before and after the run, and every board
(terminal, JSON, site) ranks each seat on its clean questions only, with its pre-cutoff line and model age beside.
A window in which a seat keeps no clean question is refused unless --allow-contaminated."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta

import pytest
from standin import forecast_ids, json_reply

from arena.cli import main

START, UNTIL = "2025-11-02", "2025-11-30"
# market → (resolution, first_resolved_observation_date, [(first day, last day, P(YES)), ...])
PLANTED = {
    "resolved": (1, "2025-11-10", [("2025-10-01", "2025-11-09", 0.5)]),
    "settled": (1, "2025-11-25", [("2025-10-01", "2025-11-11", 0.5), ("2025-11-12", "2025-11-24", 0.99)]),
    "unsettled": (0, "2025-11-27", [("2025-10-01", "2025-11-11", 0.5), ("2025-11-12", "2025-11-14", 0.99),
                                    ("2025-11-15", "2025-11-26", 0.3)]),
    "at-cutoff": (1, "2025-11-20", [("2025-10-01", "2025-11-19", 0.5)]),  # resolved_at = 11-21 00:00 = the cutoff
    "plain-no": (0, "2025-11-28", [("2025-10-01", "2025-11-27", 0.4)]),
    "plain-yes": (1, "2025-11-28", [("2025-10-01", "2025-11-27", 0.6)]),
}
# what each seat states: "late" remembers the two markets its training data covers, and is vaguer elsewhere
STATED = {
    "vendor/early": {"resolved": 0.5, "settled": 0.5, "unsettled": 0.2, "at-cutoff": 0.8, "plain-no": 0.2,
                     "plain-yes": 0.8},
    "vendor/late": {"resolved": 0.99, "settled": 0.99, "unsettled": 0.3, "at-cutoff": 0.7, "plain-no": 0.3,
                    "plain-yes": 0.7},
}


def _history(spans):  # type: ignore[no-untyped-def]
    out = []
    for first, last, p in spans:
        d = date.fromisoformat(first)
        while d <= date.fromisoformat(last):
            out.append([d.isoformat(), p])
            d += timedelta(days=1)
    return out


def _replay(path):  # type: ignore[no-untyped-def]
    lines = []
    for mid, (resolution, resolved, spans) in PLANTED.items():
        history = _history(spans)
        lines.append(json.dumps({"platform": "polymarket", "market_id": mid, "question": f"Will {mid} happen?",
                                 "market_close_datetime": "2025-12-15T00:00:00Z",
                                 "resolution": resolution, "first_resolved_observation_date": resolved,
                                 "history": history, "history_source": "R" * len(history)}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _respond(request):  # type: ignore[no-untyped-def]
    stated = STATED[request.model]
    return json_reply({"actions": [], "reasoning": "stand-in",
                       "forecasts": {mid: stated[mid.split(":", 1)[1]] for mid in forecast_ids(request)}})


def _config(path, standin, late_cutoff="2025-11-20"):  # type: ignore[no-untyped-def]
    seats = ""
    for name, cutoff, released in (("early", "2025-10-15", "2025-10-20"), ("late", late_cutoff, "2025-12-01")):
        seats += (f'\n[[agents]]\nname = "{name}"\nmodel = "vendor/{name}"\nbase_url = "{standin.base_url}"\n'
                  f'api_key_env = "ARENA_GUARD_KEY"\nknowledge_cutoff = {cutoff}\nreleased = {released}\n')
    # one cohort (started on the first day), deciding in two weekly rounds
    path.write_text("baselines = false\n\n[cohort]\nforecast_set_size = 6\ndecision_weeks = 2\nprompt_markets = 10\n"
                    '\n[schedule]\ncohort_start = "0 0 2 11 *"\n' + seats, encoding="utf-8")
    return path


@pytest.fixture
def run(standin, tmp_path, db_url, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ARENA_GUARD_KEY", "guard-secret")
    standin.default = _respond
    replay = _replay(tmp_path / "planted.jsonl")
    cfg = _config(tmp_path / "arena.toml", standin)
    assert main(["replay", "run", str(replay), "--from", START, "--until", UNTIL, "--config", str(cfg),
                 "--db", db_url]) == 0, capsys.readouterr().err
    return db_url, capsys.readouterr().out


def _board(db_url, capsys, fmt="json"):  # type: ignore[no-untyped-def]
    assert main(["leaderboard", "--db", db_url, "--as-of", UNTIL + "T23:00", "--format", fmt]) == 0
    out = capsys.readouterr().out
    return json.loads(out) if fmt == "json" else out


def test_two_seats_with_different_cutoffs_are_ranked_on_their_clean_questions(run, capsys, tmp_path):
    db_url, out = run
    # before the run, from the file: late loses "resolved" and "settled" of the six; early none
    assert "early (knowledge_cutoff 2025-10-15) loses 0 of 6 recorded markets open in the window" in out
    assert "late (knowledge_cutoff 2025-11-20) loses 2 of 6 recorded markets open in the window to its cutoff, " \
           "4 clean" in out
    # after it, from the store: both rounds asked the six markets (12 questions a seat)
    assert "early: 12 clean question(s) in its headline, 0 pre-cutoff" in out
    assert "late: 8 clean question(s) in its headline, 4 pre-cutoff" in out

    board = _board(db_url, capsys)
    (cohort,) = board["cohorts"]
    rows = {r["agent"]: r for r in cohort["rows"]}
    early, late = rows["early"], rows["late"]
    # early on all six markets: two at 0.25, four at 0.04; late on its four clean ones only, 0.09 each
    assert early["forecast_brier"] == pytest.approx((2 * 0.25 + 4 * 0.04) / 6)
    assert late["forecast_brier"] == pytest.approx(0.09)
    assert (early["n_markets"], late["n_markets"]) == (6, 4)
    assert (early["n_asked"], late["n_asked"]) == (12, 8)
    assert (early["n_contaminated"], late["n_contaminated"]) == (0, 4)
    # the pre-cutoff line: late's remembered answers, (0.99 − 1)² on both markets
    assert late["pre_cutoff_brier"] == pytest.approx(0.0001)
    assert early["pre_cutoff_brier"] is None
    assert late["rank"] < early["rank"]  # 0.09 < 0.11 on clean questions (on all of them it would be 0.06)
    # the age at the first decision (2025-11-02 00:05): 13 days after early's release, before late's
    assert (early["model_age_days"], late["model_age_days"]) == (13, -29)
    market = rows["market (reference)"]
    assert market["n_contaminated"] is None and market["model_age_days"] is None
    overall = {r["model"]: r for r in board["overall"]}
    assert overall["late"]["n_contaminated"] == 4 and overall["late"]["forecast_brier"] == pytest.approx(0.09)

    text = " ".join(_board(db_url, capsys, "text").split())  # (the line wraps at the terminal's width)
    assert "pre-cutoff" in text and "late 4 question(s), F-Brier 0.000" in text and "early 0 question(s)" in text
    assert "model age at first decision: " in text and "late -29 d" in text

    # --include-contaminated: late scored on all six markets (0.06), its four questions still counted
    assert main(["leaderboard", "--db", db_url, "--as-of", UNTIL + "T23:00", "--format", "json",
                 "--include-contaminated"]) == 0
    both = {r["agent"]: r for r in json.loads(capsys.readouterr().out)["cohorts"][0]["rows"]}
    assert both["late"]["forecast_brier"] == pytest.approx((2 * 0.0001 + 4 * 0.09) / 6)
    assert both["late"]["n_contaminated"] == 4 and both["late"]["n_asked"] == 12

    # arena compare pairs them on late's clean markets: late − early = 0.09 − 0.04 on each of four
    assert main(["compare", "early", "late", "--db", db_url, "--as-of", UNTIL + "T23:00", "--format", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    brier = compared["differences"]["forecast_brier"]
    assert (brier["markets"], brier["estimate"]) == (4, pytest.approx(0.05))

    # a board limited to the second round: the guard splits what the filter kept (two of late's six questions)
    assert main(["leaderboard", "--db", db_url, "--as-of", UNTIL + "T23:00", "--format", "json",
                 "--from", "2025-11-09", "--until", "2025-11-09"]) == 0
    week2 = {r["agent"]: r for r in json.loads(capsys.readouterr().out)["cohorts"][0]["rows"]}
    assert (week2["late"]["n_asked"], week2["late"]["n_contaminated"]) == (4, 2)
    assert week2["late"]["forecast_brier"] == pytest.approx(0.09)

    site = tmp_path / "site"
    assert main(["render", "--out", str(site), "--db", db_url, "--at", UNTIL + "T23:00"]) == 0
    capsys.readouterr()
    page = " ".join((site / "cohorts" / f"{cohort['name']}.html").read_text(encoding="utf-8").split())
    assert "Pre-cutoff" in page and "late: 4 questions, Brier 0.000, model age -29 days" in page
    assert "early: 0 questions, Brier —, model age 13 days" in page
    model = " ".join((site / "models" / "late.html").read_text(encoding="utf-8").split())
    assert 'id="model-pre-cutoff"' in model and "questions, Brier 0.000 · model age -29 days" in model
    assert "4 pre-cutoff</span>" in model  # its row of the cohort
    # the statistics page's pairwise table too: late − early = 0.09 − 0.11 (with the pre-cutoff questions, 0.06 − 0.11)
    stats = (site / "cohorts" / f"{cohort['name']}-statistics.html").read_text(encoding="utf-8")
    assert "late · -0.020" in " ".join(re.sub(r"<[^>]+>", " ", stats).split())
    # the model page's comparison pairs the two on late's clean markets only: 0.09 − 0.04 on each of the four
    api = json.loads((site / "api" / "models" / "late.json").read_text(encoding="utf-8"))
    versus = next(c for c in api["comparisons"] if c["versus"] == "early")
    assert versus["estimate"] == pytest.approx(0.05)


def test_a_window_leaving_a_seat_no_clean_question_is_refused_unless_allowed(standin, tmp_path, db_url,
                                                                              monkeypatch, capsys):
    from sqlalchemy import inspect

    from arena.store.engine import make_engine

    monkeypatch.setenv("ARENA_GUARD_KEY", "guard-secret")
    standin.default = _respond
    replay = _replay(tmp_path / "planted.jsonl")
    cfg = _config(tmp_path / "arena.toml", standin, late_cutoff="2025-11-29")  # after every resolution
    argv = ["replay", "run", str(replay), "--from", START, "--until", UNTIL, "--config", str(cfg), "--db", db_url]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("arena: every one of the 6 recorded markets open from 2025-11-02")
    assert "late's knowledge_cutoff 2025-11-29" in err[0] and " — " in err[0] and "--allow-contaminated" in err[0]
    eng = make_engine(db_url)
    try:
        assert "cohorts" not in inspect(eng).get_table_names()  # nothing written
    finally:
        eng.dispose()
    assert not standin.requests
    assert main([*argv, "--allow-contaminated"]) == 0
    out = capsys.readouterr().out
    assert "late: 0 clean question(s) in its headline, 12 pre-cutoff" in out
    late = {r["agent"]: r for r in _board(db_url, capsys)["cohorts"][0]["rows"]}["late"]
    assert late["n_contaminated"] == 12 and late["forecast_brier"] is None and late["pre_cutoff_brier"] is not None


def test_the_cached_boards_equal_the_recomputed_ones_with_and_without_the_guard(run):
    """The frame and board caches name a cohort's clean rows by its frames' key plus the rows the guard took out:
    a board from the cache is never one of the unsplit rows, and the unsplit board is never served for the split."""
    from datetime import datetime, timezone

    from arena.read.standings import boards_json, standings
    from arena.store.engine import make_engine

    db_url, _ = run
    eng = make_engine(db_url)
    at = datetime(2025, 11, 30, 23, tzinfo=timezone.utc)
    try:
        fresh = {inc: boards_json(standings(eng, at, cache=False, n_boot=50, include_contaminated=inc))
                 for inc in (False, True)}
        for inc in (True, False, True, False):  # alternate, so each reading follows the other's cache entries
            assert boards_json(standings(eng, at, n_boot=50, include_contaminated=inc)) == fresh[inc]
    finally:
        eng.dispose()
    late = {inc: next(r for r in fresh[inc]["cohorts"][0]["rows"] if r["agent"] == "late") for inc in (False, True)}
    assert late[False]["forecast_brier"] != late[True]["forecast_brier"]
    over = {inc: next(r for r in fresh[inc]["overall"] if r["model"] == "late") for inc in (False, True)}
    assert over[False]["forecast_brier"] == pytest.approx(0.09) != over[True]["forecast_brier"]
