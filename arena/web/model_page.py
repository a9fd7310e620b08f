"""The model page: one model (an agent name, the same lineup entry week after week) across every cohort it ran
in — its overall headline row, its row of each cohort's headline board, its skill vs luck per cohort, its equity
per cohort, what its calls cost, and random-effects meta-analyses of its per-cohort forecast-Brier differences
against every other model and the references (`services.models`), two of them drawn as forest plots.

The page only reshapes: every number comes from `services.standings`, `services.models`,
`services.decomposition` or `services.model_costs`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine

from arena.scoring.headline import REF_HALF, REF_MARKET
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, PROVISIONAL_RULE
from arena.services.model_costs import Cost, model_costs
from arena.services.models import ModelComparison, model_comparisons
from arena.web.boards import AgentScore, BoardRow, Standings, board_rows, load_standings
from arena.web.charts import Chart, equity_chart
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
    estimate: float  # pooled (random effects) this − other, forecast Brier
    ci_low: float  # Hartung–Knapp where it exists, else DerSimonian–Laird
    ci_high: float
    i2: float  # % of the between-cohort spread that is real heterogeneity
    better_in: int  # cohorts whose own interval lies below 0
    worse_in: int
    verdict: str


@dataclass(frozen=True)
class ModelPage:
    as_of: datetime
    name: str
    href: str
    overall: BoardRow | None
    cohorts: tuple[ModelCohort, ...]
    comparisons: tuple[ComparisonRow, ...]
    forests: tuple[Chart, ...]
    equity: Chart
    cost: Cost
    provisional_min: int
    provisional_rule: str


# --- the forest plot --------------------------------------------------------------------------------------------

def forest_chart(title: str, comparison: ModelComparison) -> Chart:
    """One row per cohort (its difference and 95 % interval, the marker's title giving n and its pooling weight)
    and the pooled random-effects estimate as a diamond with its interval; a vertical line at 0 (no difference).
    Left of 0 the model forecast better."""
    rows = []
    for r in comparison.cohorts.to_dict("records"):
        weight = r["weight"]
        share = f", weight {weight * 100:.0f} %" if isinstance(weight, float) and math.isfinite(weight) else ""
        rows.append(IntervalRow(str(r["cohort"]), r["difference"], r["ci_low"], r["ci_high"], "cohort",
                                f"{r['cohort']}: {r['difference']:+.4f} over {int(r['n'])} questions "
                                f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]{share}"))
    m = comparison.meta
    plo, phi = comparison.pooled_interval
    rows.append(IntervalRow("pooled (random effects)", m.estimate, plo, phi, "pooled",
                            f"pooled {m.estimate:+.4f} [{plo:+.4f}, {phi:+.4f}], I² {m.i2:.0f} %, {m.k} cohorts"))
    return interval_chart(title, rows, rule_at=0.0, rule_label="0 = no difference", signed=True)


# --- the context ------------------------------------------------------------------------------------------------

def model_contexts(engine: Engine, as_of: datetime, names: Sequence[str] | None = None,
                   standings: Standings | None = None,
                   luck: Mapping[tuple[str, str], SkillLuck] | None = None) -> dict[str, ModelPage]:
    """Model pages by model name (None: every model that took part in a cohort)."""
    st = standings if standings is not None and standings.boards is not None else \
        load_standings(engine, as_of, None, with_overall=True)
    with engine.connect() as conn:
        infos = cohort_infos(conn)
    luck = luck if luck is not None else skill_luck(engine, as_of)
    seats: dict[str, list[tuple[CohortInfo, AgentScore]]] = {}
    for cid, info in infos.items():
        for r in st.by_cohort.get(cid, ()):
            if names is None or r.agent in names:
                seats.setdefault(r.agent, []).append((info, r))
    if not seats:
        return {}
    boards = st.boards
    overall = {r.name: r for r in board_rows(boards.overall if boards is not None else None)}
    cohort_heads: dict[tuple[str, str], BoardRow] = {}
    for b in (boards.cohorts if boards is not None else []):
        for row in board_rows(b.rows):
            cohort_heads[(b.name, row.name)] = row
    comparisons = model_comparisons(engine, as_of, sorted(seats))
    costs = model_costs(engine, sorted(seats))
    out = {}
    for name, items in seats.items():
        href = page_path("model", name)
        head = overall.get(name)
        rows = tuple(ModelCohort(info, score, cohort_heads.get((info.name, name)), luck.get((info.name, name)))
                     for info, score in items)
        comps = comparisons.get(name, ())
        table = tuple(ComparisonRow(
            c.versus, "" if c.versus in (REF_MARKET, REF_HALF) else page_path("model", c.versus), c.meta.k,
            c.meta.estimate, *c.pooled_interval, c.meta.i2, c.better_in, c.worse_in, c.verdict) for c in comps)
        forests = []
        by_versus = {c.versus: c for c in comps}
        ranked = sorted((r for r in overall.values() if not r.is_reference and r.name != name and r.rank_label),
                        key=lambda r: r.rank)
        leader = ranked[0].name if ranked else None
        for versus, label in ((REF_MARKET, "the market"), (leader, f"{leader} (the best other model)")):
            if versus is not None and versus in by_versus and by_versus[versus].meta.k:
                forests.append(forest_chart(f"{name} − {label}: forecast Brier per cohort (< 0: {name} better)",
                                            by_versus[versus]))
        equity = equity_chart("Total value in each cohort",
                              [(info.name, st.curves.get(score.agent_id, ())) for info, score in items],
                              items[0][0].starting_cash_micros
                              if len({i.starting_cash_micros for i, _ in items}) == 1 else None)
        resolved = int(head.n_forecasts) if head is not None and math.isfinite(head.n_forecasts) else 0
        cost = costs.get(name, Cost(0, 0, 0, None, 0))
        out[name] = ModelPage(
            as_of=as_of, name=name, href=href, overall=head, cohorts=rows, comparisons=table, forests=tuple(forests),
            equity=equity, cost=Cost(cost.calls, cost.prompt_tokens, cost.completion_tokens, cost.cost_micros,
                                     resolved),
            provisional_min=PROVISIONAL_MIN_RESOLVED, provisional_rule=PROVISIONAL_RULE)
    return out


__all__ = ["ComparisonRow", "ModelCohort", "ModelPage", "forest_chart", "model_contexts"]
