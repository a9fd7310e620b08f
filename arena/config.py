"""The arena's configuration: cohort rules, job schedules and the agent lineup, read from TOML (stdlib `tomllib`).

Owns the file format and its validation; it must not import httpx, jinja2, the store or the services, so
anything may read a configuration cheaply. API keys are never part of the configuration: an LLM agent names the
*environment variable* that holds its key (`api_key_env`), and the caller reads the key from the environment
when it builds the agent. No value of this module (repr, `to_json`, errors) can contain a key.

The values are frozen pydantic models: each field declares its type and bounds, unknown keys are refused
(`extra="forbid"`), and checks that span fields are model validators. Every problem is a `ConfigError` naming
the key path and what the value must be, e.g. ``arena.toml: agents[2] (gpt) max_tokens: must be an integer ≥ 1,
got -1`` — pydantic's errors are translated by `_config_error`, which words a type or bound error from the
field's declaration (or its `Expect` marker) and passes the messages of the arena's own checks through.
"""

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from datetime import date, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le
from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, PlainValidator, StrictBool, StrictFloat, StrictInt,
                      StrictStr, ValidationError, ValidationInfo, model_validator)
from pydantic_core import PydanticCustomError

from arena.domain.forecast_set import DEFAULT_BAND, DEFAULT_MAX_PER_EVENT, ForecastSetRules
from arena.domain.sizing import DEFAULT_PROMPT_VERSION, PROMPT_VERSIONS, CohortRules
from arena.domain.universe import DEFAULT_EXCLUDED_KEYWORDS, UniverseRules
from arena.errors import ConfigError
from arena.jobs import SCHEDULED_JOBS
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
KNOWN_JOBS = SCHEDULED_JOBS  # the job registry's scheduled jobs: the keys [schedule] may name
INTERVAL_UNITS = ("weeks", "days", "hours", "minutes", "seconds")
_UNIT_SECONDS = {"weeks": 604_800, "days": 86_400, "hours": 3600, "minutes": 60, "seconds": 1}
MAX_INTERVAL_DAYS = 366
# The documented range of each baseline parameter (inclusive): what the baselines can run with.
PARAM_RANGES: Mapping[str, tuple[float, float]] = MappingProxyType({
    "seed": (0, 2**32 - 1), "max_bets": (0, 1000), "alpha": (0.01, 100.0), "kelly_multiplier": (0.01, 10.0)})
# The keys of an [[agents]] table that only an LLM seat takes (a baseline refuses them).
_LLM_KEYS = ("model", "base_url", "api_key_env", "temperature", "max_tokens", "price_per_million_input",
             "price_per_million_output", "max_repairs", "max_retries", "timeout_s", "response_format",
             "max_completion_tokens", "reasoning_effort", "extra_headers", "extra_body", "max_reply_bytes",
             "tools", "max_tool_rounds", "tool_result_chars", "web_search_url", "web_search_key_env",
             "corpus", "knowledge_cutoff", "released", "prompt_version")

_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_CRON_FIELD = re.compile(r"[0-9A-Za-z*/,\-?#LW]+")
_URL = re.compile(r"https?://[^\s/]+(/\S*)?")
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CREDENTIAL_HEADER = re.compile(r"key|token|secret|auth|cookie|passw|session|signature", re.IGNORECASE)
# Amounts beyond this are typos (and would overflow sums of micro-USD in 64-bit columns).
MAX_AMOUNT_USD = 1_000_000_000
UNKNOWN_KEY = "unknown key (check the spelling; see arena.example.toml)"


# -- field types: what each kind of value must be, and the arena's own checks --------------------------------------


@dataclass(frozen=True)
class Expect:
    """What a field's value must be, as its error says it: ``must be <what>, got <value>``. Without it the words
    come from the field's type and bounds ("an integer ≥ 1"). `echo` False never shows the value (a field where
    someone may have pasted a key)."""

    what: str
    echo: bool = True


def _bad(message: str, **ctx: Any) -> PydanticCustomError:
    """An error of the arena's own checks, `message` shown as is. ctx: `field` names the key of a check that
    spans fields, `sub` extends the key path (a header, a parameter), `key` with `whole` marks a message that
    names its own place."""
    return PydanticCustomError("arena", "{message}", {"message": message, **ctx})


def _not_nan(value: float) -> float:
    if value != value:
        raise ValueError("NaN")
    return value


def _money(value: Any) -> Money:
    """USD from a TOML number or a string like "12.50": at least 0, at most MAX_AMOUNT_USD."""
    if isinstance(value, Money):
        return value
    try:
        if isinstance(value, (bool, dict, list)):
            raise MoneyError("not an amount")
        amount = Money.of(value)
    except (MoneyError, ArithmeticError):
        raise _bad(f"must be an amount in USD like 10000 or \"12.50\", got {value!r}") from None
    if amount.micros < 0:
        raise _bad(f"must not be negative, got {value!r}")
    if amount > Money.of(MAX_AMOUNT_USD):
        raise _bad(f"must be at most {MAX_AMOUNT_USD} USD, got {value!r}")
    return amount


def _cron_problem(value: str) -> str:
    """What APScheduler (the scheduler that will run it) finds wrong with a crontab string; '' when valid."""
    from apscheduler.triggers.cron import CronTrigger

    try:
        CronTrigger.from_crontab(value, timezone="UTC")
    except ValueError as exc:
        return str(exc).splitlines()[0] if str(exc) else "invalid"
    return ""


