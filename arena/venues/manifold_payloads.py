"""Typed shapes of Manifold's API v0 JSON (LiteMarket/FullMarket with answers, bets, probabilities, error bodies)
as pydantic models: epoch-millisecond times, probabilities quantized to ppm, finite numbers, each malformed value
rejected with the arena's message. Owns shapes only, no arena rules (pure; no httpx, no clock).

Fields are declared in the order ``manifold_parse`` reads them, so the first error reported is the one the
hand-written readers raised first. Manifold omits undefined fields, so every optional field may be missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import Field, PlainValidator, ValidationInfo, WrapValidator, model_validator
from pydantic_core.core_schema import ValidatorFunctionWrapHandler

from arena.money import MoneyError, Price
from arena.venues.fields import Flag, Payload, RequiredText, Text, fail, required_text, unsupported

BINARY_TYPE = "BINARY"
MC_TYPE = "MULTIPLE_CHOICE"
SUPPORTED_TYPES = frozenset({BINARY_TYPE, MC_TYPE})


# ----------------------------------------------------------------------------------------------- value checks


def probability(value: object) -> Price | None:
    """A probability in [0, 1] (a JSON number), quantized to ppm; None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        fail(f"expected a probability, got {value!r}")
    try:
        return Price.of(value)
    except MoneyError as exc:
        fail(str(exc))


def _required_probability(value: object) -> Price:
    p = probability(value)
    if p is None:
        fail("missing")
    return p


def from_ms_value(value: object) -> datetime | None:
    """Epoch milliseconds → aware UTC datetime; None when absent."""
    if value.__class__ is int:  # the common case first
        try:
            return datetime.fromtimestamp(value / 1000, tz=timezone.utc)  # type: ignore[operator]
        except (ValueError, OverflowError, OSError):
            fail(f"not epoch milliseconds: {value!r}")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"expected epoch milliseconds, got {value!r}")
    try:
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        fail(f"not epoch milliseconds: {value!r}")


def _required_ms(value: object) -> datetime:
    at = from_ms_value(value)
    if at is None:
        fail("missing")
    return at


def _id_of(what: str) -> Any:
    def check(value: object) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
            fail(f"expected {what}, got {value!r}")
        return str(value)
    return PlainValidator(check)


def _answer_text(value: object) -> str:
    if not isinstance(value, str):
        fail(f"expected a string, got {value!r}")
    return value


