"""The command line end to end: `main([...])` as a user would call it, on the test database."""

import re
from datetime import datetime, timedelta, timezone

import pandas as pd
from sqlalchemy import func, select
from sqlmodel import Session

from arena.cli import main
from arena.money import Money
from arena.read.score import cohort_leaderboards
from arena.store.engine import make_engine
from arena.store.tables import CohortRow, DecisionRow, FillRow, PortfolioSnapshotRow

# an agent page's "· 0.3 s" of a model call ("·" as UTF-8 bytes)
LATENCY = re.compile(rb"(<summary>Model call, attempt [^<]*?\xc2\xb7 )[0-9][0-9,]*\.[0-9] s(?=( \xc2\xb7 |</summary>))")
SMALL = ["demo", "--seed", "3", "--cohorts", "2", "--decision-weeks", "2", "--markets-per-week", "12"]


def test_demo_runs_settles_everything_and_prints_every_metric(db_url, capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # stdout is no terminal here: the default width, 100
    assert main([*SMALL, "--db", db_url]) == 0
    out, err = capsys.readouterr()
    # the progress counts the days the summary counts (the run stops once every cohort completed)
    days = int(re.search(r"(\d+) simulated days", out).group(1))
    last = [ln for ln in err.splitlines() if ln.startswith("arena demo:")][-1]
    assert last.startswith(f"arena demo: {days}/{days} days — every cohort completed"), last
    # rank, name, the headline with its interval, tier, then skill against the market and money — in 100
    # columns (no terminal: the default width); the legend explains the columns shown
    header = next(ln for ln in out.splitlines() if ln.startswith("rank "))
    assert header.index("agent") < header.index("F-Brier [95% CI]") < header.index("tier") < header.index("F-mkt") \
        < header.index("P/L $") < header.index("return")
    assert max(len(ln) for ln in out.splitlines() if not ln.startswith("database:")) <= 100
    assert "== overall (per model across cohorts) ==" in out
    # the always-0.5 reference row, or the always-0.5 seat that equals it standing for both ("= reference")
    assert "always-0.5 (reference)" in out or "always-0.5 = reference" in out
    # the market reference row, or the seat that equals it on every question standing for both ("= market")
    assert ("market (reference)" in out or "= market" in out) and "F-Brier (the headline)" in out
    assert "fewer than 20 resolved" in out
    assert "--wide" in out  # how to see the columns left out
    engine = make_engine(db_url)
    with Session(engine) as s:
        cohorts = s.scalars(select(CohortRow)).all()
        assert [c.status for c in cohorts] == ["completed", "completed"]
        # every completed cohort: all positions settled, a final snapshot equal to the fold of its fills
        for c in cohorts:
            net = s.execute(select(FillRow.agent_id, func.sum(FillRow.shares), func.sum(FillRow.cash_micros))
                            .where(FillRow.cohort_id == c.id).group_by(FillRow.agent_id)).all()
            finals = {r.agent_id: r for r in s.scalars(select(PortfolioSnapshotRow).where(
                PortfolioSnapshotRow.cohort_id == c.id, PortfolioSnapshotRow.final))}
            assert finals, "a completed cohort has a final snapshot"
            for agent_id, shares, cash in net:
                assert shares == 0
                assert finals[agent_id].total_value_micros == c.starting_cash_micros + cash
    # the printed P/L of each agent is the stored one
    board = cohort_leaderboards(engine, datetime(2027, 1, 1, tzinfo=timezone.utc))
    sections = {m.group(1): m.group(2) for m in re.finditer(r"== (cohort-\S+) ==\n(.*?)(?:\n\n|$)", out, re.S)}
    assert set(sections) == set(board["cohort"])
    for rec in board.to_dict("records"):
        line = next(ln for ln in sections[rec["cohort"]].splitlines()
                    if re.match(rf"\s*\S+\s+{re.escape(rec['agent'])}(?: = \S+)?(?: \*)?\s{{2,}}", ln))
        assert f"{rec['pnl']:+,.2f}" in line
    engine.dispose()


def test_demo_is_deterministic_for_a_seed(tmp_path, capsys):
    outs = []
    for name in ("a", "b"):
        assert main([*SMALL, "--db", f"sqlite:///{tmp_path / name}.sqlite"]) == 0
        text = capsys.readouterr().out
        outs.append(re.sub(r"database: .*", "", text))
    assert outs[0] == outs[1]


def test_two_identical_demos_give_the_same_bytes(tmp_path, new_url, capsys):
    """Two runs of the same demo into two databases: the boards as JSON and every page of the site are equal byte
    for byte, although the seats of a round decide at once and record their answers and fills in any order (the
    sums run over rows in a fixed order). Only the render's own bookkeeping, the operations page, whose job runs
    name the process that ran them, and the wall-clock latency an agent page shows of each model call (the
    stand-in seats' calls over 127.0.0.1) may differ."""
    boards, sites = [], []
    for run in ("one", "two"):
        url = new_url()
        assert main([*SMALL, "--db", url]) == 0
        capsys.readouterr()
        assert main(["leaderboard", "--db", url, "--format", "json", "--as-of", "2026-06-01"]) == 0
        boards.append(capsys.readouterr().out)
        out = tmp_path / run
        assert main(["render", "--db", url, "--out", str(out), "--as-of", "2026-06-01"]) == 0
        sites.append({str(p.relative_to(out)): LATENCY.sub(b"\\1 s", p.read_bytes()) for p in out.rglob("*")
                      if p.is_file() and p.name not in (".arena-site.json", "operations.html")})
    assert '"crowd_proxy": 0.' in boards[0] and '"n_answered": ' in boards[0]
    assert boards[0] == boards[1]
    assert len(sites[0]) > 50 and sites[0].keys() == sites[1].keys()
    assert [k for k in sites[0] if sites[0][k] != sites[1][k]] == []


def test_demo_refuses_a_start_that_is_not_sunday(capsys):
    assert main(["demo", "--start", "2026-01-05", "--db", "sqlite://"]) == 2
    assert "Sunday" in capsys.readouterr().err


def test_migrate_reports_revision(db_url, capsys):
    assert main(["migrate", "--db", db_url]) == 0
    from arena.store.engine import head_revision

    assert f"revision {head_revision()}" in capsys.readouterr().out


def test_score_command_writes_the_documented_columns(tmp_path, capsys):
    f = tmp_path / "f.csv"
    f.write_text("forecaster,question,probability,outcome\na,q1,0.8,1\nb,q1,0.6,1\na,q2,0.3,0\nb,q2,1.7,0\n")
    out = tmp_path / "scores.csv"
    assert main(["score", str(f), "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert list(df.columns) == ["batch", "forecaster", "n", "n_forecasts", "n_answered", "scored_on", "brier",
                                "proxy_mean", "proxy_median", "proxy_ext_mean", "proxy_logit_pool", "log_score",
                                "spherical_score", "brier_adjusted", "irt_skill"]
    a = df[df.forecaster == "a"].iloc[0]
    assert a["n"] == 2 and abs(a["brier"] - (0.2**2 + 0.3**2) / 2) < 1e-12
    b = df[df.forecaster == "b"].iloc[0]  # its q2 row was dropped (1.7): scored as a stated 0.5
    assert b["n_answered"] == 1 and abs(b["brier"] - (0.4**2 + 0.5**2) / 2) < 1e-12
    assert "dropped 1" in capsys.readouterr().err


def test_leaderboard_on_empty_database(db_url, capsys):
    assert main(["migrate", "--db", db_url]) == 0
    assert main(["leaderboard", "--db", db_url]) == 0
    assert "no cohorts yet" in capsys.readouterr().out


def test_export_replay_round_trips_through_the_replay_venue(db_url, tmp_path, capsys):
    from arena.venues.replay import ReplayVenue

    assert main([*SMALL, "--db", db_url]) == 0
    capsys.readouterr()
    out = tmp_path / "export.jsonl"
    assert main(["export", "replay", "--out", str(out), "--db", db_url]) == 0
    msg = capsys.readouterr().out
    venue = ReplayVenue.from_path(out)  # the reader accepts what the exporter wrote
    engine = make_engine(db_url)
    with Session(engine) as s:
        from arena.store.tables import ResolutionRow

        winners = {r.market_id for r in s.scalars(select(ResolutionRow).where(ResolutionRow.kind == "winner"))}
        voids = {r.market_id for r in s.scalars(select(ResolutionRow).where(ResolutionRow.kind == "void"))}
    assert len(venue) == len(winners) > 0 and f"{len(voids)} void" in msg
    for mid in venue.market_ids():
        rec = venue.record(mid)
        arena_id = rec.provenance["arena_market_id"]
        assert arena_id in winners
        # the replayed resolution appears only after its date, and then matches the arena's
        res = venue.resolution_at(mid, datetime(2030, 1, 1, tzinfo=timezone.utc))
        with Session(engine) as s:
            from arena.store import repo

            row = repo.latest_resolution_row(s, arena_id)
        assert (res.payouts["YES"].ppm == 1_000_000) == (row.payouts["YES"] == 1_000_000)
        assert all(d < rec.first_resolved_observation_date for d, _ in rec.history)
    engine.dispose()


def test_export_csv_scores_are_the_leaderboard_rows_and_bets_add_up_to_them(db_url, tmp_path, capsys):
    import io

    assert main([*SMALL, "--db", db_url]) == 0
    at = "2026-06-01"
    assert main(["export", "--out", str(tmp_path / "csv"), "--as-of", at, "--db", db_url]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--format", "csv", "--as-of", at, "--db", db_url]) == 0
    board_csv = capsys.readouterr().out
    # scores.csv IS the board: the same rows, columns and names as `arena leaderboard --format csv`
    assert (tmp_path / "csv" / "scores.csv").read_text() == board_csv
    scores = pd.read_csv(io.StringIO(board_csv))
    assert list(scores.columns[:8]) == ["cohort", "agent", "rank", "rank_label", "forecast_brier",
                                        "forecast_brier_lo", "forecast_brier_hi", "tier"]  # the headline leads
    assert "brier" not in scores.columns and "implied_brier" in scores.columns  # seed 001's under its board name
    fills = pd.read_csv(tmp_path / "csv" / "fills.csv", dtype=str, keep_default_na=False)
    engine = make_engine(db_url)
    with Session(engine) as s:
        total = s.scalar(select(func.sum(FillRow.cash_micros)))
        n_bets = s.scalar(select(func.count()).select_from(FillRow).where(FillRow.kind == "buy",
                                                                           FillRow.decision_id.is_not(None)))
    from decimal import Decimal

    assert sum(Decimal(v) for v in fills["cash_usd"]) == Decimal(total) / 1_000_000
    # a nullable integer column stays integers: settlements have no decision (empty), bets name theirs ("4")
    ids = fills["decision_id"]
    assert (ids == "").any() and ids[ids != ""].str.fullmatch(r"\d+").all()
    # bets.csv: one row per bet; its per-bet seed-001 Brier averages to the board's implied_brier per seat
    bets = pd.read_csv(tmp_path / "csv" / "bets.csv")
    assert len(bets) == n_bets > 0 and bets["decision_id"].dtype == "int64"
    scored = bets[bets["resolved"]].groupby(["cohort", "agent"])["implied_brier"].mean()
    board = scores[scores["cohort"] != "overall"].set_index(["cohort", "agent"])["implied_brier"].dropna()
    assert len(board) > 5 and set(board.index) == set(scored.index)
    for key, value in board.items():
        assert abs(scored[key] - value) < 1e-9, key
    for name in ("decisions", "snapshots"):
        assert (tmp_path / "csv" / f"{name}.csv").stat().st_size > 0
    engine.dispose()


def test_sync_replay_command_and_its_errors(db_url, shared_dir, capsys):
    replay = shared_dir / "data" / "replay" / "replay_markets.jsonl"
    assert main(["sync", "--venue", "replay", "--db", db_url]) == 2
    assert "--file" in capsys.readouterr().err
    assert main(["sync", "--venue", "replay", "--file", str(replay), "--at", "2025-12-01T00:00:00+00:00",
                 "--db", db_url]) == 0
    line = capsys.readouterr().out
    ok = int(re.search(r"ok (\d+)", line).group(1))
    assert ok > 100
    assert main(["sync", "--venue", "replay", "--file", str(replay), "--at", "2025-12-01T00:00:00+00:00",
                 "--db", db_url]) == 0
    assert "0 markets changed, 0 snapshots" in capsys.readouterr().out  # idempotent


def test_score_command_bootstrap_adds_statistics(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(3)
    truth = rng.uniform(0.05, 0.95, size=60)
    outcome = (rng.uniform(size=60) < truth).astype(int)
    lines = ["forecaster,question,probability,outcome"]
    for q in range(60):
        lines.append(f"sharp,q{q},{truth[q]:.4f},{outcome[q]}")
        lines.append(f"coin,q{q},0.5,{outcome[q]}")
    f = tmp_path / "f.csv"
    f.write_text("\n".join(lines) + "\n")
    out = tmp_path / "s.csv"
    assert main(["score", str(f), "--out", str(out), "--bootstrap", "400", "--seed", "2"]) == 0
    df = pd.read_csv(out).set_index("forecaster")
    for col in ("brier_ci_low", "brier_ci_high", "tier", "p_first", "ece", "provisional"):
        assert col in df.columns
    for name in ("sharp", "coin"):
        assert df.loc[name, "brier_ci_low"] <= df.loc[name, "brier"] <= df.loc[name, "brier_ci_high"]
    assert df.loc["sharp", "p_first"] > 0.9 and df.loc["sharp", "p_first"] + df.loc["coin", "p_first"] == 1.0
    assert df.loc["coin", "ece"] >= 0 and not df.loc["sharp", "provisional"]


def test_export_csv_has_forecasts_model_calls_markets_and_prices(db_url, tmp_path, capsys, monkeypatch):
    from decimal import Decimal

    from arena.read import export
    from arena.store.tables import ForecastRow, MarketRow, ModelCallRow, PriceSnapshotRow

    assert main([*SMALL, "--no-standin", "--db", db_url]) == 0
    engine = make_engine(db_url)
    with Session(engine) as s:  # without its stand-in seats the demo calls no model: give a decision two calls
        decision = s.scalars(select(DecisionRow).order_by(DecisionRow.id)).first()
        for attempt, cost in ((1, 1_234), (2, 2_000)):
            s.add(ModelCallRow(decision_id=decision.id, attempt=attempt, prompt=f"prompt {attempt}",
                               raw_response="{}", prompt_tokens=100, completion_tokens=10, cost_micros=cost,
                               latency_s=0.5, served_model="m", prompt_version="p", at=decision.as_of,
                               tool_calls=[{"id": "call_1", "name": "price_history", "arguments": "{}",
                                            "result": "[0.41, 0.43]"}] if attempt == 1 else None))
        s.commit()
        n_forecasts = s.scalar(select(func.count()).select_from(ForecastRow))
        n_prices = s.scalar(select(func.count()).select_from(PriceSnapshotRow))
        n_markets = s.scalar(select(func.count()).select_from(MarketRow))
    monkeypatch.setattr(export, "PRICE_CHUNK", 97)  # several chunks, one header
    out = tmp_path / "csv"
    assert main(["export", "--out", str(out), "--db", db_url]) == 0
    forecasts = pd.read_csv(out / "forecasts.csv", dtype=str)
    calls = pd.read_csv(out / "model_calls.csv", dtype=str)
    prices = pd.read_csv(out / "prices.csv", dtype=str)
    markets = pd.read_csv(out / "markets.csv", dtype=str)
    assert len(forecasts) == n_forecasts and {"cohort", "agent", "probability", "market_price"} <= set(forecasts)
    assert len(calls) == 2 and sum(Decimal(v) for v in calls["cost_usd"]) == Decimal("0.003234")
    assert "prompt" not in calls.columns  # the texts only on request
    import json

    # the tool calls travel with their model call, each with the result sent back; none is an empty cell
    assert json.loads(calls["tool_calls"].iloc[0])[0]["result"] == "[0.41, 0.43]"
    assert pd.isna(calls["tool_calls"].iloc[1]) and calls["attempt"].tolist() == ["1", "2"]
    assert len(prices) == n_prices > 97 and prices["id"].is_unique and "price" in prices.columns
    assert len(markets) == n_markets
    # --with-text adds the prompts; --cohort scopes every table, markets and prices to what it touched
    cohort = forecasts["cohort"].iloc[0]
    scoped = tmp_path / "one"
    assert main(["export", "--out", str(scoped), "--cohort", cohort, "--with-text", "--db", db_url]) == 0
    one = {n: pd.read_csv(scoped / f"{n}.csv", dtype=str) for n in ("forecasts", "markets", "prices", "model_calls")}
    assert set(one["forecasts"]["cohort"]) == {cohort}
    assert set(one["prices"]["market_id"]) <= set(one["markets"]["id"]) and len(one["markets"]) < n_markets
    assert "prompt" in one["model_calls"].columns
    engine.dispose()


def test_export_parquet_holds_the_same_tables_as_csv(db_url, tmp_path, capsys, monkeypatch):
    from arena.read import export  # pyarrow is a dependency: this test never skips

    assert main([*SMALL, "--db", db_url]) == 0
    monkeypatch.setattr(export, "PRICE_CHUNK", 53)  # the price history in several row groups
    assert main(["export", "csv", "--out", str(tmp_path / "csv"), "--db", db_url]) == 0
    assert main(["export", "parquet", "--out", str(tmp_path / "pq"), "--db", db_url]) == 0
    assert "prices.parquet" in capsys.readouterr().out
    for name in export.TABLES:
        csv = pd.read_csv(tmp_path / "csv" / f"{name}.csv", dtype=str, keep_default_na=False)
        pq = pd.read_parquet(tmp_path / "pq" / f"{name}.parquet")
        assert list(pq.columns) == list(csv.columns), name
        assert len(pq) == len(csv), name
        for col in csv.columns:  # every value: exact decimals, integers as integers, nulls as nulls
            if pd.api.types.is_datetime64_any_dtype(pq[col]):  # a timestamp (the CSV drops an all-midnight time)
                def instants(times):  # type: ignore[no-untyped-def]  (UTC and Etc/UTC are one zone)
                    times = pd.to_datetime(times)
                    return (times.dt.tz_convert("UTC").dt.tz_localize(None) if times.dt.tz is not None
                            else times).tolist()

                assert instants(csv[col].replace("", None)) == instants(pq[col]), (name, col)
                continue
            assert [("" if pd.isna(v) else str(v)) for v in pq[col]] == csv[col].tolist(), (name, col)
    fills = pd.read_parquet(tmp_path / "pq" / "fills.parquet")
    assert str(fills["decision_id"].dtype) == "Int64" and fills["decision_id"].isna().any()
    prices = pd.read_parquet(tmp_path / "pq" / "prices.parquet")
    assert len(prices) > 53 and prices["id"].is_unique
    import pyarrow.parquet as pq_

    assert pq_.ParquetFile(tmp_path / "pq" / "prices.parquet").num_row_groups > 1
