"""Typed field types for the venue payload models (pydantic), shared by the Polymarket and Manifold parsers, and
the one translation of a pydantic ``ValidationError`` into the arena's ``ParseError`` naming the field path (pure).

A payload model declares its fields in the order the parser reads them: pydantic reports errors in declaration
order and the first one is the one raised, so the error a payload gets does not depend on how many others it has.
Custom checks raise ``fail(...)`` (a ``PydanticCustomError`` carrying the arena's own message and, for checks
inside a decoded value, a path suffix such as ``[0]``); pydantic's own errors are worded like the arena's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated, Any, NoReturn, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, TypeAdapter, ValidationError, ValidationInfo
from pydantic_core import PydanticCustomError

from arena.errors import ParseError
from arena.money import MoneyError, Price, parse_decimal_price
from arena.venues import UnsupportedMarket

ARENA = "arena"  # the error type of every check written here
UNSUPPORTED = "unsupported_market"  # the error type that becomes UnsupportedMarket (a typed skip)


class Payload(BaseModel):
    """Base of the venue payload models: strict (no coercion), unknown fields ignored, frozen."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, arbitrary_types_allowed=True,
                              allow_inf_nan=False)


def fail(message: str, at: str = "") -> NoReturn:
    """Reject the value being validated; `at` extends the field path inside it (``[0]``, ``.rate``)."""
    raise PydanticCustomError(ARENA, "{message}", {"message": message, "at": at})


def unsupported(message: str, kind: str, info: ValidationInfo, earlier: Sequence[str], sibling: str = "") -> NoReturn:
    """Reject a well-formed market the arena does not trade (becomes ``UnsupportedMarket``); `sibling` names the
    field that says so when the check runs while validating another one.

    When every field declared `earlier` (the top-level fields before this one) is valid, this is the error the
    payload gets, so it is raised at once as ``UnsupportedMarket`` (pydantic lets it through and stops): a skipped
    market costs no validation of the rest. Otherwise the earlier error wins, as it would have when read first.
    """
    if len(info.data) == len(earlier):  # every earlier field validated (info.data holds only the valid ones)
        raise UnsupportedMarket(message, field=sibling or str(info.field_name), kind=kind)
    raise PydanticCustomError(UNSUPPORTED, "{message}", {"message": message, "kind": kind, "sibling": sibling})


# pydantic's own error types, worded as the arena words them
_MESSAGES: dict[str, Callable[[Any], str]] = {
    "missing": lambda v: "missing",
    "bool_type": lambda v: f"expected a boolean, got {v!r}",
    "float_type": lambda v: f"expected a number, got {v!r}",
    "finite_number": lambda v: f"not finite: {v!r}",
    "string_type": lambda v: f"expected a string, got {type(v).__name__}",
    "list_type": lambda v: "expected an array",
    "model_type": lambda v: f"expected a JSON object, got {type(v).__name__}",
    "model_attributes_type": lambda v: f"expected a JSON object, got {type(v).__name__}",
    "dict_type": lambda v: f"expected a JSON object, got {type(v).__name__}",
}


def field_path(loc: tuple[int | str, ...], root: str = "") -> str:
    """``("answers", 2, "probability")`` → ``answers[2].probability``; a path starting at a list item, or the
    root itself, is put under ``root`` (``bets[1].probAfter``, ``market``)."""
    out = root if not loc or isinstance(loc[0], int) else ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def to_parse_error(exc: ValidationError, root: str = "") -> ParseError:
    """The first error of `exc` as a ``ParseError`` (or ``UnsupportedMarket``) whose field is its full path."""
    err = exc.errors(include_url=False, include_context=True)[0]
    ctx = err.get("ctx") or {}
    loc = tuple(err["loc"])
    if ctx.get("sibling"):
        loc = loc[:-1] + (ctx["sibling"],)
    path = field_path(loc, root) + str(ctx.get("at", ""))
    kind = err["type"]
    if kind == UNSUPPORTED:
        return UnsupportedMarket(ctx["message"], field=path, kind=ctx["kind"])
    if kind == ARENA:
        return ParseError(ctx["message"], field=path)
    word = _MESSAGES.get(kind)
    return ParseError(word(err.get("input")) if word else err["msg"], field=path)


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], raw: object, root: str) -> M:
    """`raw` validated as `model`, or ``ParseError`` naming the first bad field (`root` when `raw` itself is)."""
    try:
        return model.__pydantic_validator__.validate_python(raw)  # model_validate without its Python frame
    except ValidationError as exc:
        error = to_parse_error(exc, root)
    except UnsupportedMarket as skip:  # raised at once by `unsupported`: drop the validators' frames
        error = skip.with_traceback(None)
    raise error  # outside the handler: a stored error keeps no ValidationError or frames alive


def validate_as(adapter: TypeAdapter[Any], raw: object, root: str) -> Any:
    """Like ``validate`` with a ``TypeAdapter`` built once (lists of models, mappings)."""
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        error = to_parse_error(exc, root)
    raise error


def nested(exc: ParseError, prefix: str) -> ParseError:
    """The same error with its field put under ``prefix`` (``events[2]`` + ``id``)."""
    message = str(exc.args[0]) if exc.args else "malformed"
    if exc.field and message.startswith(exc.field + ": "):
        message = message[len(exc.field) + 2:]
    field = f"{prefix}.{exc.field}" if exc.field and not exc.field.startswith("[") else prefix + exc.field
    if isinstance(exc, UnsupportedMarket):
        return UnsupportedMarket(message, field=field, kind=exc.kind)
    return ParseError(message, field=field)