def _answer_index(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        fail(f"expected an int, got {value!r}")
    return value


def _outcome_type(value: object, info: ValidationInfo) -> str:
    value = required_text(value)
    if value not in SUPPORTED_TYPES:
        unsupported(f"{value} markets are not tradable in the arena", value, info, _BEFORE["outcomeType"])
    return value


def _check_mechanism(info: ValidationInfo, outcome_type: str, mechanism_wanted: str, what: str) -> bool:
    """Whether the market is of `outcome_type`; an unsupported mechanism of that type is an UnsupportedMarket."""
    if info.data.get("outcomeType") != outcome_type:
        return False
    mechanism = info.data.get("mechanism") or ""
    if mechanism and mechanism != mechanism_wanted:
        unsupported(f"{what} mechanism {mechanism!r} is not supported", f"{outcome_type}/{mechanism}", info,
                    _BEFORE[str(info.field_name)], "mechanism")
    return True


def _binary_probability(value: object, info: ValidationInfo) -> Price | None:
    """A binary market's ``probability`` (after its mechanism is checked); not read for other kinds."""
    if not _check_mechanism(info, BINARY_TYPE, "cpmm-1", "binary"):
        return None
    return probability(value)


def _mc_answers(value: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    """A multiple-choice market's ``answers`` sorted by ``index`` with unique ids; not read for other kinds."""
    if not _check_mechanism(info, MC_TYPE, "cpmm-multi-1", "multiple-choice"):
        return []
    if value is None:
        return []
    if not isinstance(value, list):
        fail("expected an array")
    answers = [a if a.index is not None else a.model_copy(update={"index": i}) for i, a in enumerate(handler(value))]
    answers.sort(key=lambda a: a.index)
    if len({a.id for a in answers}) != len(answers):
        fail("duplicate answer ids")
    return answers


def _answer_probs(value: object, handler: ValidatorFunctionWrapHandler) -> Any:
    """{answer id: probability}; anything but an object is no answer probabilities at all."""
    return handler(value) if isinstance(value, Mapping) else None


Number = float | None  # a finite JSON number (strict: no bool, no numeric string; NaN and ±inf refused)
Probability = Annotated[Price | None, PlainValidator(probability)]
EpochMs = Annotated[datetime | None, PlainValidator(from_ms_value)]


# ----------------------------------------------------------------------------------------------- markets


class AnswerPayload(Payload):
    """One answer of a cpmm-multi-1 market; ``index`` defaults to the answer's position in the list."""

    id: Annotated[str, _id_of("an answer id")] = Field(None, validate_default=True)
    text: Annotated[str, PlainValidator(_answer_text)] = Field(None, validate_default=True)
    index: Annotated[int | None, PlainValidator(_answer_index)] = None
    resolution: Text = None
    probability: Probability = None
    resolutionProbability: Probability = None
    resolutionTime: EpochMs = None
    isOther: Flag = None


class ManifoldMarketPayload(Payload):
    """A LiteMarket or FullMarket (``/markets``, ``/search-markets``, ``/market/{id}``, ``/slug/{slug}``)."""

    id: Annotated[str, _id_of("a contract id")] = Field(None, validate_default=True)
    outcomeType: Annotated[str, PlainValidator(_outcome_type)] = Field(None, validate_default=True)
    question: RequiredText
    mechanism: Text = None
    closeTime: EpochMs = None
    createdTime: EpochMs = None
    lastUpdatedTime: EpochMs = None
    lastBetTime: EpochMs = None
    resolutionTime: EpochMs = None
    isResolved: Flag = None
    resolution: Text = None
    resolutionProbability: Probability = None
    probability: Annotated[Price | None, PlainValidator(_binary_probability)] = Field(
        None, validate_default=True)
    answers: Annotated[list[AnswerPayload], WrapValidator(_mc_answers)] = Field(  # sorted by index
        None, validate_default=True)
    slug: Text = None
    creatorUsername: Text = None
    url: Text = None
    token: Text = None
    shouldAnswersSumToOne: Flag = None
    volume: Number = None
    volume24Hours: Number = None
    totalLiquidity: Number = None
    uniqueBettorCount: Number = None  # a count sent as a JSON number


# the top-level fields declared before each one (see ``fields.unsupported``)
_BEFORE = {name: tuple(ManifoldMarketPayload.model_fields)[:i] for i, name in enumerate(ManifoldMarketPayload.model_fields)}


# ----------------------------------------------------------------------------------------------- bets


class BetPayload(Payload):
    """One bet row of ``/v0/bets`` (or of a ``/multi-bet`` response, whose id key is ``betId``)."""

    @model_validator(mode="before")
    @classmethod
    def _bet_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and "id" not in data:
            return {**data, "id": data.get("betId")}
        return data

    id: Annotated[str, _id_of("a bet id")]
    createdTime: Annotated[datetime, PlainValidator(_required_ms)] = Field(None, validate_default=True)
    probBefore: Annotated[Price, PlainValidator(_required_probability)] = Field(None, validate_default=True)
    probAfter: Annotated[Price, PlainValidator(_required_probability)] = Field(None, validate_default=True)
    amount: Number = None  # mana, negative for sells
    contractId: Text = None
    answerId: Text = None
    outcome: Text = None
    isFilled: Flag = None
    isCancelled: Flag = None
    isRedemption: Flag = None
    limitProb: Probability = None


# ----------------------------------------------------------------------------------------------- probabilities


class MarketProbPayload(Payload):
    """``/v0/market/{id}/prob``: ``{"prob": p}`` (binary) or ``{"answerProbs": {answerId: p}}`` (multi)."""

    @model_validator(mode="before")
    @classmethod
    def _prob_wins(cls, data: Any) -> Any:
        if isinstance(data, dict) and "prob" in data and "answerProbs" in data:
            return {k: v for k, v in data.items() if k != "answerProbs"}  # a binary reply: never read
        return data

    prob: Probability = None
    answerProbs: Annotated[dict[str, Probability] | None, WrapValidator(_answer_probs)] = None


class ErrorBodyPayload(Payload):
    """A Manifold error body: ``message`` and, for a validation error, ``details`` [{field, error}]."""

    message: RequiredText
    details: Any = None


__all__ = [
    "AnswerPayload",
    "BINARY_TYPE",
    "BetPayload",
    "ErrorBodyPayload",
    "MC_TYPE",
    "ManifoldMarketPayload",
    "MarketProbPayload",
    "SUPPORTED_TYPES",
    "from_ms_value",
    "probability",
]
