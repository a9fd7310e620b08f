"""Recorded quotes in the replay format: bid/ask and volumes per history point, checked, served without
look-ahead, and written back unchanged; a line with a crossed or out-of-range quote is malformed."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from decimal import Decimal

import pytest

from arena.money import Price
from arena.venues.replay import PointQuote, ReplayFormatError, ReplayVenue, parse_record, read_replay, write_replay

UTC = timezone.utc


def line(**over) -> str:
    obj = {"platform": "polymarket", "market_id": "q1", "question": "Will it?", "resolution": 1,
           "first_resolved_observation_date": "2025-01-10",
           "history": [["2025-01-01", 0.25, {"bid": 0.24, "ask": 0.27, "volume": 1000, "volume_24h": 50.5}],
                       ["2025-01-02", 0.3],
                       ["2025-01-03", 0.5, {"ask": 0.52}]]}
    obj.update(over)
    return json.dumps(obj)


def test_a_point_may_record_bid_ask_and_volumes():
    record = parse_record(json.loads(line()))
    assert record.quotes == (PointQuote(Decimal("0.24"), Decimal("0.27"), Decimal("1000"), Decimal("50.5")), None,
                             PointQuote(ask=Decimal("0.52")))
    assert record.quote(1) is None and record.quote(2).bid is None
    back = record.to_json()["history"]
    assert back == json.loads(line())["history"]  # written as read, points without quotes stay [date, p]


def test_a_file_without_quotes_has_none():
    record = parse_record(json.loads(line(history=[["2025-01-01", 0.25], ["2025-01-02", 0.3]])))
    assert record.quotes == () and record.fee_rate is None
    assert "fee_rate" not in record.to_json()


@pytest.mark.parametrize("point, fld, words", [
    ({"bid": 0.6, "ask": 0.5}, "history[0][2]", "bid 0.6 is above ask 0.5"),
    ({"bid": -0.1}, "history[0][2].bid", "outside [0, 1]"),
    ({"ask": 1.5}, "history[0][2].ask", "outside [0, 1]"),
    ({"bid": "x"}, "history[0][2].bid", "not a number"),
    ({"volume": -3}, "history[0][2].volume", "≥ 0"),
    ({"volume_24h": True}, "history[0][2].volume_24h", "expected a number"),
    ({"spread": 0.1}, "history[0][2]", "unknown key 'spread'"),
    ([0.4, 0.5], "history[0][2]", "expected an object"),
])
def test_a_bad_quote_names_its_field(point, fld, words):
    with pytest.raises(ReplayFormatError) as info:
        parse_record(json.loads(line(history=[["2025-01-01", 0.5, point]])), line=4)
    assert info.value.field == fld and words in str(info.value) and str(info.value).startswith("line 4: ")


def test_a_crossed_or_out_of_range_quote_skips_its_line_and_says_why(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join([
        line(),
        line(market_id="crossed", history=[["2025-01-01", 0.5, {"bid": 0.55, "ask": 0.45}]]),
        line(market_id="high", history=[["2025-01-01", 0.5, {"ask": 1.01}]]),
        line(market_id="fee", fee_rate=2),
    ]) + "\n", encoding="utf-8")
    with pytest.raises(ReplayFormatError) as info:
        read_replay(path)
    assert info.value.line == 2 and "above ask" in str(info.value)
    loaded = read_replay(path, skip_malformed=True)
    assert [r.market_id for r in loaded.records] == ["q1"]
    assert [n for n, _ in loaded.skipped] == [2, 3, 4]
    assert "bid 0.55 is above ask 0.45" in loaded.skipped[0][1]
    assert "history[0][2].ask" in loaded.skipped[1][1] and "outside [0, 1]" in loaded.skipped[1][1]
    assert "fee_rate" in loaded.skipped[2][1]


def test_quotes_are_served_with_their_point_and_never_before_it():
    venue = ReplayVenue([parse_record(json.loads(line(fee_rate=0.02)))])
    mid = "replay:q1"
    q = venue.quote_at(mid, datetime(2025, 1, 2, tzinfo=UTC))  # the 2025-01-01 point is visible from here
    assert (q.yes_price(), q.bid, q.ask) == (Price.of("0.25"), Price.of("0.24"), Price.of("0.27"))
    m = venue.market_at(mid, datetime(2025, 1, 2, tzinfo=UTC))
    assert (m.volume, m.volume_24h) == (1000.0, 50.5)
    q = venue.quote_at(mid, datetime(2025, 1, 3, tzinfo=UTC))  # a point without quotes: none carried forward
    assert q.yes_price() == Price.of("0.3") and q.bid is None and q.ask is None
    m = venue.market_at(mid, datetime(2025, 1, 3, tzinfo=UTC))
    assert (m.volume, m.volume_24h) == (1000.0, 50.5)  # the last recorded volume stays the market's
    q = venue.quote_at(mid, datetime(2025, 1, 4, tzinfo=UTC))
    assert q.bid is None and q.ask == Price.of("0.52")
    assert venue.fee_rate(mid) == Decimal("0.02") and venue.extras(mid) == {"fee_rate": "0.02"}
    plain = ReplayVenue([parse_record(json.loads(line(history=[["2025-01-01", 0.25]])))])
    m = plain.market_at(mid, datetime(2025, 1, 2, tzinfo=UTC))
    assert m.volume is None and plain.quote_at(mid, datetime(2025, 1, 2, tzinfo=UTC)).ask is None
    assert plain.fee_rate(mid) == 0 and plain.extras(mid) == {}


def test_write_replay_takes_arena_values_and_round_trips(tmp_path):
    out = tmp_path / "q.jsonl"
    records = [{
        "platform": "polymarket", "market_id": "0xq", "question": "Q?", "resolution": 0,
        "first_resolved_observation_date": date(2026, 2, 1), "fee_rate": Decimal("0.01"),
        "history": [(date(2026, 1, 2), Price.of("0.5"), {"bid": Price.of("0.49"), "ask": Decimal("0.51")}),
                    (date(2026, 1, 3), Decimal("0.4"), {"volume": 12.5})],
    }]
    assert write_replay(records, out) == 1
    (record,) = read_replay(out).records
    assert record.quotes == (PointQuote(Decimal("0.49"), Decimal("0.51")), PointQuote(volume=Decimal("12.5")))
    assert record.fee_rate == Decimal("0.01")
    again = tmp_path / "again.jsonl"
    write_replay(read_replay(out).records, again)
    assert again.read_bytes() == out.read_bytes()
    with pytest.raises(ReplayFormatError):  # the writer refuses what the reader would
        write_replay([{**records[0], "history": [(date(2026, 1, 2), 0.5, {"bid": 0.6, "ask": 0.5})]}],
                     tmp_path / "bad.jsonl")
    assert not (tmp_path / "bad.jsonl").exists()


def test_the_shipped_snapshot_with_quotes_added_round_trips(replay_file, tmp_path):
    records = read_replay(replay_file).records[:40]
    quoted = []
    for r in records:
        history = [[d.isoformat(), float(p), {"bid": max(0.0, float(p) - 0.01), "ask": min(1.0, float(p) + 0.01),
                                               "volume": 100.0 * (i + 1)}] for i, (d, p) in enumerate(r.history)]
        quoted.append({**r.to_json(), "history": history})
    path = tmp_path / "quoted.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in quoted), encoding="utf-8")
    loaded = read_replay(path)
    assert len(loaded.records) == 40 and all(len(r.quotes) == len(r.history) for r in loaded.records)
    assert [r.history for r in loaded.records] == [r.history for r in records]  # prices untouched
    out = tmp_path / "back.jsonl"
    write_replay(loaded.records, out)
    assert read_replay(out).records == loaded.records