def _trigger(value: Any) -> str | Mapping[str, int] | None:
    """A job's schedule: a 5-field crontab string APScheduler accepts, or an interval table of positive units."""
    if value is None or isinstance(value, MappingProxyType):
        return value
    if isinstance(value, str):
        fields = value.split()
        if len(fields) != 5 or not all(_CRON_FIELD.fullmatch(f) for f in fields):
            raise _bad(f"must be a 5-field crontab string like \"0 0 * * sun\" (UTC), got {value!r}")
        problem = _cron_problem(value)
        if problem:
            raise _bad(f"is not a valid crontab string ({problem}): minute 0-59, hour 0-23, day 1-31, month 1-12, "
                       f"weekday 0-6 or sun-sat, e.g. \"0 0 * * sun\"; got {value!r}")
        return value
    if isinstance(value, dict):
        if not value or set(value) - set(INTERVAL_UNITS):
            raise _bad(f"an interval table takes {', '.join(INTERVAL_UNITS)}, got {value!r}")
        for unit, n in value.items():
            if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
                raise _bad(f"interval {unit} must be a positive integer, got {n!r}")
        if sum(n * _UNIT_SECONDS[u] for u, n in value.items()) > MAX_INTERVAL_DAYS * 86_400:
            raise _bad(f"an interval must be at most {MAX_INTERVAL_DAYS} days (a longer one never runs in practice), "
                       f"got {value!r}")
        return MappingProxyType(dict(value))
    raise _bad(f"must be a crontab string or an interval table like {{ minutes = 15 }}, got {value!r}")


def _band(value: Any) -> tuple[Decimal, Decimal]:
    """The forecast band: two numbers [lo, hi] with 0 < lo < hi < 1 (`domain.forecast_set.band_problem`)."""
    from arena.domain.forecast_set import band_problem

    if isinstance(value, tuple) and all(isinstance(x, Decimal) for x in value):
        items: list[Any] = list(value)
    elif (isinstance(value, list) and len(value) == 2
          and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)):
        items = [Decimal(str(x)) for x in value]
    else:
        raise _bad(f"must be two numbers [lo, hi] with 0 < lo < hi < 1, like [0.05, 0.95], got {value!r}")
    try:
        band_problem(items)
    except (ValueError, ArithmeticError) as exc:
        raise _bad(f"{exc} — set two numbers 0 < lo < hi < 1, like [0.05, 0.95]") from None
    return items[0], items[1]


def _day(value: Any) -> date | None:
    """A calendar date (UTC): a TOML date like 2025-06-30, or the same as an ISO string (how the lineup freezes
    it). A time of day is refused: the arena reads the whole day."""
    if value is None:
        return None
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise _bad(f"must be a date like 2025-06-30 (a TOML date, no time of day), got {value!r}")


def _board_rank(value: str) -> str:
    from arena.scoring.board import RANK_CHOICES  # pure scoring; imported here so reading a config stays cheap

    if value not in RANK_CHOICES:
        raise _bad(f"must be one of {', '.join(repr(c) for c in RANK_CHOICES)}, got {value!r}")
    return value


def _base_url(value: str) -> str:
    url = value.rstrip("/")
    if not _URL.fullmatch(url):
        raise _bad(f"must be an http(s) URL like {OPENROUTER_BASE_URL!r}, got {url!r}")
    return url


def _tool_names(tools: tuple[str, ...]) -> tuple[str, ...]:
    from arena.agents.tools import TOOL_NAMES  # the tool registry; no I/O imported with it

    for name in tools:
        if name not in TOOL_NAMES:
            raise _bad(f"unknown tool {name!r} (known: {', '.join(TOOL_NAMES)})")
    if len(set(tools)) != len(tools):
        raise _bad(f"lists a tool twice: {list(tools)!r}")
    return tools


def _corpus_path(value: str) -> str:
    """The corpus file's path, made absolute (from the working directory; `parse_config` first joins a relative
    path to the configuration file's folder). Whether the file is a valid corpus is checked where seats are built
    (`arena.agents.corpus`), not each time a configuration is read."""
    if not value:
        return value
    if "\x00" in value or not value.strip():
        raise _bad(f"must be the path of a JSON-lines file, got {value!r}")
    return str(Path(value).expanduser().absolute())


def _headers(value: Any) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise _bad(f"must be a table like {{ \"HTTP-Referer\" = \"https://example.org\" }}, got {value!r}")
    for name, v in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise _bad("is not a valid HTTP header name", sub=name)
        if name.lower() in RESERVED_HEADERS:
            # Never echo the value: an Authorization header holds a key.
            raise _bad("is set by the agent itself and cannot be overridden (the key travels only in "
                       "Authorization, read from api_key_env)", sub=name)
        if _CREDENTIAL_HEADER.search(name):
            # Header values are frozen into the cohort's lineup (stored), so none may hold a secret.
            raise _bad("looks like a credential header; header values are stored with the cohort's lineup, so "
                       "the key travels only in Authorization, read from api_key_env", sub=name)
        if not isinstance(v, str) or "\r" in v or "\n" in v:
            raise _bad("must be a one-line string", sub=name)
    return MappingProxyType(dict(value))


def _json_value(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, list):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False  # TOML dates and times have no JSON form


