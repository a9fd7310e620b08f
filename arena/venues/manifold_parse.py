"""Pure parsers for Manifold API v0 payloads (LiteMarket/FullMarket, bets, probabilities).

Owns the mapping from Manifold's raw JSON to arena domain objects and Manifold's settlement rules.
Imports no httpx and never reads the clock: ``fetched_at`` is always passed in. All Manifold times are epoch
**milliseconds**; undefined fields are omitted (not null), so every optional field may be missing. Shapes are
checked first by the pydantic models of ``manifold_payloads``; a malformed payload raises ``ParseError`` naming
the field path (``answers[2].probability``, ``bets[1].probAfter``).

Market kinds
------------
- ``BINARY`` → ``Market(kind=BINARY)``, outcomes ``(YES, NO)``, ``Quote.prices = {YES: probability}``.
- ``MULTIPLE_CHOICE`` → ``Market(kind=MULTI)``: outcomes = answer ids (by ``index``), labels = answer texts,
  ``Quote.prices`` = each answer's probability. A LiteMarket (listing) has no answers: it parses with empty
  outcomes, no quote and ``tradable=False`` / ``skip_reason="answers_missing"`` — fetch ``/market/{id}``.
- Everything else (POLL, BOUNTIED_QUESTION, STONK, PSEUDO_NUMERIC, NUMBER, MULTI_NUMERIC, DATE, FREE_RESPONSE,
  QUADRATIC_FUNDING, PERP, unknown) raises ``UnsupportedMarket`` (a ``ParseError`` subclass, a typed skip):
  these never become tradable, so ingest counts and drops them. A POLL with ``isResolved`` and no
  ``resolution`` is therefore never mistaken for a settled market.

Resolution (only from ``resolution`` and only when ``isResolved`` is true; ``probability`` is ignored)
----------------------------------------------------------------------------------------------------------
- ``YES`` / ``NO`` → WINNER. ``MKT`` on a binary → ``Resolution.probabilistic_yes(resolutionProbability)``
  (missing probability → pending ``"mkt_without_probability"``). ``CANCEL`` → ``Resolution.void`` (refund).
- MC answer id → WINNER among the answer-id outcomes (unknown id when answers are known → pending
  ``"unknown_answer"``; without answers the winner is the only outcome named, all others pay 0).
- MC ``MKT`` → PROBABILISTIC with each answer's own payout (answer ``resolution`` YES → 1, NO → 0, MKT →
  its ``resolutionProbability``) when *every* answer carries one; otherwise pending
  ``"mc_mkt_weights_unavailable"``. An answer resolved CANCEL inside an MKT market → pending
  ``"mc_answer_cancelled"`` (a per-answer refund cannot be expressed as one market resolution).
- MC ``CHOOSE_MULTIPLE`` → pending ``"choose_multiple_weights_unavailable"`` (v0 does not expose the weights).
- ``isResolved`` false → pending ``"open"`` or ``"closed_unresolved"`` (closeTime passed); markets can also be
  un-resolved by moderators, so a later fetch may take a resolution back (re-settle by version).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pydantic import TypeAdapter

from arena.domain.market import NO, YES, Market, MarketKind, MarketStatus, Quote, Resolution, ResolutionKind
from arena.errors import ParseError
from arena.money import Price
from arena.venues import PricePoint, UnsupportedMarket
from arena.venues.fields import nested, validate, validate_as
from arena.venues.manifold_payloads import (
    BINARY_TYPE,
    SUPPORTED_TYPES,
    BetPayload,
    ErrorBodyPayload,
    ManifoldMarketPayload,
    MarketProbPayload,
    from_ms_value,
)

VENUE = "manifold"

# pending reasons
OPEN = "open"
CLOSED_UNRESOLVED = "closed_unresolved"
RESOLVED_WITHOUT_RESOLUTION = "resolved_without_resolution"
MKT_WITHOUT_PROBABILITY = "mkt_without_probability"
UNKNOWN_RESOLUTION = "unknown_resolution"
UNKNOWN_ANSWER = "unknown_answer"
MC_MKT_WEIGHTS_UNAVAILABLE = "mc_mkt_weights_unavailable"
MC_ANSWER_CANCELLED = "mc_answer_cancelled"
CHOOSE_MULTIPLE = "choose_multiple_weights_unavailable"


def market_id(native_id: str) -> str:
    """The arena id of a Manifold contract id."""
    return f"{VENUE}:{native_id}"


# ----------------------------------------------------------------------------------------------- field readers


def from_ms(value: object, fld: str) -> datetime | None:
    """Epoch milliseconds → aware UTC datetime; None when absent. Raises ``ParseError`` naming `fld`."""
    try:
        return from_ms_value(value)
    except ValueError as exc:  # PydanticCustomError
        raise ParseError(str(exc), field=fld) from None


_BETS = TypeAdapter(list[BetPayload])


def _utc(when: datetime) -> datetime:
    if when.tzinfo is None:
        raise ValueError("fetched_at must be timezone-aware (UTC)")
    return when.astimezone(timezone.utc)


def _tiptap_text(node: object, out: list[str], depth: int = 0) -> None:
    if depth > 50:
        return
    if isinstance(node, Mapping):
        text = node.get("text")
        if isinstance(text, str):
            out.append(text)
        content = node.get("content")
        if isinstance(content, list):
            for child in content:
                _tiptap_text(child, out, depth + 1)
            if node.get("type") == "paragraph":
                out.append("\n")


def description_text(m: Mapping[str, Any]) -> str:
    """``textDescription`` if given; else ``description`` as a string, or the text of its TipTap JSON."""
    text = m.get("textDescription")
    if isinstance(text, str):
        return text
    desc = m.get("description")
    if isinstance(desc, str):
        return desc
    if isinstance(desc, Mapping):
        parts: list[str] = []
        _tiptap_text(desc, parts)
        return "".join(parts).strip()
    return ""


# ----------------------------------------------------------------------------------------------- markets


@dataclass(frozen=True)
class Answer:
    """One answer of a cpmm-multi-1 market. ``probability`` is 1/0 once the answer itself resolved YES/NO."""

    id: str
    text: str
    index: int
    probability: Price | None
    resolution: str = ""
    resolution_probability: Price | None = None
    resolution_time: datetime | None = None
    is_other: bool = False


@dataclass(frozen=True)
class VenueMarket:
    """A parsed Manifold market: the domain ``Market`` + ``Quote`` + ``Resolution``, and Manifold extras.

    ``resolution`` is set only when final (module docstring rules); otherwise ``pending_reason`` says why not.
    ``tradable`` is False (with ``skip_reason``) once resolved or past ``closeTime``, when there is no
    probability, or when an MC market's answers are not in the payload.
    """

    market: Market
    quote: Quote | None
    resolution: Resolution | None
    pending_reason: str
    tradable: bool
    skip_reason: str
    native_id: str
    slug: str = ""
    outcome_type: str = ""
    mechanism: str = ""
    is_resolved: bool = False
    raw_resolution: str = ""
    resolution_probability: Price | None = None
    resolution_time: datetime | None = None
    answers: tuple[Answer, ...] = ()
    answers_sum_to_one: bool | None = None
    created_at: datetime | None = None
    last_updated_at: datetime | None = None
    last_bet_at: datetime | None = None
    unique_bettors: int | None = None
    token: str = "MANA"
    creator_username: str = ""


def _binary_resolution(mid: str, raw_res: str, p_res: Price | None,
                       at: datetime | None) -> tuple[Resolution | None, str]:
    if raw_res == "YES":
        return Resolution.winner(mid, YES, resolved_at=at, source=VENUE), ""
    if raw_res == "NO":
        return Resolution.winner(mid, NO, resolved_at=at, source=VENUE), ""
    if raw_res == "MKT":
        if p_res is None:
            return None, MKT_WITHOUT_PROBABILITY
        return Resolution.probabilistic_yes(mid, p_res, resolved_at=at, source=VENUE), ""
    if raw_res == "CANCEL":
        return Resolution.void(mid, resolved_at=at, source=VENUE), ""
    if not raw_res:
        return None, RESOLVED_WITHOUT_RESOLUTION
    return None, UNKNOWN_RESOLUTION


def _mc_resolution(mid: str, raw_res: str, answers: tuple[Answer, ...],
                   at: datetime | None) -> tuple[Resolution | None, str]:
    ids = tuple(a.id for a in answers)
    if raw_res == "CANCEL":
        return Resolution.void(mid, resolved_at=at, source=VENUE), ""
    if raw_res == "CHOOSE_MULTIPLE":
        return None, CHOOSE_MULTIPLE
    if raw_res == "MKT":
        if not answers:
            return None, MC_MKT_WEIGHTS_UNAVAILABLE
        payouts: dict[str, Price] = {}
        for a in answers:
            if a.resolution == "YES":
                payouts[a.id] = Price.of(1)
            elif a.resolution == "NO":
                payouts[a.id] = Price.of(0)
            elif a.resolution == "MKT" and a.resolution_probability is not None:
                payouts[a.id] = a.resolution_probability
            elif a.resolution == "CANCEL":
                return None, MC_ANSWER_CANCELLED
            else:
                return None, MC_MKT_WEIGHTS_UNAVAILABLE
        return Resolution(mid, ResolutionKind.PROBABILISTIC, payouts, at, source=VENUE), ""
    if not raw_res:
        return None, RESOLVED_WITHOUT_RESOLUTION
    if raw_res in ("YES", "NO"):
        return None, UNKNOWN_RESOLUTION
    if ids:
        if raw_res not in ids:
            return None, UNKNOWN_ANSWER
        return Resolution.winner(mid, raw_res, outcomes=ids, resolved_at=at, source=VENUE), ""
    return Resolution.winner(mid, raw_res, outcomes=(raw_res,), resolved_at=at, source=VENUE), ""


def parse_manifold_market(raw: object, *, fetched_at: datetime) -> VenueMarket:
    """Parse a LiteMarket or FullMarket (``/markets``, ``/search-markets``, ``/market/{id}``, ``/slug/{slug}``).

    ``fetched_at``: when we received it (aware UTC); it decides OPEN vs CLOSED against ``closeTime`` and caps
    ``Quote.observed_at`` (= ``lastUpdatedTime``). Raises ``UnsupportedMarket`` for non-tradable market types
    and ``ParseError`` naming the field for malformed payloads.
    """
    fetched_at = _utc(fetched_at)
    m = validate(ManifoldMarketPayload, raw, "market")
    native = m.id
    mid = market_id(native)
    outcome_type = m.outcomeType
    mechanism = m.mechanism or ""
    close_time = m.closeTime
    updated_at = m.lastUpdatedTime
    resolution_time = m.resolutionTime
    is_resolved = bool(m.isResolved)
    raw_res = m.resolution or ""
    p_res = m.resolutionProbability
    observed_at = updated_at if updated_at is not None and updated_at <= fetched_at else fetched_at

    answers: tuple[Answer, ...] = ()
    quote: Quote | None = None
    skip = ""
    if outcome_type == BINARY_TYPE:
        kind = MarketKind.BINARY
        outcomes: tuple[str, ...] = (YES, NO)
        labels: tuple[str, ...] = ("Yes", "No")
        if m.probability is not None:
            quote = Quote(mid, {YES: m.probability}, observed_at=observed_at, fetched_at=fetched_at, source=VENUE)
        else:
            skip = "no_probability"
    else:
        kind = MarketKind.MULTI
        answers = tuple(Answer(
            id=a.id, text=a.text, index=a.index if a.index is not None else 0, probability=a.probability,
            resolution=a.resolution or "", resolution_probability=a.resolutionProbability,
            resolution_time=a.resolutionTime, is_other=bool(a.isOther),
        ) for a in m.answers)
        outcomes = tuple(a.id for a in answers)
        labels = tuple(a.text for a in answers)
        if not answers:
            skip = "answers_missing"
        elif any(a.probability is None for a in answers):
            skip = "no_probability"
        else:
            quote = Quote(mid, {a.id: a.probability for a in answers if a.probability is not None},
                          observed_at=observed_at, fetched_at=fetched_at, source=VENUE)

    if is_resolved:
        if kind is MarketKind.BINARY:
            resolution, pending = _binary_resolution(mid, raw_res, p_res, resolution_time)
        else:
            resolution, pending = _mc_resolution(mid, raw_res, answers, resolution_time)
    else:
        resolution = None
        pending = CLOSED_UNRESOLVED if close_time is not None and close_time <= fetched_at else OPEN

    if resolution is not None:
        status = MarketStatus.RESOLVED
    elif is_resolved or (close_time is not None and close_time <= fetched_at):
        status = MarketStatus.CLOSED
    else:
        status = MarketStatus.OPEN
    if status is not MarketStatus.OPEN:
        skip = "resolved" if is_resolved else "closed"

    slug = m.slug or ""
    creator = m.creatorUsername or ""
    url = m.url or (f"https://manifold.markets/{creator}/{slug}" if creator and slug else "")

    market = Market(
        id=mid, venue=VENUE, question=m.question, kind=kind, outcomes=outcomes, outcome_labels=labels,
        close_time=close_time, status=status, description=description_text(raw), url=url,
        volume=m.volume, volume_24h=m.volume24Hours, liquidity=m.totalLiquidity,
    )
    return VenueMarket(
        market=market, quote=quote, resolution=resolution, pending_reason=pending, tradable=not skip,
        skip_reason=skip, native_id=native, slug=slug, outcome_type=outcome_type, mechanism=mechanism,
        is_resolved=is_resolved, raw_resolution=raw_res, resolution_probability=p_res,
        resolution_time=resolution_time, answers=answers, answers_sum_to_one=m.shouldAnswersSumToOne,
        created_at=m.createdTime, last_updated_at=updated_at, last_bet_at=m.lastBetTime,
        unique_bettors=None if m.uniqueBettorCount is None else int(m.uniqueBettorCount), token=m.token or "MANA", creator_username=creator,
    )


@dataclass(frozen=True)
class MarketsPage:
    """A parsed listing: ``markets`` parsed, ``skipped`` unsupported types (id, error), ``rejected`` malformed."""

    markets: tuple[VenueMarket, ...]
    skipped: tuple[tuple[str, UnsupportedMarket], ...]
    rejected: tuple[tuple[str, ParseError], ...]
    last_id: str | None  # the ``before=`` cursor for the next ``/v0/markets`` page


def parse_manifold_markets(raw: object, *, fetched_at: datetime) -> MarketsPage:
    """Parse a ``/v0/markets`` or ``/v0/search-markets`` page (a JSON array), one bad row never losing the page."""
    if not isinstance(raw, list):
        raise ParseError("expected an array of markets", field="markets")
    ok: list[VenueMarket] = []
    skipped: list[tuple[str, UnsupportedMarket]] = []
    rejected: list[tuple[str, ParseError]] = []
    last_id = None
    for i, row in enumerate(raw):
        key = str(row.get("id")) if isinstance(row, Mapping) and row.get("id") is not None else f"#{i}"
        if isinstance(row, Mapping) and isinstance(row.get("id"), str):
            last_id = row["id"]
        try:
            ok.append(parse_manifold_market(row, fetched_at=fetched_at))
        except UnsupportedMarket as exc:
            skipped.append((key, exc))
        except ParseError as exc:
            rejected.append((key, exc))
    return MarketsPage(tuple(ok), tuple(skipped), tuple(rejected), last_id)


# ----------------------------------------------------------------------------------------------- probabilities


def parse_market_prob(raw: object) -> Price | dict[str, Price]:
    """``/v0/market/{id}/prob`` → ``{"prob": p}`` (binary) or ``{"answerProbs": {answerId: p}}`` (multi)."""
    m = validate(MarketProbPayload, raw, "prob")
    if "prob" in raw:  # type: ignore[operator]  # validated: an object
        if m.prob is None:
            raise ParseError("null", field="prob")
        return m.prob
    if m.answerProbs is None:
        raise ParseError("neither prob nor answerProbs", field="prob")
    for aid, p in m.answerProbs.items():
        if p is None:
            raise ParseError("null", field=f"answerProbs.{aid}")
    return dict(m.answerProbs)  # type: ignore[arg-type]  # no None left


def parse_market_probs(raw: object) -> dict[str, Price | dict[str, Price]]:
    """``/v0/market-probs?ids=…`` → {contract id: prob or {answer id: prob}}."""
    if not isinstance(raw, Mapping):
        raise ParseError(f"expected a JSON object, got {type(raw).__name__}", field="market_probs")
    out: dict[str, Price | dict[str, Price]] = {}
    for cid, body in raw.items():
        try:
            out[str(cid)] = parse_market_prob(body)
        except ParseError as exc:
            raise nested(exc, str(cid)) from exc
    return out


# ----------------------------------------------------------------------------------------------- bets


@dataclass(frozen=True)
class Bet:
    """One bet row of ``/v0/bets`` (or of a ``/multi-bet`` response, whose id key is ``betId``).

    ``amount`` in mana (negative for sells); ``prob_before``/``prob_after`` the market (or answer) probability.
    """

    id: str
    contract_id: str
    answer_id: str
    created_at: datetime
    amount: float
    outcome: str
    prob_before: Price
    prob_after: Price
    is_filled: bool | None
    is_cancelled: bool
    is_redemption: bool
    limit_prob: Price | None

    @property
    def moves_price(self) -> bool:
        """Whether this bet can carry a price point: not a redemption, not cancelled, not a resting limit order."""
        return not self.is_redemption and not self.is_cancelled and self.is_filled is not False


def _bet(b: BetPayload) -> Bet:
    return Bet(
        id=b.id, contract_id=b.contractId or "", answer_id=b.answerId or "", created_at=b.createdTime,
        amount=0.0 if b.amount is None else b.amount, outcome=b.outcome or "", prob_before=b.probBefore,
        prob_after=b.probAfter, is_filled=b.isFilled, is_cancelled=bool(b.isCancelled),
        is_redemption=bool(b.isRedemption), limit_prob=b.limitProb,
    )


def parse_bet(raw: object, i: int = 0) -> Bet:
    """One bet; errors are named under ``bets[i]``."""
    try:
        return _bet(validate(BetPayload, raw, ""))
    except ParseError as exc:
        raise nested(exc, f"bets[{i}]") from None


def parse_bets(raw: object) -> list[Bet]:
    """A ``/v0/bets`` page (JSON array) in the order received."""
    if not isinstance(raw, list):
        raise ParseError("expected an array of bets", field="bets")
    return [_bet(b) for b in validate_as(_BETS, raw, "bets")]


def probability_history(bets: Iterable[Bet] | object, *, answer_id: str | None = None,
                        created_at: datetime | None = None) -> list[PricePoint]:
    """P(YES) (or of ``answer_id`` for MC) over time from bets: ``(createdTime, probAfter)`` per price-moving bet.

    Skips redemptions, cancelled bets and limit orders not filled on placement (``isFilled: false``: a
    resting order moves nothing when placed; the taker bet that fills it carries the new probability). Bets
    are deduplicated by id (pages overlap on purpose), sorted by time, one point per millisecond (the last).
    ``created_at`` (the market's ``createdTime``) prepends the first kept bet's ``probBefore`` as the start.
    For MC markets pass ``answer_id``: bets of other answers are dropped.
    """
    if isinstance(bets, (Mapping, str, bytes)) or not isinstance(bets, Iterable):
        raise ParseError(f"expected bets, got {type(bets).__name__}", field="bets")
    items = list(bets)
    parsed = items if all(isinstance(b, Bet) for b in items) else parse_bets(items)
    seen: dict[str, Bet] = {}
    for bet in parsed:
        if answer_id is not None and bet.answer_id != answer_id:
            continue
        if not bet.moves_price:
            continue
        seen[bet.id] = bet
    ordered = sorted(seen.values(), key=lambda b: b.created_at)
    by_time: dict[datetime, Price] = {}
    for bet in ordered:
        by_time[bet.created_at] = bet.prob_after
    points = [PricePoint(t, p) for t, p in by_time.items()]
    if created_at is not None and ordered and created_at < ordered[0].created_at:
        points.insert(0, PricePoint(_utc(created_at), ordered[0].prob_before))
    return points


def parse_error_message(raw: object) -> str:
    """The ``message`` of a Manifold error body, with validation ``details`` appended."""
    m = validate(ErrorBodyPayload, raw, "error")
    message = m.message
    if isinstance(m.details, list):
        extra = "; ".join(
            f"{d.get('field') or '(query)'}: {d.get('error')}" for d in m.details if isinstance(d, Mapping))
        if extra:
            message = f"{message} {extra}"
    return message


__all__ = [
    "Answer",
    "Bet",
    "CHOOSE_MULTIPLE",
    "CLOSED_UNRESOLVED",
    "MC_ANSWER_CANCELLED",
    "MC_MKT_WEIGHTS_UNAVAILABLE",
    "MKT_WITHOUT_PROBABILITY",
    "MarketsPage",
    "OPEN",
    "RESOLVED_WITHOUT_RESOLUTION",
    "SUPPORTED_TYPES",
    "UNKNOWN_ANSWER",
    "UNKNOWN_RESOLUTION",
    "VENUE",
    "VenueMarket",
    "description_text",
    "from_ms",
    "market_id",
    "parse_bet",
    "parse_bets",
    "parse_error_message",
    "parse_manifold_market",
    "parse_manifold_markets",
    "parse_market_prob",
    "parse_market_probs",
    "probability_history",
]
