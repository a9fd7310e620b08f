"""Replay fills at recorded quotes: a one-level book at the recorded ask (buy) / bid (sell) with the venue's fee
rule, the recorded price kept as the mid so the slippage shows; files without quotes fill as before; `arena export
replay` writes the recorded bid/ask and volumes back."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

from sqlalchemy import select
from sqlmodel import Session

from arena.cli import main
from arena.clock import FixedClock
from arena.domain.decision import Bet, Decision, Sell
from arena.domain.market import NO, YES
from arena.domain.sizing import CohortRules
from arena.money import Money, Price, shares_for, value_of
from arena.read.export import export_replay
from arena.store.engine import session_scope
from arena.store.tables import FillRow, RejectionRow
from arena.usecases import decide, sync
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.usecases.simulation import ReplayTimeVenue, VenueSync
from arena.venues.replay import ReplayVenue, read_replay

UTC = timezone.utc
DAYS = [date(2025, 1, 1) + timedelta(days=i) for i in range(10)]  # 2025-01-01 … 2025-01-10


def record(mid: str, prices: list[float], quotes: list[dict | None] | None = None, **over) -> dict:
    history = [[d.isoformat(), p] + ([quotes[i]] if quotes and quotes[i] else []) for i, (d, p) in
               enumerate(zip(DAYS, prices))]
    out = {"platform": "polymarket", "market_id": mid, "question": f"Will {mid} happen?", "resolution": 1,
           "first_resolved_observation_date": "2025-01-20", "market_close_datetime": "2025-01-19T00:00:00+00:00",
           "history": history}
    out.update(over)
    return out


def write(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def strip_quotes(records: list[dict]) -> list[dict]:
    return [{**{k: v for k, v in r.items() if k != "fee_rate"}, "history": [h[:2] for h in r["history"]]}
            for r in records]


FLAT = [0.4] * 10
QUOTED = [
    # a: bought YES on day 5 (its 2025-01-04 point: p 0.40, ask 0.43), sold on day 8 (2025-01-07: p 0.47, bid 0.45)
    record("a", [0.4, 0.4, 0.4, 0.4, 0.45, 0.46, 0.47, 0.47, 0.5, 0.5],
           [{"bid": 0.38, "ask": 0.43}] * 6 + [{"bid": 0.45, "ask": 0.49, "volume": 900.0, "volume_24h": 20.0}] * 4),
    # b: bought NO at 1 − bid = 0.32 (p 0.70, so NO's mid is 0.30)
    record("b", [0.7] * 10, [{"bid": 0.68, "ask": 0.71}] * 10),
    # c: no quotes at all: fills at the probability, as before
    record("c", [0.5] * 10),
    # d: Polymarket's fee rule, rate 0.02 × min(p, 1 − p) per share, paid out of the stake
    record("d", [0.5] * 10, [{"bid": 0.49, "ask": 0.5}] * 10, fee_rate=0.02),
]


class Script:
    def __init__(self, name, rounds):
        self.name, self.rounds = name, rounds

    def decide(self, view):
        return Decision(tuple(self.rounds.get(view.as_of.date(), ())))


def run(engine, path) -> dict[tuple[str, str], list[FillRow]]:
    """Sync the file daily; a seat buys on 2025-01-05 and sells a's YES on 2025-01-08; its fills by market."""
    venue = ReplayVenue.from_path(path)
    t0 = datetime(2025, 1, 5, tzinfo=UTC)
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, t0, CohortRules(), [LineupEntry("s")], t0)
    bets = [Bet("replay:a", YES, Money.of(100)), Bet("replay:b", NO, Money.of(100)),
            Bet("replay:c", YES, Money.of(100)), Bet("replay:d", YES, Money.of(100))]
    agent = Script("s", {t0.date(): bets, date(2025, 1, 8): [Sell("replay:a", YES, Decimal(1))]})
    for t in (t0, datetime(2025, 1, 8, tzinfo=UTC)):
        assert sync.sync_replay(engine, venue, FixedClock(t)).status == "ok"
        (out,) = decide.run_round(engine, cohort, {"s": agent}, f"r{t:%m%d}", t + timedelta(minutes=5), concurrency=1)
        if out.status != "executed":
            with Session(engine) as s:
                raise AssertionError([(r.reason, r.message) for r in s.scalars(select(RejectionRow))])
    with Session(engine) as s:
        fills = s.scalars(select(FillRow).order_by(FillRow.id)).all()
    by: dict[tuple[str, str], list[FillRow]] = {}
    for f in fills:
        by.setdefault((f.market_id.removeprefix("replay:"), f.kind), []).append(f)
    return by


