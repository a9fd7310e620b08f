"""The versioned decision prompt: turns an AgentView into the system and user messages a model is sent.

Owns the prompt's content and its versions (stored with every model call); the words live in
`templates/prompts/decision_v<N>.j2`, one file per version (`TEMPLATES`). A cohort is frozen with one version
(`CohortRules.prompt_version`, carried to the agent in `AgentView.prompt_version`): decision-v1 for cohorts that
started with it, decision-v2 and decision-v3 for those that started with them. v1 told models that a YES bet
forecasts P(YES) = confidence; v2 says how agents are really ranked (the Brier score of the stated P(YES) on
the shared forecast set) and that bets should be sized by edge against the price; v3 adds that a forecast-set
market left out is scored as a stated 0.5. decision-v1.1, decision-v2.1 and decision-v3.1 (`PROMPT_VERSION`, the
newest, for new cohorts) are the same prompts with the text that comes from the venues fenced between
<venue-data> and </venue-data> and the model told it is untrusted data, never instructions (a prompt injection
in a market question stays data). Numbers are computed and
formatted here, the template only loops and lays them out. Changing what the prompt says means a new template
file and a new version, never an edit in place.
Imports jinja2, the view and the value types; no HTTP, no store.

Two defects of earlier arenas are avoided on purpose: the portfolio total counts *every* position, including
those in markets that have closed but not resolved (flagged as such), and a multi-outcome position is shown at
its own outcome's price, never at 50 %.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from decimal import Decimal
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2

from arena.agents.view import AgentView, MarketView, PositionView
from arena.domain.market import MarketKind
from arena.domain.sizing import DEFAULT_PROMPT_VERSION, PROMPT_VERSIONS
from arena.money import MICRO, Money, Price

TEMPLATES = {"decision-v1": "decision_v1.j2", "decision-v2": "decision_v2.j2",  # version → template file
             "decision-v3": "decision_v3.j2", "decision-v1.1": "decision_v1_1.j2",
             "decision-v2.1": "decision_v2_1.j2", "decision-v3.1": "decision_v3_1.j2"}
VENUE_FENCE = re.compile(r"<(\s*/?\s*venue-data)", re.IGNORECASE)
PROMPT_VERSION = DEFAULT_PROMPT_VERSION  # the newest version: what a new cohort is sent
TEMPLATE_NAME = TEMPLATES[PROMPT_VERSION]
assert tuple(TEMPLATES) == PROMPT_VERSIONS, "every version a cohort can be frozen with needs its template"
TEMPLATES_DIR = Path(str(files("arena._templates"))) / "prompts"  # package data (the repo's templates/prompts/)
DEFAULT_MAX_MARKETS = 100  # markets listed at most (forecast-set and held markets are always listed)
DEFAULT_DESCRIPTION_CHARS = 400  # resolution criteria are cut to this many characters


def prompt_environment(templates_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja environment for prompts: undefined variables raise (StrictUndefined).

    Autoescape is OFF on purpose: the output is plain text sent to a model, never rendered in a browser, and
    HTML-escaping would corrupt market questions ("&" → "&amp;"). Pages that show prompts must escape them
    with their own autoescaping environment.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir or TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["data"] = venue_data
    return env


def venue_data(text: object) -> str:
    """Venue text as it goes between <venue-data> fences: a fence inside it is neutralised ("‹venue-data"),
    so the text cannot close its block and speak as the arena."""
    return VENUE_FENCE.sub("‹\\1", str(text))


_ENV: jinja2.Environment | None = None


def _default_env() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        _ENV = prompt_environment()
    return _ENV


# -- the context: one typed row per thing shown ----------------------------------------------------------------


@dataclass(frozen=True)
class PositionRow:
    market_id: str
    question: str  # "" when the view does not carry the market (closed markets are not in `view.markets`)
    outcome: str  # the side / outcome id the model must use to SELL it
    outcome_label: str
    shares: str
    entry_price: str
    current_price: str  # "unknown" when no price is known (then valued at cost basis)
    value: str
    unrealized: str
    market_open: bool  # False: the market has closed and awaits resolution; it cannot be sold


@dataclass(frozen=True)
class OutcomeRow:
    outcome: str
    label: str
    price: str


@dataclass(frozen=True)
class MarketRow:
    market_id: str
    question: str
    multi: bool
    is_open: bool
    yes_price: str  # "" for a multi-outcome market (see outcomes)
    bid: str  # "" where the venue has no book
    ask: str
    volume: str
    volume_24h: str
    closes: str
    time_to_close: str  # "in 18 d 12 h"
    description: str
    category: str
    outcomes: tuple[OutcomeRow, ...]
    in_forecast_set: bool


@dataclass(frozen=True)
class ForecastRow:
    market_id: str
    question: str


@dataclass(frozen=True)
class GroupRow:
    """A mutually exclusive group (exactly one member resolves YES) whose members are all in the forecast set."""

    group_id: str
    market_ids: tuple[str, ...]


@dataclass(frozen=True)
class PromptContext:
    """Everything the template shows, already computed and formatted (money as "$1,234.56", prices 0..1)."""

    now: str
    weekday: str
    cash: str
    max_bet: str
    max_bet_pct: str
    min_bet: str
    positions: tuple[PositionRow, ...]
    positions_value: str
    total_value: str
    closed_positions: int
    markets: tuple[MarketRow, ...]
    markets_total: int
    forecast_set: tuple[ForecastRow, ...]
    forecast_ids_json: str
    groups: tuple[GroupRow, ...] = ()  # exclusive groups among the forecast set (shown from decision-v2 on)

    def variables(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Prompt:
    """The messages sent to a model (OpenAI chat format) and the prompt version that made them."""

    messages: tuple[Mapping[str, str], ...]
    version: str = PROMPT_VERSION  # the version whose template made the messages

    def as_list(self) -> list[dict[str, str]]:
        return [dict(m) for m in self.messages]


# -- formatting helpers (pure) -----------------------------------------------------------------------------------


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)


def format_time(when: datetime) -> str:
    return _utc(when).strftime("%Y-%m-%d %H:%M UTC")


def format_duration(seconds: float) -> str:
    """A time to close like "18 d 12 h", "5 h 20 min" or "closed"."""
    if seconds <= 0:
        return "closed"
    minutes = int(seconds // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {mins} min"
    return f"{max(mins, 1)} min"


def format_shares(micro_shares: int) -> str:
    return f"{micro_shares / MICRO:,.2f}"


def format_signed(amount: Money) -> str:
    return f"+{amount}" if amount.micros > 0 else str(amount)


def format_price(price: Price | None) -> str:
    """A price 0..1 with at least two decimals ("0.70", "0.125"); "unknown" when there is none."""
    if price is None:
        return "unknown"
    d = price.to_decimal().normalize()
    if d.as_tuple().exponent > -2:  # type: ignore[operator]
        d = d.quantize(Decimal("0.01"))
    return format(d, "f")


def format_volume(volume: float | None) -> str:
    return "unknown" if volume is None else f"{volume:,.0f}"


def truncate(text: str, limit: int) -> str:
    """Whitespace collapsed, cut to `limit` characters with "…" when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)].rstrip() + "…"


