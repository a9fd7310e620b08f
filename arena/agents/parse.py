"""Reading a model's reply: find its JSON object, check it against the view, and return a result or a failure.

Pure: no I/O, no clock (the view carries `as_of`). Imports only pydantic, the view, the decision types and money.

The reply format is the pydantic model `DecisionReply` (`BetAction`, `SellAction`); `REPLY_SCHEMA`, the JSON schema
sent as `response_format`, is generated from it, and the reader reads the number fields through the same
declarations (lenient: "$1,250.50" and "0.65" are numbers, read as exact Decimals)::

    {"actions": [{"type": "BET", "market_id": "...", "side": "YES" | "NO" | <outcome id>, "amount": <USD>,
                  "probability": <P(YES) in [0, 1]>, "rationale": "..."},
                 {"type": "SELL", "market_id": "...", "side": ..., "fraction": <(0, 1]>, "rationale": "..."}],
     "forecasts": {"<market id>": <P(YES) in [0, 1]>, ...},
     "reasoning": "..."}

An empty "actions" list is a HOLD. For a multi-outcome market "probability" is the probability of the outcome bet
on. Extraction tolerates prose before and after the object, ```json fences and trailing commas; the first
top-level JSON object that has "actions" or "forecasts" is the reply.

What is FATAL (a `ReplyError`; the caller asks the model for a correction, quoting every problem back):
  no JSON object / invalid JSON / a cut-off reply; "actions" not a list; an action that is not an object or has
  no or an unknown "type"; a BET on an unknown market, a market not open, an unknown side, a side priced 0 or 1;
  an amount missing, not a number, ≤ 0, below the min bet or above the max bet; bets totalling more than the
  cash; a BET without a probability or with one outside [0, 1]; a SELL of a position not held, in a closed
  market, twice, or with a fraction missing or outside (0, 1]; "forecasts" not an object; no forecast at all
  although the round has a forecast set; a forecast-set forecast that is not a number in [0, 1].
What is NOTED (the reply is used; the notes are kept for the audit trail):
  amounts with fractions of a cent (rounded DOWN to whole cents, which never spends more than asked);
  forecasts for ids outside the forecast set (ignored); some forecast-set ids without a forecast (left
  missing, not invented); "BUY" read as BET; {"type": "HOLD"} actions skipped; a side given by its label
  (e.g. "Alice") read as its outcome id; a SELL without a side when one position is held in that market;
  "actions" missing (HOLD); a BET whose stated P(YES) argues against its own side; a trailing comma.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

from arena.agents.view import AgentView, PositionView
from arena.domain.decision import Action, Bet, Decision, ModelCall, Sell
from arena.domain.market import NO, YES, Market, MarketKind
from arena.money import MICRO, Money

CENT = Decimal("0.01")
MAX_CANDIDATES = 200  # "{" positions tried before giving up: bounds the work on long, brace-heavy prose


# -- the reply model: its fields are what the reader checks, its JSON schema what the model is sent -------------


def _lenient_number(value: Any) -> Any:
    """A JSON number or a numeric string ("250", "$1,250.50") as an exact Decimal; anything else unchanged, for
    the field's type to refuse."""
    d = _number(value)
    return value if d is None else d