def _body(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(f"must be a table like {{ provider = {{ sort = \"price\" }} }}, got {value!r}")
    for key, v in value.items():
        if key in RESERVED_BODY_KEYS:
            own = f"; use the agent's {key} key" if key in _LLM_KEYS else ""
            raise _bad(f"is set by the agent itself and cannot be overridden{own}", sub=key)
        if not _json_value(v):
            raise _bad(f"must be JSON-like (strings, numbers, booleans, arrays, tables), got {v!r}", sub=key)
    return MappingProxyType(dict(value))


def _params(value: Any, info: ValidationInfo) -> Mapping[str, Any]:
    """A baseline's constructor parameters: the names its kind takes, numbers (seed and max_bets integers)."""
    if not isinstance(value, Mapping):
        raise _bad(f"must be a table like {{ seed = 1 }}, got {value!r}")
    kind = info.data.get("kind", LLM_KIND)
    allowed = BASELINE_PARAMS.get(kind, frozenset())
    unknown = sorted(set(value) - allowed)
    if unknown:
        names = ", ".join(sorted(allowed)) or "none"
        raise _bad(f"not a parameter of {kind!r} (allowed: {names})", sub=unknown[0])
    for key, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _bad(f"must be a number, got {v!r}", sub=key)
        if key in ("seed", "max_bets") and not isinstance(v, int):
            raise _bad(f"must be an integer, got {v!r}", sub=key)
        low, high = PARAM_RANGES[key]
        if not low <= v <= high:
            raise _bad(f"must be a number ≥ {low} and ≤ {high}, got {v!r}", sub=key)
    return MappingProxyType(dict(value))


Number = Annotated[StrictFloat, AfterValidator(_not_nan)]
USD = Annotated[Money, PlainValidator(_money)]
Band = Annotated[tuple[Decimal, Decimal], PlainValidator(_band)]
Count = StrictInt  # bounds are given per field, so the error says them
Strings = tuple[StrictStr, ...]
Trigger = Annotated[str | Mapping[str, int] | None, PlainValidator(_trigger)]
Day = Annotated[date | None, PlainValidator(_day)]
_EMPTY: Mapping[str, Any] = MappingProxyType({})


# -- the values ----------------------------------------------------------------------------------------------------


class _Model(BaseModel):
    """A frozen configuration value; unknown keys are refused (with `unknown_key`). Read from TOML, a bad value is
    a ConfigError naming the key (`_config_error`); built in Python, a ValidationError that never shows a value
    (it might be a key)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, hide_input_in_errors=True)
    unknown_key: ClassVar[str] = UNKNOWN_KEY

    def __setattr__(self, name: str, value: Any) -> None:
        # An AttributeError, as a frozen dataclass raises (pydantic's own is a ValidationError).
        raise AttributeError(f"{type(self).__name__} is frozen: {name} cannot be set")


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


class CohortConfig(_Model):
    """Rules every cohort is started with. Amounts in USD (Money); `max_bet_fraction` of the cash per bet."""

    starting_cash: USD = Money.of(10_000)
    max_bet_fraction: Annotated[Decimal, Field(gt=0, le=1), Expect("a number in (0, 1]")] = Decimal("0.25")
    min_bet: USD = Money.of(50)
    max_actions: Annotated[Count, Field(ge=1, le=1000)] = 20  # per decision
    decision_weeks: Annotated[Count, Field(ge=1, le=104)] = 5  # weekly decision rounds per cohort
    newest_cohorts: Annotated[Count, Field(ge=1, le=104)] = 5  # K: agents decide in each of the newest K open cohorts
    forecast_set_size: Annotated[Count, Field(ge=0, le=1000)] = 20  # markets every agent must state P(YES) for, per round
    universe_size: Annotated[Count, Field(ge=1, le=100_000)] = 100  # markets in a cohort's universe (top N by `rank_by`)
    rank_by: Literal[RANK_BY] = "volume_24h"  # type: ignore[valid-type]
    horizon_days: Annotated[Count, Field(ge=1, le=3660)] = 60  # markets closing later than this are left out
    # the forecast set (`domain.forecast_set`, band-v2): YES price at decision time in this band, at most this many
    # markets of one event besides the complete groups
    forecast_band: Band = DEFAULT_BAND
    forecast_max_per_event: Annotated[Count, Field(ge=0, le=1000)] = DEFAULT_MAX_PER_EVENT
    prompt_markets: Annotated[Count, Field(ge=1, le=10_000)] = 100  # at most this many markets listed in a prompt
    prompt_version: Literal[PROMPT_VERSIONS] = DEFAULT_PROMPT_VERSION  # type: ignore[valid-type]
    exclude_keywords: Strings = DEFAULT_EXCLUDED_KEYWORDS
    exclude_categories: Strings = ()

    @model_validator(mode="after")
    def _bets_fit(self) -> "CohortConfig":
        if self.starting_cash.micros <= 0:
            raise _bad("must be positive", field="starting_cash")
        first_max = self.rules().max_bet(self.starting_cash)
        if self.min_bet > first_max:
            raise _bad(f"{self.min_bet} is above the first max bet {first_max} (starting_cash × max_bet_fraction)",
                       field="min_bet")
        return self

    def rules(self) -> CohortRules:
        """The betting rules frozen into a cohort when it starts."""
        return CohortRules(starting_cash=self.starting_cash, max_bet_fraction=self.max_bet_fraction,
                           min_bet=self.min_bet, max_actions=self.max_actions, decision_weeks=self.decision_weeks,
                           prompt_version=self.prompt_version,
                           forecast=ForecastSetRules(band=self.forecast_band, max_per_event=self.forecast_max_per_event,
                                                     horizon_days=self.horizon_days))

    def universe_rules(self) -> UniverseRules:
        return UniverseRules(top_n=self.universe_size, rank_by=self.rank_by, horizon_days=self.horizon_days,
                             exclude_keywords=self.exclude_keywords, exclude_categories=self.exclude_categories)


class ScheduleConfig(_Model):
    """Schedule overrides by job id: a crontab string ("0 0 * * sun", UTC) or an interval ({"minutes": 15}).

    Jobs not named keep the scheduler's defaults; `overrides()` is what `arena.jobs.scheduler.job_specs` takes.
    """

    unknown_key: ClassVar[str] = f"unknown job (known: {', '.join(KNOWN_JOBS)})"
    sync: Trigger = None
    cohort_start: Trigger = None
    decision_round: Trigger = None
    mark: Trigger = None
    settle: Trigger = None
    backup: Trigger = None
    compact: Trigger = None

    @property
    def jobs(self) -> Mapping[str, str | Mapping[str, int]]:
        return MappingProxyType({k: v for k in KNOWN_JOBS if (v := getattr(self, k)) is not None})

    def overrides(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.jobs.items()}

    def never_firing(self, now: datetime) -> list[str]:
        """The jobs whose crontab string matches no time in the 8 years from `now` (e.g. "0 0 30 2 *", the 30th
        of February): valid, but the job would never run."""
        from apscheduler.triggers.cron import CronTrigger

        out = []
        for job, trigger in self.jobs.items():
            if isinstance(trigger, str):
                nxt = CronTrigger.from_crontab(trigger, timezone="UTC").get_next_fire_time(None, now)
                if nxt is None or nxt > now + timedelta(days=8 * 366):
                    out.append(job)
        return out



class OperationsConfig(_Model):
    """How the jobs heal: `decision_attempts` tries in all for a decision that failed (missing key, endpoint
    refused or down, timeouts), retried by later ticks until `retry_window_hours` after the round's start;
    `lease_seconds` a claim stays held without its holder's heartbeat (the ARENA_LEASE_SECONDS environment
    variable overrides it)."""

    decision_attempts: Annotated[Count, Field(ge=1, le=100)] = 3
    retry_window_hours: Annotated[Count, Field(ge=0, le=168)] = 24  # within the round's week
    lease_seconds: Annotated[Number, Field(gt=0.0, le=86_400.0)] = 120.0


class AgentConfig(_Model):
    """One seat of the lineup. LLM settings apply to kind "llm"; `params` to baseline kinds.

    `api_key_env` is the NAME of the environment variable holding the key, never the key. Prices are USD per
    million tokens (None: unknown, cost not computed; a cost the provider reports wins). `timeout_s` is per HTTP
    request, in seconds. `temperature` None leaves it out of the request (reasoning models refuse it);
    `max_completion_tokens`, when set, is sent instead of `max_tokens`; `extra_headers` / `extra_body` are added
    to every request (never Authorization); `max_reply_bytes` bounds a reply's size.
    """

    name: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+\-]*$"),
                    Expect("a non-empty name of letters, digits and . _ : + - ")]
    kind: Literal[AGENT_KINDS] = LLM_KIND  # type: ignore[valid-type]
    model: StrictStr = ""
    base_url: Annotated[StrictStr, AfterValidator(_base_url)] = OPENROUTER_BASE_URL
    # Never echoed: someone may have pasted the key itself here.
    api_key_env: Annotated[StrictStr, Field(pattern=f"^{_ENV_NAME}$"), Expect(
        "the NAME of an environment variable (letters, digits and _, e.g. \"OPENROUTER_API_KEY\"), not the key "
        "itself", echo=False)] = DEFAULT_API_KEY_ENV
    temperature: Annotated[Number | None, Field(ge=0.0, le=2.0)] = None
    max_tokens: Annotated[Count, Field(ge=1, le=10_000_000)] = 4096
    max_completion_tokens: Annotated[Count | None, Field(ge=1, le=10_000_000)] = None
    reasoning_effort: Literal[REASONING_EFFORTS] | None = None  # type: ignore[valid-type]
    extra_headers: Annotated[Mapping[str, str], PlainValidator(_headers)] = Field(default_factory=lambda: _EMPTY)
    extra_body: Annotated[Mapping[str, Any], PlainValidator(_body)] = Field(default_factory=lambda: _EMPTY)
    max_reply_bytes: Annotated[Count, Field(ge=1024, le=64 * 1024 * 1024)] = DEFAULT_MAX_REPLY_BYTES
    price_per_million_input: Annotated[Number | None, Field(ge=0.0, le=1_000_000.0)] = None
    price_per_million_output: Annotated[Number | None, Field(ge=0.0, le=1_000_000.0)] = None
    max_repairs: Annotated[Count, Field(ge=0, le=10)] = 2
    max_retries: Annotated[Count, Field(ge=0, le=20)] = 4  # transport retries (429, 5xx, network) per model call
    timeout_s: Annotated[Number, Field(gt=0.0, le=3600.0)] = 120.0
    response_format: Literal[RESPONSE_FORMATS] = "json_schema"  # type: ignore[valid-type]
    params: Annotated[Mapping[str, Any], PlainValidator(_params)] = Field(default_factory=lambda: _EMPTY)
    # -- tools (track "agent"): the names of arena.agents.tools.TOOL_NAMES the model may call, at most
    # `max_tool_rounds` rounds of tool calls per decision, each result cut to `tool_result_chars` characters;
    # web search only through `web_search_url` with the key in the environment variable `web_search_key_env`
    # (its NAME), and never in replays or simulations. `track` left out is derived: "agent" with tools, else
    # "model".
    tools: Annotated[Strings, AfterValidator(_tool_names)] = ()
    max_tool_rounds: Annotated[Count, Field(ge=1, le=20)] = 3
    tool_result_chars: Annotated[Count, Field(ge=500, le=200_000)] = 8000
    web_search_url: Annotated[StrictStr, AfterValidator(lambda url: url.rstrip("/"))] = ""
    web_search_key_env: Annotated[StrictStr, Field(pattern=f"^({_ENV_NAME})?$"), Expect(
        "the NAME of an environment variable (letters, digits and _), not the key itself", echo=False)] = ""
    # the dated corpus of the `corpus_search` tool (a JSON-lines file, arena.agents.corpus): required with that
    # tool and refused without it; a relative path is read from the configuration file's folder, and the path is
    # kept absolute (so the frozen lineup names the same file from any working directory)
    corpus: Annotated[StrictStr, AfterValidator(_corpus_path)] = ""
    track: Literal[TRACKS] = "model"  # type: ignore[valid-type]
    # -- replicates and ablations (issue 13): how many independent asks per decision, and which seat this one
    # varies (`variant_of`, another seat's name, checked by ArenaConfig) in which `factor`.
    replicates: Annotated[Count, Field(ge=1, le=MAX_REPLICATES)] = 1
    variant_of: StrictStr | None = None
    factor: Literal[ABLATION_FACTORS] | None = None  # type: ignore[valid-type]
    # -- the contamination guard (issue 30): the last day (UTC) the model's training data covers, and the day it
    # was released. In replays a question whose outcome was knowable before the cutoff is scored apart
    # (`domain.contamination`); `released` gives each row its model age at decision time.
    knowledge_cutoff: Day = None
    released: Day = None
    # -- this seat's own prompt version (issue 30, forks and ablations): None sends the cohort's frozen
    # `[cohort] prompt_version`; a version here is sent to this seat alone and frozen with it.
    prompt_version: Literal[PROMPT_VERSIONS] | None = None  # type: ignore[valid-type]

    @model_validator(mode="before")
    @classmethod
    def _keys_of_the_kind(cls, data: Any) -> Any:
        """Refuse keys that do not fit the seat's kind (and any `api_key`); derive `track` when left out."""
        if not isinstance(data, dict):
            return data
        if "api_key" in data:
            # Do not echo the value: it may be a real key.
            raise _bad("keys never go in the configuration file; set api_key_env to the NAME of the environment "
                       "variable that holds the key", field="api_key")
        kind = data.get("kind", LLM_KIND)
        if kind in BASELINE_KINDS:
            for key in (*_LLM_KEYS, "track"):
                if key in data:
                    raise _bad(f"applies only to kind = \"llm\" (this agent is kind = {kind!r})", field=key)
        elif kind == LLM_KIND:
            if "params" in data:
                raise _bad("applies only to baseline kinds", field="params")
            model = data.get("model", "")
            if isinstance(model, str) and not model.strip():
                raise _bad("is required for kind = \"llm\" (the model id, e.g. \"openai/gpt-4o-mini\")",
                           field="model")
        if data.get("track") is None:
            data = {**data, "track": "agent" if data.get("tools") else "model"}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> "AgentConfig":
        """Both token prices or neither; a web-search endpoint only with web search; a corpus with corpus search
        and only with it; a track that agrees with the tools; `variant_of` and `factor` together."""
        from arena.agents.tools import CORPUS_SEARCH, WEB_SEARCH

        if (self.price_per_million_input is None) != (self.price_per_million_output is None):
            missing = "price_per_million_output" if self.price_per_million_output is None \
                else "price_per_million_input"
            raise _bad("give both token prices or neither", field=missing)
        url, env = self.web_search_url, self.web_search_key_env
        if WEB_SEARCH in self.tools:
            if not _URL.fullmatch(url):
                raise _bad(f"must be the http(s) URL of the search endpoint when tools include {WEB_SEARCH!r}, "
                           f"got {url!r}", field="web_search_url")
            if not env:
                raise _bad(f"is required when tools include {WEB_SEARCH!r} (the NAME of the environment variable "
                           f"holding the search API key)", field="web_search_key_env")
        elif url or env:
            raise _bad(f"applies only when tools include {WEB_SEARCH!r} (web search is off by default)",
                       field="web_search_url" if url else "web_search_key_env")
        if CORPUS_SEARCH in self.tools and not self.corpus:
            raise _bad(f"is required when tools include {CORPUS_SEARCH!r}: the path of the JSON-lines corpus file",
                       field="corpus")
        if self.corpus and CORPUS_SEARCH not in self.tools:
            raise _bad(f"applies only when tools include {CORPUS_SEARCH!r}", field="corpus")
        if (self.track == "agent") != bool(self.tools):
            raise _bad(f"{self.track!r} disagrees with the tools: track \"agent\" needs tools = [...], track "
                       f"\"model\" takes none (leave track out to derive it)", field="track")
        if self.variant_of is not None and self.factor is None:
            raise _bad("is required with variant_of: the factor this variant changes, one of "
                       + ", ".join(repr(f) for f in ABLATION_FACTORS), field="factor")
        if self.factor is not None and self.variant_of is None:
            raise _bad("applies only with variant_of = \"<the agent this one varies>\"", field="factor")
        if (self.knowledge_cutoff is not None and self.released is not None
                and self.released < self.knowledge_cutoff):
            raise _bad(f"{self.released.isoformat()} is before knowledge_cutoff {self.knowledge_cutoff.isoformat()}: "
                       f"a model cannot be released before its training data ends; check both dates",
                       field="released")
        return self

    def date_problem(self, today: date) -> str:
        """What is wrong with the seat's dates given `today` (the wall clock's date, UTC; injected): a cutoff or
        a release after it; '' when neither is. Not a validator: a frozen lineup must rebuild on any day."""
        for key in ("knowledge_cutoff", "released"):
            day = getattr(self, key)
            if day is not None and day > today:
                return (f"{key}: {day.isoformat()} is in the future (today is {today.isoformat()}, UTC); give the "
                        f"day the model's {'training data ends' if key == 'knowledge_cutoff' else 'release'}")
        return ""


    @property
    def is_llm(self) -> bool:
        return self.kind == LLM_KIND

    @property
    def prices(self) -> TokenPrices:
        return TokenPrices(self.price_per_million_input, self.price_per_million_output)

    def ablation_json(self) -> dict[str, Any]:
        """The replicate count and ablation role as frozen into the lineup (nothing when left at the defaults,
        so lineups frozen before replicates existed read the same), and the model's dates when given."""
        out: dict[str, Any] = {}
        for key in ("knowledge_cutoff", "released"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key).isoformat()
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
            # the values too (a seat is rebuilt from this record); credential-like headers are refused
            "extra_headers": dict(self.extra_headers), "extra_body": dict(self.extra_body),
            "max_reply_bytes": self.max_reply_bytes,
            "price_per_million_input": self.price_per_million_input,
            "price_per_million_output": self.price_per_million_output,
            "max_repairs": self.max_repairs, "max_retries": self.max_retries, "timeout_s": self.timeout_s,
            "response_format": self.response_format,
            **self._tools_json(),
            **({"prompt_version": self.prompt_version} if self.prompt_version else {}),
        }

    def _tools_json(self) -> dict[str, Any]:
        """The tool keys of `to_json` (without tools: the track, and the tool limits only where they were changed,
        so that the seat rebuilds exactly)."""
        if not self.tools:
            changed = {k: getattr(self, k) for k in ("max_tool_rounds", "tool_result_chars")
                       if getattr(self, k) != type(self).model_fields[k].default}
            return {"track": self.track, **changed}
        return {"track": self.track, "tools": list(self.tools), "max_tool_rounds": self.max_tool_rounds,
                "tool_result_chars": self.tool_result_chars, "web_search_url": self.web_search_url,
                "web_search_key_env": self.web_search_key_env, **({"corpus": self.corpus} if self.corpus else {})}


