"""The cohort lifecycle: open the cohort of the current week with the configured lineup and rules (frozen
from then on), and run a decision round for the newest K open cohorts whose decision window is still open —
each agent rebuilt from its cohort's frozen lineup, never from the current file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.agents.view import Agent, AgentView
from arena.clock import utc
from arena.agents.llm import agent_from_config
from arena.config import AGENT_KINDS, AgentConfig, ArenaConfig
from arena.domain.decision import Decision
from arena.errors import ConfigError
from arena.services import decide
from arena.services.cohorts import LineupEntry, agents_of, cohort_rules, open_cohorts, start_cohort, week_start
from arena.services.pricing import BookSource
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


def build_agent(row: AgentRow, environ: Mapping[str, str], *, transport: httpx.BaseTransport | None = None,
                max_markets: int | None = None, client: httpx.Client | None = None) -> Agent | None:
    """The agent a cohort's frozen lineup seat names, rebuilt from what was frozen (not from today's file).
    None for seats that cannot be rebuilt (the demo's scripted agents)."""
    if row.kind not in AGENT_KINDS:
        return None
    try:
        entry = AgentConfig(name=row.name, **dict(row.config or {}))
    except (TypeError, ConfigError):
        return None
    if entry.is_llm:
        if not environ.get(entry.api_key_env):
            return MissingKeyAgent(row.name, entry.api_key_env)
        kw: dict[str, Any] = {"client": client} if client is not None else {"transport": transport}
        if max_markets is not None:
            kw["max_markets"] = max_markets
        return agent_from_config(entry, environ, **kw)
    return agent_from_config(entry, environ)


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


def decision_round(engine: Engine, now: datetime, config: ArenaConfig, environ: Mapping[str, str], *,
                   transport: httpx.BaseTransport | None = None, books: BookSource | None = None,
                   concurrency: int = 32) -> dict[str, list[decide.DecisionOutcome]]:
    """One decision per agent in each deciding cohort, keyed by the week (re-running it trades nothing new)."""
    round_key = f"{week_start(now):%Y-%m-%d}"
    out = {}
    # One pooled client for every model call of the round: building a client (and its TLS context) per
    # agent costs tens of milliseconds of CPU each, which serializes a concurrent round.
    with httpx.Client(transport=transport, limits=httpx.Limits(max_connections=64,
                                                               max_keepalive_connections=32)) as client:
        for cohort in deciding_cohorts(engine, now, config.cohort.newest_cohorts):
            with Session(engine) as s:
                rows = agents_of(s, cohort.id)  # type: ignore[arg-type]
            agents = {}
            for r in rows:
                agent = build_agent(r, environ, max_markets=config.cohort.prompt_markets, client=client)
                if agent is not None:
                    agents[r.name] = agent
            out[cohort.name] = decide.run_round(engine, cohort, agents, round_key, now,
                                                config.cohort.forecast_set_size, concurrency, books)
    return out