# Sent as a JSON number, read as an exact Decimal; the bounds go before the lenient reading so that pydantic puts
# them on the number itself (and in the schema as minimum / maximum).
Number = Annotated[Decimal, BeforeValidator(_lenient_number)]
Probability = Annotated[Decimal, Field(ge=0, le=1), BeforeValidator(_lenient_number)]
Fraction = Annotated[Decimal, Field(gt=0, le=1), BeforeValidator(_lenient_number)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a reply may carry fields of its own; they are kept in `data`


class BetAction(_Reply):
    """A BET of `amount` USD on `side` of `market_id`; `probability` is P(YES) whatever the side (for a
    multiple-choice market, the probability of the outcome bet on)."""

    type: Literal["BET"]
    market_id: str
    side: str = Field(description="YES or NO, or the outcome id of a multiple-choice market")
    amount: Number = Field(description="stake in US dollars")  # > 0, and within the view's min and max bet
    probability: Probability = Field(description="your probability that the market resolves YES")
    rationale: str = ""


class SellAction(_Reply):
    """A SELL of `fraction` (0, 1] of the position held on `side` of `market_id`."""

    type: Literal["SELL"]
    market_id: str
    side: str
    fraction: Fraction = Field(description="fraction of the position to sell; 1 sells all")
    rationale: str = ""


class DecisionReply(_Reply):
    """The reply the model is asked for. An empty `actions` list is a HOLD."""

    actions: list[BetAction | SellAction]
    forecasts: dict[str, Probability] = Field(description="market id → your probability of YES")
    reasoning: str


class _SchemaOfReply(GenerateJsonSchema):
    """The exact Decimals of the reader are JSON numbers to the model (with their bounds)."""

    def decimal_schema(self, schema: Any) -> JsonSchemaValue:
        return self.float_schema(schema)


def _plain(node: Any, defs: Mapping[str, Any], properties: bool = False) -> Any:
    """A JSON schema with every $ref inlined, no titles, defaults or model docstrings, and `const` written as a
    one-value `enum` (the form every structured-output provider reads): the schema sent before it was generated.
    `properties`: `node` maps field names (kept as is)."""
    if isinstance(node, list):
        return [_plain(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _plain(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if properties:
        return {k: _plain(v, defs) for k, v in node.items()}
    # A model's docstring is for developers: only the fields' descriptions are written for the model.
    drop = {"title", "default", "$defs", *(("description",) if "properties" in node else ())}
    out = {k: _plain(v, defs, k == "properties") for k, v in node.items() if k not in drop}
    if "const" in out:
        out["enum"] = [out.pop("const")]
    return out


def reply_schema() -> dict[str, Any]:
    """The JSON schema of `DecisionReply`, generated by pydantic and made plain (see `_plain`)."""
    raw = DecisionReply.model_json_schema(schema_generator=_SchemaOfReply)
    return _plain(raw, raw.get("$defs", {}))


REPLY_SCHEMA: dict[str, Any] = reply_schema()


def response_format(mode: str) -> dict[str, Any] | None:
    """The OpenAI-compatible `response_format` for a mode: "json_schema", "json_object" or "none" (→ None).

    The schema is sent non-strict: strict mode forbids the free-form map of "forecasts"."""
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "arena_decision", "strict": False, "schema": REPLY_SCHEMA}}
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "none":
        return None
    raise ValueError(f"unknown response format mode {mode!r}")


# -- reading one field through the model -------------------------------------------------------------------------

# The number fields as the models declare them (type, lenient reading, bounds), each readable on its own so that
# every problem of an action is found, not only the first.
_NUMBERS: dict[str, TypeAdapter[Decimal]] = {"amount": TypeAdapter(Number), "probability": TypeAdapter(Probability),
                                              "fraction": TypeAdapter(Fraction)}
_BOUNDS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})


def _read_number(name: str, raw: Any) -> tuple[Decimal | None, str]:
    """`raw` read as number field `name` of the reply model: (the Decimal, "") or (None, "type") when it is not a
    number, or (the Decimal, "range") when it is outside the field's bounds."""
    try:
        return _NUMBERS[name].validate_python(raw), ""
    except ValidationError as exc:
        if {e["type"] for e in exc.errors(include_url=False)} <= _BOUNDS:
            return _number(raw), "range"
        return None, "type"


# -- results -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedReply:
    """A usable reply: the actions and forecasts it asks for, the JSON it came from, and any notes."""

    actions: tuple[Action, ...]
    forecasts: Mapping[str, float]  # forecast-set market id → P(YES) in [0, 1]
    reasoning: str
    data: Mapping[str, Any]  # the reply's JSON object (numbers as float/int, JSON-safe)
    notes: tuple[str, ...] = ()

    def to_decision(self, calls: tuple[ModelCall, ...] = ()) -> Decision:
        return Decision(actions=self.actions, forecasts=dict(self.forecasts), reasoning=self.reasoning, calls=calls)