def track_of(frozen: Mapping[str, Any]) -> str:
    """The track of a frozen lineup record (`AgentConfig.to_json`, or a scripted seat's record): its `track`,
    else "agent" when it lists tools, else "model"."""
    track = frozen.get("track")
    if track in TRACKS:
        return str(track)
    return "agent" if frozen.get("tools") else "model"


class LeaderboardConfig(_Model):
    """How boards are ranked: `rank_by` is a board column backed by a registered metric
    (`arena.scoring.board.RANK_CHOICES`); the headline forecast Brier by default."""

    rank_by: Annotated[StrictStr, AfterValidator(_board_rank)] = "forecast_brier"


class ArenaConfig(_Model):
    """The whole configuration. `agents` are the [[agents]] entries as written; `lineup` adds the baselines."""

    cohort: CohortConfig = Field(default_factory=CohortConfig)
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    leaderboard: LeaderboardConfig = Field(default_factory=LeaderboardConfig)
    agents: Annotated[tuple[AgentConfig, ...],
                      Expect("an array of tables: write each agent as [[agents]]", echo=False)] = ()
    operations: OperationsConfig = Field(default_factory=OperationsConfig)
    baselines: StrictBool = True
    source: StrictStr = "<default>"

    @model_validator(mode="after")
    def _names(self) -> "ArenaConfig":
        """Unique agent names, none taken from a baseline that joins the lineup; `variant_of` names another
        seat of the lineup."""
        seen: set[str] = set()
        for a in self.agents:
            if a.name in seen:
                raise _bad(f"agent name {a.name!r} is used twice; names must be unique", key="agents.name",
                           whole=True)
            seen.add(a.name)
        names = [a.name for a in self.lineup]
        for i, a in enumerate(self.agents):
            if a.variant_of is not None and (a.variant_of not in names or a.variant_of == a.name):
                why = "itself" if a.variant_of == a.name else "no agent of the lineup"
                others = ", ".join(n for n in names if n != a.name)
                raise _bad(f"agents[{i}] ({a.name}) variant_of: {a.variant_of!r} names {why}; name another agent "
                           f"of the lineup ({others})", key=f"agents[{i}].variant_of", whole=True)
        for a in self.lineup[len(self.agents):]:
            if a.name in seen:
                raise _bad(f"agent name {a.name!r} is the default name of the {a.kind!r} baseline; rename the "
                           f"agent or set baselines = false", key="agents.name", whole=True)
        return self

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

    def check_dates(self, today: date) -> "ArenaConfig":
        """This config when no seat's `knowledge_cutoff` or `released` lies after `today` (the wall clock's date,
        injected by the caller; never a replay's simulated one, whose seats are meant to postdate it); else a
        ConfigError naming the first such key."""
        for i, a in enumerate(self.agents):
            problem = a.date_problem(today)
            if problem:
                key = problem.split(":", 1)[0]
                raise ConfigError(f"{self.source}: agents[{i}] ({a.name}) {problem}", key=f"agents[{i}].{key}")
        return self

    def missing_keys(self, environ: Mapping[str, str]) -> list[tuple[str, str]]:
        """(agent name, env var name) for every LLM agent whose key variable is unset or empty in `environ`."""
        return [(a.name, a.api_key_env) for a in self.llm_agents if not environ.get(a.api_key_env)]


