"""Fuzz the pure parsers with mutated real payloads: every case ends in a parsed object or a ParseError.

Mutations: drop keys, change types, corrupt Gamma's string-encoded arrays, put random JSON anywhere (NaN and
±inf included, which ``json.loads`` accepts). About 1,100 cases in all, a few seconds.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.domain.book import OrderBook
from arena.errors import ParseError
from arena.venues import manifold_parse as mp
from arena.venues import polymarket_parse as pp
from arena.venues import replay

FETCHED = datetime(2026, 11, 1, tzinfo=timezone.utc)
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fuzz(n: int) -> settings:
    return settings(FUZZ, max_examples=n)

TRICKY_STRINGS = [
    "", " ", "0", "1", "0.5", "-0.1", "1.0000001", "1e400", "NaN", "Infinity", "null", "true", "[]", "{}",
    '["1"]', '["Yes"]', '["Yes", "No"]', '["0.5", "0.5"]', '["1", "0"]', '["0", "0"]', '["a", "b", "c"]',
    "[1, 2]", '[null, "x"]', '"[\\"1\\", \\"0\\"]"', "[", '["1", "0"', "2025-03-28 04:34:20+00", "2026-02-30",
    "2025-13-01T00:00:00Z", "+00:00:00", "yesterday", "0x" + "f" * 64, "9" * 80, "resolved", "proposed",
]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12), st.sampled_from(TRICKY_STRINGS),
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def all_paths(obj: Any, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    out = [prefix]
    if depth >= 4:
        return out
    if isinstance(obj, dict):
        for key, value in obj.items():
            out += all_paths(value, prefix + (key,), depth + 1)
    elif isinstance(obj, list):
        for i, value in enumerate(obj[:4]):
            out += all_paths(value, prefix + (i,), depth + 1)
    return out


def corrupt_string(data: st.DataObject, text: str) -> Any:
    how = data.draw(st.sampled_from(["truncate", "garble", "wrap", "element", "tricky"]))
    if how == "truncate":
        return text[: data.draw(st.integers(min_value=0, max_value=max(0, len(text) - 1)))]
    if how == "garble":
        pos = data.draw(st.integers(min_value=0, max_value=len(text)))
        return text[:pos] + data.draw(st.sampled_from(['"', "]", ",", "x", "\\", "[", "{"])) + text[pos:]
    if how == "wrap":
        return json.dumps({"value": text})
    if how == "element":
        try:
            items = json.loads(text)
        except ValueError:
            return text + "]"
        if isinstance(items, list):
            items.append(data.draw(scalars.filter(lambda v: not isinstance(v, float) or v == v)))
            return json.dumps(items)
        return json.dumps([items])
    return data.draw(st.sampled_from(TRICKY_STRINGS))


def mutate(data: st.DataObject, base: Any, max_mutations: int = 3) -> Any:
    root = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(min_value=1, max_value=max_mutations))):
        paths = all_paths(root)
        top = [p for p in paths if len(p) == 1]
        path = data.draw(st.sampled_from(top)) if top and data.draw(st.booleans()) else data.draw(
            st.sampled_from(paths))
        if not path:
            root = data.draw(json_values)
            continue
        parent = root
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        current = parent[key]
        op = data.draw(st.sampled_from(["delete", "random", "retype", "corrupt", "null"]))
        if op == "delete":
            del parent[key]
        elif op == "null":
            parent[key] = None
        elif op == "retype":
            parent[key] = str(current) if not isinstance(current, str) else data.draw(
                st.sampled_from([0, 1, 0.5, True, [current], {"v": current}]))
        elif op == "corrupt" and isinstance(current, str):
            parent[key] = corrupt_string(data, current)
        else:
            parent[key] = data.draw(json_values)
    return root


def expect_parsed_or_parse_error(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except ParseError:
        return None


@pytest.fixture(scope="module")
def gamma_markets(sample):
    rows = [sample("polymarket/" + name) for name in (
        "gamma_market_active_5m_updown.json", "gamma_market_closed_resolved_early_no.json",
        "gamma_market_closed_resolved_accepting_orders_true.json",
        "gamma_market_closed_resolved_sports_moneyline.json", "gamma_market_closed_resolved_50_50.RECONSTRUCTED.json",
    )]
    rows += sample("polymarket/gamma_markets_list_active.json")
    rows += sample("polymarket/gamma_markets_list_legacy_closed.json")
    for event in sample("polymarket/gamma_events_list_active.json"):
        rows += event["markets"]
    for row in rows:  # the nested events make mutation paths long; keep one short summary
        if row.get("events"):
            row["events"] = [{"id": row["events"][0].get("id"), "negRisk": row["events"][0].get("negRisk")}]
    return rows


@pytest.fixture(scope="module")
def clob_payloads(sample):
    return [
        ("book", sample("polymarket/clob_book_2026_format.UNATTRIBUTED.json")),
        ("book", sample("polymarket/clob_book_2024_format.json")),
        ("history", sample("polymarket/clob_prices_history.UNATTRIBUTED.json")),
        ("history", sample("polymarket/clob_prices_history_empty.RECONSTRUCTED.json")),
        ("midpoint", sample("polymarket/clob_midpoint.RECONSTRUCTED.json")),
        ("price", sample("polymarket/clob_price.RECONSTRUCTED.json")),
        ("spread", sample("polymarket/clob_spread.RECONSTRUCTED.json")),
        ("clob_market", sample("polymarket/clob_market_closed_with_winner.json")),
        ("clob_market", sample("polymarket/clob_market_open_negrisk_2024.json")),
        ("ws", sample("polymarket/ws_market_resolved_event.json")),
    ]


@pytest.fixture(scope="module")
def manifold_markets(sample):
    rows = list(sample("manifold/markets_list.json"))
    rows.append(sample("manifold/market_full_binary_resolved_no.official_doc_2023.json"))
    rows.append(sample("manifold/market_full_multiple_choice.RECONSTRUCTED.json"))
    rows.append(sample("manifold/market_full_free_response_dpm.official_doc.json"))
    return rows


@pytest.fixture(scope="module")
def replay_lines(replay_file):
    with open(replay_file, encoding="utf-8") as fh:
        lines = [json.loads(next(fh)) for _ in range(5)]
    for line in lines:  # shorter histories keep mutation paths meaningful
        line["history"] = line["history"][:6]
        line["n_points"] = len(line["history"])
        line["history_source"] = line["history_source"][:6]
        line["last_unresolved_observation_date"] = line["history"][-1][0]
    return lines


@fuzz(350)
@given(data=st.data())
def test_fuzz_gamma_market(gamma_markets, data):
    raw = mutate(data, data.draw(st.sampled_from(gamma_markets)))
    vm = expect_parsed_or_parse_error(pp.parse_gamma_market, raw, fetched_at=FETCHED)
    if vm is not None:
        assert vm.market.id == f"polymarket:{vm.native_id}"
        assert (vm.resolution is None) != (vm.pending_reason == "")
        assert vm.quote is None or vm.quote.observed_at <= FETCHED


@fuzz(100)
@given(data=st.data())
def test_fuzz_gamma_events_and_pages(sample, data):
    events = sample("polymarket/gamma_events_list_active.json")
    raw = mutate(data, events, max_mutations=4)
    expect_parsed_or_parse_error(pp.parse_gamma_events, raw, fetched_at=FETCHED)
    page = mutate(data, sample("polymarket/gamma_markets_list_active.json"), max_mutations=2)
    result = expect_parsed_or_parse_error(pp.parse_gamma_markets, page, fetched_at=FETCHED)
    if result is not None:
        parsed, rejected = result
        assert all(isinstance(err, ParseError) for _, err in rejected)


@fuzz(250)
@given(data=st.data())
def test_fuzz_clob_payloads(clob_payloads, data):
    kind, base = data.draw(st.sampled_from(clob_payloads))
    raw = mutate(data, base)
    parser = {
        "book": lambda r: pp.parse_book(r, fetched_at=FETCHED), "history": pp.parse_prices_history,
        "midpoint": pp.parse_midpoint, "price": pp.parse_price, "spread": pp.parse_spread,
        "clob_market": pp.parse_clob_market, "ws": pp.parse_ws_market_resolved,
    }[kind]
    result = expect_parsed_or_parse_error(parser, raw)
    if isinstance(result, OrderBook):
        assert all(a.price > b.price for a, b in zip(result.bids, result.bids[1:]))
        assert all(a.price < b.price for a, b in zip(result.asks, result.asks[1:]))
    if isinstance(result, pp.ClobMarket):
        result.resolution("polymarket:x")


@fuzz(250)
@given(data=st.data())
def test_fuzz_manifold_market(manifold_markets, data):
    raw = mutate(data, data.draw(st.sampled_from(manifold_markets)))
    vm = expect_parsed_or_parse_error(mp.parse_manifold_market, raw, fetched_at=FETCHED)
    if vm is not None:
        assert vm.market.id == f"manifold:{vm.native_id}"
        if vm.quote is not None:
            assert set(vm.quote.prices) <= set(vm.market.outcomes)


@fuzz(100)
@given(data=st.data())
def test_fuzz_manifold_bets_and_probs(sample, data):
    bets = sample("manifold/bets.official_doc.json") + sample("manifold/multi_bet_response_mc.official_doc_2025.json")
    raw = mutate(data, bets)
    expect_parsed_or_parse_error(mp.probability_history, raw)
    probs = mutate(data, data.draw(st.sampled_from([
        sample("manifold/market_prob_binary.official_doc.json"), sample("manifold/market_prob_multi.official_doc.json"),
    ])), max_mutations=1)
    expect_parsed_or_parse_error(mp.parse_market_prob, probs)
    batch = mutate(data, sample("manifold/market_probs_batch.official_doc.json"), max_mutations=1)
    expect_parsed_or_parse_error(mp.parse_market_probs, batch)


@fuzz(100)
@given(data=st.data())
def test_fuzz_replay_records(replay_lines, data):
    raw = mutate(data, data.draw(st.sampled_from(replay_lines)))
    record = expect_parsed_or_parse_error(replay.parse_record, raw, line=3)
    if record is not None:
        assert all(d < record.first_resolved_observation_date for d, _ in record.history)
        assert replay.parse_record(json.loads(json.dumps(record.to_json(), allow_nan=False))) == record