def test_replay_fills_pay_the_recorded_ask_and_record_the_slippage(engine, tmp_path):
    fills = run(engine, write(tmp_path / "q.jsonl", QUOTED))
    (a,), (b,), (c,), (d,) = (fills[m, "buy"] for m in "abcd")
    stake = Money.of(100)
    # a YES buy: the fill price is the recorded ask, the mid the recorded price, slippage = ask − mid
    assert (a.provenance, a.price_ppm, a.mid_ppm) == ("recorded_quote", 430_000, 400_000)
    assert a.price_ppm - a.mid_ppm == 30_000
    assert a.shares == shares_for(stake, Price.of("0.43")) and a.cash_micros == -stake.micros
    # a NO buy pays 1 − the YES bid; its mid is 1 − p
    assert (b.provenance, b.price_ppm, b.mid_ppm) == ("recorded_quote", 320_000, 300_000)
    assert b.shares == shares_for(stake, Price.of("0.32"))
    # no recorded quote: the probability, exactly as before
    assert (c.provenance, c.price_ppm, c.mid_ppm) == ("venue_probability", 500_000, 500_000)
    assert c.shares == shares_for(stake, Price.of("0.5"))
    # the fee: $100 buys floor(100 / (0.5 + 0.02 × 0.5)) shares, fee included in the $100
    assert (d.provenance, d.price_ppm, d.mid_ppm) == ("recorded_quote", 500_000, 500_000)
    assert d.shares == 196_078_431 and d.cash_micros == -stake.micros
    # a sell walks the bid: 2025-01-07's point, p 0.47, bid 0.45
    (sold,) = fills["a", "sell"]
    assert (sold.provenance, sold.price_ppm, sold.mid_ppm) == ("recorded_quote", 450_000, 470_000)
    assert sold.shares == -a.shares and sold.cash_micros == value_of(a.shares, Price.of("0.45")).micros


def test_a_file_without_quotes_fills_exactly_as_before(engine, tmp_path):
    fills = run(engine, write(tmp_path / "plain.jsonl", strip_quotes(QUOTED)))
    stake = Money.of(100)
    for (m, kind), (f,) in fills.items():
        assert f.provenance == "venue_probability" and f.price_ppm == f.mid_ppm, (m, kind)
    for m, price in (("a", "0.4"), ("b", "0.3"), ("c", "0.5"), ("d", "0.5")):
        (f,) = fills[m, "buy"]
        assert f.price_ppm == Price.of(price).ppm and f.shares == shares_for(stake, Price.of(price))
        assert f.cash_micros == -stake.micros
    (sold,) = fills["a", "sell"]
    assert sold.price_ppm == 470_000 and sold.cash_micros == value_of(-sold.shares, Price.of("0.47")).micros