_TABLES: Mapping[str, type[_Model]] = MappingProxyType({"cohort": CohortConfig, "schedule": ScheduleConfig,
                                                          "leaderboard": LeaderboardConfig,
                                                          "operations": OperationsConfig})


def numeric_ranges() -> list[tuple[str, str, str, str]]:
    """(table, key, lowest, highest) of every numeric option, from the fields' own bounds (a bound given as
    `gt` is shown as "> x"), then the baseline parameters and the interval tables: the documented ranges
    (docs/configuration.md lists them; a test keeps the two equal and every numeric option bounded)."""
    out = []
    for table, model in (("[cohort]", CohortConfig), ("[operations]", OperationsConfig),
                         ("[[agents]]", AgentConfig)):
        for name, info in model.model_fields.items():
            ann, meta = info.annotation, list(info.metadata)
            while True:
                args = get_args(ann)
                if get_origin(ann) is Annotated:
                    ann, meta = args[0], meta + list(args[1:])
                elif get_origin(ann) in (Union, type(int | None)) and type(None) in args and len(args) == 2:
                    ann = next(a for a in args if a is not type(None))
                else:
                    break
            if ann not in (int, float, Decimal):
                continue
            low = next((f"{m.ge:,}" for m in meta if isinstance(m, Ge)), None) \
                or next((f"> {m.gt:,}" for m in meta if isinstance(m, Gt)), "")
            high = next((f"{m.le:,}" for m in meta if isinstance(m, Le)), "")
            out.append((table, name, low, high))
    out.append(("[cohort]", "forecast_band", "> 0 (lo < hi)", "< 1"))
    for table, key in (("[cohort]", "starting_cash"), ("[cohort]", "min_bet")):
        out.append((table, key, "0", f"{MAX_AMOUNT_USD:,} (USD)"))
    for key, (low, high) in PARAM_RANGES.items():
        out.append(("[[agents]] params", key, f"{low:,}", f"{high:,}"))
    out.append(("[schedule]", "interval table", "1 second", f"{MAX_INTERVAL_DAYS} days"))
    return out


