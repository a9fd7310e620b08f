"""The arena's configuration: cohort rules, job schedules and the agent lineup, read from TOML (stdlib `tomllib`).

Owns the file format and its validation; it must not import httpx, jinja2, the store or the services, so
anything may read a configuration cheaply. API keys are never part of the configuration: an LLM agent names the
*environment variable* that holds its key (`api_key_env`), and the caller reads the key from the environment
when it builds the agent. No value of this module (repr, `to_json`, errors) can contain a key.

Every problem is a `ConfigError` that names the key, e.g. ``arena.toml: agents[2] (gpt): max_tokens must be a
positive integer, got -1``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType
from typing import Any

from arena.domain.sizing import DEFAULT_PROMPT_VERSION, PROMPT_VERSIONS, CohortRules
from arena.domain.universe import DEFAULT_EXCLUDED_KEYWORDS, UniverseRules
from arena.errors import ConfigError
from arena.money import Money, MoneyError

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_API_KEY_ENV = "OPENROUTER_API_KEY"

LLM_KIND = "llm"
BASELINE_KINDS = ("always-0.5", "market-follower", "random", "kelly")
AGENT_KINDS = (LLM_KIND, *BASELINE_KINDS)
# The name a baseline gets when `baselines = true` adds it to the lineup (stable across cohorts).
DEFAULT_BASELINE_NAMES: Mapping[str, str] = MappingProxyType({
    "always-0.5": "always-0.5",
    "market-follower": "market-follower",
    "random": "random",
    "kelly": "kelly-extremizer",
})
# Parameters each baseline kind accepts in `params = {...}` (passed to its constructor).
BASELINE_PARAMS: Mapping[str, frozenset[str]] = MappingProxyType({
    "always-0.5": frozenset(),
    "market-follower": frozenset(),
    "random": frozenset({"seed", "max_bets"}),
    "kelly": frozenset({"seed", "alpha", "kelly_multiplier", "max_bets"}),
})
RESPONSE_FORMATS = ("json_schema", "json_object", "none")
# What an ablation variant may change relative to the seat it varies (`factor` in [[agents]]).
ABLATION_FACTORS = ("prompt version", "temperature", "model", "tools", "reasoning effort", "sizing", "other")
MAX_REPLICATES = 20  # independent asks per decision: each is a full model call, so bound the bill
# The OpenAI-style `reasoning_effort` values (OpenRouter maps them onto each provider's own setting).
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
DEFAULT_MAX_REPLY_BYTES = 256 * 1024  # a reply larger than this is a recorded failure, not stored whole
# Headers the agent sets itself; `extra_headers` may not replace them (the key travels only in Authorization).
RESERVED_HEADERS = ("authorization", "proxy-authorization", "content-type", "content-length", "host", "accept")
# Body keys the agent sets itself or that have their own setting; `extra_body` may not replace them.
RESERVED_BODY_KEYS = ("model", "messages", "stream", "temperature", "max_tokens", "max_completion_tokens",
                      "reasoning_effort", "response_format", "tools", "tool_choice")
RANK_BY = ("volume_24h", "liquidity", "volume")
# Tracks a lineup seat runs in: `model` answers from the prompt alone, `agent` may call tools (arena.agents.tools).
TRACKS = ("model", "agent")
# Job ids the scheduler knows (jobs/scheduler.py); a [schedule] key outside this set is a typo.
KNOWN_JOBS = ("sync", "cohort_start", "decision_round", "mark", "settle", "backup", "compact")
INTERVAL_UNITS = ("weeks", "days", "hours", "minutes", "seconds")

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CRON_FIELD = re.compile(r"[0-9A-Za-z*/,\-?#LW]+")
_AGENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+\-]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Amounts beyond this are typos (and would overflow sums of micro-USD in 64-bit columns).
MAX_AMOUNT_USD = 1_000_000_000


# -- the values ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenPrices:
    """What a model's tokens cost, in USD per million tokens; None where the lineup does not say."""

    input_per_million: float | None = None
    output_per_million: float | None = None

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """USD cost of one call, or None when a price or a token count is unknown (never guessed as 0)."""
        if (self.input_per_million is None or self.output_per_million is None
                or prompt_tokens is None or completion_tokens is None):
            return None
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1_000_000


