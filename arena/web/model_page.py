"""The model page: one model (an agent name, the same lineup entry week after week) across every cohort it ran
in — its overall headline row, its row of each of its latest cohorts' headline boards, its skill vs luck and
equity there, what its calls cost, and random-effects meta-analyses of its per-cohort forecast-Brier differences
against every other model and the references (`services.models`, pooled over every cohort), two of them drawn as
forest plots.

The page shows its latest `RECENT_COHORTS` cohorts; every cohort is on one year page per calendar year
(`models/<slug>/<year>.html`, `model_year_contexts`). A year page shows only what its cohorts' own facts decide,
so a render keys it by those cohorts' page keys and rebuilds it only when one of them changed; the model page,
which pools every cohort, is built on every render but no longer grows with the arena's age.

The page only reshapes: every number comes from `services.standings`, `services.models`,
`services.decomposition` or `services.model_costs`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from arena.scoring.board import DEFAULT_RANK_BY
from arena.scoring.headline import REF_HALF, REF_MARKET
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, PROVISIONAL_RULE
from arena.read.breakdown import model_breakdowns
from arena.read.frontier import forecast_frame, frontier_records, model_frontier
from arena.read.headroom import ModelProjection, model_projections
from arena.read.model_costs import Cost, model_costs
from arena.read.models import ModelComparison, model_comparisons
from arena.read.standings import CohortBoard
from arena.read.shown_board import shown_board, shown_name
from arena.web.boards import AgentScore, BoardRow, Standings, board_rows, kept_row, load_standings, shown_rows
from arena.scoring.breakdown import breakdown_records
from arena.web.charts import Chart, equity_chart, frontier_chart
from arena.web.env import page_path
from arena.web.refs import CohortInfo, cohort_infos
from arena.web.score_charts import IntervalRow, interval_chart
from arena.web.skill_luck import SkillLuck, skill_luck


@dataclass(frozen=True)
class ModelCohort:
    cohort: CohortInfo
    score: AgentScore  # the seat's cohort leaderboard row (its page, P/L, return)
    headline: BoardRow | None  # its row of the cohort's headline board
    skill_luck: SkillLuck | None


@dataclass(frozen=True)
class ComparisonRow:
    versus: str
    versus_href: str  # the other model's page ("" for a reference)
    k: int  # cohorts pooled
    estimate: float  # pooled this − other, forecast Brier: mean over (cohort, market) observations
    ci_low: float  # the t interval with distinct markets as clusters (`evidence.cluster_t_test`)
    ci_high: float
    i2: float  # % of the between-cohort spread that is real heterogeneity
    better_in: int  # cohorts whose own interval lies below 0
    worse_in: int
    verdict: str


RECENT_COHORTS = 26  # a half-year of weekly cohorts on the model page; every cohort is on its year pages


@dataclass(frozen=True)
class YearLink:
    year: int
    href: str
    n: int  # the model's cohorts that started that year


@dataclass(frozen=True)
class ModelPage:
    as_of: datetime
    name: str
    href: str
    overall: BoardRow | None
    cohorts: tuple[ModelCohort, ...]  # its latest RECENT_COHORTS cohorts, latest last
    n_cohorts: int  # all the cohorts it ran in (the comparisons pool them all)
    years: tuple[YearLink, ...]  # its year pages, latest first
    comparisons: tuple[ComparisonRow, ...]
    forests: tuple[Chart, ...]
    equity: Chart
    cost: Cost
    provisional_min: int
    provisional_rule: str
    # how many more weeks a Brier difference against the market needs to show (`read.headroom`)
    projection: ModelProjection | None = None
    # its Brier − market by days-to-resolution bucket and by category, pooled over cohorts (`read.breakdown`)
    skill_by_horizon: tuple[Mapping[str, Any], ...] = ()
    skill_by_category: tuple[Mapping[str, Any], ...] = ()
    frontier: Mapping[str, Any] | None = None  # its row of the cost–skill frontier (`read.frontier`), if priced
    frontier_chart: Chart | None = None  # every priced model, this one drawn apart


@dataclass(frozen=True)
class ModelYearPage:
    """Every cohort one model ran in that started in one calendar year: its row of each cohort's headline board,
    skill vs luck and equity."""

    as_of: datetime
    name: str
    model_href: str
    year: int
    cohorts: tuple[ModelCohort, ...]
    equity: Chart
    years: tuple[YearLink, ...]


# --- the forest plot --------------------------------------------------------------------------------------------

def forest_chart(title: str, comparison: ModelComparison, shown: int | None = None) -> Chart:
    """One row per cohort (its difference and 95 % interval, the marker's title giving n and its pooling weight)
    — the latest `shown` cohorts only, when given — and the pooled estimate (markets as clusters) over every cohort as a
    diamond with its interval; a vertical line at 0 (no difference). Left of 0 the model forecast better."""
    rows = []
    every = comparison.cohorts
    for r in (every if shown is None else every.iloc[max(len(every) - shown, 0):]).to_dict("records"):
        weight = r["weight"]
        share = f", weight {weight * 100:.0f} %" if isinstance(weight, float) and math.isfinite(weight) else ""
        rows.append(IntervalRow(str(r["cohort"]), r["difference"], r["ci_low"], r["ci_high"], "cohort",
                                f"{r['cohort']}: {r['difference']:+.4f} over {int(r['n'])} markets "
                                f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]{share}"))
    m = comparison.meta
    plo, phi = comparison.pooled_interval
    est = comparison.estimate
    markets = comparison.pooled.markets if comparison.pooled is not None else 0
    rows.append(IntervalRow("pooled (markets as clusters)", est, plo, phi, "pooled",
                            f"pooled {est:+.4f} [{plo:+.4f}, {phi:+.4f}] over {markets} distinct markets, "
                            f"I² {m.i2:.0f} %, {comparison.k} cohorts"))
    return interval_chart(title, rows, rule_at=0.0, rule_label="0 = no difference", signed=True)


def _merged(comps: Sequence[ModelComparison], name: str, twins: Mapping[str, str],
            twin_of: Mapping[str, str]) -> tuple[ModelComparison, ...]:
    """The comparisons with a twin shown once: the row against a reference some model equals on every question is
    left out where the row against that model is there (it reads "model = reference"), and a model's page leaves
    out the row against its own twin (a difference of 0 on every question)."""
    versus = {c.versus for c in comps}
    return tuple(c for c in comps
                 if c.versus != twin_of.get(name)
                 and not (c.versus in twins and twins[c.versus] != name and twins[c.versus] in versus))


# --- the contexts -----------------------------------------------------------------------------------------------

Seats = dict[str, list[tuple[CohortInfo, AgentScore]]]  # model → its (cohort, leaderboard row), in cohort order


def model_seats(engine: Engine, standings: Standings, names: Sequence[str] | None = None) -> Seats:
    """Each model's seats (names None: every model that took part in a cohort), in cohort order."""
    infos = cohort_infos(engine, standings.as_of)
    seats: Seats = {}
    for cid, info in infos.items():
        for r in standings.by_cohort.get(cid, ()):
            if names is None or r.agent in names:
                seats.setdefault(r.agent, []).append((info, r))
    return seats


def year_links(name: str, items: Sequence[tuple[CohortInfo, AgentScore]]) -> tuple[YearLink, ...]:
    years: dict[int, int] = {}
    for info, _ in items:
        years[info.period_start.year] = years.get(info.period_start.year, 0) + 1
    return tuple(YearLink(y, page_path("model_year", (name, y)), n) for y, n in sorted(years.items(), reverse=True))


def _standings(engine: Engine, as_of: datetime, standings: Standings | None) -> Standings:
    return standings if standings is not None and standings.boards is not None else \
        load_standings(engine, as_of, None, with_overall=True)


def _boards(st: Standings) -> dict[str, CohortBoard]:
    return {b.name: b for b in (st.boards.cohorts if st.boards is not None else [])}


def _cohort_rows(boards: Mapping[str, CohortBoard], items: Sequence[tuple[CohortInfo, AgentScore]], name: str,
                 luck: Mapping[tuple[str, str], SkillLuck], rank_by: str) -> tuple[ModelCohort, ...]:
    """The model's row of each of these cohorts: its leaderboard row, its row of the cohort's headline board as
    shown (only its own row of those boards is made a `BoardRow`) and its skill vs luck there."""
    def head(cohort: str) -> BoardRow | None:
        b = boards.get(cohort)
        if b is None:
            return None

        def make() -> BoardRow | None:
            rows = shown_rows(b, rank_by)
            return next((r for r in board_rows(rows[rows["agent"] == name]) if r.name == name), None)
        return kept_row(b, f"agent {name} {rank_by}", make)

    return tuple(ModelCohort(info, score, head(info.name), luck.get((info.name, name))) for info, score in items)


def _equity(title: str, st: Standings, items: Sequence[tuple[CohortInfo, AgentScore]]) -> Chart:
    return equity_chart(title, [(info.name, st.curves.get(score.agent_id, ())) for info, score in items],
                        items[0][0].starting_cash_micros if len({i.starting_cash_micros for i, _ in items}) == 1
                        else None)


def model_contexts(engine: Engine, as_of: datetime, names: Sequence[str] | None = None,
                   standings: Standings | None = None,
                   luck: Mapping[tuple[str, str], SkillLuck] | None = None,
                   seats: Seats | None = None,
                   frontier: Sequence[Mapping[str, Any]] | None = None) -> dict[str, ModelPage]:
    """Model pages by model name (None: every model that took part in a cohort; `seats`: `model_seats` of those
    names, when the caller has them; `frontier`: the cost–skill frontier's JSON rows, when the caller has them)."""
    st = _standings(engine, as_of, standings)
    seats = seats if seats is not None else model_seats(engine, st, names)
    if not seats:
        return {}
    luck = luck if luck is not None else skill_luck(engine, as_of)
    boards = st.boards
    rank_by = boards.rank_by if boards is not None else DEFAULT_RANK_BY
    every = board_rows(boards.overall if boards is not None else None)  # every row, for the twins
    overall = {r.name: r for r in board_rows(shown_board(boards.overall, rank_by) if boards is not None else None)}
    twins = {r.same_as: r.name for r in every if r.same_as}  # a reference → the (first) model equal to it
    twin_of = {r.name: r.same_as for r in every if r.same_as}
    comparisons = model_comparisons(engine, as_of, sorted(seats))
    costs = model_costs(engine, sorted(seats))
    forecasts = forecast_frame(engine, as_of)
    projections = model_projections(engine, as_of, sorted(seats), forecasts)
    split = {k: {m: tuple(breakdown_records(part.drop(columns=["agent"]))) for m, part in t.groupby("agent")}
             for k, t in model_breakdowns(engine, forecasts, as_of).items()}
    front = list(frontier) if frontier is not None else frontier_records(model_frontier(engine, as_of, forecasts))
    priced = [r for r in front if r.get("cost_usd") is not None]
    by_name = _boards(st)
    out = {}
    for name, items in seats.items():
        href = page_path("model", name)
        head = overall.get(name)
        recent = items[-RECENT_COHORTS:]
        comps = _merged(comparisons.get(name, ()), name, twins, twin_of)
        table = tuple(ComparisonRow(
            shown_name(c.versus, twin_of.get(c.versus)),
            "" if c.versus in (REF_MARKET, REF_HALF) else page_path("model", c.versus), c.k,
            c.estimate, *c.pooled_interval, c.meta.i2, c.better_in, c.worse_in, c.verdict) for c in comps)
        forests = []
        by_versus = {c.versus: c for c in comparisons.get(name, ()) if c.versus != twin_of.get(name)}
        ranked = sorted((r for r in overall.values() if not r.is_reference and r.name != name and r.rank_label),
                        key=lambda r: r.rank)
        leader = ranked[0].name if ranked else None
        for versus, label in ((REF_MARKET, "the market"), (leader, f"{leader} (the best other model)")):
            if versus is not None and versus in by_versus and by_versus[versus].k:
                c = by_versus[versus]
                shown = f"; its latest {RECENT_COHORTS} of {len(c.cohorts)} cohorts drawn, the pool over all" \
                    if len(c.cohorts) > RECENT_COHORTS else ""
                forests.append(forest_chart(f"{name} − {label}: forecast Brier per cohort (< 0: {name} better{shown})",
                                            c, RECENT_COHORTS))
        title = "Total value in each cohort" if len(items) <= RECENT_COHORTS else \
            f"Total value in each of its latest {RECENT_COHORTS} cohorts"
        resolved = int(head.n_forecasts) if head is not None and math.isfinite(head.n_forecasts) else 0
        cost = costs.get(name, Cost(0, 0, 0, None, 0))
        out[name] = ModelPage(
            as_of=as_of, name=name, href=href, overall=head, cohorts=_cohort_rows(by_name, recent, name, luck, rank_by),
            n_cohorts=len(items), years=year_links(name, items), comparisons=table, forests=tuple(forests),
            equity=_equity(title, st, recent), cost=Cost(cost.calls, cost.prompt_tokens, cost.completion_tokens,
                                                         cost.cost_micros, resolved),
            provisional_min=PROVISIONAL_MIN_RESOLVED, provisional_rule=PROVISIONAL_RULE,
            projection=projections.get(name),
            skill_by_horizon=split["skill_by_horizon"].get(name, ()),
            skill_by_category=split["skill_by_category"].get(name, ()),
            frontier=next((r for r in front if r["model"] == name), None),
            frontier_chart=frontier_chart(priced, highlight=name) if any(r["model"] == name for r in priced) else None)
    return out


def model_year_contexts(engine: Engine, as_of: datetime, wanted: Sequence[tuple[str, int]] | None = None,
                        standings: Standings | None = None, luck: Mapping[tuple[str, str], SkillLuck] | None = None,
                        seats: Seats | None = None) -> dict[tuple[str, int], ModelYearPage]:
    """Year pages by (model, year) (None: every model's every year)."""
    st = _standings(engine, as_of, standings)
    seats = seats if seats is not None else \
        model_seats(engine, st, None if wanted is None else sorted({n for n, _ in wanted}))
    if wanted is None:
        wanted = [(n, y.year) for n, items in seats.items() for y in year_links(n, items)]
    if not wanted:
        return {}
    luck = luck if luck is not None else skill_luck(engine, as_of)
    by_name = _boards(st)
    rank_by = st.boards.rank_by if st.boards is not None else DEFAULT_RANK_BY
    out = {}
    for name, year in wanted:
        items = [(i, s) for i, s in seats.get(name, ()) if i.period_start.year == year]
        if not items:
            continue
        out[(name, year)] = ModelYearPage(as_of, name, page_path("model", name), year,
                                          _cohort_rows(by_name, items, name, luck, rank_by),
                                          _equity(f"Total value in each cohort of {year}", st, items),
                                          year_links(name, seats[name]))
    return out


__all__ = ["RECENT_COHORTS", "ComparisonRow", "ModelCohort", "ModelPage", "ModelYearPage", "Seats", "YearLink",
           "forest_chart", "model_contexts", "model_seats", "model_year_contexts", "year_links"]