# -- errors: pydantic's, in the arena's words ----------------------------------------------------------------------


def _expected(model: type[BaseModel], name: str) -> tuple[str, bool]:
    """What field `name` of `model` must be, in words, and whether its value may be shown: its `Expect`, else
    from its type and bounds ("an integer ≥ 1 and ≤ 20", "one of 'a', 'b'", "true or false")."""
    info = model.model_fields.get(name)
    if info is None:
        return "a valid value", True
    annotation, metadata = info.annotation, list(info.metadata)
    while True:  # unwrap Optional[...] and Annotated[...], gathering the metadata
        args = get_args(annotation)
        if get_origin(annotation) is Annotated:
            annotation, metadata = args[0], metadata + list(args[1:])
        elif get_origin(annotation) in (Union, type(int | None)) and type(None) in args and len(args) == 2:
            annotation = next(a for a in args if a is not type(None))
        else:
            break
    for m in metadata:
        if isinstance(m, Expect):
            return m.what, m.echo
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(repr(c) for c in get_args(annotation)), True
    if annotation is bool:
        return "true or false", True
    if annotation in (int, float):
        low = [f"≥ {m.ge}" for m in metadata if isinstance(m, Ge)] + [f"> {m.gt}" for m in metadata
                                                                       if isinstance(m, Gt)]
        high = [f" and ≤ {m.le}" for m in metadata if isinstance(m, Le)]
        return f"{'an integer' if annotation is int else 'a number'} {''.join(low[:1] + high[:1])}", True
    if get_origin(annotation) is tuple:
        return "a list of strings", True
    return ("a string", True) if annotation is str else ("a valid value", True)