@dataclass(frozen=True)
class CohortConfig:
    """Rules every cohort is started with. Amounts in USD (Money); `max_bet_fraction` of the cash per bet."""

    starting_cash: Money = Money.of(10_000)
    max_bet_fraction: Decimal = Decimal("0.25")
    min_bet: Money = Money.of(50)
    max_actions: int = 20  # per decision
    decision_weeks: int = 5  # weekly decision rounds per cohort
    newest_cohorts: int = 5  # K: agents decide in each of the newest K open cohorts
    forecast_set_size: int = 20  # markets every agent must state P(YES) for, per round
    universe_size: int = 100  # markets in a cohort's universe (top N by `rank_by`)
    rank_by: str = "volume_24h"
    horizon_days: int = 60  # markets closing later than this are left out of the universe
    prompt_markets: int = 100  # at most this many markets are listed in a prompt (forecast set and holdings always)
    prompt_version: str = DEFAULT_PROMPT_VERSION  # the decision prompt new cohorts are frozen with
    exclude_keywords: tuple[str, ...] = DEFAULT_EXCLUDED_KEYWORDS
    exclude_categories: tuple[str, ...] = ()

    def rules(self) -> CohortRules:
        """The betting rules frozen into a cohort when it starts."""
        return CohortRules(starting_cash=self.starting_cash, max_bet_fraction=self.max_bet_fraction,
                           min_bet=self.min_bet, max_actions=self.max_actions, decision_weeks=self.decision_weeks,
                           prompt_version=self.prompt_version)

    def universe_rules(self) -> UniverseRules:
        return UniverseRules(top_n=self.universe_size, rank_by=self.rank_by, horizon_days=self.horizon_days,
                             exclude_keywords=self.exclude_keywords, exclude_categories=self.exclude_categories)


@dataclass(frozen=True)
class ScheduleConfig:
    """Schedule overrides by job id: a crontab string ("0 0 * * sun", UTC) or an interval ({"minutes": 15}).

    Jobs not named keep the scheduler's defaults; `overrides()` is what `arena.jobs.scheduler.job_specs` takes.
    """

    jobs: Mapping[str, str | Mapping[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        frozen = {k: (MappingProxyType(dict(v)) if isinstance(v, Mapping) else v) for k, v in self.jobs.items()}
        object.__setattr__(self, "jobs", MappingProxyType(frozen))

    def overrides(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.jobs.items()}


@dataclass(frozen=True)
class OperationsConfig:
    """How the jobs heal: `decision_attempts` tries in all for a decision that failed (missing key, endpoint
    refused or down, timeouts), retried by later ticks until `retry_window_hours` after the round's start;
    `lease_seconds` a claim stays held without its holder's heartbeat (the ARENA_LEASE_SECONDS environment
    variable overrides it)."""

    decision_attempts: int = 3
    retry_window_hours: int = 24
    lease_seconds: float = 120.0


@dataclass(frozen=True)
class AgentConfig:
    """One seat of the lineup. LLM settings apply to kind "llm"; `params` to baseline kinds.

    `api_key_env` is the NAME of the environment variable holding the key, never the key. Prices are USD per
    million tokens (None: unknown, cost not computed; a cost the provider reports wins). `timeout_s` is per HTTP
    request, in seconds. `temperature` None leaves it out of the request (reasoning models refuse it);
    `max_completion_tokens`, when set, is sent instead of `max_tokens`; `extra_headers` / `extra_body` are added
    to every request (never Authorization); `max_reply_bytes` bounds a reply's size.
    """

    name: str
    kind: str = LLM_KIND
    model: str = ""
    base_url: str = OPENROUTER_BASE_URL
    api_key_env: str = DEFAULT_API_KEY_ENV
    temperature: float | None = None
    max_tokens: int = 4096
    max_completion_tokens: int | None = None
    reasoning_effort: str | None = None
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    price_per_million_input: float | None = None
    price_per_million_output: float | None = None
    max_repairs: int = 2
    max_retries: int = 4  # transport retries (429, 5xx, network) per model call
    timeout_s: float = 120.0
    response_format: str = "json_schema"
    params: Mapping[str, Any] = field(default_factory=dict)
    # -- tools (track "agent"): the names of arena.agents.tools.TOOL_NAMES the model may call, at most
    # `max_tool_rounds` rounds of tool calls per decision, each result cut to `tool_result_chars` characters;
    # web search only through `web_search_url` with the key in the environment variable `web_search_key_env`
    # (its NAME), and never in replays or simulations. `track` "" is derived: "agent" with tools, else "model".
    tools: tuple[str, ...] = ()
    max_tool_rounds: int = 3
    tool_result_chars: int = 8000
    web_search_url: str = ""
    web_search_key_env: str = ""
    track: str = ""
    # -- replicates and ablations (issue 13): how many independent asks per decision, and which seat this one
    # varies (`variant_of`, another seat's name) in which `factor` (one of ABLATION_FACTORS).
    replicates: int = 1
    variant_of: str | None = None
    factor: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "track", self.track or ("agent" if self.tools else "model"))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "extra_headers", MappingProxyType(dict(self.extra_headers)))
        object.__setattr__(self, "extra_body", MappingProxyType(dict(self.extra_body)))

    @property
    def is_llm(self) -> bool:
        return self.kind == LLM_KIND

    @property
    def prices(self) -> TokenPrices:
        return TokenPrices(self.price_per_million_input, self.price_per_million_output)

    def ablation_json(self) -> dict[str, Any]:
        """The replicate count and ablation role as frozen into the lineup (nothing when left at the defaults,
        so lineups frozen before replicates existed read the same)."""
        out: dict[str, Any] = {}
        if self.replicates != 1:
            out["replicates"] = self.replicates
        if self.variant_of is not None:
            out["variant_of"], out["factor"] = self.variant_of, self.factor
        return out

    def to_json(self) -> dict[str, Any]:
        """The record frozen into a cohort's lineup (no secret: only the env var's name)."""
        if not self.is_llm:
            return {"kind": self.kind, "params": dict(self.params), **self.ablation_json()}
        return {**self.ablation_json(),
            "kind": self.kind, "model": self.model, "base_url": self.base_url, "api_key_env": self.api_key_env,
            "temperature": self.temperature, "max_tokens": self.max_tokens,
            "max_completion_tokens": self.max_completion_tokens, "reasoning_effort": self.reasoning_effort,
            # header names only: a value might be a credential someone should not have put there
            "extra_headers": sorted(self.extra_headers), "extra_body": dict(self.extra_body),
            "max_reply_bytes": self.max_reply_bytes,
            "price_per_million_input": self.price_per_million_input,
            "price_per_million_output": self.price_per_million_output,
            "max_repairs": self.max_repairs, "max_retries": self.max_retries, "timeout_s": self.timeout_s,
            "response_format": self.response_format,
            **self._tools_json(),
        }

    def _tools_json(self) -> dict[str, Any]:
        """The tool keys of `to_json` (only the track when the seat has no tools)."""
        if not self.tools:
            return {"track": self.track}
        return {"track": self.track, "tools": list(self.tools), "max_tool_rounds": self.max_tool_rounds,
                "tool_result_chars": self.tool_result_chars, "web_search_url": self.web_search_url,
                "web_search_key_env": self.web_search_key_env}


