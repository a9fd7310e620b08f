"""The replay venue: the shipped snapshot parses, nothing leaks from the future, and the writer round-trips."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from arena.domain.market import NO, YES, MarketStatus, ResolutionKind
from arena.errors import NotFound, ParseError
from arena.money import Price
from arena.venues.replay import ReplayFormatError, ReplayVenue, parse_record, read_replay, write_replay

UTC = timezone.utc
TICK = timedelta(microseconds=1)


def day(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


@pytest.fixture(scope="module")
def venue(replay_file) -> ReplayVenue:
    return ReplayVenue.from_path(replay_file)


def test_every_market_in_the_snapshot_parses(venue, replay_file):
    lines = [line for line in replay_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(venue) == len(lines) == 811
    assert venue.skipped_count == 0
    platforms = {venue.record(mid).platform for mid in venue.market_ids()}
    assert platforms == {"polymarket", "manifold"}


def test_no_point_is_visible_on_or_before_its_own_date(venue):
    for mid in venue.market_ids():
        record = venue.record(mid)
        for d, _ in record.history:
            for t in (day(d), day(d) + timedelta(hours=23, minutes=59)):
                quote = venue.quote_at(mid, t)
                if quote is not None:
                    assert quote.observed_at <= t
                    assert quote.observed_at.date() <= d  # observed at the end of an earlier day
        t = day(record.first_resolved_observation_date)
        history = venue.history_at(mid, t)
        assert len(history) == len(record.history) and all(p.at <= t for p in history)
        assert all(a.at < b.at for a, b in zip(history, history[1:]))


def test_a_point_appears_the_moment_its_day_ends(venue):
    mid = venue.market_ids()[0]
    record = venue.record(mid)
    (d0, p0), (d1, p1) = record.history[0], record.history[1]
    assert venue.quote_at(mid, day(d0 + timedelta(days=1)) - TICK) is None
    q = venue.quote_at(mid, day(d0 + timedelta(days=1)))
    assert q.yes_price() == Price.of(p0) and q.observed_at == day(d0 + timedelta(days=1))
    assert q.fetched_at == q.observed_at
    assert venue.quote_at(mid, day(d1 + timedelta(days=1))).yes_price() == Price.of(p1)
    assert venue.market_at(mid, day(d0 + timedelta(days=1)) - TICK) is None


def test_resolution_appears_only_after_its_date(venue):
    for mid in venue.market_ids():
        record = venue.record(mid)
        resolved_on = record.first_resolved_observation_date
        assert venue.resolution_at(mid, day(resolved_on)) is None
        assert venue.resolution_at(mid, day(resolved_on) + timedelta(hours=23, minutes=59, seconds=59)) is None
        res = venue.resolution_at(mid, day(resolved_on + timedelta(days=1)))
        assert res.kind is ResolutionKind.WINNER
        assert res.payout(YES if record.resolution == 1 else NO) == Price.of(1)
        assert res.resolved_at == day(resolved_on + timedelta(days=1))
        # the last quote before the resolution is visible is the last history point
        last = venue.quote_at(mid, day(resolved_on + timedelta(days=1)) - TICK)
        assert last.yes_price() == Price.of(record.history[-1][1])


def test_markets_at_lists_only_live_markets(venue):
    t = datetime(2025, 12, 1, tzinfo=UTC)
    listed = venue.markets_at(t)
    assert listed and all(m.id.startswith("replay:") for m in listed)
    for m in listed:
        record = venue.record(m.id)
        assert record.history[0][0] < t.date() < record.first_resolved_observation_date + timedelta(days=1)
        assert m.status in (MarketStatus.OPEN, MarketStatus.CLOSED)
        assert venue.quote_at(m.id, t) is not None and venue.resolution_at(m.id, t) is None
        assert m.status is MarketStatus.OPEN or m.close_time <= t
    with_resolved = venue.markets_at(t, include_resolved=True)
    assert len(with_resolved) > len(listed)
    assert {m.status for m in with_resolved} - {m.status for m in listed} == {MarketStatus.RESOLVED}
    first, last = venue.span()
    assert venue.markets_at(first - TICK) == [] and venue.markets_at(last) == []


def test_queries_need_aware_times_and_known_ids(venue):
    mid = venue.market_ids()[0]
    with pytest.raises(ValueError):
        venue.quote_at(mid, datetime(2025, 1, 1))
    with pytest.raises(NotFound):
        venue.quote_at("replay:nope", datetime(2025, 1, 1, tzinfo=UTC))


def test_write_replay_round_trips_byte_for_byte(replay_file, tmp_path):
    loaded = read_replay(replay_file)
    out = tmp_path / "copy.jsonl"
    assert write_replay(loaded.records, out) == 811
    assert out.read_bytes() == replay_file.read_bytes()
    assert read_replay(out).records == loaded.records


def good_line(**over):
    obj = {"platform": "manifold", "market_id": "abc", "question": "Will it?", "resolution": 1,
           "first_resolved_observation_date": "2025-01-10",
           "history": [["2025-01-01", 0.25], ["2025-01-05", 0.5]], "history_source": "RF"}
    obj.update(over)
    return json.dumps(obj)


def test_malformed_lines_name_their_line_and_can_be_skipped(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([
        good_line(),
        "{not json",
        good_line(market_id="late", history=[["2025-01-01", 0.2], ["2025-01-10", 0.9]]),  # look-ahead
        good_line(market_id="r2", resolution=2),
        "",
        good_line(),  # duplicate id
        good_line(market_id="ok2", market_open_datetime="2024-12-30", market_close_datetime=None),
    ]) + "\n", encoding="utf-8")
    with pytest.raises(ReplayFormatError) as info:
        read_replay(path)
    assert info.value.line == 2 and isinstance(info.value, ParseError)
    loaded = read_replay(path, skip_malformed=True)
    assert [r.market_id for r in loaded.records] == ["abc", "ok2"]
    assert [n for n, _ in loaded.skipped] == [2, 3, 4, 6]
    assert "history[1][0]" in loaded.skipped[1][1] and "look-ahead" in loaded.skipped[1][1]
    venue = ReplayVenue.from_path(path, skip_malformed=True)
    assert venue.skipped_count == 4 and len(venue) == 2


@pytest.mark.parametrize("over, fld", [
    ({"history": []}, "history"),
    ({"history": [["2025-01-05", 0.2], ["2025-01-01", 0.3]]}, "history[1][0]"),
    ({"history": [["2025-01-01", 1.2]]}, "history[0][1]"),
    ({"history": [["2025/01/01", 0.2]]}, "history[0][0]"),
    ({"resolution": True}, "resolution"),
    ({"n_points": 3}, "n_points"),
    ({"history_source": "R"}, "history_source"),
    ({"market_close_datetime": "soon"}, "market_close_datetime"),
    ({"question": ""}, "question"),
    ({"last_unresolved_observation_date": "2025-01-02"}, "last_unresolved_observation_date"),
])
def test_field_errors(over, fld):
    with pytest.raises(ReplayFormatError) as info:
        parse_record(json.loads(good_line(**over)), line=7)
    assert info.value.field == fld and str(info.value).startswith("line 7: ")


def test_write_replay_from_arena_values(tmp_path):
    out = tmp_path / "export.jsonl"
    records = [{
        "platform": "polymarket", "market_id": "0xabc", "question": "Q?", "resolution": 0,
        "first_resolved_observation_date": date(2026, 2, 1),
        "market_open_datetime": datetime(2026, 1, 1, 12, tzinfo=UTC),
        "history": [(date(2026, 1, 2), Price.of("0.535")), (date(2026, 1, 3), Decimal("0.5"))],
    }]
    assert write_replay(records, out) == 1
    (record,) = read_replay(out).records
    assert record.history == ((date(2026, 1, 2), Decimal("0.535")), (date(2026, 1, 3), Decimal("0.5")))
    assert record.history_source == "AA" and record.open_at == datetime(2026, 1, 1, 12, tzinfo=UTC)
    line = json.loads(out.read_text(encoding="utf-8"))
    assert line["n_points"] == 2 and line["last_unresolved_observation_date"] == "2026-01-03"
    with pytest.raises(ReplayFormatError):
        write_replay([{**records[0], "history": [(date(2026, 3, 1), 0.5)]}], tmp_path / "bad.jsonl")
    with pytest.raises(ReplayFormatError):
        write_replay([records[0], records[0]], tmp_path / "dup.jsonl")
    assert not (tmp_path / "bad.jsonl").exists()


def test_group_id_marks_an_exclusive_group_and_is_checked(tmp_path):
    path = tmp_path / "groups.jsonl"
    path.write_text("\n".join([
        good_line(market_id="a", group_id="who", resolution=0),
        good_line(market_id="b", group_id="who", resolution=1),
        good_line(market_id="c", resolution=1),  # stand-alone
        good_line(market_id="d", group_id="two-winners", resolution=1),
        good_line(market_id="e", group_id="two-winners", resolution=1),
        good_line(market_id="f", group_id="lonely", resolution=1),
    ]) + "\n", encoding="utf-8")
    with pytest.raises(ReplayFormatError) as info:
        read_replay(path)
    assert info.value.field == "group_id" and info.value.line == 4 and "exactly one member" in str(info.value)
    loaded = read_replay(path, skip_malformed=True)
    assert [(r.market_id, r.group_id) for r in loaded.records] == [("a", "who"), ("b", "who"), ("c", "")]
    assert [n for n, _ in loaded.skipped] == [4, 5, 6] and "one member" in loaded.skipped[2][1]
    venue = ReplayVenue(loaded.records)
    t = datetime(2025, 1, 3, tzinfo=UTC)
    groups = {m.id: m.group_id for m in venue.markets_at(t)}
    assert groups == {"replay:a": "replay:group:who", "replay:b": "replay:group:who", "replay:c": ""}
    # written back only where set, so a file without groups is unchanged
    out = tmp_path / "back.jsonl"
    write_replay(loaded.records, out)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x.get("group_id") for x in lines] == ["who", "who", None]
    assert list(lines[0])[-1] == "group_id"
    with pytest.raises(ReplayFormatError, match="one member"):
        write_replay([loaded.records[0], loaded.records[2]], tmp_path / "bad.jsonl")
    with pytest.raises(ReplayFormatError) as info:
        parse_record(json.loads(good_line(group_id=3)))
    assert info.value.field == "group_id"