def _place(loc: tuple[Any, ...], data: Any) -> tuple[type[_Model], str, tuple[Any, ...]]:
    """The model an error is in, the label of its table as the messages write it, and the key path inside it."""
    if len(loc) > 1 and loc[0] == "agents" and isinstance(loc[1], int):
        raw = data.get("agents") if isinstance(data, dict) else None
        entry = raw[loc[1]] if isinstance(raw, list) and loc[1] < len(raw) else None
        name = f" ({entry['name']})" if isinstance(entry, dict) and isinstance(entry.get("name"), str) else ""
        return AgentConfig, f"agents[{loc[1]}]{name}", loc[2:]
    if loc and loc[0] in _TABLES:
        return _TABLES[loc[0]], f"[{loc[0]}]", loc[1:]
    return ArenaConfig, "(top level)", loc


def _raw(data: Any, loc: tuple[Any, ...]) -> Any:
    """The value at `loc` in the TOML data (None where the path does not lead to one)."""
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _config_error(exc: ValidationError, data: dict[str, Any], source: str) -> ConfigError:
    """The first problem pydantic found, as a one-line ConfigError: ``<source>: <table> <key path>: <problem>``,
    with `key` (``<table>.<key path>``) in its data. Values are shown except where `Expect(echo=False)` says not."""
    err = exc.errors(include_url=False)[0]
    ctx = err.get("ctx") or {}
    if ctx.get("whole"):
        return ConfigError(f"{source}: {ctx['message']}", key=ctx["key"])
    loc = tuple(err["loc"])
    model, where, path = _place(loc, data)
    if "field" in ctx:
        path = (*path, ctx["field"])
    if not path:
        return ConfigError(f"{source}: {where} must be a table", key=where)
    if err["type"] == "arena":
        problem = ctx["message"]
    elif err["type"] == "extra_forbidden":
        problem = model.unknown_key
    else:  # a type or a bound: say what the field must be, and show the whole value (a list, not its item)
        what, echo = _expected(model, str(path[0]))
        value = _raw(data, loc[:len(loc) - len(path) + 1])
        path = path[:1]
        problem = (f"is required: must be {what.strip()}" if err["type"] == "missing"
                   else f"must be {what}" + (f", got {value!r}" if echo else ""))
    key = ".".join(str(p) for p in (*path, *(() if "sub" not in ctx else (ctx["sub"],))))
    return ConfigError(f"{source}: {where} {key}: {problem}", key=f"{where}.{key}")


