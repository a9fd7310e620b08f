"""The arena's tables. Money columns are integer micro-USD (BigInteger), prices integer ppm, shares micro-shares.

Fills and resolutions are append-only: the migration installs triggers that make an UPDATE or DELETE of
either fail in the database itself, whatever code path tries it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, DateTime, Index, LargeBinary, Table, Text, UniqueConstraint
from sqlalchemy import inspect as sa_inspect
from sqlmodel import Field, SQLModel


def _ts(nullable: bool = False, index: bool = False) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=nullable, index=index))


def _big(nullable: bool = False) -> Any:
    return Field(default=None, sa_column=Column(BigInteger, nullable=nullable))


def table_of(model: type[SQLModel]) -> Table:
    """The Core table a table model maps to (its `__table__`), typed: SQLModel declares no `__table__`, so
    reading it directly leaves the checker blind to the columns."""
    table = sa_inspect(model, raiseerr=True).local_table
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not a table model")
    return table



def _empty_dict() -> dict[str, Any]:
    """A JSON column's default. (A Python function, not the builtin `dict`: pydantic reads a default factory's
    signature on every construction, and for a builtin CPython 3.11 parses its text with `ast.parse`, which is not
    safe across threads — a round's decision threads failed with "AST constructor recursion depth mismatch".)"""
    return {}


def _empty_list() -> list[Any]:
    """A JSON column's default (a Python function, as `_empty_dict` says why)."""
    return []

class MarketRow(SQLModel, table=True):
    __tablename__ = "markets"

    id: str = Field(primary_key=True, max_length=200)  # "venue:native_id"
    venue: str = Field(index=True, max_length=40)
    native_id: str = Field(max_length=160)
    question: str = Field(sa_column=Column(Text, nullable=False))
    description: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    kind: str = Field(max_length=20)
    outcomes: list[str] = Field(sa_column=Column(JSON, nullable=False))
    outcome_labels: list[str] = Field(sa_column=Column(JSON, nullable=False))
    status: str = Field(max_length=20, index=True)
    close_time: datetime | None = _ts(nullable=True)
    url: str = Field(default="", max_length=500)
    category: str = Field(default="", max_length=200)
    group_id: str = Field(default="", max_length=200)
    volume: float | None = None
    volume_24h: float | None = None
    liquidity: float | None = None
    extra: dict[str, Any] = Field(default_factory=_empty_dict, sa_column=Column(JSON, nullable=False))
    first_seen_at: datetime = _ts()
    updated_at: datetime = _ts()
    # What the last sync wrote, so the next one writes only what changed (repo.upsert_markets, add_quotes):
    content_hash: str = Field(default="", max_length=32)  # fields except description and activity figures
    description_hash: str = Field(default="", max_length=32)
    quote_hash: str = Field(default="", max_length=32)  # prices, bid, ask and source of the last snapshot stored
    quote_at: datetime | None = _ts(nullable=True)  # observed_at of that snapshot
    # fingerprint of the venue payload whose parse the row, its description, extras and last quote hash equal
    # (venues.fingerprint); "" when unknown. A sync skips the parse of a payload with this fingerprint.
    payload_hash: str = Field(default="", max_length=32)


class PriceSnapshotRow(SQLModel, table=True):
    """One observed price of one outcome. Binary markets store the YES price only (NO is 1 − YES)."""

    __tablename__ = "price_snapshots"
    __table_args__ = (
        UniqueConstraint("market_id", "outcome", "observed_at", "source", name="uq_snapshot"),
        Index("ix_snapshot_market_time", "market_id", "observed_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = Field(foreign_key="markets.id", max_length=200)
    outcome: str = Field(max_length=120)
    price_ppm: int = Field(sa_column=Column(BigInteger, nullable=False))
    bid_ppm: int | None = _big(nullable=True)
    ask_ppm: int | None = _big(nullable=True)
    observed_at: datetime = _ts()  # when the venue says the price held
    fetched_at: datetime = _ts()  # when we fetched it: a decision only sees snapshots fetched before it
    source: str = Field(default="", max_length=60)


class CohortRow(SQLModel, table=True):
    __tablename__ = "cohorts"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True, max_length=100)
    period_start: datetime = _ts()
    status: str = Field(default="open", max_length=20)  # open → completed
    starting_cash_micros: int = Field(sa_column=Column(BigInteger, nullable=False))
    rules: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))  # frozen at start
    lineup: list[dict[str, Any]] = Field(sa_column=Column(JSON, nullable=False))  # frozen at start
    created_at: datetime = _ts()
    completed_at: datetime | None = _ts(nullable=True)