@dataclass(frozen=True)
class ReplyError:
    """An unusable reply: every problem found, each a sentence the model can act on."""

    errors: tuple[str, ...]
    data: Mapping[str, Any] | None = None  # the JSON object, when one was found
    notes: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        return " ".join(self.errors)


# -- extraction --------------------------------------------------------------------------------------------------


@dataclass
class _Extracted:
    obj: dict[str, Any] | None = None
    error: str = ""
    notes: list[str] = field(default_factory=list)


def _object_end(text: str, start: int) -> int | None:
    """Index of the brace closing the object that opens at `start` (strings respected), or None if unclosed."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i if c == "}" else None
    return None


def _without_trailing_commas(text: str) -> str:
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "}]":
                i += 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _loads(chunk: str) -> Any:
    return json.loads(chunk, parse_float=Decimal)


def extract_json(text: str) -> _Extracted:
    """The first top-level JSON object in `text` that has "actions" or "forecasts", or why there is none."""
    found = _Extracted()
    syntax_error = ""
    cut_off = other_object = False
    pos = 0
    for _ in range(MAX_CANDIDATES):
        start = text.find("{", pos)
        if start < 0:
            break
        end = _object_end(text, start)
        if end is None:
            if '"actions"' in text[start:] or '"forecasts"' in text[start:]:
                cut_off = True
            pos = start + 1
            continue
        chunk = text[start:end + 1]
        fixed = False
        try:
            obj = _loads(chunk)
        except json.JSONDecodeError as exc:
            try:
                obj = _loads(_without_trailing_commas(chunk))
                fixed = True
            except json.JSONDecodeError:
                if not syntax_error and ('"actions"' in chunk or '"forecasts"' in chunk):
                    syntax_error = f"{exc.msg} at line {exc.lineno}, column {exc.colno} of the object"
                pos = start + 1
                continue
        if isinstance(obj, dict) and ("actions" in obj or "forecasts" in obj):
            found.obj = obj
            if fixed:
                found.notes.append("A trailing comma in the JSON was ignored.")
            return found
        other_object = True
        pos = end + 1
    if syntax_error:
        found.error = (f"The reply's JSON is not valid ({syntax_error}). Send strictly valid JSON: double-quoted "
                       f"keys and strings, no comments, no trailing commas.")
    elif cut_off:
        found.error = ("The reply ends before its JSON object is closed (it was probably cut off). Send a shorter "
                       "reply: keep the reasoning and rationales brief.")
    elif other_object:
        found.error = 'The reply\'s JSON object has neither "actions" nor "forecasts". Use the reply format.'
    else:
        found.error = "The reply contains no JSON object. Reply with one JSON object in the reply format."
    return found


def json_safe(value: Any) -> Any:
    """A copy of parsed JSON with Decimal numbers turned into floats (for storage and transcripts)."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


# -- validation --------------------------------------------------------------------------------------------------

_THOUSANDS = re.compile(r"\d{1,3}(,\d{3})+(\.\d+)?")