# -- building the context ----------------------------------------------------------------------------------------


def _position_row(pos: PositionView, view: AgentView) -> PositionRow:
    mv = view.market(pos.market_id)
    market = mv.market if mv is not None else None
    # Closed markets are not in view.markets; a view that carries the question on the position is preferred.
    question = getattr(pos, "question", "") or (market.question if market is not None else "")
    label = getattr(pos, "outcome_label", "") or (market.label(pos.outcome) if market is not None else pos.outcome)
    return PositionRow(
        market_id=pos.market_id, question=question, outcome=pos.outcome, outcome_label=label,
        shares=format_shares(pos.shares), entry_price=format_price(pos.entry_price),
        current_price=format_price(pos.current_price), value=str(pos.value), unrealized=format_signed(pos.unrealized),
        market_open=pos.market_open,
    )


def _market_row(mv: MarketView, view: AgentView, forecast_ids: set[str], description_chars: int) -> MarketRow:
    m, q = mv.market, mv.quote
    multi = m.kind is MarketKind.MULTI
    outcomes: tuple[OutcomeRow, ...] = ()
    yes = ""
    if multi:
        outcomes = tuple(OutcomeRow(o, m.label(o), format_price(q.prices.get(o))) for o in m.outcomes)
    else:
        try:
            yes = format_price(q.yes_price())
        except KeyError:
            yes = "unknown"
    closes, to_close = "no close date", "time to close unknown"
    if m.close_time is not None:
        closes = format_time(m.close_time)
        left = format_duration((_utc(m.close_time) - _utc(view.as_of)).total_seconds())
        to_close = "already past its close time" if left == "closed" else f"in {left}"
    return MarketRow(
        market_id=m.id, question=m.question, multi=multi, is_open=m.is_open_at(view.as_of), yes_price=yes,
        bid=format_price(q.bid) if q.bid is not None and not multi else "",
        ask=format_price(q.ask) if q.ask is not None and not multi else "",
        volume=format_volume(m.volume), volume_24h=format_volume(m.volume_24h), closes=closes,
        time_to_close=to_close, description=truncate(m.description, description_chars), category=m.category,
        outcomes=outcomes, in_forecast_set=m.id in forecast_ids,
    )


def _rank(mv: MarketView) -> tuple[float, float, str]:
    return (-(mv.market.volume_24h or 0.0), -(mv.market.volume or 0.0), mv.market.id)