class AgentRow(SQLModel, table=True):
    __tablename__ = "agents"
    __table_args__ = (UniqueConstraint("cohort_id", "name", name="uq_agent_in_cohort"),)

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = Field(foreign_key="cohorts.id", index=True)
    name: str = Field(max_length=120)  # the model's stable name across cohorts
    kind: str = Field(max_length=40)  # baseline, scripted, llm
    model_id: str = Field(default="", max_length=200)
    config: dict[str, Any] = Field(default_factory=_empty_dict, sa_column=Column(JSON, nullable=False))


class DecisionRow(SQLModel, table=True):
    """One agent's decision in one round, claimed (inserted) before the agent is asked, so a re-run never
    trades twice. `status`: claimed → executed | rejected | hold | failed.

    A claim is held by `claimed_by` (a runner id) until `lease_until` (wall-clock time, renewed by the holder's
    heartbeat): a claim whose holder died is taken over once its lease has expired. A failed decision may be
    claimed again (`attempts` counts the tries; each is kept in `decision_attempts`)."""

    __tablename__ = "decisions"
    __table_args__ = (UniqueConstraint("agent_id", "round_key", name="uq_decision_round"),)

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = Field(foreign_key="cohorts.id", index=True)
    agent_id: int = Field(foreign_key="agents.id", index=True)
    round_key: str = Field(max_length=60)
    status: str = Field(default="claimed", max_length=20)
    as_of: datetime = _ts()
    cash_at_start_micros: int | None = _big(nullable=True)
    max_bet_micros: int | None = _big(nullable=True)
    actions: list[dict[str, Any]] = Field(default_factory=_empty_list, sa_column=Column(JSON, nullable=False))
    reasoning: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    error: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    sizing_version: str = Field(default="", max_length=40)
    claimed_at: datetime = _ts()
    completed_at: datetime | None = _ts(nullable=True)
    claimed_by: str = Field(default="", max_length=120)
    lease_until: datetime | None = _ts(nullable=True)
    attempts: int = 1


class DecisionAttemptRow(SQLModel, table=True):
    """One try at a decision: its outcome and error, kept when a failed decision is tried again."""

    __tablename__ = "decision_attempts"
    __table_args__ = (UniqueConstraint("decision_id", "attempt", name="uq_decision_attempt"),)

    id: int | None = Field(default=None, primary_key=True)
    decision_id: int = Field(foreign_key="decisions.id", index=True)
    attempt: int
    status: str = Field(max_length=20)  # executed, rejected, hold, failed
    error: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    runner: str = Field(default="", max_length=120)
    model_calls: int = 0
    as_of: datetime = _ts()


class DecisionReplicateRow(SQLModel, table=True):
    """One replicate of a decision asked `replicates = k` times (k > 1 only): what that independent ask
    answered. Replicate 1 is the executed one (its actions are the decision's fills); the others are kept
    for their stated forecasts and intended actions. Written as each replicate completes, so a resumed
    decision asks only the replicates not yet recorded (a failed one is asked again)."""

    __tablename__ = "decision_replicates"
    __table_args__ = (UniqueConstraint("decision_id", "replicate", name="uq_decision_replicate"),)

    id: int | None = Field(default=None, primary_key=True)
    decision_id: int = Field(foreign_key="decisions.id", index=True)
    replicate: int  # 1..k; 1 is executed
    status: str = Field(max_length=20)  # executed, rejected, hold (replicate 1); answered, hold, failed (others)
    actions: list[dict[str, Any]] = Field(default_factory=_empty_list, sa_column=Column(JSON, nullable=False))
    reasoning: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    error: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    decision_attempt: int = 1  # the try of the decision that recorded it
    model_calls: int = 0
    as_of: datetime = _ts()


