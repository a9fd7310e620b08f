"""The standings service end to end: point in time (run to T, save, run on, compare), the demo's verdict (the
headline ranks the metric gamer by its forecasts while seed 001's column is fooled; always-0.5 ≈ 0.25; every
interval holds its point) and `arena leaderboard` in text, CSV and JSON."""

import csv
import io
import json
import math
from datetime import datetime, timedelta, timezone

import pytest

from arena.agents.baselines import demo_lineup
from arena.cli import main
from arena.domain.sizing import CohortRules
from arena.scoring.board import RANK_CHOICES
from arena.scoring.headline import REF_HALF, REF_MARKET
from arena.usecases.cohorts import LineupEntry
from arena.usecases.simulation import simulate
from arena.read.standings import JSON_FIELDS, boards_json, standings
from arena.store.engine import make_engine
from arena.venues.simulated import SimulatedUniverse

START = datetime(2026, 1, 4, tzinfo=timezone.utc)
LATER = datetime(2027, 1, 1, tzinfo=timezone.utc)
REQUIRED = ("agent", "kind", "rank", "tier", "provisional", "forecast_brier", "forecast_brier_lo", "forecast_brier_hi",
            "n_forecasts", "implied_brier", "kelly_brier", "stated_brier", "brier_minus_market", "bss_vs_0_25",
            "bss_vs_market", "pnl", "return_pct", "win_rate", "crowd_proxy", "coherence_gap", "contradicting_bets")


def _without_as_of(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != "as_of"}


def test_boards_as_of_t_equal_the_boards_of_a_run_stopped_at_t(engine):
    universe = SimulatedUniverse.generate(3, START, weeks=4, markets_per_week=12)
    agents = demo_lineup(universe, 3)
    lineup = [LineupEntry(a.name, "scripted") for a in agents]
    t_stop = START + timedelta(days=12, hours=23, minutes=30)  # after day 12's mark; cohort 2 open, bets resolving
    saved = {}

    def on_day(now: datetime) -> None:
        if now == START + timedelta(days=12):
            saved["boards"] = boards_json(standings(engine, t_stop, n_boot=60))

    simulate(engine, universe, {a.name: a for a in agents}, START, 2, CohortRules(decision_weeks=2), lineup,
             universe.end + timedelta(days=1), forecast_k=10, on_day=on_day)
    then = saved["boards"]
    later = boards_json(standings(engine, t_stop, n_boot=60))
    assert _without_as_of(later) == _without_as_of(then)
    # … and the run did move on: the boards of today differ, and the second cohort was open at T
    now = boards_json(standings(engine, LATER, n_boot=60))
    assert _without_as_of(now) != _without_as_of(then)
    assert [c["status"] for c in then["cohorts"]] == ["open", "open"]
    assert [c["status"] for c in now["cohorts"]] == ["completed", "completed"]
    # before the first cohort existed there is nothing to show
    assert boards_json(standings(engine, START - timedelta(days=1)))["cohorts"] == []


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo7.sqlite'}"
    assert main(["demo", "--seed", "7", "--db", url]) == 0  # the README's demo, as a user runs it
    return url


def test_demo_verdict_headline_is_not_fooled_by_the_metric_gamer(demo_db, capsys):
    capsys.readouterr()
    boards = standings(make_engine(demo_db), LATER, n_boot=300)
    assert len(boards.cohorts) == 4
    for board in [c.rows for c in boards.cohorts] + [boards.overall.rename(columns={"model": "agent"})]:
        rows = board.set_index("agent")
        for name in ("always-0.5", REF_HALF):
            assert 0.22 <= rows.at[name, "forecast_brier"] <= 0.25  # ≈ 0.25 (probabilistic outcomes pull it down)
        assert rows.at[REF_MARKET, "kind"] == "reference"
        for rec in board.to_dict("records"):  # every interval contains its point
            if not math.isnan(rec["forecast_brier"]):
                assert rec["forecast_brier_lo"] <= rec["forecast_brier"] <= rec["forecast_brier_hi"]
            if not math.isnan(rec["brier_minus_market"]):
                assert rec["brier_minus_market_lo"] <= rec["brier_minus_market"] <= rec["brier_minus_market_hi"]
    overall = boards.overall.set_index("model")
    gamer, sharp = overall.loc["metric-gamer"], overall.loc["oracle-sharp"]
    # the headline ranks the gamer by its (noisy) forecasts: below the sharp oracle …
    assert gamer["rank"] > sharp["rank"]
    # … while seed 001's implied-confidence Brier is fooled into scoring it better than the sharp oracle
    assert gamer["implied_brier"] < sharp["implied_brier"]
    assert gamer["contradicting_bets"] > 0.3 > sharp["contradicting_bets"]  # and coherence gives it away
    assert overall.loc["oracle-sharp", "tier"] < overall.loc["random", "tier"]


