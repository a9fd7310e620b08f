"""The typed payload models behind the venue parsers: errors name the full field path with the arena's wording,
the first error in reading order wins, typed skips stay skips, and the fast paths decide like the slow ones."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from arena.errors import ParseError
from arena.venues import UnsupportedMarket
from arena.venues import manifold_parse as mp
from arena.venues import polymarket_parse as pp
from arena.venues.fields import field_path, validate
from arena.venues.polymarket_payloads import GammaMarketPayload, decode_array

FETCHED = datetime(2026, 11, 1, tzinfo=timezone.utc)
ACTIVE = "polymarket/gamma_market_active_5m_updown.json"
MC = "manifold/market_full_multiple_choice.RECONSTRUCTED.json"


def gamma_error(raw: dict) -> ParseError:
    with pytest.raises(ParseError) as info:
        pp.parse_gamma_market(raw, fetched_at=FETCHED)
    return info.value


@pytest.mark.parametrize("loc, root, path", [
    (("answers", 2, "probability"), "market", "answers[2].probability"),
    ((1, "probAfter"), "bets", "bets[1].probAfter"),
    ((), "book", "book"),
    (("bids", 0, "price"), "book", "bids[0].price"),
])
def test_field_path_reads_like_the_payload(loc, root, path):
    assert field_path(loc, root) == path


@pytest.mark.parametrize("change, fld, message", [
    ({"closed": "yes"}, "closed", "expected a boolean, got 'yes'"),
    ({"slug": 7}, "slug", "expected a string, got int"),
    ({"question": "  "}, "question", "empty"),
    ({"outcomePrices": '["1.5", "0"]'}, "outcomePrices[0]", "price outside [0, 1]: '1.5'"),
    ({"outcomePrices": '["0.5"]'}, "outcomePrices", "1 prices for 2 outcomes"),
    ({"clobTokenIds": '["1", " "]'}, "clobTokenIds", "empty token id"),
    ({"events": [{"id": {"x": 1}}]}, "events[0].id", "expected a string id, got dict"),
    ({"events": "e1"}, "events", "expected an array"),
    ({"feesEnabled": True, "feeSchedule": {"rate": "2"}}, "feeSchedule.rate", "price outside [0, 1]: '2'"),
])
def test_gamma_errors_name_the_path_in_the_arena_words(sample, change, fld, message):
    raw = copy.deepcopy(sample(ACTIVE))
    raw.update(change)
    err = gamma_error(raw)
    assert (err.field, str(err)) == (fld, f"{fld}: {message}")


def test_a_field_read_only_in_some_cases_is_checked_only_then(sample):
    raw = copy.deepcopy(sample(ACTIVE))
    raw.update(volume="lots", feesEnabled=False, feeSchedule="none")  # volumeNum wins; no fees, no schedule
    vm = pp.parse_gamma_market(raw, fetched_at=FETCHED)
    assert vm.market.volume == float(sample(ACTIVE)["volumeNum"]) and vm.fee_rate is None
    raw.pop("volumeNum")
    assert gamma_error(raw).field == "volume"


def test_the_first_error_in_reading_order_wins_and_a_skip_stays_a_skip(sample):
    raw = copy.deepcopy(sample(ACTIVE))
    raw.update(outcomes='["A", "B", "C"]', updatedAt="yesterday")  # read after the outcomes: still a skip
    with pytest.raises(UnsupportedMarket) as skip:
        pp.parse_gamma_market(raw, fetched_at=FETCHED)
    assert skip.value.field == "outcomes" and skip.value.data["kind"] == "3-outcome"
    raw.pop("id")  # read before the outcomes: the market is malformed, not skipped
    err = gamma_error(raw)
    assert not isinstance(err, UnsupportedMarket) and err.field == "id"
    raw = copy.deepcopy(sample(ACTIVE))
    raw.update(updatedAt="yesterday", bestBid=2)
    assert gamma_error(raw).field == "updatedAt"


def test_one_bad_market_never_sinks_a_page_and_is_named_by_id(sample):
    rows = copy.deepcopy(sample("polymarket/gamma_markets_list_active.json"))
    rows[1]["outcomePrices"] = '["0.5", "x"]'
    rows[2] = "not a market"
    parsed, rejected = pp.parse_gamma_markets(rows, fetched_at=FETCHED)
    assert len(parsed) == len(rows) - 2
    assert [(key, err.field) for key, err in rejected] == [(str(rows[1]["id"]), "outcomePrices[1]"), ("#2", "market")]


def test_a_bad_event_fails_its_page_under_its_index(sample):
    events = copy.deepcopy(sample("polymarket/gamma_events_list_active.json"))
    events[-1]["closed"] = "no"
    with pytest.raises(ParseError) as info:
        pp.parse_gamma_events(events, fetched_at=FETCHED)
    assert info.value.field == f"events[{len(events) - 1}].closed"


def test_clob_token_errors_name_the_token(sample):
    raw = copy.deepcopy(sample("polymarket/clob_market_closed_with_winner.json"))
    raw["tokens"][1]["price"] = "high"
    with pytest.raises(ParseError) as info:
        pp.parse_clob_market(raw)
    assert info.value.field == "tokens[1].price"


@pytest.mark.parametrize("text, expected", [
    ('["Yes", "No"]', ["Yes", "No"]),
    ("[123456789012345678901234567890, 7]", [123456789012345678901234567890, 7]),  # not floats
    ('["0.5", NaN]', None),  # json decodes NaN; the price check refuses it later
    ('["\\ud800"]', ["\ud800"]),
])
def test_stringly_arrays_decode_like_json(text, expected):
    decoded = decode_array(text)
    if expected is None:
        assert decoded[0] == "0.5" and decoded[1] != decoded[1]
    else:
        assert decoded == expected == json.loads(text)


def test_big_integer_token_ids_stay_exact(sample):
    raw = copy.deepcopy(sample(ACTIVE))
    raw["clobTokenIds"] = "[123456789012345678901234567890, 98765432109876543210987654321]"
    assert validate(GammaMarketPayload, raw, "market").clobTokenIds == (
        "123456789012345678901234567890", "98765432109876543210987654321")


def test_payload_model_keeps_exact_decimals(sample):
    m = validate(GammaMarketPayload, sample("polymarket/gamma_market_closed_resolved_early_no.json"), "market")
    assert all(isinstance(p, Decimal) for p in m.outcomePrices) and m.closed is True


# ------------------------------------------------------------------------------------------------- Manifold


@pytest.mark.parametrize("change, fld, message", [
    ({"volume": float("nan")}, "volume", "not finite: nan"),
    ({"volume": "12"}, "volume", "expected a number, got '12'"),
    ({"uniqueBettorCount": True}, "uniqueBettorCount", "expected a number, got True"),
    ({"answers": "a,b"}, "answers", "expected an array"),
])
def test_manifold_errors_name_the_path(sample, change, fld, message):
    raw = copy.deepcopy(sample(MC))
    raw.update(change)
    with pytest.raises(ParseError) as info:
        mp.parse_manifold_market(raw, fetched_at=FETCHED)
    assert (info.value.field, str(info.value)) == (fld, f"{fld}: {message}")


def test_manifold_answers_default_their_index_to_their_position(sample):
    raw = copy.deepcopy(sample(MC))
    for a in raw["answers"]:
        a.pop("index", None)
    vm = mp.parse_manifold_market(raw, fetched_at=FETCHED)
    assert [a.index for a in vm.answers] == list(range(len(raw["answers"])))
    assert [a.id for a in vm.answers] == [a["id"] for a in raw["answers"]]
    raw["answers"][1]["id"] = raw["answers"][0]["id"]
    with pytest.raises(ParseError) as info:
        mp.parse_manifold_market(raw, fetched_at=FETCHED)
    assert (info.value.field, str(info.value)) == ("answers", "answers: duplicate answer ids")


def test_unsupported_mechanism_is_a_skip_named_by_the_mechanism(sample):
    raw = copy.deepcopy(sample("manifold/markets_list.json")[0])
    raw.update(outcomeType="BINARY", mechanism="dpm-2")
    with pytest.raises(UnsupportedMarket) as info:
        mp.parse_manifold_market(raw, fetched_at=FETCHED)
    assert info.value.field == "mechanism" and info.value.data["kind"] == "BINARY/dpm-2"
    raw["closeTime"] = "soon"  # read before the mechanism check: malformed, not skipped
    with pytest.raises(ParseError) as err:
        mp.parse_manifold_market(raw, fetched_at=FETCHED)
    assert not isinstance(err.value, UnsupportedMarket) and err.value.field == "closeTime"


def test_answer_probabilities_name_the_answer(sample):
    with pytest.raises(ParseError) as info:
        mp.parse_market_prob({"answerProbs": {"a1": 0.3, "a2": 1.7}})
    assert info.value.field == "answerProbs.a2"
    with pytest.raises(ParseError) as info:
        mp.parse_market_probs({"c1": {"prob": 0.2}, "c2": {"answerProbs": {"a1": None}}})
    assert info.value.field == "c2.answerProbs.a1"


def test_bets_name_the_bet_and_accept_bet_id(sample):
    bets = copy.deepcopy(sample("manifold/bets.official_doc.json"))
    parsed = mp.parse_bets(bets)
    assert [b.id for b in parsed] == [b["id"] for b in bets]
    renamed = [{("betId" if k == "id" else k): v for k, v in b.items()} for b in bets]
    assert mp.parse_bets(renamed) == parsed
    bets[-1]["createdTime"] = None
    with pytest.raises(ParseError) as info:
        mp.parse_bets(bets)
    assert (info.value.field, str(info.value)) == (
        f"bets[{len(bets) - 1}].createdTime", f"bets[{len(bets) - 1}].createdTime: missing")
    assert mp.parse_bet(bets[0], 4) == parsed[0]
    with pytest.raises(ParseError) as info:
        mp.parse_bet(None, 4)
    assert info.value.field == "bets[4]"


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_decimal_number_reads_a_finite_float_as_the_decimal_round_trip_does(x):
    from arena.money import parse_decimal_price
    from arena.venues.fields import decimal_number

    assert repr(decimal_number(x)) == repr(float(parse_decimal_price(x)))  # repr: -0.0 stays -0.0
