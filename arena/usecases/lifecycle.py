"""The cohort lifecycle: open the cohort of the current week with the configured lineup and rules (frozen
from then on), and run a decision round for the newest K open cohorts whose decision window is still open —
each agent rebuilt from its cohort's frozen lineup, never from the current file.

A round may run many times in its week (the scheduler ticks hourly): decisions already made are skipped,
claims stranded by a dead runner are resumed once their lease expires, and failed decisions are retried while
the round's retry window is open, up to `[operations] decision_attempts` tries (`retry_failed` lifts both
bounds: the by-hand `arena round --retry-failed`)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.agents.corpus import Corpus
from arena.agents.view import Agent, AgentView
from arena.clock import utc
from arena.agents.llm import agent_from_config
from arena.agents.tools import WEB_SEARCH
from arena.config import AGENT_KINDS, AgentConfig, ArenaConfig
from arena.domain.decision import Decision
from arena.errors import ArenaError, ConfigError
from arena.usecases import decide
from arena.usecases.cohorts import LineupEntry, agents_of, cohort_rules, open_cohorts, start_cohort, week_start
from arena.ops.endpoint_slots import EndpointLimits, LimitedTransport, Slots, slots_for
from arena.ops.leases import LeasePolicy
from arena.usecases.pricing import BookSource, RoundBooks
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow


def lineup_entries(config: ArenaConfig) -> list[LineupEntry]:
    """The configured lineup as it is frozen into a cohort (an API key's *variable name*, never its value)."""
    return [LineupEntry(a.name, a.kind, a.model, a.to_json()) for a in config.lineup]


def start_current_cohort(engine: Engine, now: datetime, config: ArenaConfig) -> tuple[str, bool]:
    """Open the cohort of the week containing `now` (Sunday 00:00 UTC); a second call in the week does nothing."""
    with session_scope(engine) as s:
        cohort, created = start_cohort(s, week_start(now), config.cohort.rules(), lineup_entries(config), now)
        return cohort.name, created


@dataclass
class MissingKeyAgent:
    """Stands in for a model whose API key is not in the environment: every decision fails with that reason
    (recorded, so the gap is visible on the site) instead of the agent silently vanishing."""

    name: str
    env_var: str

    def decide(self, view: AgentView) -> Decision:
        raise ConfigError(f"the API key variable {self.env_var} is not set in the environment", reason="missing_key")


@dataclass
class UnbuildableAgent:
    """Stands in for a seat whose frozen lineup entry cannot be rebuilt: every decision fails with the reason
    (recorded), and the other seats of the round decide as usual."""

    name: str
    why: str

    def decide(self, view: AgentView) -> Decision:
        raise ConfigError(f"agent {self.name!r}: its frozen lineup entry cannot be rebuilt ({self.why})",
                          reason="unbuildable")


def _why(exc: Exception) -> str:
    """A rebuild error in words, without the values (a frozen record is not shown back); the arena's own errors
    (a corpus file with a bad line) say theirs."""
    if isinstance(exc, ArenaError):
        return exc.message[:500]
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            return "; ".join(f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg', '')}"
                             for e in errors(include_input=False))[:500]
        except Exception:  # noqa: BLE001 - fall back to the type's name
            pass
    return type(exc).__name__


def build_agent(row: AgentRow, environ: Mapping[str, str], *, transport: httpx.BaseTransport | None = None,
                max_markets: int | None = None, client: httpx.Client | None = None, live: bool = False,
                corpora: MutableMapping[str, Corpus] | None = None) -> Agent | None:
    """The agent a cohort's frozen lineup seat names, rebuilt from what was frozen (not from today's file).
    None for seats that cannot be rebuilt by design (the demo's scripted agents); an `UnbuildableAgent` for a
    seat of a known kind whose record this version refuses, so it fails alone. `live`: the round decides at the
    present moment, so a seat with web search gets its endpoint (see `agent_from_config`). `corpora` (path →
    corpus) shares each corpus file among the seats built with it (`LLMAgent.from_config`)."""
    if row.kind not in AGENT_KINDS:
        return None
    record = dict(row.config or {})
    headers = record.get("extra_headers")
    if headers == []:  # frozen as the header names only (no values): none were set
        record["extra_headers"] = {}
    elif isinstance(headers, list):
        return UnbuildableAgent(row.name, "it was frozen with the names of its extra_headers but not their "
                                          "values; the next cohort freezes both")
    try:
        entry = AgentConfig(name=row.name, **record)
    except Exception as exc:  # noqa: BLE001 - any refusal of the record: this seat fails alone
        return UnbuildableAgent(row.name, _why(exc))
    try:
        if entry.is_llm:
            if not environ.get(entry.api_key_env):
                return MissingKeyAgent(row.name, entry.api_key_env)
            kw: dict[str, Any] = {"client": client} if client is not None else {"transport": transport}
            if corpora is not None:
                kw["corpora"] = corpora
            if max_markets is not None:
                kw["max_markets"] = max_markets
            if live and WEB_SEARCH in entry.tools and not environ.get(entry.web_search_key_env):
                return MissingKeyAgent(row.name, entry.web_search_key_env)
            return agent_from_config(entry, environ, live=live, **kw)
        return agent_from_config(entry, environ)
    except Exception as exc:  # noqa: BLE001 - as above
        return UnbuildableAgent(row.name, _why(exc))


def deciding_cohorts(engine: Engine, now: datetime, newest: int) -> list[CohortRow]:
    """The newest `newest` open cohorts whose decision window contains `now`."""
    with Session(engine) as s:
        out = []
        for c in open_cohorts(s, newest):
            rules = cohort_rules(c)
            start = utc(c.period_start)
            if start <= now < start + timedelta(weeks=rules.decision_weeks):
                out.append(c)
        return out


@dataclass(frozen=True)
class RetryPolicy:
    """Failed decisions are tried again by later ticks until `window_end`, `max_attempts` tries in all."""

    max_attempts: int
    window_end: datetime

    @classmethod
    def of(cls, config: ArenaConfig, now: datetime) -> RetryPolicy:
        ops = config.operations
        return cls(ops.decision_attempts, week_start(now) + timedelta(hours=ops.retry_window_hours))

    def retry_below(self, now: datetime) -> int:
        """The attempt count below which a failed decision is claimed again now (0: none is)."""
        return self.max_attempts if now < self.window_end else 0


BY_HAND = 1_000_000  # `--retry-failed`: no bound on the tries but the person asking


def pending(outcomes: Mapping[str, list[decide.DecisionOutcome]], retry: RetryPolicy, now: datetime) -> int:
    """Decisions a later tick of the same round should come back for: held by a live runner elsewhere, or
    failed with tries left while the retry window is open."""
    n = 0
    for outs in outcomes.values():
        for o in outs:
            if o.status in ("in_progress", "lost"):
                n += 1
            elif o.status == "failed" and o.attempt < retry.max_attempts and now < retry.window_end:
                n += 1
    return n


def round_needs_work(engine: Engine, now: datetime, config: ArenaConfig, lease: LeasePolicy | None = None) -> int:
    """Decisions of this week's round a tick should come back for although its job run finished: claims whose
    lease expired (their runner died, e.g. a killed `arena round`) and failed decisions with tries left while
    the retry window is open. One query."""
    from sqlalchemy import and_, func, or_, select

    from arena.store.tables import DecisionRow

    lease = lease or LeasePolicy.from_env(default=config.operations.lease_seconds)
    retry = RetryPolicy.of(config, now)
    stranded = and_(DecisionRow.status == "claimed",
                    or_(col(DecisionRow.lease_until).is_(None), col(DecisionRow.lease_until) < lease.now()))
    retryable = and_(DecisionRow.status == "failed", DecisionRow.attempts < retry.retry_below(now))
    with Session(engine) as s:
        return int(s.scalar(select(func.count()).select_from(DecisionRow).where(
            DecisionRow.round_key == f"{week_start(now):%Y-%m-%d}", or_(stranded, retryable))) or 0)


def decision_round(engine: Engine, now: datetime, config: ArenaConfig, environ: Mapping[str, str], *,
                   transport: httpx.BaseTransport | None = None, books: BookSource | None = None,
                   concurrency: int = 32, lease: LeasePolicy | None = None,
                   retry_failed: bool = False, on_cohort: Any = None,
                   limits: EndpointLimits | None = None) -> dict[str, list[decide.DecisionOutcome]]:
    """One decision per agent in each deciding cohort, keyed by the week (re-running it trades nothing new,
    but resumes stranded claims and retries failed decisions, see the module docstring). `books` (token id →
    order book, e.g. the Polymarket client's `book`) is fetched at most once per market for the whole round.
    `on_cohort(name, outcomes)` is called after each cohort's round (progress). `limits` caps the model calls
    in flight per endpoint — across processes on PostgreSQL, shared with `arena worker` (see `endpoint_slots`)."""
    round_key = f"{week_start(now):%Y-%m-%d}"
    retry = RetryPolicy.of(config, now)
    retry_below = BY_HAND if retry_failed else retry.retry_below(now)
    lease = lease or LeasePolicy.from_env(default=config.operations.lease_seconds)
    round_books = RoundBooks(books) if books is not None else None
    out = {}
    # One pooled client for every model call of the round: building a client (and its TLS context) per
    # agent costs tens of milliseconds of CPU each, which serializes a concurrent round.
    pool = httpx.Limits(max_connections=64, max_keepalive_connections=32)
    slots = slots_for(engine) if limits else None
    if slots is not None:
        transport = LimitedTransport(limits, slots, transport or httpx.HTTPTransport(limits=pool))  # type: ignore[arg-type]
    corpora: dict[str, Corpus] = {}  # the seats of every cohort deciding now share each corpus file
    with httpx.Client(transport=transport, limits=pool) as client, contextlib.closing(slots or Slots()):
        for cohort in deciding_cohorts(engine, now, config.cohort.newest_cohorts):
            with Session(engine) as s:
                rows = agents_of(s, cohort.id)  # type: ignore[arg-type]
            agents = {}
            for r in rows:
                agent = build_agent(r, environ, max_markets=config.cohort.prompt_markets, client=client,
                                    live=True, corpora=corpora)
                if agent is not None:
                    agents[r.name] = agent
            out[cohort.name] = decide.run_round(engine, cohort, agents, round_key, now,
                                                config.cohort.forecast_set_size, concurrency, round_books,
                                                lease=lease, retry_below=retry_below)
            if on_cohort is not None:
                on_cohort(cohort.name, out[cohort.name])
    return out


@dataclass(frozen=True)
class UniverseCheck:
    """What a cohort opening at `at` could trade: open markets with a recent price, by venue, and the last
    successful sync of each venue (None: never synced)."""

    at: datetime
    by_venue: dict[str, int]
    last_sync: dict[str, datetime | None]

    @property
    def size(self) -> int:
        return sum(self.by_venue.values())

    def missing_sync_hint(self) -> str:
        """Which sync is missing, in words: the venues never synced, or synced too long before `at`."""
        seen = {v: t for v, t in self.last_sync.items() if t is not None}
        if not seen:
            return ("no venue has ever been synced into this database: run `arena sync --venue polymarket` "
                    "and/or `--venue manifold` (or `--venue replay --file FILE --at T`) first")
        stale = ", ".join(f"{v} last synced {t:%Y-%m-%d %H:%M}" for v, t in sorted(seen.items()))
        return (f"no synced market is open with a price from the {decide.MAX_QUOTE_AGE.days} days before "
                f"{self.at:%Y-%m-%d %H:%M} UTC ({stale}): run `arena sync` for the venue(s) at that time first")


def check_universe(engine: Engine, at: datetime) -> UniverseCheck:
    from sqlalchemy import func, select

    from arena.store.tables import SyncRunRow

    with Session(engine) as s:
        markets, _ = decide.tradable_markets(s, at)
        last = dict(s.execute(select(SyncRunRow.venue, func.max(SyncRunRow.started_at))
                              .where(SyncRunRow.status == "ok", SyncRunRow.started_at <= at)
                              .group_by(SyncRunRow.venue)).all())
    by_venue: dict[str, int] = {}
    for m in markets.values():
        by_venue[m.venue] = by_venue.get(m.venue, 0) + 1
    return UniverseCheck(at, by_venue, {v: utc(t) for v, t in last.items()})
