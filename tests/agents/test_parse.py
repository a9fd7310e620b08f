"""parse_reply: extraction from messy text, every validation problem (all reported at once), notes, HOLD."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from agent_views import NOW, binary, standard_view

from arena.agents.parse import REPLY_SCHEMA, ParsedReply, ReplyError, extract_json, parse_reply, response_format
from arena.domain.decision import Bet, Sell
from arena.domain.market import MarketStatus
from arena.money import Money

FORECASTS = {"pm:1": 0.6, "pm:2": 0.25}


def reply(*actions: dict, forecasts: dict | None = None, reasoning: str = "because") -> str:
    return json.dumps({"actions": list(actions), "forecasts": FORECASTS if forecasts is None else forecasts,
                       "reasoning": reasoning})


def bet(market_id: str = "pm:1", side: str = "YES", amount: object = 500, probability: object = 0.7,
        **extra: object) -> dict:
    return {"type": "BET", "market_id": market_id, "side": side, "amount": amount, "probability": probability,
            "rationale": "edge", **extra}


def sell(market_id: str = "pm:2", side: str = "NO", fraction: object = 0.5) -> dict:
    return {"type": "SELL", "market_id": market_id, "side": side, "fraction": fraction}


def ok(text: str, **kw: object) -> ParsedReply:
    result = parse_reply(text, standard_view(**kw))
    assert isinstance(result, ParsedReply), result
    return result


def fails(text: str, **kw: object) -> ReplyError:
    result = parse_reply(text, standard_view(**kw))
    assert isinstance(result, ReplyError), result
    return result


# -- valid replies ----------------------------------------------------------------------------------------------


def test_a_valid_reply_becomes_a_decision():
    r = ok(reply(bet(), sell(), bet("mf:3", "a1", "250.50", 0.4)))
    d = r.to_decision()
    assert d.actions == (
        Bet("pm:1", "YES", Money.of(500), 0.7, "edge"),
        Sell("pm:2", "NO", Decimal("0.5")),
        Bet("mf:3", "a1", Money.of("250.50"), 0.4, "edge"),
    )
    assert d.forecasts == FORECASTS
    assert d.reasoning == "because"
    assert r.notes == ()
    assert r.data["actions"][0]["amount"] == 500  # JSON-safe copy of what the model said
    json.dumps(r.data)


def test_empty_actions_is_a_hold():
    r = ok(reply())
    assert r.to_decision().is_hold
    assert r.to_decision().forecasts == FORECASTS


def test_json_inside_a_fence_with_prose_around_it():
    text = "Let me think.\n\nHere is my decision:\n```json\n" + reply(bet()) + "\n```\nGood luck {to me}!"
    assert ok(text).actions[0].market_id == "pm:1"


def test_prose_with_braces_before_the_object_is_skipped():
    text = 'I considered {"x": 1} and {not json} first. ' + reply(bet())
    assert len(ok(text).actions) == 1


def test_the_first_object_with_actions_or_forecasts_wins():
    first = reply(bet(amount=100))
    second = reply(bet(amount=900))
    assert ok(first + "\n" + second).actions[0].amount == Money.of(100)


def test_a_trailing_comma_is_tolerated_and_noted():
    text = '{"actions": [], "forecasts": {"pm:1": 0.6, "pm:2": 0.2,}, "reasoning": "r",}'
    r = ok(text)
    assert r.forecasts == {"pm:1": 0.6, "pm:2": 0.2}
    assert any("trailing comma" in n for n in r.notes)


def test_a_comma_inside_a_string_is_not_touched():
    text = '{"actions": [], "forecasts": {"pm:1": 0.6, "pm:2": 0.2}, "reasoning": "a, }b",}'
    assert ok(text).reasoning == "a, }b"


def test_numbers_given_as_strings_and_lowercase_sides_are_read():
    r = ok(reply(bet(side="yes", amount="$1,250.00", probability="0.65")))
    assert r.actions[0] == Bet("pm:1", "YES", Money.of(1250), 0.65, "edge")


def test_sides_by_label_are_read_as_outcome_ids_with_a_note():
    r = ok(reply(bet("mf:3", "Alice", 100, 0.3)))
    assert r.actions[0].outcome == "a1"
    assert any("'Alice' was read as outcome id 'a1'" in n for n in r.notes)


def test_fractions_of_a_cent_are_rounded_down_with_a_note():
    r = ok(reply(bet(amount=500.129)))
    assert r.actions[0].amount == Money.of("500.12")
    assert any("rounded down to whole cents ($500.12)" in n for n in r.notes)


def test_forecasts_outside_the_forecast_set_are_ignored_with_a_note():
    r = ok(reply(forecasts={**FORECASTS, "mf:3": 0.5, "zz:1": 2}))
    assert r.forecasts == FORECASTS
    assert any("outside the forecast set were ignored: mf:3, zz:1" in n for n in r.notes)


def test_some_missing_forecasts_are_noted_not_invented():
    r = ok(reply(forecasts={"pm:1": 0.6}))
    assert r.forecasts == {"pm:1": 0.6}
    assert any("No forecast for pm:2" in n for n in r.notes)


def test_buy_is_read_as_bet_and_hold_actions_are_skipped():
    r = ok(reply({**bet(), "type": "buy"}, {"type": "HOLD"}))
    assert len(r.actions) == 1 and isinstance(r.actions[0], Bet)
    assert len(r.notes) == 2


def test_missing_actions_is_a_hold_with_a_note():
    r = ok(json.dumps({"forecasts": FORECASTS}))
    assert r.actions == ()
    assert r.reasoning == ""
    assert any("HOLD" in n for n in r.notes)


def test_a_sell_without_side_uses_the_only_position_held():
    r = ok(reply({"type": "SELL", "market_id": "pm:2", "fraction": 1}))
    assert r.actions == (Sell("pm:2", "NO", Decimal(1)),)
    assert r.notes


def test_a_bet_whose_probability_argues_against_its_side_is_noted():
    r = ok(reply(bet(side="NO", probability=0.9)))
    assert any("P(YES) whatever the side" in n for n in r.notes)


def test_exactly_min_and_max_bets_and_bets_totalling_the_cash_are_fine():
    r = ok(reply(bet(amount=50), bet(amount=2000), bet("pm:2", "NO", 2000, 0.2)),
           cash=Money.of("4050"), max_bet=Money.of(2000))
    assert sum(b.amount.micros for b in r.to_decision().bets) == Money.of(4050).micros


def test_no_forecast_set_allows_no_forecasts():
    r = ok(json.dumps({"actions": []}), forecast_set=())
    assert r.forecasts == {}


# -- fatal problems ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("", "contains no JSON object"),
    ("I would hold this week.", "contains no JSON object"),
    ('{"actions": [}', "cut off"),
    ('Here: {"actions": [], "forecasts": {"pm:1": 0.5 "pm:2": 0.5}}', "not valid (Expecting ',' delimiter"),
    ('{"decision": "hold"}', 'neither "actions" nor "forecasts"'),
    ('{"actions": {"type": "BET"}, "forecasts": {"pm:1": 0.5, "pm:2": 0.5}}', '"actions" must be a list'),
])
def test_unusable_json(text, expected):
    err = fails(text)
    assert expected in err.message


def test_every_problem_of_a_bet_is_reported_at_once():
    err = fails(reply(bet("pm:1", "MAYBE", "lots", 1.5)))
    assert len(err.errors) == 3
    assert "side 'MAYBE' is not an outcome of market pm:1; use YES or NO" in err.errors[0]
    assert '"amount" must be a number of US dollars, got "lots"' in err.errors[1]
    assert '"probability" must be from 0 to 1, got 1.5' in err.errors[2]
    assert err.data is not None and err.data["actions"][0]["side"] == "MAYBE"


@pytest.mark.parametrize("action, expected", [
    (bet("pm:77"), "unknown market id 'pm:77'"),
    (bet("pm:9"), "market pm:9 is closed; no bets"),
    ({**bet(), "market_id": None}, '"market_id" is missing'),
    ({**bet(), "side": ""}, '"side" is missing; use YES or NO'),
    (bet("mf:3", "a9"), "use one of a1 (Alice), a2 (Bob), a3 (Carol)"),
    (bet(amount=None), '"amount" is missing'),
    (bet(amount=True), '"amount" must be a number'),
    (bet(amount=-5), '"amount" must be positive'),
    (bet(amount=49.99), "amount $49.99 is below the minimum bet of $50.00"),
    (bet(amount=2000.01), "amount $2,000.01 is above the maximum bet of $2,000.00"),
    (bet(probability=None), '"probability" is missing'),
    ({k: v for k, v in bet().items() if k != "probability"}, '"probability" is missing'),
    (bet(probability=65), "got 65 (write 0.65 for 65 %)"),
    (bet(probability=-0.1), "must be from 0 to 1, got -0.1"),
    (bet(probability="high"), 'must be a number from 0 to 1, got "high"'),
    (sell("pm:1", "YES"), "you hold no position in market pm:1"),
    (sell("pm:2", "YES"), "you hold no YES shares in market pm:2 (you hold NO)"),
    (sell("pm:9", "YES", 1), "market pm:9 is closed; its position cannot be sold"),
    (sell(fraction=0), '"fraction" must be more than 0 and at most 1, got 0'),
    (sell(fraction=1.5), "got 1.5"),
    (sell(fraction=50), "(write 0.5 to sell 50 %)"),
    (sell(fraction=None), '"fraction" is missing'),
    ({"type": "SWAP", "market_id": "pm:1"}, 'unknown type "SWAP"'),
    ({"market_id": "pm:1"}, '"type" is missing'),
    ("BET pm:1", "Action 1 must be an object"),
])
def test_each_invalid_action(action, expected):
    err = fails(reply(action))
    assert any(expected in e for e in err.errors), err.errors


def test_a_market_not_open_is_refused():
    closed = binary("pm:5", "Closed?", "0.5", status=MarketStatus.CLOSED)
    view_markets = standard_view().markets + (closed,)
    err = fails(reply(bet("pm:5")), markets=view_markets)
    assert "market pm:5 is not open" in err.message


def test_a_market_past_its_close_time_is_refused():
    from datetime import timedelta
    late = binary("pm:6", "Late?", "0.5", closes_in=timedelta(hours=-1))
    err = fails(reply(bet("pm:6")), markets=standard_view().markets + (late,))
    assert "market pm:6 is not open" in err.message


def test_a_side_priced_at_one_has_nothing_to_buy():
    certain = binary("pm:7", "Certain?", "1")
    err = fails(reply(bet("pm:7", "YES", 100, 0.99)), markets=standard_view().markets + (certain,))
    assert "YES is priced at 1; there is nothing to buy" in err.message


def test_bets_over_the_cash_in_total_are_refused():
    err = fails(reply(bet(amount=2000), bet("pm:2", "NO", 2000, 0.2), bet(amount=1000)),
                cash=Money.of(4500), max_bet=Money.of(2000))
    assert "The bets total $5,000.00, more than your cash of $4,500.00" in err.message


def test_selling_the_same_position_twice_is_refused():
    err = fails(reply(sell(fraction=0.5), sell(fraction=0.5)))
    assert "sold twice" in err.message


@pytest.mark.parametrize("forecasts, expected", [
    (None, '"forecasts" is missing; give your P(YES) from 0 to 1 for each forecast-set id: pm:1, pm:2'),
    ([0.5, 0.5], '"forecasts" must be an object'),
    ({}, '"forecasts" gives none of the forecast-set ids'),
    ({"zz": 0.5}, '"forecasts" gives none of the forecast-set ids'),
    ({"pm:1": 1.2, "pm:2": 0.5}, "The forecast for pm:1 must be from 0 to 1, got 1.2"),
    ({"pm:1": "NaN", "pm:2": 0.5}, "The forecast for pm:1 must be a number from 0 to 1"),
])
def test_invalid_forecasts(forecasts, expected):
    text = json.dumps({"actions": [], "forecasts": forecasts, "reasoning": ""}) if forecasts is not None \
        else json.dumps({"actions": []})
    err = fails(text)
    assert any(expected in e for e in err.errors), err.errors


def test_problems_in_several_actions_and_forecasts_all_come_back():
    text = reply(bet("pm:77"), sell("pm:1", "YES"), forecasts={"pm:1": 3})
    err = fails(text)
    assert [e.split(":")[0] for e in err.errors[:2]] == ["Action 1 (BET on pm", "Action 2 (SELL in pm"]
    assert any("forecast for pm:1" in e for e in err.errors)


# -- schema and helpers -----------------------------------------------------------------------------------------


def test_reply_schema_and_response_formats():
    assert REPLY_SCHEMA["required"] == ["actions", "forecasts", "reasoning"]
    fmt = response_format("json_schema")
    assert fmt is not None and fmt["json_schema"]["schema"] is REPLY_SCHEMA
    assert response_format("json_object") == {"type": "json_object"}
    assert response_format("none") is None
    with pytest.raises(ValueError):
        response_format("xml")
    json.dumps(REPLY_SCHEMA)


# The schema written by hand before it was generated from the reply model (issue 11): what is sent must not change.
HAND_WRITTEN_SCHEMA = {
    "type": "object",
    "properties": {
        "actions": {"type": "array", "items": {"anyOf": [
            {"type": "object",
             "properties": {
                 "type": {"type": "string", "enum": ["BET"]},
                 "market_id": {"type": "string"},
                 "side": {"type": "string", "description": "YES or NO, or the outcome id of a multiple-choice market"},
                 "amount": {"type": "number", "description": "stake in US dollars"},
                 "probability": {"type": "number", "minimum": 0, "maximum": 1,
                                 "description": "your probability that the market resolves YES"},
                 "rationale": {"type": "string"}},
             "required": ["type", "market_id", "side", "amount", "probability"]},
            {"type": "object",
             "properties": {
                 "type": {"type": "string", "enum": ["SELL"]},
                 "market_id": {"type": "string"},
                 "side": {"type": "string"},
                 "fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                              "description": "fraction of the position to sell; 1 sells all"},
                 "rationale": {"type": "string"}},
             "required": ["type", "market_id", "side", "fraction"]}]}},
        "forecasts": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1},
                      "description": "market id → your probability of YES"},
        "reasoning": {"type": "string"},
    },
    "required": ["actions", "forecasts", "reasoning"],
}


def test_the_reply_schema_is_generated_from_the_model_and_equals_the_hand_written_one():
    from arena.agents.parse import DecisionReply, reply_schema

    assert reply_schema() == REPLY_SCHEMA == HAND_WRITTEN_SCHEMA
    assert "$ref" not in json.dumps(REPLY_SCHEMA) and "title" not in json.dumps(REPLY_SCHEMA)
    bet_schema = REPLY_SCHEMA["properties"]["actions"]["items"]["anyOf"][0]
    assert set(bet_schema["properties"]) == set(DecisionReply.model_fields["actions"].annotation.__args__[0]
                                                .__args__[0].model_fields)


_KNOWN_KEYWORDS = {"type", "properties", "required", "items", "anyOf", "enum", "minimum", "maximum",
                   "exclusiveMinimum", "additionalProperties", "description"}


def schema_problems(schema: dict, value: object, path: str = "") -> list[str]:
    """A small JSON Schema check (the keywords the reply schema uses, no more): each problem as 'path: what'."""
    assert set(schema) <= _KNOWN_KEYWORDS, set(schema) - _KNOWN_KEYWORDS  # never ignore a keyword silently
    if "anyOf" in schema:
        tries = [schema_problems(s, value, path) for s in schema["anyOf"]]
        return [] if any(not t for t in tries) else min(tries, key=len)
    kind = {"object": dict, "array": list, "string": str, "number": (int, float)}[schema["type"]]
    if not isinstance(value, kind) or isinstance(value, bool):
        return [f"{path or '$'}: not of type {schema['type']}"]
    out = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"] or "maximum" in schema and value > schema["maximum"] \
            or "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        out.append(f"{path}: out of bounds")
    if isinstance(value, dict):
        out += [f"{path}.{k}: required" for k in schema.get("required", ()) if k not in value]
        for k, v in value.items():
            sub = schema.get("properties", {}).get(k, schema.get("additionalProperties"))
            if isinstance(sub, dict):
                out += schema_problems(sub, v, f"{path}.{k}")
    if isinstance(value, list):
        for i, v in enumerate(value):
            out += schema_problems(schema["items"], v, f"{path}[{i}]")
    return out


def test_the_generated_schema_accepts_a_good_reply_and_names_the_path_of_a_bad_one():
    good = json.loads(reply(bet(), sell()))
    assert schema_problems(REPLY_SCHEMA, good) == []
    bad = json.loads(reply(bet(), bet(probability=1.5), forecasts={"pm:1": 0.6, "pm:2": -0.2}))
    assert schema_problems(REPLY_SCHEMA, bad) == [".actions[1].probability: out of bounds",
                                                   ".forecasts.pm:2: out of bounds"]
    no_reasoning = {"actions": [{"type": "SELL", "market_id": "pm:2", "side": "NO"}], "forecasts": {}}
    assert sorted(schema_problems(REPLY_SCHEMA, no_reasoning)) == [".actions[0].fraction: required",
                                                                   ".reasoning: required"]
    # the model the schema comes from refuses the same reply, naming the same places
    from pydantic import ValidationError

    from arena.agents.parse import DecisionReply

    assert DecisionReply.model_validate(good).actions[1].fraction == Decimal("0.5")
    with pytest.raises(ValidationError) as info:
        DecisionReply.model_validate(bad)
    places = {e["loc"] for e in info.value.errors()}
    assert ("actions", 1, "BetAction", "probability") in places and ("forecasts", "pm:2") in places


def test_the_reader_reads_numbers_through_the_model_fields_leniently_and_exactly():
    from arena.agents.parse import BetAction

    action = BetAction.model_validate({"type": "BET", "market_id": "pm:1", "side": "YES", "amount": "$1,250.50",
                                       "probability": "0.65"})
    assert action.amount == Decimal("1250.50") and action.probability == Decimal("0.65")
    # more digits than a float holds: read as a float it would be 50.0, the min bet; exactly, it is below it
    text = reply(bet(amount="AMOUNT")).replace('"AMOUNT"', "49.999999999999999999")
    assert "amount $49.99 is below the minimum bet of $50.00" in fails(text).message


def test_extract_json_keeps_exact_decimals():
    found = extract_json('x {"actions": [{"amount": 0.1}]} y')
    assert found.obj == {"actions": [{"amount": Decimal("0.1")}]}


def test_parse_is_pure_and_repeatable():
    text = reply(bet(), sell())
    v = standard_view()
    assert parse_reply(text, v) == parse_reply(text, v)
    assert v.as_of == NOW


# -- robustness ---------------------------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=8)
    | st.sampled_from(["BET", "SELL", "YES", "NO", "pm:1", "pm:2", "mf:3", "a1"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "market_id", "side", "amount", "probability", "fraction", "actions",
                         "forecasts", "reasoning", "pm:1", "pm:2"]) | st.text(max_size=5), children, max_size=5),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_a_result_or_a_failure_never_an_exception(text):
    assert isinstance(parse_reply(text, standard_view()), (ParsedReply, ReplyError))


@settings(max_examples=80, deadline=None)
@given(st.lists(_json_values, max_size=4), _json_values)
def test_any_json_gives_a_result_or_a_failure(actions, forecasts):
    text = json.dumps({"actions": actions, "forecasts": forecasts}, allow_nan=True)
    result = parse_reply(text, standard_view())
    assert isinstance(result, (ParsedReply, ReplyError))
    if isinstance(result, ParsedReply):
        v = standard_view()
        assert sum(b.amount.micros for b in result.to_decision().bets) <= v.cash.micros
        assert all(v.min_bet <= b.amount <= v.max_bet for b in result.to_decision().bets)
        assert all(0.0 <= p <= 1.0 for p in result.forecasts.values())


def test_long_brace_heavy_prose_is_bounded():
    text = "{ " * 5_000 + reply()
    assert isinstance(parse_reply(text, standard_view()), ReplyError)