def track_of(frozen: Mapping[str, Any]) -> str:
    """The track of a frozen lineup record (`AgentConfig.to_json`, or a scripted seat's record): its `track`,
    else "agent" when it lists tools, else "model"."""
    track = frozen.get("track")
    if track in TRACKS:
        return str(track)
    return "agent" if frozen.get("tools") else "model"


@dataclass(frozen=True)
class LeaderboardConfig:
    """How boards are ranked: `rank_by` is a board column backed by a registered metric
    (`arena.scoring.board.RANK_CHOICES`); the headline forecast Brier by default."""

    rank_by: str = "forecast_brier"


@dataclass(frozen=True)
class ArenaConfig:
    """The whole configuration. `agents` are the [[agents]] entries as written; `lineup` adds the baselines."""

    cohort: CohortConfig = field(default_factory=CohortConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    leaderboard: LeaderboardConfig = field(default_factory=LeaderboardConfig)
    agents: tuple[AgentConfig, ...] = ()
    operations: OperationsConfig = field(default_factory=OperationsConfig)
    baselines: bool = True
    source: str = "<default>"

    @property
    def lineup(self) -> tuple[AgentConfig, ...]:
        """The agents of every new cohort: the [[agents]] entries, then (unless `baselines = false`) each
        baseline kind not already listed, under its default name."""
        if not self.baselines:
            return self.agents
        listed = {a.kind for a in self.agents}
        extra = tuple(AgentConfig(name=DEFAULT_BASELINE_NAMES[k], kind=k) for k in BASELINE_KINDS if k not in listed)
        return self.agents + extra

    @property
    def llm_agents(self) -> tuple[AgentConfig, ...]:
        return tuple(a for a in self.agents if a.is_llm)

    def agent(self, name: str) -> AgentConfig:
        for a in self.lineup:
            if a.name == name:
                return a
        raise ConfigError(f"{self.source}: no agent named {name!r}", key="agents")

    def missing_keys(self, environ: Mapping[str, str]) -> list[tuple[str, str]]:
        """(agent name, env var name) for every LLM agent whose key variable is unset or empty in `environ`."""
        return [(a.name, a.api_key_env) for a in self.llm_agents if not environ.get(a.api_key_env)]


# -- reading -------------------------------------------------------------------------------------------------------


class _Table:
    """A TOML table being read: values are taken by key; keys left over are reported as unknown."""

    def __init__(self, data: Any, where: str, source: str) -> None:
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: {where} must be a table", key=where)
        self.data = dict(data)
        self.where = where
        self.source = source
        self.used: set[str] = set()

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}: {self.where} {key}: {message}", key=f"{self.where}.{key}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = None) -> Any:
        self.used.add(key)
        return self.data.get(key, default)

    def string(self, key: str, default: str, choices: tuple[str, ...] | None = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {value!r}")
        if choices is not None and value not in choices:
            raise self.fail(key, f"must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
        return value

    def integer(self, key: str, default: int, minimum: int = 0, maximum: int | None = None) -> int:
        value = self.raw(key, default)
        if (not isinstance(value, int) or isinstance(value, bool) or value < minimum
                or (maximum is not None and value > maximum)):
            bounds = f"≥ {minimum}" + (f" and ≤ {maximum}" if maximum is not None else "")
            raise self.fail(key, f"must be an integer {bounds}, got {value!r}")
        return value

    def optional_integer(self, key: str, minimum: int = 1) -> int | None:
        return None if self.raw(key, None) is None else self.integer(key, 0, minimum)

    def number(self, key: str, default: float | None, minimum: float = 0.0, positive: bool = False,
               maximum: float | None = None) -> float | None:
        value = self.raw(key, default)
        if value is None:
            return None
        bad = (not isinstance(value, (int, float)) or isinstance(value, bool) or value != value
               or value < minimum or (positive and value <= 0) or (maximum is not None and value > maximum))
        if bad:
            bounds = f"> {minimum}" if positive else f"≥ {minimum}"
            if maximum is not None:
                bounds += f" and ≤ {maximum}"
            raise self.fail(key, f"must be a number {bounds}, got {value!r}")
        return float(value)

    def money(self, key: str, default: Money) -> Money:
        value = self.raw(key, None)
        if value is None:
            return default
        try:
            if isinstance(value, (bool, dict, list)):
                raise MoneyError("not an amount")
            amount = Money.of(value)
        except (MoneyError, ArithmeticError):
            raise self.fail(key, f"must be an amount in USD like 10000 or \"12.50\", got {value!r}") from None
        if amount.micros < 0:
            raise self.fail(key, f"must not be negative, got {value!r}")
        if amount > Money.of(MAX_AMOUNT_USD):
            raise self.fail(key, f"must be at most {MAX_AMOUNT_USD} USD, got {value!r}")
        return amount

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {value!r}")
        return value

    def strings(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = self.raw(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, f"must be a list of strings, got {value!r}")
        return tuple(value)

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise self.fail(unknown[0], "unknown key (check the spelling; see arena.example.toml)")


def parse_config(text: str, source: str = "<string>") -> ArenaConfig:
    """An ArenaConfig from TOML text; `source` names the file in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}", key="") from None
    except RecursionError:
        raise ConfigError(f"{source}: not valid TOML: arrays or tables nested too deeply", key="") from None
    top = _Table(data, "(top level)", source)
    baselines = top.boolean("baselines", True)
    cohort = _cohort(_Table(top.raw("cohort", {}), "[cohort]", source))
    schedule = _schedule(_Table(top.raw("schedule", {}), "[schedule]", source))
    board = _leaderboard(_Table(top.raw("leaderboard", {}), "[leaderboard]", source))
    operations = _operations(_Table(top.raw("operations", {}), "[operations]", source))
    raw_agents = top.raw("agents", [])
    if not isinstance(raw_agents, list):
        raise top.fail("agents", "must be an array of tables: write each agent as [[agents]]")
    agents = tuple(_agent(raw, i, source) for i, raw in enumerate(raw_agents))
    top.finish()
    config = ArenaConfig(cohort=cohort, schedule=schedule, leaderboard=board, agents=agents, baselines=baselines,
                         source=source, operations=operations)
    _check_names(config)
    return config


def load_config(path: str | Path) -> ArenaConfig:
    """Read and validate the TOML file at `path`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such configuration file (start from arena.example.toml)", key="") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read the configuration: {exc}", key="") from None
    return parse_config(text, str(p))


def default_config() -> ArenaConfig:
    """The built-in configuration: default cohort rules, the scheduler's default times, the baseline agents
    and no LLM agent (so it needs no API key)."""
    return ArenaConfig()


def _cohort(t: _Table) -> CohortConfig:
    d = CohortConfig()
    fraction_value = t.raw("max_bet_fraction", None)
    fraction = d.max_bet_fraction
    if fraction_value is not None:
        if isinstance(fraction_value, bool) or not isinstance(fraction_value, (int, float, str)):
            raise t.fail("max_bet_fraction", f"must be a number in (0, 1], got {fraction_value!r}")
        try:
            fraction = Decimal(repr(fraction_value) if isinstance(fraction_value, float) else str(fraction_value))
        except ArithmeticError:
            raise t.fail("max_bet_fraction", f"must be a number in (0, 1], got {fraction_value!r}") from None
        if not (fraction.is_finite() and Decimal(0) < fraction <= Decimal(1)):
            raise t.fail("max_bet_fraction", f"must be a number in (0, 1], got {fraction_value!r}")
    cfg = CohortConfig(
        starting_cash=t.money("starting_cash", d.starting_cash),
        max_bet_fraction=fraction,
        min_bet=t.money("min_bet", d.min_bet),
        max_actions=t.integer("max_actions", d.max_actions, minimum=1),
        decision_weeks=t.integer("decision_weeks", d.decision_weeks, minimum=1),
        newest_cohorts=t.integer("newest_cohorts", d.newest_cohorts, minimum=1),
        forecast_set_size=t.integer("forecast_set_size", d.forecast_set_size, minimum=0),
        universe_size=t.integer("universe_size", d.universe_size, minimum=1),
        rank_by=t.string("rank_by", d.rank_by, RANK_BY),
        horizon_days=t.integer("horizon_days", d.horizon_days, minimum=1),
        prompt_markets=t.integer("prompt_markets", d.prompt_markets, minimum=1),
        prompt_version=t.string("prompt_version", d.prompt_version, PROMPT_VERSIONS),
        exclude_keywords=t.strings("exclude_keywords", d.exclude_keywords),
        exclude_categories=t.strings("exclude_categories", d.exclude_categories),
    )
    t.finish()
    if cfg.starting_cash.micros <= 0:
        raise t.fail("starting_cash", "must be positive")
    if cfg.min_bet > cfg.rules().max_bet(cfg.starting_cash):
        raise t.fail("min_bet", f"{cfg.min_bet} is above the first max bet "
                                f"{cfg.rules().max_bet(cfg.starting_cash)} (starting_cash × max_bet_fraction)")
    return cfg


def _cron_problem(value: str) -> str:
    """What APScheduler (the scheduler that will run it) finds wrong with a crontab string; '' when valid."""
    from apscheduler.triggers.cron import CronTrigger

    try:
        CronTrigger.from_crontab(value, timezone="UTC")
    except ValueError as exc:
        return str(exc).splitlines()[0] if str(exc) else "invalid"
    return ""


def _operations(t: _Table) -> OperationsConfig:
    d = OperationsConfig()
    cfg = OperationsConfig(
        decision_attempts=t.integer("decision_attempts", d.decision_attempts, minimum=1),
        retry_window_hours=t.integer("retry_window_hours", d.retry_window_hours, minimum=0),
        lease_seconds=t.number("lease_seconds", d.lease_seconds, positive=True, maximum=86_400.0) or d.lease_seconds,
    )
    t.finish()
    return cfg


def _schedule(t: _Table) -> ScheduleConfig:
    jobs: dict[str, Any] = {}
    for key in list(t.data):
        if key not in KNOWN_JOBS:
            continue
        value = t.raw(key)
        if isinstance(value, str):
            fields = value.split()
            if len(fields) != 5 or not all(_CRON_FIELD.fullmatch(f) for f in fields):
                raise t.fail(key, f"must be a 5-field crontab string like \"0 0 * * sun\" (UTC), got {value!r}")
            problem = _cron_problem(value)
            if problem:
                raise t.fail(key, f"is not a valid crontab string ({problem}): minute 0-59, hour 0-23, day "
                                  f"1-31, month 1-12, weekday 0-6 or sun-sat, e.g. \"0 0 * * sun\"; got {value!r}")
            jobs[key] = value
        elif isinstance(value, dict):
            bad = sorted(set(value) - set(INTERVAL_UNITS))
            if bad or not value:
                raise t.fail(key, f"an interval table takes {', '.join(INTERVAL_UNITS)}, got {value!r}")
            for unit, n in value.items():
                if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
                    raise t.fail(key, f"interval {unit} must be a positive integer, got {n!r}")
            jobs[key] = dict(value)
        else:
            raise t.fail(key, f"must be a crontab string or an interval table like {{ minutes = 15 }}, "
                              f"got {value!r}")
    unknown = sorted(set(t.data) - set(KNOWN_JOBS))
    if unknown:
        raise t.fail(unknown[0], f"unknown job (known: {', '.join(KNOWN_JOBS)})")
    return ScheduleConfig(jobs)


def _leaderboard(t: _Table) -> LeaderboardConfig:
    from arena.scoring.board import RANK_CHOICES  # pure scoring; imported here so reading a config stays cheap

    cfg = LeaderboardConfig(rank_by=t.string("rank_by", LeaderboardConfig.rank_by, RANK_CHOICES))
    t.finish()
    return cfg


_LLM_KEYS = ("model", "base_url", "api_key_env", "temperature", "max_tokens", "price_per_million_input",
             "price_per_million_output", "max_repairs", "max_retries", "timeout_s", "response_format",
             "max_completion_tokens", "reasoning_effort", "extra_headers", "extra_body", "max_reply_bytes",
             "tools", "max_tool_rounds", "tool_result_chars", "web_search_url", "web_search_key_env")


def _agent(raw: Any, index: int, source: str) -> AgentConfig:
    label = f"agents[{index}]"
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        label += f" ({raw['name']})"
    t = _Table(raw, label, source)
    if t.has("api_key"):
        # Do not echo the value: it may be a real key.
        raise t.fail("api_key", "keys never go in the configuration file; set api_key_env to the NAME of the "
                                "environment variable that holds the key")
    name = t.string("name", "")
    if not _AGENT_NAME.fullmatch(name):
        raise t.fail("name", f"must be a non-empty name of letters, digits and . _ : + - , got {name!r}")
    kind = t.string("kind", LLM_KIND, AGENT_KINDS)
    d = AgentConfig(name=name)
    if kind != LLM_KIND:
        for key in _LLM_KEYS:
            if t.has(key):
                raise t.fail(key, f"applies only to kind = \"llm\" (this agent is kind = {kind!r})")
        params = t.raw("params", {})
        if not isinstance(params, dict):
            raise t.fail("params", f"must be a table like {{ seed = 1 }}, got {params!r}")
        unknown = sorted(set(params) - BASELINE_PARAMS[kind])
        if unknown:
            allowed = ", ".join(sorted(BASELINE_PARAMS[kind])) or "none"
            raise t.fail(f"params.{unknown[0]}", f"not a parameter of {kind!r} (allowed: {allowed})")
        for key, value in params.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise t.fail(f"params.{key}", f"must be a number, got {value!r}")
            if key in ("seed", "max_bets") and not isinstance(value, int):
                raise t.fail(f"params.{key}", f"must be an integer, got {value!r}")
        ablation = _ablation(t)
        t.finish()
        return AgentConfig(name=name, kind=kind, params=params, **ablation)

    if t.has("params"):
        raise t.fail("params", "applies only to baseline kinds")
    model = t.string("model", "")
    if not model.strip():
        raise t.fail("model", "is required for kind = \"llm\" (the model id, e.g. \"openai/gpt-4o-mini\")")
    base_url = t.string("base_url", d.base_url).rstrip("/")
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", base_url):
        raise t.fail("base_url", f"must be an http(s) URL like {OPENROUTER_BASE_URL!r}, got {base_url!r}")
    env = t.raw("api_key_env", d.api_key_env)
    if not isinstance(env, str) or not _ENV_NAME.fullmatch(env):
        # Do not echo the value: someone may have pasted the key itself here.
        raise t.fail("api_key_env", "must be the NAME of an environment variable (letters, digits and _, "
                                    "e.g. \"OPENROUTER_API_KEY\"), not the key itself")
    cfg = AgentConfig(
        name=name, kind=kind, model=model, base_url=base_url, api_key_env=env,
        temperature=t.number("temperature", None, maximum=2.0),
        max_tokens=t.integer("max_tokens", d.max_tokens, minimum=1),
        max_completion_tokens=t.optional_integer("max_completion_tokens", minimum=1),
        reasoning_effort=(t.string("reasoning_effort", "", REASONING_EFFORTS) if t.has("reasoning_effort")
                          else None),
        extra_headers=_extra_headers(t),
        extra_body=_extra_body(t),
        max_reply_bytes=t.integer("max_reply_bytes", d.max_reply_bytes, minimum=1024),
        price_per_million_input=t.number("price_per_million_input", None),
        price_per_million_output=t.number("price_per_million_output", None),
        max_repairs=t.integer("max_repairs", d.max_repairs, minimum=0),
        max_retries=t.integer("max_retries", d.max_retries, minimum=0),
        timeout_s=t.number("timeout_s", d.timeout_s, positive=True) or d.timeout_s,
        response_format=t.string("response_format", d.response_format, RESPONSE_FORMATS),
        **_tools(t, d),
        **_ablation(t),
    )
    if (cfg.price_per_million_input is None) != (cfg.price_per_million_output is None):
        missing = "price_per_million_output" if cfg.price_per_million_output is None else "price_per_million_input"
        raise t.fail(missing, "give both token prices or neither")
    t.finish()
    return cfg


def _tools(t: _Table, d: AgentConfig) -> dict[str, Any]:
    """The tool keys of an LLM seat, validated: known tool names, bounds, a web-search endpoint only with web
    search, and an explicit `track` that agrees with the tools."""
    from arena.agents.tools import TOOL_NAMES, WEB_SEARCH  # the tool registry; no I/O imported with it

    tools = t.strings("tools", ())
    for name in tools:
        if name not in TOOL_NAMES:
            raise t.fail("tools", f"unknown tool {name!r} (known: {', '.join(TOOL_NAMES)})")
    if len(set(tools)) != len(tools):
        raise t.fail("tools", f"lists a tool twice: {list(tools)!r}")
    url = t.string("web_search_url", "")
    env = t.raw("web_search_key_env", "")
    if not isinstance(env, str) or (env and not _ENV_NAME.fullmatch(env)):
        raise t.fail("web_search_key_env", "must be the NAME of an environment variable (letters, digits and _), "
                                           "not the key itself")
    if WEB_SEARCH in tools:
        if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
            raise t.fail("web_search_url", f"must be the http(s) URL of the search endpoint when tools include "
                                           f"{WEB_SEARCH!r}, got {url!r}")
        if not env:
            raise t.fail("web_search_key_env", f"is required when tools include {WEB_SEARCH!r} (the NAME of the "
                                               f"environment variable holding the search API key)")
    elif url or env:
        key = "web_search_url" if url else "web_search_key_env"
        raise t.fail(key, f"applies only when tools include {WEB_SEARCH!r} (web search is off by default)")
    track = t.string("track", "agent" if tools else "model", TRACKS)
    if (track == "agent") != bool(tools):
        raise t.fail("track", f"{track!r} disagrees with the tools: track \"agent\" needs tools = [...], track "
                              f"\"model\" takes none (leave track out to derive it)")
    return dict(tools=tools, max_tool_rounds=t.integer("max_tool_rounds", d.max_tool_rounds, minimum=1, maximum=20),
                tool_result_chars=t.integer("tool_result_chars", d.tool_result_chars, minimum=500,
                                            maximum=200_000),
                web_search_url=url.rstrip("/") if WEB_SEARCH in tools else "", web_search_key_env=env, track=track)


def _ablation(t: _Table) -> dict[str, Any]:
    """`replicates`, `variant_of` and `factor` of one agent table (the names are checked in _check_names)."""
    out: dict[str, Any] = {"replicates": t.integer("replicates", 1, minimum=1, maximum=MAX_REPLICATES)}
    if t.has("variant_of"):
        out["variant_of"] = t.string("variant_of", "")
        if not t.has("factor"):
            raise t.fail("factor", "is required with variant_of: the factor this variant changes, one of "
                                   + ", ".join(repr(f) for f in ABLATION_FACTORS))
    if t.has("factor"):
        if not t.has("variant_of"):
            raise t.fail("factor", "applies only with variant_of = \"<the agent this one varies>\"")
        out["factor"] = t.string("factor", "", ABLATION_FACTORS)
    return out


def _extra_headers(t: _Table) -> dict[str, str]:
    value = t.raw("extra_headers", {})
    if not isinstance(value, dict):
        raise t.fail("extra_headers", f"must be a table like {{ \"HTTP-Referer\" = \"https://example.org\" }}, "
                                      f"got {value!r}")
    for name, v in value.items():
        if not _HEADER_NAME.fullmatch(name):
            raise t.fail(f"extra_headers.{name}", "is not a valid HTTP header name")
        if name.lower() in RESERVED_HEADERS:
            # Never echo the value: an Authorization header holds a key.
            raise t.fail(f"extra_headers.{name}", "is set by the agent itself and cannot be overridden (the key "
                                                  "travels only in Authorization, read from api_key_env)")
        if not isinstance(v, str) or "\r" in v or "\n" in v:
            raise t.fail(f"extra_headers.{name}", "must be a one-line string")
    return dict(value)


def _json_value(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, list):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False  # TOML dates and times have no JSON form


def _extra_body(t: _Table) -> dict[str, Any]:
    value = t.raw("extra_body", {})
    if not isinstance(value, dict):
        raise t.fail("extra_body", f"must be a table like {{ provider = {{ sort = \"price\" }} }}, got {value!r}")
    for key, v in value.items():
        if key in RESERVED_BODY_KEYS:
            own = f"; use the agent's {key} key" if key in _LLM_KEYS else ""
            raise t.fail(f"extra_body.{key}", f"is set by the agent itself and cannot be overridden{own}")
        if not _json_value(v):
            raise t.fail(f"extra_body.{key}", f"must be JSON-like (strings, numbers, booleans, arrays, tables), "
                                              f"got {v!r}")
    return dict(value)


def _check_names(config: ArenaConfig) -> None:
    seen: set[str] = set()
    for a in config.agents:
        if a.name in seen:
            raise ConfigError(f"{config.source}: agent name {a.name!r} is used twice; names must be unique",
                              key="agents.name")
        seen.add(a.name)
    names = [a.name for a in config.lineup]
    for i, a in enumerate(config.agents):
        if a.variant_of is not None and (a.variant_of not in names or a.variant_of == a.name):
            why = "itself" if a.variant_of == a.name else "no agent of the lineup"
            raise ConfigError(f"{config.source}: agents[{i}] ({a.name}) variant_of: {a.variant_of!r} names {why}; "
                              f"name another agent of the lineup ({', '.join(n for n in names if n != a.name)})",
                              key=f"agents[{i}].variant_of")
    for a in config.lineup[len(config.agents):]:
        if a.name in seen:
            raise ConfigError(f"{config.source}: agent name {a.name!r} is the default name of the {a.kind!r} "
                              f"baseline; rename the agent or set baselines = false", key="agents.name")


# -- the documented example ----------------------------------------------------------------------------------------

_EXAMPLE = '''\
# arena.example.toml — a documented example configuration for the arena.
# Copy it to arena.toml and edit. Every key is optional except each agent's `name` (and `model` for LLM agents);
# a key left out takes the default shown here. All times are UTC.
#
# API keys are NEVER written in this file. Each LLM agent names the environment variable that holds its key
# (`api_key_env`); export it before running, e.g.  export OPENROUTER_API_KEY=...

# Baseline agents (always-0.5, market-follower, random, kelly-extremizer) join every cohort unless this is false.
# Listing a baseline kind under [[agents]] replaces its default entry.
baselines = true

[cohort]
starting_cash = 10000        # USD each agent starts every cohort with
max_bet_fraction = 0.25      # max bet = this × the cash at the start of the decision
min_bet = 50                 # USD, the smallest bet
max_actions = 20             # bets + sells in one decision
decision_weeks = 5           # weekly decision rounds per cohort (then it only settles)
newest_cohorts = 5           # agents decide in each of the newest K open cohorts
forecast_set_size = 20       # markets every agent must give P(YES) for in each round
universe_size = 100          # markets in a cohort's universe: the top N by `rank_by`
rank_by = "volume_24h"       # "volume_24h", "liquidity" or "volume" (lifetime volume favours long-dated markets)
horizon_days = 60            # leave out markets that close later than this
prompt_markets = 100         # at most this many markets in a prompt (the forecast set and holdings always shown)
prompt_version = "decision-v2"   # the decision prompt new cohorts are frozen with ("decision-v1" is the old one)
# exclude_keywords = ["manifold", "mana ", "this market", "this question"]
# exclude_categories = []

[schedule]
# Overrides of the scheduler's defaults, by job id: a 5-field crontab string (UTC) or an interval table.
sync = { minutes = 15 }                 # fetch markets and prices
cohort_start = "0 0 * * sun"            # open the weekly cohort, Sunday 00:00
decision_round = "5 * * * *"            # hourly: the week's first tick decides, later ones resume and retry
mark = "0 0 * * *"                      # mark portfolios to market
settle = "0 * * * *"                    # settle resolved markets
backup = "30 3 * * *"                   # back up the database

[leaderboard]
# The rank key of every board (`arena leaderboard --rank-by` overrides it): forecast_brier (the headline),
# brier_minus_market, bss_vs_market, implied_brier (seed 001), kelly_brier, stated_brier, bss_vs_0_25, pnl,
# return_pct, win_rate, crowd_proxy, coherence_gap, contradicting_bets, log_score, spherical_score (higher is
# better), brier_adjusted (difficulty-adjusted) or irt_skill (higher is better).
rank_by = "forecast_brier"

[operations]
decision_attempts = 3        # tries in all for a decision that failed (missing key, endpoint refused/down, timeout)
retry_window_hours = 24      # failed decisions are retried by later ticks until this long after the round's start
lease_seconds = 120          # a claim whose holder stops its heartbeat this long is taken over (ARENA_LEASE_SECONDS)

# One [[agents]] table per seat. kind = "llm" (the default) or a baseline kind:
# "always-0.5", "market-follower", "random", "kelly".
[[agents]]
name = "gpt-4o-mini"                    # stable across cohorts: it identifies the model on the leaderboard
kind = "llm"
model = "openai/gpt-4o-mini"            # the model id the endpoint expects
base_url = "https://openrouter.ai/api/v1"   # any OpenAI-compatible endpoint (POST {base_url}/chat/completions)
api_key_env = "OPENROUTER_API_KEY"      # the NAME of the environment variable holding the key
temperature = 0.0                       # omit it for reasoning models that refuse it (then it is not sent)
max_tokens = 4096                       # completion tokens per call
# max_completion_tokens = 16000         # sent INSTEAD of max_tokens when set (OpenAI reasoning models need it)
# reasoning_effort = "medium"           # "none", "minimal", "low", "medium" or "high"; not sent when omitted
# extra_headers = { "HTTP-Referer" = "https://example.org", "X-Title" = "arena" }   # never Authorization
# extra_body = { provider = { sort = "price" } }    # merged into every request body
max_reply_bytes = 262144                # a larger reply is a recorded failure (only an excerpt is kept)
price_per_million_input = 0.15          # USD per million prompt tokens (omit both if unknown; a provider-reported
                                        # cost, like OpenRouter's usage.cost, is used instead when present)
price_per_million_output = 0.60         # USD per million completion tokens
max_repairs = 2                         # corrected replies asked for after an invalid one
max_retries = 4                         # retries on 429, 5xx and network errors (exponential backoff, Retry-After)
timeout_s = 120                         # seconds per HTTP request
response_format = "json_schema"         # "json_schema", "json_object" or "none" (falls back to none if refused)
# replicates = 3                        # ask each decision 3 times independently (1..20, default 1): replicate 1's
                                        # actions are executed, every replicate's forecasts stored (any kind)
# variant_of = "claude-sonnet"          # an ablation: the seat this one varies, compared by `arena compare`;
# factor = "model"                      # what it changes: "prompt version", "temperature", "model", "tools",
                                        # "reasoning effort", "sizing" or "other" (required with variant_of)

[[agents]]
name = "claude-sonnet"
model = "anthropic/claude-sonnet-4"
price_per_million_input = 3.0
price_per_million_output = 15.0

# An agent with tools runs in the "agent" track (without tools: "model"); the boards can be filtered by track.
# Uncomment to add one (remove one "# " from each line of the block below):
# [[agents]]
# name = "claude-sonnet-tools"
# model = "anthropic/claude-sonnet-4"
# tools = ["price_history", "order_book", "related_markets", "resolution_criteria"]
#                                       # read-only, from the arena's own records as of the decision time; add
#                                       # "web_search" (and the two web_search_* keys) for live rounds only
# max_tool_rounds = 3                   # rounds of tool calls per decision, then the JSON decision
# tool_result_chars = 8000              # each tool result is cut to this many characters (sent and stored)
# # track = "agent"                     # derived from `tools`; if written, it must agree
# # web_search_url = "https://api.tavily.com/search"   # POST {"query", "max_results"}; only with "web_search"
# # web_search_key_env = "TAVILY_API_KEY"              # in tools; never used in replays or simulations

# A baseline with its own parameters replaces the default one of that kind:
[[agents]]
name = "kelly-extremizer"
kind = "kelly"
params = { alpha = 1.5, kelly_multiplier = 1.0 }
'''


def example_config_text() -> str:
    """A documented example configuration (the text of arena.example.toml); it parses to a valid config."""
    return _EXAMPLE


__all__ = [
    "AGENT_KINDS",
    "AgentConfig",
    "ArenaConfig",
    "BASELINE_KINDS",
    "CohortConfig",
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BASELINE_NAMES",
    "KNOWN_JOBS",
    "LLM_KIND",
    "LeaderboardConfig",
    "OPENROUTER_BASE_URL",
    "RESPONSE_FORMATS",
    "ScheduleConfig",
    "TRACKS",
    "TokenPrices",
    "default_config",
    "example_config_text",
    "load_config",
    "parse_config",
    "track_of",
]
