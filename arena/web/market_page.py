"""The market page: the market's facts, latest prices, resolutions, price chart with the agents' trades, and the
trades themselves. Built for every market the arena touched (None) or a few, from what `read.market_history`
reads; only reshapes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.domain.market import NO, YES
from arena.domain.valuation import complement_ppm
from arena.money import MICRO
from arena.read.market_history import market_history
from arena.read.question_difficulty import question_difficulties
from arena.web.charts import Chart, price_chart
from arena.web.env import money, page_path
from arena.read.touched_markets import touched_market_ids
from arena.web.values import NAN


@dataclass(frozen=True)
class MarketInfo:
    id: str
    venue: str
    question: str
    description: str
    kind: str
    status: str
    outcomes: tuple[tuple[str, str], ...]  # outcome, label
    close_time: datetime | None
    url: str  # only an http(s) address, else "" (a venue's URL is untrusted)
    category: str


@dataclass(frozen=True)
class ResolutionView:
    version: int
    kind: str
    payouts: tuple[tuple[str, int], ...]  # outcome, payout ppm
    resolved_at: datetime | None
    recorded_at: datetime
    source: str


@dataclass(frozen=True)
class TradeView:
    at: datetime
    agent_id: int
    agent: str
    cohort: str
    agent_href: str
    cohort_href: str
    kind: str
    outcome: str
    shares: int
    price_ppm: int | None
    cash_micros: int


@dataclass(frozen=True)
class QuestionDifficultyView:
    """The market asked as one resolved forecast-set question (a cohort's round) and its fitted difficulty
    (`scoring.question_difficulty`): Brier units above the cohort's average question, and IRT logits."""

    cohort: str
    cohort_href: str
    round: str
    n_forecasters: int
    market_price: float  # the YES price shown, 0..1
    market_brier: float
    mean_brier: float
    difficulty: float
    irt_difficulty: float


@dataclass(frozen=True)
class MarketPage:
    as_of: datetime
    market: MarketInfo
    latest: tuple[tuple[str, int, datetime], ...]  # outcome, price ppm, observed at
    resolutions: tuple[ResolutionView, ...]
    chart: Chart
    trades: tuple[TradeView, ...]
    n_forecasts: int
    mean_forecast: float  # mean stated P(YES) of every agent forecast on this market, NaN if none
    difficulty: tuple[QuestionDifficultyView, ...] = ()  # each resolved forecast-set question on it


def _safe_url(url: str) -> str:
    u = (url or "").strip()
    return u if u.lower().startswith(("https://", "http://")) and not any(c in u for c in "\"'<> \n\t") else ""


def market_contexts(engine: Engine, as_of: datetime, market_ids: Sequence[str] | None = None) -> dict[str, MarketPage]:
    """Market pages by market id (None: every market the arena touched)."""
    keys = sorted(touched_market_ids(engine, as_of, market_ids))
    if not keys:
        return {}
    filt = None if market_ids is None else keys
    wanted = set(keys)
    history = market_history(engine, as_of, filt)
    markets = [m for m in history.markets if m[0] in wanted]
    prices, trades, resolutions, fstats = history.prices, history.trades, history.resolutions, history.forecasts
    hard_by: dict[str, list[QuestionDifficultyView]] = defaultdict(list)
    for r in question_difficulties(engine, as_of, market_ids=filt).itertuples(index=False):
        hard_by[str(r.market_id)].append(QuestionDifficultyView(
            str(r.cohort), page_path("cohort", str(r.cohort)), str(r.round), int(r.n_forecasters),
            float(r.market_price), float(r.market_brier), float(r.mean_brier), float(r.difficulty),
            float(r.irt_difficulty)))

    cohort_paths: dict[str, str] = {}

    def cohort_hrefs(name: str) -> str:
        if name not in cohort_paths:
            cohort_paths[name] = page_path("cohort", name)
        return cohort_paths[name]

    price_by: dict[str, dict[str, list[tuple[datetime, int]]]] = defaultdict(lambda: defaultdict(list))
    for mid, outcome, t, p in prices:
        price_by[mid][outcome].append((t, int(p)))
    trades_by: dict[str, list[Any]] = defaultdict(list)
    for t in trades:
        trades_by[t[0]].append(t)
    res_by: dict[str, list[ResolutionView]] = defaultdict(list)
    for mid, version, kind, payouts, resolved_at, recorded_at, source in resolutions:
        res_by[mid].append(ResolutionView(int(version), kind,
                                          tuple((str(k), int(v)) for k, v in sorted((payouts or {}).items())),
                                          utc(resolved_at) if resolved_at else None, utc(recorded_at), source))
    out = {}
    for mid, venue, question, description, kind, status, outcomes, labels, close_time, url, category in markets:
        outcomes = list(outcomes or [])
        labels = list(labels or [])
        series_by_outcome = price_by.get(mid, {})
        binary = kind == "binary"
        plotted = [YES] if binary else [o for o in outcomes if o in series_by_outcome]
        label_of = dict(zip(outcomes, labels))
        series = [(f"P({label_of.get(o, o)})" if binary else label_of.get(o, o), series_by_outcome.get(o, []))
                  for o in plotted]
        marks = []
        tviews = []
        for (_, at, aid, agent, cohort, fkind, outcome, sh, p, cash) in trades_by.get(mid, []):
            tviews.append(TradeView(at, aid, agent, cohort, page_path("agent", aid), cohort_hrefs(cohort), fkind,
                                    outcome, int(sh), p, int(cash)))
            if fkind in ("buy", "sell") and p is not None:
                on_line = complement_ppm(int(p)) if binary and outcome == NO else int(p)  # the NO price on the YES line
                tip = f"{agent} ({cohort}): {fkind.upper()} {outcome} {money(abs(int(cash)))} at {int(p) / MICRO:g}"
                marks.append((at, on_line, "up" if fkind == "buy" else "down", tip,
                              "no" if outcome == NO else "yes"))
        res = res_by.get(mid, [])
        events = [(r.resolved_at or r.recorded_at, f"v{r.version}: {r.kind}") for r in res]
        latest = tuple((o, s[-1][1], utc(s[-1][0])) for o, s in sorted(series_by_outcome.items()) if s)
        n, mean = fstats.get(mid, (0, NAN))
        out[mid] = MarketPage(
            as_of=as_of,
            market=MarketInfo(mid, venue, question, description or "", kind, status,
                              tuple((o, label_of.get(o, o)) for o in outcomes),
                              utc(close_time) if close_time else None, _safe_url(url), category or ""),
            latest=latest, resolutions=tuple(res), chart=price_chart("Price history", series, marks, events),
            trades=tuple(tviews), n_forecasts=n, mean_forecast=mean, difficulty=tuple(hard_by.get(mid, ())),
        )
    return out