class RejectionRow(SQLModel, table=True):
    """Why an action or a decision was refused. Kept forever: a rejection is a fact about the agent."""

    __tablename__ = "rejections"

    id: int | None = Field(default=None, primary_key=True)
    decision_id: int = Field(foreign_key="decisions.id", index=True)
    action_index: int  # −1: the decision as a whole
    reason: str = Field(max_length=60)
    message: str = Field(sa_column=Column(Text, nullable=False))
    action: dict[str, Any] = Field(default_factory=_empty_dict, sa_column=Column(JSON, nullable=False))
    at: datetime = _ts()


class ForecastRow(SQLModel, table=True):
    """A stated probability of YES, from a bet or from the cohort's fixed forecast set (for proxy scores)."""

    __tablename__ = "forecasts"
    __table_args__ = (UniqueConstraint("decision_id", "market_id", "source", "replicate", name="uq_forecast"),)

    id: int | None = Field(default=None, primary_key=True)
    decision_id: int = Field(foreign_key="decisions.id", index=True)
    agent_id: int = Field(foreign_key="agents.id", index=True)
    market_id: str = Field(foreign_key="markets.id", max_length=200, index=True)
    source: str = Field(max_length=20)  # "forecast_set" or "bet"
    probability: float  # stated P(YES) in [0, 1]; a forecast, not money
    market_price_ppm: int | None = _big(nullable=True)  # YES price the agent saw
    as_of: datetime = _ts()
    # which independent ask of the decision stated it (1 = the executed one; > 1 only with replicates = k)
    replicate: int = 1


class ForecastQuestionRow(SQLModel, table=True):
    """One market of a cohort round's forecast set, chosen once before any seat of the round is asked and read
    back by every seat (and by a resumed round): the asked questions, whether or not a seat answered them.
    `position` is the market's place in the set (0-based); `price_ppm` the YES price shown at decision time;
    `in_band` whether that price lay in the cohort's band; `filled` whether it was taken from outside the band
    because too few markets were in it (`domain.forecast_set`)."""

    __tablename__ = "forecast_questions"
    __table_args__ = (
        UniqueConstraint("cohort_id", "round_key", "market_id", name="uq_forecast_question"),
        # two writers of one round cannot both commit a set: they collide on position 0
        UniqueConstraint("cohort_id", "round_key", "position", name="uq_forecast_question_position"),
    )

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = Field(foreign_key="cohorts.id", index=True)
    round_key: str = Field(max_length=60)
    market_id: str = Field(foreign_key="markets.id", max_length=200, index=True)
    position: int
    price_ppm: int | None = _big(nullable=True)
    in_band: bool
    filled: bool = False
    as_of: datetime = _ts()  # the round's decision time


class CohortVersionRow(SQLModel, table=True):
    """A cohort's version: raised by database triggers in the transaction of every write that can change what
    its pages or boards show (migration 0018 lists them), whoever wrote it. No row: version 0. Never deleted."""

    __tablename__ = "cohort_versions"

    cohort_id: int = Field(primary_key=True)
    version: int = Field(sa_column=Column(BigInteger, nullable=False))


class MarketVersionRow(SQLModel, table=True):
    """A market's version: raised by database triggers with each of its price snapshots and resolutions and each
    change of its shown fields (not a sync's bookkeeping). No row: version 0. Never deleted."""

    __tablename__ = "market_versions"

    market_id: str = Field(primary_key=True, max_length=200)
    version: int = Field(sa_column=Column(BigInteger, nullable=False))