# -- reading -------------------------------------------------------------------------------------------------------


def parse_config(text: str, source: str = "<string>", base: Path | None = None,
                 today: date | None = None) -> ArenaConfig:
    """An ArenaConfig from TOML text; `source` names the file in error messages; `base` is the folder relative
    paths (an agent's `corpus`) are read from (None: the working directory). With `today` (the wall clock's
    date), a seat's date after it is refused too (`ArenaConfig.check_dates`)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}", key="") from None
    except RecursionError:
        raise ConfigError(f"{source}: not valid TOML: arrays or tables nested too deeply", key="") from None
    if "source" in data:  # a field of the value, not a key of the file
        raise ConfigError(f"{source}: (top level) source: {UNKNOWN_KEY}", key="(top level).source")
    if base is not None and isinstance(data.get("agents"), list):
        data["agents"] = [{**a, "corpus": str(base / a["corpus"])}
                          if isinstance(a, dict) and isinstance(a.get("corpus"), str) and a["corpus"]
                          and not Path(a["corpus"]).expanduser().is_absolute() else a for a in data["agents"]]
    try:
        config = ArenaConfig.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise _config_error(exc, data, source) from None
    return config if today is None else config.check_dates(today)


def load_config(path: str | Path, today: date | None = None) -> ArenaConfig:
    """Read and validate the TOML file at `path` (`today` as in `parse_config`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such configuration file (start from arena.example.toml)", key="") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read the configuration: {exc}", key="") from None
    return parse_config(text, str(p), base=p.absolute().parent, today=today)


def default_config() -> ArenaConfig:
    """The built-in configuration: default cohort rules, the scheduler's default times, the baseline agents
    and no LLM agent (so it needs no API key)."""
    return ArenaConfig()


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
horizon_days = 60            # leave out markets that close later than this (also the forecast set's horizon)
# The forecast set every seat must answer (new cohorts; a cohort keeps the rule it started with): markets whose YES
# price at decision time lies in forecast_band (both ends included; 0 < lo < hi < 1), most traded first where
# the venue reports volume, else a seeded shuffle; when too few are in band, the nearest fill it (flagged).
forecast_band = [0.05, 0.95]
forecast_max_per_event = 2   # at most this many markets of one event, besides the complete groups (≥ 0)
prompt_markets = 100         # at most this many markets in a prompt (the forecast set and holdings always shown)
prompt_version = "decision-v3.1" # the prompt new cohorts are frozen with (older: decision-v3, -v2.1, -v2, -v1.1, -v1)
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
# better), brier_adjusted (difficulty-adjusted), irt_skill (higher is better), decision_value, pnl_at_bid,
# sharpe (higher is better) or max_drawdown.
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
knowledge_cutoff = 2023-10-01           # the last day (UTC) its training data covers: in replays, questions whose
                                        # outcome was knowable before it (resolved, or price settled beyond
                                        # [0.02, 0.98]) are scored apart on a "pre-cutoff" line, not in the headline
released = 2024-07-18                   # the day the model was released (not before knowledge_cutoff): boards show
                                        # its age at decision time. Neither date may be after today.

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
# # corpus = "corpus/news-2025.jsonl"   # only with "corpus_search" in tools: a JSON-lines file of dated documents
#                                       # ({"date", "title", "text", "url"}), searched (bm25) among those dated
#                                       # strictly before the decision time; safe in replays; relative to this file

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