# ----------------------------------------------------------------------------------------------- value checks


def blank(value: object) -> bool:
    """None or a blank string: Gamma's way of saying "absent"."""
    return value is None or (isinstance(value, str) and value.strip() == "")


def required_text(value: object) -> str:
    if value is None:
        fail("missing")
    if not isinstance(value, str):
        fail(f"expected a string, got {type(value).__name__}")
    if not value.strip():
        fail("empty")
    return value


def _venue_id(value: object) -> str:
    if value.__class__ is str:  # the common case first
        text = value.strip()  # type: ignore[attr-defined]
        if text:
            return text
    if blank(value):
        fail("missing")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        fail(f"expected a string id, got {type(value).__name__}")
    return str(value).strip()


def _optional_id(value: object) -> str:
    if value is None:
        return ""
    if value.__class__ is str:
        return value.strip()  # type: ignore[attr-defined]  # blank → ""
    return _venue_id(value)


def _price(value: object) -> Price:
    try:
        return Price.of(value)
    except MoneyError as exc:
        fail(str(exc))


def _optional_price(value: object) -> Price | None:
    return None if blank(value) else _price(value)


def _required_price(value: object) -> Price:
    if blank(value):
        fail("missing")
    return _price(value)


def exact_probability(value: object, at: str = "") -> Decimal:
    """An exact Decimal in [0, 1] from a price string or number."""
    try:
        d = parse_decimal_price(value)
    except MoneyError as exc:
        fail(str(exc), at)
    if not Decimal(0) <= d <= Decimal(1):
        fail(f"price outside [0, 1]: {value!r}", at)
    return d


def decimal_number(value: object) -> float | None:
    """A number or numeric string (Gamma sends ``volume`` as a string, ``volumeNum`` as a number)."""
    if value.__class__ is float and math.isfinite(value):  # type: ignore[arg-type]
        return value  # type: ignore[return-value]  # float(Decimal(repr(x))) is x: skip the round trip
    if blank(value):
        return None
    try:
        return float(parse_decimal_price(value))
    except MoneyError as exc:
        fail(str(exc))


def parse_timestamp(value: object, fld: str = "") -> datetime | None:
    """An aware UTC datetime from Gamma's mixed ISO formats; None for null/"".

    Accepts ``…Z``, fractional seconds of any length, a space separator with a short offset
    (``2025-03-28 04:34:20+00``), ``+00:00:00`` offsets and date-only strings (midnight UTC). A naive value
    is taken to be UTC. Raises ``ParseError`` naming `fld`.
    """
    try:
        return _iso_timestamp(value)
    except PydanticCustomError as exc:
        raise ParseError(str(exc.context["message"]) if exc.context else str(exc), field=fld) from None


def _iso_timestamp(value: object) -> datetime | None:
    if blank(value):
        return None
    if not isinstance(value, str):
        fail(f"expected an ISO-8601 string, got {type(value).__name__}")
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        normalized = text.replace(" ", "T", 1)
        if normalized.endswith("Z"):
            normalized = normalized[:-1] + "+00:00"
        if len(normalized) >= 3 and normalized[-3] in "+-" and normalized[-2:].isdigit():
            normalized += ":00"
        try:
            dt = datetime.fromisoformat(normalized)
        except ValueError:
            fail(f"not an ISO-8601 timestamp: {value!r}")
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc)
    except OverflowError:
        fail(f"timestamp out of range: {value!r}")


def _nullable_list(value: object) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        fail("expected an array")
    return value


# Field types. A strict ``str | None`` / ``bool | None`` is checked by pydantic-core itself (no Python call).
Text = str | None  # a string field; None when absent or null (read it as ``x or ""``)
Flag = bool | None  # a boolean field; None when absent or null
RequiredText = Annotated[str, PlainValidator(required_text)]  # missing, null or blank is an error
VenueId = Annotated[str, PlainValidator(_venue_id)]  # a str or int id, stripped; missing or blank is an error
OptionalId = Annotated[str, PlainValidator(_optional_id)]  # the same, "" when absent
OptionalPrice = Annotated[Price | None, PlainValidator(_optional_price)]  # None when absent, null or ""
RequiredPrice = Annotated[Price, PlainValidator(_required_price)]
DecimalNumber = Annotated[float | None, PlainValidator(decimal_number)]  # a number or numeric string
IsoTimestamp = Annotated[datetime | None, PlainValidator(_iso_timestamp)]  # aware UTC; None for null/""
NullableList = Annotated[list[Any], PlainValidator(_nullable_list)]  # an array; [] when null


__all__ = [
    "DecimalNumber",
    "Flag",
    "IsoTimestamp",
    "NullableList",
    "OptionalId",
    "OptionalPrice",
    "Payload",
    "RequiredPrice",
    "RequiredText",
    "Text",
    "VenueId",
    "blank",
    "exact_probability",
    "fail",
    "field_path",
    "nested",
    "parse_timestamp",
    "to_parse_error",
    "unsupported",
    "validate",
    "validate_as",
]