def test_export_replay_writes_the_recorded_quotes_and_volumes_back(engine, tmp_path):
    src = write(tmp_path / "q.jsonl", QUOTED)
    venue = ReplayTimeVenue(ReplayVenue.from_path(src))
    syncer = VenueSync(venue)
    t = datetime(2025, 1, 1, tzinfo=UTC)
    while t <= datetime(2025, 1, 22, tzinfo=UTC):
        syncer(engine, t)
        t += timedelta(days=1)
    out = tmp_path / "export.jsonl"
    report = export_replay(engine, out)
    assert report.written == 4
    original = {r.market_id: r for r in read_replay(src).records}
    for r in read_replay(out).records:
        o = original[r.provenance["arena_market_id"].removeprefix("replay:")]
        assert [p for _, p in r.history] == [p for _, p in o.history]
        # every day's bid/ask comes back; the volume the market last recorded rides on the last point
        got = [(q.bid, q.ask) if q else (None, None) for q in (r.quote(i) for i in range(len(r.history)))]
        want = [(q.bid, q.ask) if q else (None, None) for q in (o.quote(i) for i in range(len(o.history)))]
        assert got == want
        last = r.quote(len(r.history) - 1)
        if o.market_id == "a":
            assert (last.volume, last.volume_24h) == (Decimal("900.0"), Decimal("20.0"))
        else:
            assert last is None or last.volume is None
        assert r.fee_rate == o.fee_rate
    # and a store without recorded quotes exports no quote at all
    assert all(not r.quotes for r in read_replay(out).records if r.provenance["arena_market_id"] == "replay:c")


def test_cli_sync_and_demo_skip_a_crossed_quote_and_say_why(db_url, new_url, tmp_path, capsys):
    bad = record("x", FLAT, [{"bid": 0.45, "ask": 0.41}] * 10)
    path = write(tmp_path / "r.jsonl", [*QUOTED, bad])
    assert main(["sync", "--venue", "replay", "--file", path, "--at", "2025-01-05", "--db", db_url]) == 0
    err = capsys.readouterr().err
    assert "skipped 1 malformed line(s)" in err and "line 5: history[0][2]: bid 0.45 is above ask 0.41" in err
    assert main(["demo", "--replay", path, "--start", "2025-01-05", "--cohorts", "1", "--decision-weeks", "1",
                 "--db", new_url()]) == 0
    captured = capsys.readouterr()
    assert "bid 0.45 is above ask 0.41" in captured.err and "1 malformed lines skipped" in captured.out
    assert main(["replay", "run", path, "--from", "2025-01-05", "--until", "2025-01-06", "--baselines-only",
                 "--db", new_url()]) == 0
    captured = capsys.readouterr()
    assert "bid 0.45 is above ask 0.41" in captured.err and "1 malformed lines skipped" in captured.out


def test_export_replay_round_trips_the_points_dates_and_the_resolution_date(engine, tmp_path):
    # A replay point dated D is stored as observed at D + 1 day 00:00 UTC; its export must date it D again (it
    # used to take the snapshot's own date, D + 1, so every export and re-import moved the path a day later).
    src = write(tmp_path / "plain.jsonl", strip_quotes(QUOTED))
    syncer = VenueSync(ReplayTimeVenue(ReplayVenue.from_path(src)))
    t = datetime(2025, 1, 1, tzinfo=UTC)
    while t <= datetime(2025, 1, 22, tzinfo=UTC):
        syncer(engine, t)
        t += timedelta(days=1)
    out = tmp_path / "export.jsonl"
    assert export_replay(engine, out).written == 4
    original = {r.market_id: r for r in read_replay(src).records}
    for r in read_replay(out).records:
        o = original[r.provenance["arena_market_id"].removeprefix("replay:")]
        assert r.history == o.history  # the same (date, price) pairs
        assert r.first_resolved_observation_date == o.first_resolved_observation_date == date(2025, 1, 20)
        # re-imported, the path is visible exactly when it was: the first point at 2025-01-02 00:00, not a day later
        assert ReplayVenue([r]).quote_at(r.arena_id, datetime(2025, 1, 2, tzinfo=UTC)).prices[YES] == Price.of(
            str(o.history[0][1]))


def test_a_live_snapshot_exports_as_the_day_it_was_observed():
    from arena.read.export import day_of

    assert day_of(datetime(2026, 1, 5, 14, 30, tzinfo=UTC)) == date(2026, 1, 5)  # visible again at its day's end
    assert day_of(datetime(2026, 1, 6, 0, 0, tzinfo=UTC)) == date(2026, 1, 5)  # a replay point's stamp: D + 1 00:00
    assert day_of(datetime(2026, 1, 6, 0, 0, 1, tzinfo=UTC)) == date(2026, 1, 6)
