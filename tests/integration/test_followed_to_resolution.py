"""Every forecast-set market is followed to its resolution (issue 26 item 6): sync refreshes the markets of
`forecast_questions` until they resolve, held or not, so a question nobody bet on is still scored. Before, the
replay sync refreshed only listed and held markets, and a replay market leaves the listing once resolved."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select
from sqlmodel import Session

from arena.cli import main
from arena.domain.market import YES, Market, MarketStatus, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.money import Price
from arena.store.engine import make_engine, session_scope
from arena.store.tables import FillRow, ForecastQuestionRow, ResolutionRow
from arena.usecases import ingest
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.usecases.sync import followed_market_ids

CONFIG = """baselines = false
[cohort]
decision_weeks = 1
forecast_set_size = 3
[[agents]]
name = "half"
kind = "always-0.5"
[[agents]]
name = "follower"
kind = "market-follower"
[schedule]
settle = "0 1 * * *"
"""


def record(native: str, resolution: int, resolved: str, price: float) -> dict:
    """A replay market listed from October, priced `price` every day until it resolves on `resolved`."""
    days = [f"2025-10-{d:02d}" for d in range(20, 32)] + [f"2025-11-{d:02d}" for d in range(1, 31)]
    history = [[d, price] for d in days if d < resolved]
    close = (datetime.fromisoformat(resolved) - timedelta(hours=12)).replace(tzinfo=timezone.utc)
    return {"platform": "manifold", "market_id": native, "question": f"Will {native} happen?",
            "resolution": resolution, "market_open_datetime": "2025-10-01T00:00:00+00:00",
            "market_close_datetime": close.isoformat(), "first_resolved_observation_date": resolved,
            "history": history, "history_source": "R" * len(history)}


def test_a_never_traded_forecast_set_market_that_resolves_in_a_replay_is_scored(tmp_path, db_url, capsys):
    replay = tmp_path / "r.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in (
        record("early", 1, "2025-11-06", 0.6), record("late", 0, "2025-12-20", 0.3),
        record("sure", 0, "2025-11-06", 0.01))))
    config = tmp_path / "arena.toml"
    config.write_text(CONFIG)
    assert main(["replay", "run", str(replay), "--from", "2025-11-02", "--until", "2025-11-12", "--config",
                 str(config), "--db", db_url]) == 0
    eng = make_engine(db_url)
    try:
        with Session(eng) as s:
            asked = set(s.scalars(select(ForecastQuestionRow.market_id)))
            resolved = set(s.scalars(select(ResolutionRow.market_id)))
            fills = s.scalar(select(func.count()).select_from(FillRow))
    finally:
        eng.dispose()
    # the first cohort asked "early" and "sure"; nobody bet on them (neither seat ever bets); they left the
    # replay's listing when they resolved on 2025-11-06, and were still refreshed until their resolutions came
    assert {"replay:early", "replay:sure"} <= asked and fills == 0
    assert resolved == {"replay:early", "replay:sure"}
    capsys.readouterr()
    assert main(["leaderboard", "--db", db_url, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    first = next(c for c in board["cohorts"] if c["name"] == "cohort-2025-11-02")
    rows = {r["agent"]: r for r in first["rows"]}
    assert rows["half"]["n_forecasts"] == 2 and rows["half"]["forecast_brier"] == 0.25
    assert abs(rows["follower"]["forecast_brier"] - ((1 - 0.6) ** 2 + 0.01 ** 2) / 2) < 1e-12

    # the set's headroom (scoring.headroom): "early" and "late" in band, "sure" (0.01) filled the set
    room = first["headroom"]
    assert room["n_questions"] == 3 and room["n_resolved"] == 2
    assert abs(room["in_band_share"] - 2 / 3) < 1e-12 and abs(room["filled_share"] - 1 / 3) < 1e-12
    assert abs(room["market_brier"] - (0.4 ** 2 + 0.01 ** 2) / 2) < 1e-12 and room["half_brier"] == 0.25
    # half − follower per market: early 0.25 − 0.16, sure 0.25 − 0.0001 → sample sd |0.09 − 0.2499| / √2
    sd = abs(0.09 - 0.2499) / 2 ** 0.5
    assert room["sd_basis"] == "seats" and abs(room["paired_sd"] - sd) < 1e-9
    assert abs(room["min_detectable_difference"] - 2.8015853 * sd / 3 ** 0.5) < 1e-6


def test_sync_follows_unresolved_forecast_set_markets_of_its_venue_only(engine):
    t0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
    close = t0 + timedelta(days=10)
    ms = [Market(id=f"{v}:{n}", venue=v, question="?", close_time=close,
                 status=MarketStatus.RESOLVED if n == "done" else MarketStatus.OPEN)
          for v, n in (("manifold", "open"), ("manifold", "done"), ("polymarket", "other"), ("manifold", "unasked"))]
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, ms, [Quote(m.id, {YES: Price.of("0.5")}, t0, t0, source="t") for m in ms],
                                   [("manifold:done", Resolution.winner("manifold:done", YES, resolved_at=t0,
                                                                        source="t"))])
        cohort, _ = start_cohort(s, t0, CohortRules(),
                                 [LineupEntry("a")], t0)
        s.add_all(ForecastQuestionRow(cohort_id=cohort.id, round_key="w1", market_id=mid, position=i, price_ppm=500_000,
                                      in_band=True, as_of=t0)
                  for i, mid in enumerate(("manifold:open", "manifold:done", "polymarket:other")))
    # asked and open: followed; asked and resolved, or never asked: not
    assert followed_market_ids(engine, "manifold") == {"manifold:open": "open"}
    assert followed_market_ids(engine, "polymarket") == {"polymarket:other": "other"}
