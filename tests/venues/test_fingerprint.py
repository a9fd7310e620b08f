"""The Gamma payload fingerprint covers what the parser reads and nothing else, read from a payload's bytes through
its head; the volatile keys left out are read by the parser's own field readers (venues.fingerprint)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import orjson
import pytest

from arena.venues.fingerprint import GAMMA_KEYS, VOLATILE, gamma_head, gamma_volatile
from arena.venues.fingerprint import gamma_fingerprint as fingerprint_of_head
from arena.venues.polymarket_payloads import GammaMarketPayload

FETCHED = datetime(2025, 11, 16, tzinfo=timezone.utc)
BASE = {
    "id": "517310", "question": "Will it rain?", "outcomes": '["Yes", "No"]', "outcomePrices": '["0.2", "0.8"]',
    "clobTokenIds": '["1", "2"]', "active": True, "closed": False, "enableOrderBook": True,
    "endDate": "2025-12-31T12:00:00Z", "updatedAt": "2025-11-15T18:05:29.330507Z", "volumeNum": 1000.5,
    "volume24hr": 12.0, "liquidityNum": 50.0, "bestBid": 0.19, "bestAsk": 0.21, "description": "Rain.",
    "events": [{"id": "77", "volume": 5000.0, "title": "Weather"}], "lastTradePrice": 0.2,
}


def gamma_fingerprint(payload: object) -> str | None:
    """The fingerprint of `payload` as the venue would send it (its JSON bytes); None when it has no head."""
    head = gamma_head(payload if isinstance(payload, bytes) else orjson.dumps(payload))
    return None if head is None else fingerprint_of_head(head)


def test_every_key_the_parser_reads_is_fingerprinted_or_read_as_volatile():
    declared = {f.alias or name for name, f in GammaMarketPayload.model_fields.items()}
    assert set(GAMMA_KEYS) | set(VOLATILE) == declared
    assert not set(GAMMA_KEYS) & set(VOLATILE)


@pytest.mark.parametrize("key, value", [
    ("outcomePrices", '["0.21", "0.79"]'), ("bestBid", 0.2), ("description", "Rain!"), ("closed", True),
    ("endDate", "2026-01-01T00:00:00Z"), ("events", [{"id": "78", "volume": 5000.0}]), ("events", []),
    ("closed", None), ("feeSchedule", {"rate": "0.02"}), ("question", "Will it snow?"),
])
def test_a_change_the_parser_reads_changes_the_fingerprint(key, value):
    assert gamma_fingerprint({**BASE, key: value}) != gamma_fingerprint(BASE)


@pytest.mark.parametrize("events", [["77"], {"id": "77"}, [{}], [{"name": "77"}], None, [], "77"])
def test_the_first_event_id_is_told_apart_from_any_raw_events_value(events):
    # the parse reads only the first event's id; a value standing for that id must not look like another
    # events value (a list of ids or an object is malformed or another id, and must be parsed)
    assert gamma_fingerprint({**BASE, "events": events}) != gamma_fingerprint(BASE)
    without = {k: v for k, v in BASE.items() if k != "events"}
    assert len({gamma_fingerprint(without), gamma_fingerprint({**BASE, "events": None}),
                gamma_fingerprint({**BASE, "events": [{}]}), gamma_fingerprint({**BASE, "events": []})}) == 4


def test_absent_and_null_are_told_apart():
    without = {k: v for k, v in BASE.items() if k != "closed"}
    assert gamma_fingerprint({**BASE, "closed": None}) != gamma_fingerprint(without)


@pytest.mark.parametrize("key, value", [
    ("volumeNum", 2000.0), ("volume24hr", 1.0), ("liquidityNum", 1.0), ("updatedAt", "2025-11-15T20:00:00Z"),
    ("lastTradePrice", 0.9), ("events", [{"id": "77", "volume": 9999.0, "title": "Weather!"}]),
])
def test_what_the_parser_ignores_or_reads_as_volatile_leaves_it_alone(key, value):
    assert gamma_fingerprint({**BASE, key: value}) == gamma_fingerprint(BASE)


def test_what_has_no_head_is_never_fingerprinted():
    text = orjson.dumps(BASE)
    assert gamma_fingerprint(text.replace(b'"bestBid":0.19', b'"bestBid":NaN')) is None  # not JSON: parsed
    assert gamma_fingerprint(orjson.dumps([BASE])) is None  # not an object
    assert gamma_fingerprint(b'{"id": "1", "question": "Q?"') is None  # truncated


def test_the_bytes_are_hashed_not_the_key_order_or_an_id_past_64_bits():
    text = orjson.dumps(BASE)
    reordered = orjson.dumps(dict(reversed(list(BASE.items()))))
    assert gamma_fingerprint(reordered) == gamma_fingerprint(text)  # each key's bytes, in the declared order
    assert gamma_fingerprint(text.replace(b'"517310"', b"1" + b"0" * 30)) == gamma_fingerprint(text)  # id: the key
    # the same value written otherwise is another fingerprint: it costs a parse, never a skipped one
    assert gamma_fingerprint(text.replace(b'"Rain."', b'"Ra\\u0069n."')) != gamma_fingerprint(text)
    assert gamma_fingerprint(text.replace(b'"bestBid":0.19', b'"bestBid":0.190')) != gamma_fingerprint(text)


@pytest.mark.parametrize("figures", [
    b"", b',"volumeNum":1000000000000000000000000000000', b',"volume24hr":18446744073709551616',
    b',"liquidityNum":-100000000000000000000', b',"volumeNum":null,"volume":"12.5","updatedAt":"2025-11-15"',
    b',"volumeNum":"lots"', b',"updatedAt":5'])
def test_a_head_reads_the_volatile_values_as_the_whole_decode_does(figures):
    # a parsed entry is decoded by orjson, which gives an integer past 64 bits as a float where the head holds
    # an int: the cheap read must agree with the whole decode's, or refuse (then the entry is parsed)
    text = orjson.dumps({k: v for k, v in BASE.items() if k not in VOLATILE})[:-1] + figures + b"}"
    head, whole = gamma_head(text), orjson.loads(text)
    assert head is not None
    read = gamma_volatile(head, FETCHED)
    assert read == gamma_volatile(whole, FETCHED) or read is None
    assert (read is None) == (figures in (b',"volumeNum":"lots"', b',"updatedAt":5'))


def test_volatile_reads_follow_the_parser():
    from arena.venues.polymarket_parse import parse_gamma_market

    raw = {**BASE, "volume": "7", "liquidityNum": None, "liquidity": "3.5", "updatedAt": "2030-01-01T00:00:00Z"}
    v = gamma_volatile(raw, FETCHED)
    vm = parse_gamma_market(raw, fetched_at=FETCHED)
    assert v is not None and vm.quote is not None
    assert (v.volume, v.volume_24h, v.liquidity) == (vm.market.volume, vm.market.volume_24h, vm.market.liquidity)
    assert v.observed_at == vm.quote.observed_at == FETCHED  # a future updatedAt is clamped to the fetch
    assert gamma_volatile({**BASE, "updatedAt": json.dumps(BASE["updatedAt"]).strip('"')}, FETCHED) is not None


@pytest.mark.parametrize("key, value", [("volumeNum", "lots"), ("volume24hr", True), ("updatedAt", "yesterday"),
                                        ("updatedAt", 5)])
def test_a_malformed_volatile_value_is_not_read_cheaply(key, value):
    assert gamma_volatile({**BASE, key: value}, FETCHED) is None


@pytest.mark.parametrize("updated", ["2025-11-15T18:05:29.330507Z", "2025-11-15T18:05:29+00:00",
                                     "2025-11-15 18:05:29+00", "2025-11-15T20:05:29+02:00", "2025-11-15",
                                     " 2025-11-15T18:05:29Z ", "2025-11-15T18:05:29", None, ""])
def test_volatile_times_follow_the_parser_in_every_format(updated):
    # the usual UTC forms are read by a shortcut; every form must give the parser's observed time
    from arena.venues.polymarket_parse import parse_gamma_market

    raw = {**BASE, "updatedAt": updated}
    v = gamma_volatile(raw, FETCHED)
    vm = parse_gamma_market(raw, fetched_at=FETCHED)
    assert v is not None and vm.quote is not None
    assert v.observed_at == vm.quote.observed_at and v.observed_at.utcoffset().total_seconds() == 0


@pytest.mark.parametrize("figures", [{"volumeNum": None, "volume": "12.5"}, {"volumeNum": 3, "liquidityNum": "4"},
                                     {"volume24hr": "0.25", "liquidityNum": None, "liquidity": None}])
def test_volatile_figures_follow_the_parser_in_every_shape(figures):
    from arena.venues.polymarket_parse import parse_gamma_market

    raw = {**BASE, **figures}
    v = gamma_volatile(raw, FETCHED)
    m = parse_gamma_market(raw, fetched_at=FETCHED).market
    assert v is not None and (v.volume, v.volume_24h, v.liquidity) == (m.volume, m.volume_24h, m.liquidity)