class FillRow(SQLModel, table=True):
    """The only money facts. Append-only (database triggers); `key` unique, so no fill is recorded twice."""

    __tablename__ = "fills"
    __table_args__ = (
        Index("ix_fill_agent_market", "agent_id", "market_id", "outcome"),
        # covers the position fold (mark to market, settlement, scoring) without touching the table
        Index("ix_fill_position_fold", "cohort_id", "agent_id", "market_id", "outcome", "shares", "cost_micros"),
    )

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(unique=True, max_length=300)
    cohort_id: int = Field(foreign_key="cohorts.id", index=True)
    agent_id: int = Field(foreign_key="agents.id")
    market_id: str = Field(foreign_key="markets.id", max_length=200, index=True)
    outcome: str = Field(max_length=120)
    kind: str = Field(max_length=20)
    shares: int = Field(sa_column=Column(BigInteger, nullable=False))  # micro-shares delta
    cash_micros: int = Field(sa_column=Column(BigInteger, nullable=False))
    cost_micros: int = Field(sa_column=Column(BigInteger, nullable=False))
    price_ppm: int | None = _big(nullable=True)
    mid_ppm: int | None = _big(nullable=True)
    provenance: str = Field(default="", max_length=200)
    decision_id: int | None = Field(default=None, foreign_key="decisions.id")
    resolution_version: int | None = None
    at: datetime = _ts()


class ResolutionRow(SQLModel, table=True):
    """A venue's resolution of a market, versioned; a re-resolution is a new row, never an edit."""

    __tablename__ = "resolutions"
    __table_args__ = (UniqueConstraint("market_id", "version", name="uq_resolution_version"),)

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = Field(foreign_key="markets.id", max_length=200, index=True)
    version: int
    kind: str = Field(max_length=20)  # winner, probabilistic, void, unresolved
    payouts: dict[str, int] = Field(default_factory=_empty_dict, sa_column=Column(JSON, nullable=False))  # ppm
    resolved_at: datetime | None = _ts(nullable=True)
    recorded_at: datetime = _ts()
    source: str = Field(default="", max_length=200)


class PortfolioSnapshotRow(SQLModel, table=True):
    """An agent's book marked at `as_of`: derived from fills and prices, kept for equity curves."""

    __tablename__ = "portfolio_snapshots"
    __table_args__ = (UniqueConstraint("agent_id", "as_of", name="uq_portfolio_snapshot"),)

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: int = Field(foreign_key="cohorts.id", index=True)
    agent_id: int = Field(foreign_key="agents.id", index=True)
    as_of: datetime = _ts()
    cash_micros: int = Field(sa_column=Column(BigInteger, nullable=False))
    positions_value_micros: int = Field(sa_column=Column(BigInteger, nullable=False))
    total_value_micros: int = Field(sa_column=Column(BigInteger, nullable=False))
    open_positions: int = 0
    unpriced_positions: int = 0
    final: bool = False  # written after the cohort's last settlement


class ModelCallRow(SQLModel, table=True):
    """Every attempt at asking a model for a decision — the first and each repair — with what it cost.

    A call is written *before* it is sent (`status` "in_flight", the prompt kept) and completed with the reply
    ("done"); one whose runner died or failed before the reply was recorded is marked "abandoned" when the
    decision is taken over or completed, so every call made is on record, its cost unknown when no reply came.
    The API key is never part of any column: prompts are rendered from the view, and the key only ever
    travels in an HTTP header."""

    __tablename__ = "model_calls"
    __table_args__ = (UniqueConstraint("decision_id", "attempt", name="uq_model_call_attempt"),)

    id: int | None = Field(default=None, primary_key=True)
    decision_id: int = Field(foreign_key="decisions.id", index=True)
    attempt: int  # numbered across the decision's attempts, so a retry's calls follow the earlier ones
    decision_attempt: int = 1
    replicate: int = 1  # which independent ask of the decision the call served (replicates = k)
    prompt: str = Field(sa_column=Column(Text, nullable=False))
    raw_response: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    parsed: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    error: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_micros: int | None = _big(nullable=True)  # USD cost: as the provider reported it, else at token prices
    latency_s: float | None = None
    served_model: str = Field(default="", max_length=200)
    prompt_version: str = Field(default="", max_length=60)
    provider: str | None = Field(default=None, max_length=100)  # the upstream provider the endpoint named
    # The tool calls this reply asked for, each with the (size-capped) result sent back; None without tools.
    tool_calls: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    # Behind a proxy: the upstream model and endpoint it reports (LiteLLM's response headers); None otherwise.
    upstream_model: str | None = Field(default=None, max_length=200)
    upstream_base: str | None = Field(default=None, max_length=300)
    # The reasoning a model returned beside its answer (`reasoning_content` / `reasoning`); None when none.
    reasoning_content: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    status: str = Field(default="done", max_length=12)  # in_flight, done, abandoned
    at: datetime = _ts()