def _number(value: Any) -> Decimal | None:
    """A finite Decimal from a JSON number or a numeric string ("250", "$1,250.50"); None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("$"):
            s = s[1:].strip()
        if _THOUSANDS.fullmatch(s):
            s = s.replace(",", "")
        try:
            d = Decimal(s)
        except InvalidOperation:
            return None
        return d if d.is_finite() else None
    return None


def _show(value: Any) -> str:
    return json.dumps(json_safe(value), ensure_ascii=False)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(json_safe(value), ensure_ascii=False)


def _match_outcome(market: Market, side: str) -> tuple[str | None, bool]:
    """The outcome id `side` names (by id, any case, or by label) and whether it was matched by label."""
    s = side.strip()
    if s in market.outcomes:
        return s, False
    for outcome, label in zip(market.outcomes, market.outcome_labels):
        if s.lower() == outcome.lower():
            return outcome, False
    for outcome, label in zip(market.outcomes, market.outcome_labels):
        if s.lower() == label.lower():
            return outcome, market.kind is MarketKind.MULTI
    return None, False


def _choices(market: Market) -> str:
    if market.kind is MarketKind.BINARY:
        return "YES or NO"
    return "one of " + ", ".join(f"{o} ({label})" for o, label in zip(market.outcomes, market.outcome_labels))


class _Checker:
    def __init__(self, view: AgentView) -> None:
        self.view = view
        self.errors: list[str] = []
        self.notes: list[str] = []

    def probability(self, value: Any) -> tuple[float | None, str]:
        """P in [0, 1] as float, or None with the reason."""
        d, problem = _read_number("probability", value)
        if problem == "type" or d is None:
            return None, f"must be a number from 0 to 1, got {_show(value)}"
        if problem == "range":
            hint = f" (write {d / 100} for {d} %)" if Decimal(1) < d <= Decimal(100) else ""
            return None, f"must be from 0 to 1, got {d}{hint}"
        return float(d), ""

    def bet(self, n: int, a: Mapping[str, Any]) -> tuple[Bet | None, Money | None]:
        view = self.view
        mid = a.get("market_id")
        where = f"Action {n} (BET on {mid})" if isinstance(mid, str) else f"Action {n} (BET)"
        ok = True
        market = None
        if not isinstance(mid, str) or not mid.strip():
            self.errors.append(f'{where}: "market_id" is missing; give the id of a market from the list.')
            ok = False
        else:
            mv = view.market(mid)
            if mv is None:
                if any(p.market_id == mid for p in view.positions):
                    self.errors.append(f"{where}: market {mid} is closed; no bets can be placed on it.")
                else:
                    self.errors.append(f"{where}: unknown market id {mid!r}; use an id exactly as shown in "
                                       f"the market list.")
                ok = False
            elif not mv.market.is_open_at(view.as_of):
                self.errors.append(f"{where}: market {mid} is not open; no bets can be placed on it.")
                ok = False
            else:
                market = mv
        outcome = None
        raw_side = a.get("side")
        if market is not None:
            if not isinstance(raw_side, str) or not raw_side.strip():
                self.errors.append(f'{where}: "side" is missing; use {_choices(market.market)}.')
                ok = False
            else:
                outcome, by_label = _match_outcome(market.market, raw_side)
                if outcome is None:
                    self.errors.append(f"{where}: side {raw_side!r} is not an outcome of market {mid}; use "
                                       f"{_choices(market.market)}.")
                    ok = False
                else:
                    if by_label:
                        self.notes.append(f"{where}: side {raw_side!r} was read as outcome id {outcome!r}.")
                    try:
                        price = market.quote.price(outcome)
                    except KeyError:
                        self.errors.append(f"{where}: no price is known for {outcome} in market {mid}; bet on "
                                           f"another market.")
                        ok = False
                    else:
                        if price.ppm in (0, MICRO):
                            self.errors.append(f"{where}: {outcome} is priced at {price}; there is nothing to buy.")
                            ok = False
        amount = self.amount(where, a)
        ok = ok and amount is not None
        p = None
        if "probability" not in a or a.get("probability") is None:
            self.errors.append(f'{where}: "probability" is missing; every BET states your P(YES) from 0 to 1.')
            ok = False
        else:
            p, why = self.probability(a["probability"])
            if p is None:
                self.errors.append(f'{where}: "probability" {why}.')
                ok = False
        if ok and market is not None and outcome is not None and p is not None \
                and market.market.kind is MarketKind.BINARY:
            yes_price = float(market.quote.yes_price())
            if (outcome == YES and p < yes_price) or (outcome == NO and p > yes_price):
                self.notes.append(f"{where}: a {outcome} bet with stated P(YES) {p} against a YES price of "
                                  f"{yes_price}; \"probability\" is P(YES) whatever the side.")
        if not ok or outcome is None or amount is None or mid is None:
            return None, amount
        return Bet(mid, outcome, amount, p, rationale=_text(a.get("rationale"))), amount

    def amount(self, where: str, a: Mapping[str, Any]) -> Money | None:
        view = self.view
        if "amount" not in a or a.get("amount") is None:
            self.errors.append(f'{where}: "amount" is missing; give the stake in US dollars, e.g. 250.00.')
            return None
        d, problem = _read_number("amount", a["amount"])
        if problem == "type" or d is None:
            self.errors.append(f'{where}: "amount" must be a number of US dollars, got {_show(a["amount"])}.')
            return None
        if d <= 0:
            self.errors.append(f'{where}: "amount" must be positive, got {d}.')
            return None
        cents = d.quantize(CENT, rounding=ROUND_DOWN)
        if cents != d:
            self.notes.append(f"{where}: amount {d} was rounded down to whole cents (${cents}).")
        amount = Money.of(cents)
        if amount < view.min_bet:
            self.errors.append(f"{where}: amount {amount} is below the minimum bet of {view.min_bet}.")
            return None
        if amount > view.max_bet:
            self.errors.append(f"{where}: amount {amount} is above the maximum bet of {view.max_bet}.")
            return None
        return amount

    def sell(self, n: int, a: Mapping[str, Any], sold: set[tuple[str, str]]) -> Sell | None:
        view = self.view
        mid = a.get("market_id")
        where = f"Action {n} (SELL in {mid})" if isinstance(mid, str) else f"Action {n} (SELL)"
        if not isinstance(mid, str) or not mid.strip():
            self.errors.append(f'{where}: "market_id" is missing; give the id of a market you hold.')
            return None
        held = [p for p in view.positions if p.market_id == mid and p.shares > 0]
        fraction = self.fraction(where, a)
        if not held:
            self.errors.append(f"{where}: you hold no position in market {mid}; SELL only positions listed under "
                               f"Positions.")
            return None
        pos = self._held_position(where, mid, held, a.get("side"))
        if pos is None:
            return None
        mv = view.market(mid)
        if not pos.market_open or mv is None or not mv.market.is_open_at(view.as_of):
            self.errors.append(f"{where}: market {mid} is closed; its position cannot be sold and settles when the "
                               f"market resolves.")
            return None
        key = (mid, pos.outcome)
        if key in sold:
            self.errors.append(f"{where}: the {pos.outcome} position in {mid} is sold twice; use one SELL with the "
                               f"whole fraction.")
            return None
        sold.add(key)
        if fraction is None:
            return None
        return Sell(mid, pos.outcome, fraction, rationale=_text(a.get("rationale")))

    def _held_position(self, where: str, mid: str, held: list[PositionView], raw_side: Any) -> PositionView | None:
        outcomes = ", ".join(p.outcome for p in held)
        if not isinstance(raw_side, str) or not raw_side.strip():
            if len(held) == 1:
                self.notes.append(f'{where}: no "side" given; the one position held ({held[0].outcome}) was used.')
                return held[0]
            self.errors.append(f'{where}: "side" is missing; you hold {outcomes} in market {mid}.')
            return None
        mv = self.view.market(mid)
        wanted: str | None = None
        if mv is not None:
            wanted, by_label = _match_outcome(mv.market, raw_side)
            if wanted is not None and by_label:
                self.notes.append(f"{where}: side {raw_side!r} was read as outcome id {wanted!r}.")
        for p in held:
            if p.outcome == wanted or p.outcome.lower() == raw_side.strip().lower():
                return p
        self.errors.append(f"{where}: you hold no {raw_side} shares in market {mid} (you hold {outcomes}).")
        return None

    def fraction(self, where: str, a: Mapping[str, Any]) -> Decimal | None:
        if "fraction" not in a or a.get("fraction") is None:
            self.errors.append(f'{where}: "fraction" is missing; give the share of the position to sell, in (0, 1] '
                               f'(1 sells all of it).')
            return None
        d, problem = _read_number("fraction", a["fraction"])
        if problem == "type" or d is None:
            self.errors.append(f'{where}: "fraction" must be a number in (0, 1], got {_show(a["fraction"])}.')
            return None
        if problem == "range":
            hint = f" (write {d / 100} to sell {d} %)" if Decimal(1) < d <= Decimal(100) else ""
            self.errors.append(f'{where}: "fraction" must be more than 0 and at most 1, got {d}{hint}.')
            return None
        return d

    def forecasts(self, data: Mapping[str, Any]) -> dict[str, float]:
        wanted = self.view.forecast_set
        raw = data.get("forecasts")
        listed = ", ".join(wanted)
        if raw is None:
            if wanted:
                self.errors.append(f'"forecasts" is missing; give your P(YES) from 0 to 1 for each forecast-set '
                                   f"id: {listed}.")
            return {}
        if not isinstance(raw, dict):
            self.errors.append(f'"forecasts" must be an object mapping market id to P(YES), got {_show(raw)}.')
            return {}
        out: dict[str, float] = {}
        ignored = [k for k in raw if k not in wanted]
        if ignored:
            self.notes.append(f"Forecasts for ids outside the forecast set were ignored: {', '.join(ignored)}.")
        for mid in wanted:
            if mid not in raw:
                continue
            p, why = self.probability(raw[mid])
            if p is None:
                self.errors.append(f"The forecast for {mid} {why}.")
            else:
                out[mid] = p
        missing = [mid for mid in wanted if mid not in raw]
        if wanted and len(missing) == len(wanted):
            self.errors.append(f'"forecasts" gives none of the forecast-set ids; give your P(YES) from 0 to 1 for '
                               f"each of: {listed}.")
        elif missing:
            self.notes.append(f"No forecast for {', '.join(missing)} (left missing).")
        return out


def parse_reply(text: str, view: AgentView) -> ParsedReply | ReplyError:
    """Read a model's reply against `view`: a ParsedReply, or a ReplyError listing every problem (see module doc)."""
    found = extract_json(text or "")
    if found.obj is None:
        return ReplyError((found.error,), None, tuple(found.notes))
    data = found.obj
    safe = json_safe(data)
    check = _Checker(view)
    check.notes.extend(found.notes)

    raw_actions = data.get("actions")
    if "actions" not in data or raw_actions is None:
        check.notes.append('No "actions" given: read as HOLD.')
        raw_actions = []
    actions: list[Action] = []
    total = Money.zero()
    sold: set[tuple[str, str]] = set()
    if not isinstance(raw_actions, list):
        check.errors.append(f'"actions" must be a list of action objects (empty for HOLD), got {_show(raw_actions)}.')
        raw_actions = []
    for i, a in enumerate(raw_actions, start=1):
        if not isinstance(a, dict):
            check.errors.append(f"Action {i} must be an object like {{\"type\": \"BET\", ...}}, got {_show(a)}.")
            continue
        kind = a.get("type")
        kind = kind.strip().upper() if isinstance(kind, str) else kind
        if kind == "BUY":
            check.notes.append(f'Action {i}: type "BUY" was read as "BET".')
            kind = "BET"
        if kind == "HOLD":
            check.notes.append(f'Action {i}: a "HOLD" action was skipped (an empty actions list is a HOLD).')
            continue
        if kind == "BET":
            bet, amount = check.bet(i, a)
            if amount is not None:
                total = total + amount
            if bet is not None:
                actions.append(bet)
        elif kind == "SELL":
            sell = check.sell(i, a, sold)
            if sell is not None:
                actions.append(sell)
        elif kind is None:
            check.errors.append(f'Action {i}: "type" is missing; use "BET" or "SELL".')
        else:
            check.errors.append(f'Action {i}: unknown type {_show(a.get("type"))}; use "BET" or "SELL".')
    if total > view.cash:
        check.errors.append(f"The bets total {total}, more than your cash of {view.cash}; bet less in total.")
    forecasts = check.forecasts(data)
    if check.errors:
        return ReplyError(tuple(check.errors), safe, tuple(check.notes))
    return ParsedReply(tuple(actions), forecasts, _text(data.get("reasoning")), safe, tuple(check.notes))


__all__ = ["REPLY_SCHEMA", "BetAction", "DecisionReply", "ParsedReply", "ReplyError", "SellAction", "extract_json",
           "json_safe", "parse_reply", "reply_schema", "response_format"]