def test_leaderboard_formats_and_rank_keys(demo_db, capsys):
    capsys.readouterr()
    assert main(["leaderboard", "--db", demo_db, "--format", "json", "--bootstrap", "50"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"as_of", "rank_by", "filter", "cohorts", "overall"} and data["rank_by"] == "forecast_brier"
    assert data["filter"] is None
    for c in data["cohorts"]:
        assert set(c) == {"name", "status", "rows", "headroom", "leaks"} and c["leaks"] == []  # the demo leaks nothing
        room = c["headroom"]  # the demo's forecast sets (band-v1): every cohort asked some questions
        assert {"market_brier", "half_brier", "in_band_share", "min_detectable_difference"} <= set(room)
        assert room["n_questions"] > 0 and 0 <= room["in_band_share"] <= 1 and room["min_detectable_difference"] > 0
        for row in c["rows"]:
            assert set(REQUIRED) <= set(row) and row["kind"] in ("llm", "baseline", "reference")
        ref = next(r for r in c["rows"] if r["agent"] == REF_MARKET)
        assert ref["pnl"] is None and ref["implied_brier"] is None  # missing is null, never 0
    assert {"model", "n_cohorts"} <= set(data["overall"][0])

    assert main(["leaderboard", "--db", demo_db, "--format", "csv", "--bootstrap", "50", "--rank-by", "pnl"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(rows[0])[:2] == ["cohort", "agent"] and set(JSON_FIELDS) <= set(rows[0])
    assert {r["cohort"] for r in rows} == {c["name"] for c in data["cohorts"]} | {"overall"}
    first = [r for r in rows if r["cohort"] == "overall"][0]
    assert first["rank"] == "1" and float(first["pnl"]) == max(float(r["pnl"]) for r in rows
                                                                 if r["cohort"] == "overall" and r["pnl"])
    assert [r for r in rows if r["agent"] == REF_HALF][0]["pnl"] == ""

    assert main(["leaderboard", "--db", demo_db, "--bootstrap", "50", "--as-of", "2026-01-05"]) == 0
    text = capsys.readouterr().out
    assert text.count("== cohort-") == 1 and "open; ranked by forecast_brier" in text
    assert "95% CI" in text and "tier" in text and "S001 Brier" not in text  # 100 columns: the leading ones
    assert main(["leaderboard", "--db", demo_db, "--bootstrap", "50", "--as-of", "2026-01-05", "--wide"]) == 0
    assert "S001 Brier" in capsys.readouterr().out  # --wide: every column


def test_leaderboard_ranks_by_the_other_proper_scores_in_their_direction(demo_db, capsys):
    capsys.readouterr()
    for key, higher in (("log_score", False), ("spherical_score", True), ("irt_skill", True)):
        assert main(["leaderboard", "--db", demo_db, "--format", "json", "--bootstrap", "30", "--rank-by", key]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["rank_by"] == key
        for rows in [c["rows"] for c in data["cohorts"]] + [data["overall"]]:
            values = [r[key] for r in rows if r[key] is not None]
            assert len(values) >= 3 and values == sorted(values, reverse=higher)
            assert rows[0]["rank"] == 1
            for r in rows:  # every row with a scored forecast has all four, the references included
                has = r["n_forecasts"] > 0
                for col in ("log_score", "spherical_score", "brier_adjusted", "irt_skill"):
                    assert (r[col] is not None) == has, (col, r)
            if key != "irt_skill":
                assert all(r["tier"] is not None for r in rows if r[key] is not None)
            else:
                assert all(r["tier"] is None for r in rows)  # fitted: no bootstrap tier
    assert main(["leaderboard", "--db", demo_db, "--bootstrap", "30", "--rank-by", "brier_adjusted"]) == 0
    text = capsys.readouterr().out
    assert "adj-Brier" in text and "ranked by brier_adjusted" in text


@pytest.mark.parametrize("args, choices", [(["--rank-by", "luck"], RANK_CHOICES), (["--format", "xml"],
                                                                                      ("text", "csv", "json")),
                                           (["--as-of", "yesterday"], ()), (["--bootstrap", "0"], ())])
def test_leaderboard_bad_input_is_one_line(db_url, capsys, args, choices):
    assert main(["leaderboard", "--db", db_url, *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert all(c in err for c in choices)


def test_demo_ablation_pair_finds_its_planted_improvement(demo_db, capsys):
    """The demo's forecaster-v2 is forecaster-v1 with a planted improvement (smaller persistent error), both
    asked 3 times per decision: `arena compare` finds the effect with the right sign, net of replicate noise."""
    capsys.readouterr()
    assert main(["compare", "forecaster-v1", "forecaster-v2", "--db", demo_db, "--as-of", LATER.isoformat(),
                 "--format", "json", "--bootstrap", "400"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["factor"] == "prompt version" and len(data["cohorts"]) == 4
    brier = data["differences"]["forecast_brier"]
    assert (brier["replicates_a"], brier["replicates_b"]) == (3, 3)
    # B (the improved variant) forecasts better on the estimate; the four cohorts share their markets, so the
    # interval resampling distinct markets is honest about how little evidence that is (it reaches above 0)
    assert brier["lo"] <= brier["estimate"] < 0 and brier["estimate"] <= brier["hi"]
    assert brier["markets"] < brier["n"]
    assert brier["executed_lo"] <= brier["executed"] <= brier["executed_hi"]
    assert 0 < brier["replicate_share"] < 1
    # one observation per (cohort, market) in the difference, one per distinct market in the sequence
    assert brier["n"] > 100 and data["sequence"]["n"] == brier["markets"] < brier["n"]
    assert data["sequence"]["estimate"] < 0
    assert data["sequence"]["lower"] < data["sequence"]["estimate"] < data["sequence"]["upper"]
    # with the demo's ladders (more asked markets) the anytime-valid sequence excludes 0 on the improvement's side,
    # and says from which day on
    assert data["sequence"]["upper"] < 0 and data["sequence"]["sign"] == -1
    assert data["sequence"]["first_date"] is not None and "2026-01-04" < data["sequence"]["first_date"] < "2027"
    spread = {r["agent"]: r for r in data["spread"]}
    assert spread["forecaster-v1"]["replicates"] == 3 and 0 < spread["forecaster-v1"]["p_sd"] < 0.2
    assert spread["forecaster-v2"]["brier_min"] <= spread["forecaster-v2"]["brier_max"]
    for metric in ("kelly_brier", "pnl"):
        d = data["differences"][metric]
        assert d["n"] == 0 or d["lo"] <= d["estimate"] <= d["hi"]
    # the headline still scores one ask per seat: n equals the unreplicated seats'
    overall = standings(make_engine(demo_db), LATER, n_boot=50).overall.set_index("model")
    assert overall.at["forecaster-v1", "n_forecasts"] == overall.at["oracle-sharp", "n_forecasts"]
    # text output, for a person
    assert main(["compare", "forecaster-v1", "forecaster-v2", "--db", demo_db, "--as-of", LATER.isoformat(),
                 "--bootstrap", "200"]) == 0
    text = capsys.readouterr().out
    assert "forecaster-v2 vs forecaster-v1 (variant: prompt version)" in text
    assert "forecast_brier" in text and f"after {data['sequence']['n']} resolved markets" in text
    assert f"first excluded 0 on {data['sequence']['first_date']} (B better)" in text
    assert "run-to-run spread" in text


def test_demo_json_shows_a_copy_of_the_market_once_and_the_markets_behind_the_headline(demo_db, capsys):
    """The demo's market-follower states the price it saw: its JSON rows say it equals the market reference and
    carry the same tier; every headline rests on n_markets resolved markets, fewer than its market@round rows."""
    capsys.readouterr()
    assert main(["leaderboard", "--db", demo_db, "--format", "json", "--bootstrap", "50"]) == 0
    data = json.loads(capsys.readouterr().out)
    for rows in [c["rows"] for c in data["cohorts"]] + [data["overall"]]:
        by = {r.get("agent") or r.get("model"): r for r in rows}
        assert by["market-follower"]["same_as"] == "market (reference)"
        assert by["market-follower"]["tier"] == by["market (reference)"]["tier"]
        assert by["oracle-sharp"]["same_as"] is None
        scored = [r for r in rows if r["n_forecasts"]]
        assert scored and all(0 < r["n_markets"] < r["n_forecasts"] for r in scored)


def test_demo_statistics_page_shows_the_ablation_table(demo_db):
    from arena.read.statistics import cohort_statistics
    from arena.web.statistics_page import statistics_context

    name = "cohort-2026-01-04"
    st = cohort_statistics(make_engine(demo_db), LATER, [name], n_boot=100)[name]
    page = statistics_context(LATER, st, 100)
    tables = {t.title: t for t in page.tables}
    ablation = tables["Ablations: variant vs base (B − A over shared questions)"]
    rows = {r["metric"]: r for r in ablation.rows}
    assert set(rows) == {"forecast_brier", "kelly_brier", "pnl"}
    assert rows["forecast_brier"]["pair"] == "forecaster-v2 vs forecaster-v1"
    assert rows["forecast_brier"]["lo"] <= rows["forecast_brier"]["estimate"] <= rows["forecast_brier"]["hi"]
    spread = tables["Replicates: run-to-run spread"]
    assert {r["agent"] for r in spread.rows} == {"forecaster-v1", "forecaster-v2"}


def test_demo_cohort_page_shows_the_ablation_effect_with_the_statistics_pages_numbers(demo_db):
    from arena.read.statistics import DEFAULT_DRAWS, cohort_statistics
    from arena.web.cohort_page import cohort_contexts
    from arena.web.env import number, page_path, render_page

    name = "cohort-2026-01-04"
    engine = make_engine(demo_db)
    page = cohort_contexts(engine, LATER, [name])[name]
    (row,) = page.ablations
    assert (row.base, row.variant) == ("forecaster-v1", "forecaster-v2") and row.n > 0
    st = cohort_statistics(engine, LATER, [name], n_boot=DEFAULT_DRAWS)[name]
    stats = st.ablations.set_index("metric").loc["forecast_brier"]
    assert (row.estimate, row.lo, row.hi) == (stats["estimate"], stats["lo"], stats["hi"])
    assert row.lo <= row.estimate <= row.hi
    text = render_page("cohort.html", page, page_path("cohort", name))
    section = text[text.index('id="ablations"'):]
    section = section[: section.index("</table>")]
    assert "forecaster-v2" in section and number(row.estimate, 4, True) in section
    assert (row.first_date or "not yet") in section


def test_a_render_compares_each_ablation_pair_once_for_both_pages(demo_db, tmp_path, monkeypatch):
    """The cohort page's ablation rows and the statistics page's ablation table come from one comparison per
    pair (issue 11): `services.ablation.compare` runs once per pair, not once per page kind."""
    import arena.read.ablation as ablation
    from arena.web.render import render_site

    engine = make_engine(demo_db)
    pairs = sum(len(p) for p in ablation.ablation_pairs_by_cohort(engine).values())
    assert pairs > 0  # the demo plants a variant_of pair in each cohort
    calls = []
    real = ablation.compare
    monkeypatch.setattr(ablation, "compare", lambda *a, **k: calls.append(a[1:3]) or real(*a, **k))
    report = render_site(engine, tmp_path, LATER, parallel=False, statistics="all")
    assert report.pages["statistics"] == report.pages["cohort"] > 0  # both page kinds show the pairs
    assert len(calls) == pairs


@pytest.mark.parametrize("width", [100, 72])
def test_leaderboard_fits_the_terminal_width_and_keeps_the_leading_columns(demo_db, width):
    """`arena leaderboard` as a user runs it (a process, COLUMNS set as a shell does): every line fits, the
    columns kept are the leading ones in priority order, and --legend wraps to the same width."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": str(width)}
    run = lambda *extra: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "arena", "leaderboard", "--db", demo_db, "--bootstrap", "50", *extra],
        capture_output=True, text=True, env=env, timeout=300)
    out = run()
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= width
    headers = [ln for ln in lines if ln.startswith("rank ")]
    assert len(headers) == 5  # four cohorts and the overall board
    for head in headers:
        names = head.split()
        assert names[:2] in (["rank", "agent"], ["rank", "model"]) and "F-Brier [95% CI]" in head
        assert head.index("F-Brier") < head.index("tier")
        # F-mkt comes next; at 72 columns a twin row such as "market-follower = market" may leave no room
        assert head.index("tier") < head.index("F-mkt") if "F-mkt" in head else width < 80
    assert "--wide" in lines[-1] and "--legend" in lines[-1]
    legend = run("--legend")
    assert max(len(ln) for ln in legend.stdout.splitlines()) <= width
    assert "F-Brier (the headline)" in legend.stdout and "S001 Brier:" in legend.stdout
    wide = run("--wide")
    assert "S001 Brier" in wide.stdout and "proxy" in wide.stdout and max(map(len, wide.stdout.splitlines())) > width