class EndpointHoldRow(SQLModel, table=True):
    """A model call in flight on an endpoint slot (PostgreSQL's shared slots): until when the slot stays taken
    even after its holder's process dies, because the endpoint may still be answering the orphaned call."""

    __tablename__ = "endpoint_holds"

    endpoint_key: int = Field(primary_key=True)
    slot: int = Field(primary_key=True)
    until: datetime = _ts()


class SyncRunRow(SQLModel, table=True):
    """One run of a venue sync: when, and how many markets were ok, skipped or failed."""

    __tablename__ = "sync_runs"

    id: int | None = Field(default=None, primary_key=True)
    venue: str = Field(max_length=40, index=True)
    started_at: datetime = _ts()
    finished_at: datetime | None = _ts(nullable=True)
    status: str = Field(default="running", max_length=20)  # running, ok, failed, abandoned (its process died)
    ok: int = 0
    skipped: int = 0
    failed: int = 0
    markets_changed: int = 0
    snapshots_added: int = 0
    resolutions_recorded: int = 0
    error: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))


class SyncErrorRow(SQLModel, table=True):
    """A market a sync could not take, with the reason and an excerpt of the payload (never silently lost)."""

    __tablename__ = "sync_errors"

    id: int | None = Field(default=None, primary_key=True)
    sync_run_id: int = Field(foreign_key="sync_runs.id", index=True)
    venue: str = Field(max_length=40)
    native_id: str = Field(default="", max_length=200)
    kind: str = Field(max_length=20)  # skipped (not tradable) or failed (malformed)
    field: str = Field(default="", max_length=200)
    message: str = Field(sa_column=Column(Text, nullable=False))
    payload_excerpt: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    at: datetime = _ts()


class JobRunRow(SQLModel, table=True):
    """One run of a scheduled job for one period. Claimed (inserted) before the job runs, unique per job and
    period, so two schedulers on one database never run the same period twice; a failed (or incomplete)
    period may be claimed again by the next tick, and so may a running one whose lease expired (its process
    died: the heartbeat stopped renewing `lease_until`, which is wall-clock time)."""

    __tablename__ = "job_runs"
    __table_args__ = (UniqueConstraint("job", "period_key", name="uq_job_period"),)

    id: int | None = Field(default=None, primary_key=True)
    job: str = Field(max_length=60, index=True)
    period_key: str = Field(max_length=60)
    status: str = Field(default="running", max_length=20)  # running, ok, failed, incomplete
    attempts: int = 1
    started_at: datetime = _ts()
    finished_at: datetime | None = _ts(nullable=True)
    counts: dict[str, Any] = Field(default_factory=_empty_dict, sa_column=Column(JSON, nullable=False))
    error: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    runner: str = Field(default="", max_length=120)  # host:pid/token of the process that ran it
    lease_until: datetime | None = _ts(nullable=True)
    heartbeat_at: datetime | None = _ts(nullable=True)


class MemoRow(SQLModel, table=True):
    """One cached result (`cache`): a cohort's frames, board or board part, keyed by a hash of everything it is
    computed from — a memo, never a fact. Any row may be deleted at any time; the next read recomputes it. Its
    times are housekeeping, not recording times, so a point-in-time copy carries the table whole (a key names its
    inputs, whatever the as-of)."""

    __tablename__ = "memo"
    __table_args__ = (Index("ix_memo_kind_cohort", "kind", "cohort"),)

    key: str = Field(primary_key=True, max_length=64)  # SHA-256 hex of the inputs
    kind: str = Field(max_length=20)  # what it holds: "frames", "board", "cohort part", "overall part", "model pairs"
    cohort: str = Field(max_length=100)  # the cohort it is filed under (each keeps its most recently used few)
    payload: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # named Arrow frames (`cache.codec`)
    stored_at: datetime = _ts()
    used_at: datetime = _ts()