def shown_markets(view: AgentView, max_markets: int) -> list[MarketView]:
    """The markets a prompt lists: every forecast-set market and every market the agent holds, then the rest by
    24 h volume (then lifetime volume, then id) up to `max_markets` in all; listed in that ranking order."""
    required = set(view.forecast_set) | {p.market_id for p in view.positions}
    ranked = sorted(view.markets, key=_rank)
    chosen = [mv for mv in ranked if mv.market.id in required]
    for mv in ranked:
        if len(chosen) >= max_markets:
            break
        if mv.market.id not in required:
            chosen.append(mv)
    return sorted(chosen, key=_rank)


def prompt_context(view: AgentView, max_markets: int = DEFAULT_MAX_MARKETS,
                   description_chars: int = DEFAULT_DESCRIPTION_CHARS) -> PromptContext:
    """The typed context of the decision prompt for `view` (pure)."""
    as_of = _utc(view.as_of)
    positions = tuple(_position_row(p, view) for p in sorted(view.positions, key=lambda p: (p.market_id, p.outcome)))
    positions_value = Money.zero()
    for p in view.positions:  # every position, open market or not
        positions_value = positions_value + p.value
    max_pct = (100 * view.max_bet.micros / view.cash.micros) if view.cash.micros > 0 else 0.0
    forecast_ids = set(view.forecast_set)
    markets = tuple(_market_row(mv, view, forecast_ids, description_chars)
                    for mv in shown_markets(view, max_markets))
    questions = {mv.market.id: mv.market.question for mv in view.markets}
    members: dict[str, list[str]] = {}
    for mv in view.markets:
        if mv.market.group_id and mv.market.id in forecast_ids:
            members.setdefault(mv.market.group_id, []).append(mv.market.id)
    groups = tuple(GroupRow(g, tuple(sorted(ids))) for g, ids in sorted(members.items()) if len(ids) >= 2)
    return PromptContext(
        now=format_time(as_of), weekday=as_of.strftime("%A"), cash=str(view.cash), max_bet=str(view.max_bet),
        max_bet_pct=f"{max_pct:.0f}", min_bet=str(view.min_bet), positions=positions,
        positions_value=str(positions_value), total_value=str(view.cash + positions_value),
        closed_positions=sum(1 for p in view.positions if not p.market_open),
        markets=markets, markets_total=len(view.markets),
        forecast_set=tuple(ForecastRow(mid, questions.get(mid, "")) for mid in view.forecast_set),
        forecast_ids_json=json.dumps(list(view.forecast_set)), groups=groups,
    )


# -- rendering ---------------------------------------------------------------------------------------------------


def template_name(version: str = PROMPT_VERSION) -> str:
    """The template file of a prompt version; ValueError naming the known versions for any other."""
    try:
        return TEMPLATES[version]
    except KeyError:
        raise ValueError(f"unknown prompt version {version!r}; known: {', '.join(TEMPLATES)}") from None


def render_variables(variables: Mapping[str, Any], env: jinja2.Environment | None = None,
                     version: str = PROMPT_VERSION) -> Prompt:
    """Render the system and user messages of prompt `version` from template variables (raises
    jinja2.UndefinedError when the template needs a variable that is missing)."""
    template = (env or _default_env()).get_template(template_name(version))
    module = template.make_module(dict(variables))
    system = str(module.system()).strip()  # type: ignore[attr-defined]
    user = str(module.user()).strip()  # type: ignore[attr-defined]
    return Prompt(({"role": "system", "content": system}, {"role": "user", "content": user}), version)


def render_prompt(view: AgentView, max_markets: int = DEFAULT_MAX_MARKETS,
                  description_chars: int = DEFAULT_DESCRIPTION_CHARS, env: jinja2.Environment | None = None,
                  version: str | None = None) -> Prompt:
    """The decision prompt for `view`: a system message (role, rules, scoring, reply format) and a user message
    (time, portfolio, markets, forecast set). The version is `version`, else the cohort's (`view.prompt_version`),
    else the newest."""
    chosen = version or view.prompt_version or PROMPT_VERSION
    return render_variables(prompt_context(view, max_markets, description_chars).variables(), env, chosen)


def repair_message(errors: Sequence[str], env: jinja2.Environment | None = None,
                   version: str = PROMPT_VERSION) -> str:
    """The user message asking for a corrected reply: it quotes every problem back."""
    template = (env or _default_env()).get_template(template_name(version))
    module = template.make_module({})
    return str(module.repair(list(errors))).strip()  # type: ignore[attr-defined]


__all__ = [
    "DEFAULT_DESCRIPTION_CHARS",
    "DEFAULT_MAX_MARKETS",
    "PROMPT_VERSION",
    "TEMPLATES",
    "Prompt",
    "PromptContext",
    "prompt_context",
    "prompt_environment",
    "render_prompt",
    "render_variables",
    "repair_message",
    "shown_markets",
    "template_name",
]
