"""Polymarket parsers on the real samples: ids, stringly arrays, quotes, resolution rules, CLOB payloads."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from arena.domain.market import NO, YES, MarketKind, MarketStatus, ResolutionKind
from arena.errors import ParseError
from arena.money import Price
from arena.venues import UnsupportedMarket
from arena.venues import polymarket_parse as pp

P = "polymarket/"


def gamma(sample, name):
    return pp.parse_gamma_market(sample(P + name), fetched_at=datetime(2026, 11, 1, tzinfo=timezone.utc))


# ------------------------------------------------------------------------------------------- Gamma markets


CAPTURED = datetime(2026, 1, 31, 19, 0, tzinfo=timezone.utc)  # when the active list was recorded


def test_active_list_markets_parse_with_ids_quotes_and_groups(sample):
    fetched_at = CAPTURED
    parsed, rejected = pp.parse_gamma_markets(sample(P + "gamma_markets_list_active.json"), fetched_at=fetched_at)
    assert rejected == []
    by_id = {vm.native_id: vm for vm in parsed}
    assert set(by_id) == {"517310", "517311", "521945", "546612"}
    vm = by_id["517310"]
    assert vm.market.id == "polymarket:517310"
    assert vm.market.kind is MarketKind.BINARY
    assert vm.market.outcomes == (YES, NO)
    assert vm.market.status is MarketStatus.OPEN
    # still trading a month after its endDate (2025-12-31): open, but no new paper bets
    assert not vm.tradable and vm.skip_reason == "past_end_date"
    assert not vm.market.is_open_at(fetched_at)
    assert vm.resolution is None and vm.pending_reason == pp.OPEN
    assert vm.quote.prices == {YES: Price.of("0.029")}
    assert vm.quote.price(NO) == Price.of("0.971")
    assert vm.quote.bid == Price.of("0.02") and vm.quote.ask == Price.of("0.038")
    assert vm.quote.observed_at == datetime(2026, 1, 31, 18, 5, 29, 330507, tzinfo=timezone.utc)
    assert vm.quote.fetched_at == fetched_at
    # token ids stay exact strings (77 digits, beyond int64)
    assert vm.token_ids[YES] == "101676997363687199724245607342877036148401850938023978421879460310389391082353"
    assert isinstance(vm.token_for(NO), str) and len(vm.token_for(NO)) > 70
    assert vm.condition_id.startswith("0x") and len(vm.condition_id) == 66
    assert vm.neg_risk and vm.neg_risk_market_id.startswith("0x")
    assert vm.group_item_title == "<250k"
    assert vm.market.group_id == "polymarket:event:16282"
    assert vm.market.volume == pytest.approx(1018500.561838)
    assert vm.market.close_time == datetime(2025, 12, 31, 12, tzinfo=timezone.utc)
    # a missing bestBid is None, not 0
    assert by_id["521945"].quote.bid is None and by_id["521945"].quote.ask == Price.of("0.014")
    # a missing endDate leaves no close time
    assert by_id["546612"].market.close_time is None and by_id["546612"].end_date is None
    assert by_id["546612"].neg_risk is False and by_id["546612"].neg_risk_market_id == ""
    assert by_id["546612"].tradable and by_id["546612"].skip_reason == ""
    # before its endDate the same market is tradable
    early = pp.parse_gamma_market(sample(P + "gamma_markets_list_active.json")[0],
                                  fetched_at=datetime(2025, 6, 1, tzinfo=timezone.utc))
    assert early.tradable and early.market.is_open_at(datetime(2025, 6, 1, tzinfo=timezone.utc))


def test_up_down_market_keeps_labels_and_maps_index_0_to_yes(sample):
    vm = pp.parse_gamma_market(sample(P + "gamma_market_active_5m_updown.json"),
                               fetched_at=datetime(2026, 3, 11, 16, tzinfo=timezone.utc))
    assert vm.market.outcome_labels == ("Up", "Down")
    assert vm.market.label(YES) == "Up"
    assert vm.quote.yes_price() == Price.of("0.505")
    assert vm.fee_rate is None  # fees enabled but no feeSchedule in this sample
    assert vm.tradable


def test_resolved_no_before_end_date(sample):
    vm = gamma(sample, "gamma_market_closed_resolved_early_no.json")
    assert vm.market.status is MarketStatus.RESOLVED
    assert vm.resolution.kind is ResolutionKind.WINNER
    assert vm.resolution.payout(NO) == Price.of(1) and vm.resolution.payout(YES) == Price.of(0)
    assert vm.resolution.market_id == "polymarket:1460332"
    assert vm.resolution.resolved_at == datetime(2026, 3, 19, 23, 20, 15, tzinfo=timezone.utc)  # umaEndDate
    assert vm.uma_resolution_status == "resolved" and vm.uma_resolution_statuses == ("proposed",)
    assert vm.market.volume is None  # no volume keys at all
    assert vm.end_date.year == 2028 and vm.market.close_time == vm.closed_time
    assert not vm.tradable and vm.skip_reason == "closed"


def test_resolved_yes_with_accepting_orders_and_no_uma_status(sample):
    vm = gamma(sample, "gamma_market_closed_resolved_accepting_orders_true.json")
    assert vm.accepting_orders is True and vm.uma_resolution_status == ""
    assert vm.uma_resolution_statuses == ()
    assert vm.resolution is not None and vm.resolution.payout(YES) == Price.of(1)
    assert not vm.tradable


def test_team_named_outcomes_settle_by_index_not_by_label(sample):
    vm = gamma(sample, "gamma_market_closed_resolved_sports_moneyline.json")
    assert vm.market.outcome_labels == ("FaZe", "illwill")
    assert vm.resolution.payouts == {YES: Price.of(1), NO: Price.of(0)}
    assert vm.market.label(YES) == "FaZe"
    assert vm.closed_time == datetime(2026, 4, 5, 19, 37, 33, tzinfo=timezone.utc)  # "2026-04-05 19:37:33+00"
    assert vm.fee_rate == Decimal("0.03")

    swapped = sample(P + "gamma_market_closed_resolved_sports_moneyline.json")
    swapped["outcomePrices"] = '["0", "1"]'
    vm2 = pp.parse_gamma_market(swapped, fetched_at=datetime(2026, 11, 1, tzinfo=timezone.utc))
    assert vm2.resolution.payouts == {YES: Price.of(0), NO: Price.of(1)}  # illwill (index 1) won


def test_fifty_fifty_confirmed_by_uma_status_pays_half(sample):
    vm = gamma(sample, "gamma_market_closed_resolved_50_50.RECONSTRUCTED.json")
    assert vm.resolution.kind is ResolutionKind.PROBABILISTIC
    assert vm.resolution.payout(YES) == Price.of("0.5") and vm.resolution.payout(NO) == Price.of("0.5")
    assert vm.resolution.yes_outcome() == 0.5


def test_fifty_fifty_without_confirmation_stays_pending(sample, fetched_at):
    raw = sample(P + "gamma_market_closed_resolved_50_50.RECONSTRUCTED.json")
    raw.pop("umaResolutionStatus")
    vm = pp.parse_gamma_market(raw, fetched_at=fetched_at)
    assert vm.resolution is None and vm.pending_reason == pp.FIFTY_FIFTY_UNCONFIRMED
    assert vm.market.status is MarketStatus.CLOSED
    # the status history ending in "resolved" confirms it when the singular status is absent
    raw["umaResolutionStatuses"] = '["proposed", "resolved"]'
    assert pp.parse_gamma_market(raw, fetched_at=fetched_at).resolution.kind is ResolutionKind.PROBABILISTIC
    # so does the CLOB's is_50_50_outcome
    raw["umaResolutionStatuses"] = "[]"
    clob = pp.parse_clob_market({**sample(P + "clob_market_closed_with_winner.json"), "is_50_50_outcome": True,
                                 "tokens": []})
    assert pp.parse_gamma_market(raw, fetched_at=fetched_at, clob=clob).resolution is not None


@pytest.mark.parametrize("status, reason", [("proposed", pp.UMA_PROPOSED), ("disputed", pp.UMA_DISPUTED)])
def test_uma_proposed_or_disputed_is_never_settled_early(sample, fetched_at, status, reason):
    raw = sample(P + "gamma_market_closed_resolved_early_no.json")
    raw["umaResolutionStatus"] = status
    vm = pp.parse_gamma_market(raw, fetched_at=fetched_at)
    assert vm.resolution is None and vm.pending_reason == reason


def test_closed_with_undecided_prices_is_pending(sample, fetched_at):
    raw = sample(P + "gamma_market_closed_resolved_early_no.json")
    raw["outcomePrices"] = '["0.999", "0.001"]'
    vm = pp.parse_gamma_market(raw, fetched_at=fetched_at)
    assert vm.resolution is None and vm.pending_reason == pp.CLOSED_UNDECIDED


def test_open_market_with_terminal_prices_does_not_settle(sample, fetched_at):
    raw = sample(P + "gamma_market_active_5m_updown.json")
    raw["outcomePrices"] = '["1", "0"]'
    vm = pp.parse_gamma_market(raw, fetched_at=fetched_at)
    assert vm.resolution is None and vm.pending_reason == pp.OPEN


def test_legacy_closed_markets_are_unresolvable_and_untradable(sample, fetched_at):
    parsed, rejected = pp.parse_gamma_markets(sample(P + "gamma_markets_list_legacy_closed.json"),
                                              fetched_at=fetched_at)
    assert rejected == []
    by_id = {vm.native_id: vm for vm in parsed}
    for vm in by_id.values():
        assert vm.resolution is None
        assert vm.pending_reason == pp.LEGACY_UNRESOLVABLE
        assert vm.legacy_amm and not vm.tradable
    assert by_id["12"].outcome_prices == (Decimal(0), Decimal(0))
    # 40-digit prices are read exactly, then quantized to a ppm for the quote
    assert by_id["19"].outcome_prices[0] == Decimal("0.000001011082052522541417308141468657552")
    assert by_id["19"].quote.yes_price() == Price(1)
    assert by_id["43"].market.outcome_labels == ("Long", "Short")


def test_placeholder_member_without_prices_is_not_tradable(sample, fetched_at):
    events = pp.parse_gamma_events(sample(P + "gamma_events_list_active.json"), fetched_at=fetched_at)
    fed = next(e for e in events if e.id == "15398")
    assert fed.neg_risk and fed.neg_risk_augmented and fed.rejected == ()
    person_a = next(vm for vm in fed.markets if vm.group_item_title == "Person A")
    assert person_a.quote is None and not person_a.tradable
    assert person_a.resolution is None
    assert all(vm.market.group_id == "polymarket:event:15398" for vm in fed.markets)
    # the stray trailing space of a member label is trimmed
    assert any(vm.group_item_title == "No Announcement by June 30" for vm in fed.markets)


def test_open_event_can_hold_resolved_members(sample, fetched_at):
    captured = datetime(2025, 6, 28, tzinfo=timezone.utc)
    events = pp.parse_gamma_events(sample(P + "gamma_events_list_active.json"), fetched_at=captured)
    gpt5 = next(e for e in events if e.id == "15042")
    assert not gpt5.neg_risk and not gpt5.closed
    states = {vm.native_id: vm for vm in gpt5.markets}
    assert states["532854"].resolution.payout(NO) == Price.of(1)
    assert states["514502"].resolution.payout(NO) == Price.of(1)
    assert states["517603"].resolution is None and states["517603"].tradable
    # a ladder of independent binaries is no exclusive group: no group_id, so no Σ P = 1 check
    assert all(vm.market.group_id == "" for vm in gpt5.markets)


def test_only_neg_risk_markets_carry_their_event_as_group(sample, fetched_at):
    rows = sample(P + "gamma_markets_list_active.json")
    parsed, _ = pp.parse_gamma_markets(rows, fetched_at=fetched_at)
    assert parsed and all(bool(vm.market.group_id) == vm.neg_risk for vm in parsed)
    assert any(vm.neg_risk for vm in parsed)


def test_keyset_page_and_cursor(sample, fetched_at):
    page = {"markets": sample(P + "gamma_markets_list_active.json"), "next_cursor": "abc"}
    parsed, _ = pp.parse_gamma_markets(page, fetched_at=fetched_at)
    assert len(parsed) == 4
    assert pp.parse_keyset_cursor(page) == "abc"
    assert pp.parse_keyset_cursor({"markets": [], "next_cursor": None}) is None
    assert pp.parse_keyset_cursor({"markets": []}) is None


def test_real_arrays_are_accepted_too(sample, fetched_at):
    raw = sample(P + "gamma_market_active_5m_updown.json")
    raw["outcomes"] = json.loads(raw["outcomes"])
    raw["outcomePrices"] = json.loads(raw["outcomePrices"])
    assert pp.parse_gamma_market(raw, fetched_at=fetched_at).quote.yes_price() == Price.of("0.505")


def test_observed_at_never_after_fetch(sample):
    early = datetime(2026, 3, 11, 12, tzinfo=timezone.utc)  # before the sample's updatedAt
    vm = pp.parse_gamma_market(sample(P + "gamma_market_active_5m_updown.json"), fetched_at=early)
    assert vm.quote.observed_at == early


@pytest.mark.parametrize("mutate, fld", [
    (lambda m: m.update(outcomePrices='["0.5"'), "outcomePrices"),
    (lambda m: m.update(outcomePrices='["0.5", "0.4", "0.1"]'), "outcomePrices"),
    (lambda m: m.update(outcomePrices='["1.5", "0"]'), "outcomePrices[0]"),
    (lambda m: m.update(outcomePrices='["abc", "0"]'), "outcomePrices[0]"),
    (lambda m: m.update(clobTokenIds='["1"]'), "clobTokenIds"),
    (lambda m: m.update(closed="yes"), "closed"),
    (lambda m: m.pop("id"), "id"),
    (lambda m: m.pop("outcomes"), "outcomes"),
    (lambda m: m.update(updatedAt="yesterday"), "updatedAt"),
    (lambda m: m.update(bestBid=2), "bestBid"),
])
def test_malformed_fields_raise_parse_error_naming_the_field(sample, fetched_at, mutate, fld):
    raw = copy.deepcopy(sample(P + "gamma_market_active_5m_updown.json"))
    mutate(raw)
    with pytest.raises(ParseError) as info:
        pp.parse_gamma_market(raw, fetched_at=fetched_at)
    assert info.value.field == fld


def test_three_outcomes_is_an_unsupported_market(sample, fetched_at):
    raw = sample(P + "gamma_market_active_5m_updown.json")
    raw["outcomes"] = '["A", "B", "C"]'
    with pytest.raises(UnsupportedMarket):
        pp.parse_gamma_market(raw, fetched_at=fetched_at)


@pytest.mark.parametrize("text, expected", [
    ("2025-03-28 04:34:20+00", datetime(2025, 3, 28, 4, 34, 20, tzinfo=timezone.utc)),
    ("2025-12-30T17:10:15.861305Z", datetime(2025, 12, 30, 17, 10, 15, 861305, tzinfo=timezone.utc)),
    ("2025-01-03T21:32:55.657Z", datetime(2025, 1, 3, 21, 32, 55, 657000, tzinfo=timezone.utc)),
    ("2022-07-27 14:41:12.085+00", datetime(2022, 7, 27, 14, 41, 12, 85000, tzinfo=timezone.utc)),
    ("2026-04-05T19:37:33+00:00:00", datetime(2026, 4, 5, 19, 37, 33, tzinfo=timezone.utc)),
    ("2025-12-31", datetime(2025, 12, 31, tzinfo=timezone.utc)),
    ("2025-06-01T02:00:00+02:00", datetime(2025, 6, 1, tzinfo=timezone.utc)),
    (None, None),
    ("", None),
])
def test_mixed_timestamp_formats(text, expected):
    assert pp.parse_timestamp(text, "t") == expected


# ------------------------------------------------------------------------------------------- CLOB


def test_book_2026_format_is_sorted_best_first(sample, fetched_at):
    book = pp.parse_book(sample(P + "clob_book_2026_format.UNATTRIBUTED.json"), fetched_at=fetched_at)
    assert book.best_bid == Price.of("0.25") and book.best_ask == Price.of("0.26")
    assert [lv.price for lv in book.bids] == [Price.of(x) for x in ("0.25", "0.24", "0.10", "0.01")]
    assert [lv.price for lv in book.asks] == [Price.of(x) for x in ("0.26", "0.30", "0.80", "0.99")]
    assert book.bids[0].size == 143_009_020_000  # 143009.02 shares in micro-shares
    assert book.token_id.startswith("7789") and book.market.startswith("0x924a")
    assert book.tick_size == Price.of("0.01") and book.min_order_size == 5_000_000
    assert book.last_trade == Price.of("0.75")
    assert book.observed_at == datetime.fromtimestamp(1776727735.110, tz=timezone.utc)
    assert book.mid == Price.of("0.255")


def test_book_2024_format_without_optional_fields(sample):
    book = pp.parse_book(sample(P + "clob_book_2024_format.json"))
    assert book.best_bid == Price.of("0.1") and book.best_ask == Price.of("0.14")
    assert book.asks[2].size == 192_300_000  # "192.3" at 0.38
    assert book.tick_size is None and book.last_trade is None
    assert book.observed_at == datetime.fromtimestamp(1728799418.260, tz=timezone.utc)


def test_book_404_body_means_no_book(sample):
    assert pp.is_no_orderbook(sample(P + "clob_book_error_404.RECONSTRUCTED.json")["error"])
    assert not pp.is_no_orderbook(sample(P + "clob_error_400.RECONSTRUCTED.json")["error"])


def test_empty_book_sides(fetched_at):
    book = pp.parse_book({"bids": [], "asks": [{"price": "0.6", "size": "10"}], "last_trade_price": ""})
    assert book.best_bid is None and book.mid is None and book.best_ask == Price.of("0.6")
    assert book.last_trade is None


def test_midpoint_price_spread(sample):
    assert pp.parse_midpoint(sample(P + "clob_midpoint.RECONSTRUCTED.json")) == Price.of("0.0005")
    assert pp.parse_midpoint({"mid_price": 0.5}) == Price.of("0.5")
    assert pp.parse_price(sample(P + "clob_price.RECONSTRUCTED.json")) == Price.of("0.999")
    assert pp.parse_price({"price": 0.45}) == Price.of("0.45")
    assert pp.parse_spread(sample(P + "clob_spread.RECONSTRUCTED.json")) == Decimal("0.001")
    with pytest.raises(ParseError):
        pp.parse_midpoint({"mid": None})


def test_prices_history_sorted_deduped_and_clipped(sample):
    points = pp.parse_prices_history(sample(P + "clob_prices_history.UNATTRIBUTED.json"))
    assert len(points) == 18
    assert points[0].at == datetime.fromtimestamp(1743036005, tz=timezone.utc)
    assert all(p.price == Price.of("0.5") for p in points)
    assert all(a.at < b.at for a, b in zip(points, points[1:]))
    raw = {"history": [{"t": 30, "p": 0.3}, {"t": 10, "p": "0.1"}, {"t": 30, "p": 0.35}, {"t": 99999, "p": 1}]}
    clipped = pp.parse_prices_history(raw, end=datetime.fromtimestamp(100, tz=timezone.utc))
    assert [(int(p.at.timestamp()), p.price) for p in clipped] == [(10, Price.of("0.1")), (30, Price.of("0.35"))]
    assert pp.parse_prices_history(sample(P + "clob_prices_history_empty.RECONSTRUCTED.json")) == []
    with pytest.raises(ParseError) as info:
        pp.parse_prices_history({"history": [{"t": 1.5, "p": 0.2}]})
    assert info.value.field == "history[0].t"


def test_prices_history_error_body_is_not_a_history(sample):
    with pytest.raises(ParseError):
        pp.parse_prices_history(sample(P + "clob_prices_history_error_400.RECONSTRUCTED.json"))


def test_clob_market_winner_as_second_opinion(sample, fetched_at):
    clob = pp.parse_clob_market(sample(P + "clob_market_closed_with_winner.json"))
    assert clob.closed and clob.is_50_50_outcome is False
    assert clob.winner_token().outcome == "No"
    gamma_vm = gamma(sample, "gamma_market_closed_resolved_early_no.json")
    assert clob.winner_index(list(gamma_vm.token_ids.values())) == 1
    res = clob.resolution("polymarket:1460332", yes_token_id=gamma_vm.token_for(YES))
    assert res.payout(NO) == Price.of(1) and res.source == "clob"
    # agreeing second opinion keeps the verdict
    raw = sample(P + "gamma_market_closed_resolved_early_no.json")
    assert pp.parse_gamma_market(raw, fetched_at=fetched_at, clob=clob).resolution.payout(NO) == Price.of(1)
    # a disagreeing one makes it pending
    raw["outcomePrices"] = '["1", "0"]'
    vm = pp.parse_gamma_market(raw, fetched_at=fetched_at, clob=clob)
    assert vm.resolution is None and vm.pending_reason == pp.CLOB_DISAGREES


def test_open_clob_market_has_no_winner(sample):
    clob = pp.parse_clob_market(sample(P + "clob_market_open_negrisk_2024.json"))
    assert not clob.closed and clob.neg_risk
    assert clob.winner_token() is None and clob.resolution("polymarket:x") is None
    assert clob.tokens[0].price == Price.of("0.4865")
    assert clob.tokens[0].token_id == "21742633143463906290569050155826241533067272736897614950488156847949938836455"


def test_ws_market_resolved_event(sample):
    event = pp.parse_ws_market_resolved(sample(P + "ws_market_resolved_event.json"))
    assert event.winning_outcome == "Yes"
    assert event.winning_asset_id == event.asset_ids[0]
    assert event.at == datetime.fromtimestamp(1766790415.550, tz=timezone.utc)


def test_gamma_error_body_is_not_a_market(sample, fetched_at):
    body = sample(P + "gamma_error_422.json")
    assert body["type"] == "validation error"
    with pytest.raises(ParseError):
        pp.parse_gamma_market(body, fetched_at=fetched_at)
