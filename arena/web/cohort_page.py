"""The cohort page: its headline board and leaderboard, rules and lineup, decisions by status, equity chart, skill
vs luck, ablation pairs and markets. Only reshapes what `Standings` and the services computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from arena.scoring.board import DEFAULT_RANK_BY
from arena.scoring.headroom import Headroom
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.read.ablation import PairComparison, compare_pairs
from arena.read.breakdown import seat_breakdowns
from arena.read.cohorts import cohort_setups, decisions_by_status
from arena.read.standings import Boards
from arena.read.statistics import DEFAULT_DRAWS
from arena.read.touched_markets import market_questions
from arena.web.boards import ColumnHelp, AgentScore, column_help, Standings, load_standings, Headline, headline
from arena.web.charts import Chart, equity_chart
from arena.web.env import page_path
from arena.web.market_index import cohort_markets
from arena.web.refs import CohortInfo, cohort_infos
from arena.web.skill_luck import SkillLuck, skill_luck
from arena.web.values import flat


@dataclass(frozen=True)
class CohortPage:
    as_of: datetime
    cohort: CohortInfo
    headline: Headline  # the cohort's headline board (services.standings), references included
    rows: tuple[AgentScore, ...]
    columns: Mapping[str, ColumnHelp]
    rules: tuple[tuple[str, str], ...]
    lineup: tuple[tuple[str, str, str], ...]  # name, kind, model id
    decisions: tuple[tuple[str, int], ...]  # status → count
    equity: Chart
    provisional_min: int
    skill_luck: tuple[tuple[str, str, SkillLuck], ...] = ()  # agent, its page, its P/L split (agents with bets)
    ablations: tuple[AblationRow, ...] = ()  # the cohort's variant_of pairs (same numbers as its statistics page)
    statistics_href: str = ""
    markets: tuple[Any, ...] = ()  # web.market_index.MarketListRow: its forecast set, then what its agents traded
    headroom: Headroom | None = None  # of its forecast sets (`scoring.headroom`), as the boards computed it
    leaks: tuple[LeakRow, ...] = ()  # its questions left out of the boards as given away (`domain.leakage`)
    # per seat: Brier − market by days-to-resolution bucket and by market category (`read.breakdown`), JSON rows
    skill_by_horizon: tuple[Mapping[str, Any], ...] = ()
    skill_by_category: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class LeakRow:
    """A leaked question as the cohort page lists it: its round, market and question, why (the rule's words) and
    the market that gave it away, with its question."""

    round: str
    market_id: str
    question: str
    reason: str
    other_market_id: str
    other_question: str


# the leakage rules (`domain.leakage.REASONS`) in words
LEAK_REASONS = {
    "sibling_resolved_yes": "another member of its exclusive group had resolved YES",
    "text_of_resolved_market": "its question is the text of a market that had resolved",
    "duplicate_question": "the same question was asked earlier in the round's set",
}


def _leak_rows(engine: Engine, as_of: datetime, leaks: Sequence[Any]) -> tuple[LeakRow, ...]:
    if not leaks:
        return ()
    questions = market_questions(engine, as_of, {x.market_id for x in leaks} | {x.other_market_id for x in leaks})
    return tuple(LeakRow(x.round, x.market_id, questions.get(x.market_id, ""), LEAK_REASONS.get(x.reason, x.reason),
                         x.other_market_id, questions.get(x.other_market_id, "")) for x in leaks)


@dataclass(frozen=True)
class AblationRow:
    """One ablation pair of a cohort: variant − base forecast Brier over the shared questions (< 0: the variant
    forecasts better), its paired-bootstrap interval and p, and the date its confidence sequence first excluded 0."""

    base: str
    variant: str
    factor: str
    n: int
    estimate: float
    lo: float
    hi: float
    p_value: float
    first_date: str | None


def cohort_ablations(comparisons: Mapping[str, Sequence[PairComparison]]) -> dict[str, tuple[AblationRow, ...]]:
    """cohort → its ablation pairs' forecast-Brier rows, from the comparisons `services.ablation.compare_pairs`
    made (with the statistics page's draws and seed, so both pages show the same numbers)."""
    out = {}
    for cohort, pairs in comparisons.items():
        rows = []
        for pair in pairs:
            c = pair.comparison
            d = c.differences["forecast_brier"]
            rows.append(AblationRow(pair.base, pair.variant, pair.factor, int(d.n), d.estimate, d.lo, d.hi,
                                    d.p_value, c.sequence.get("first_date")))
        out[cohort] = tuple(rows)
    return out


def cohort_contexts(engine: Engine, as_of: datetime, names: Sequence[str] | None = None,
                    standings: Standings | None = None,
                    luck: Mapping[tuple[str, str], SkillLuck] | None = None,
                    ablations: Mapping[str, Sequence[PairComparison]] | None = None) -> dict[str, CohortPage]:
    """Cohort pages by cohort name (None: every cohort); `luck` as in `agent_contexts`; `ablations`: the
    cohorts' ablation pairs already compared (`services.ablation.compare_pairs`, as the render shares them with
    the statistics pages), else compared here."""
    rows = [(c.id, c.name, c.rules, c.lineup) for c in cohort_setups(engine, as_of, names)]
    ids = [r[0] for r in rows]
    if not ids:
        return {}
    infos = cohort_infos(engine, as_of, None if names is None else ids)
    decisions = decisions_by_status(engine, as_of, None if names is None else ids)
    st = standings or load_standings(engine, as_of, None if names is None else ids)
    if luck is None:
        luck = skill_luck(engine, as_of, None if names is None else [r[1] for r in rows])
    if ablations is None:
        ablations = compare_pairs(engine, as_of, None if names is None else [r[1] for r in rows],
                                  n_boot=DEFAULT_DRAWS, seed=0)
    ablation_rows = cohort_ablations(ablations)
    markets = cohort_markets(engine, as_of, None if names is None else ids)
    split = seat_breakdowns(engine, as_of, [(r[0], r[1]) for r in rows])
    out = {}
    for cid, name, rules, lineup in rows:
        info = infos[cid]
        board = st.by_cohort.get(cid, ())
        chart = equity_chart("Total value of each agent", [(r.agent, st.curves.get(r.agent_id, ())) for r in board],
                             info.starting_cash_micros)
        boards = st.boards if st.boards is not None else Boards(as_of, DEFAULT_RANK_BY)
        hb = next((b for b in boards.cohorts if b.name == name), None)
        out[name] = CohortPage(
            as_of=as_of, cohort=info,
            headline=headline(hb.rows if hb is not None else None, boards.rank_by, {r.agent: r.href for r in board}),
            rows=board, columns=column_help(),
            rules=tuple((str(k), flat(v)) for k, v in sorted((rules or {}).items())),
            lineup=tuple((str(e.get("name", "")), str(e.get("kind", "")), str(e.get("model_id", "")))
                         for e in (lineup or []) if isinstance(e, dict)),
            decisions=tuple(sorted(decisions.get(cid, []))), equity=chart, provisional_min=PROVISIONAL_MIN_RESOLVED,
            skill_luck=tuple((r.agent, r.href, luck[(name, r.agent)]) for r in board if (name, r.agent) in luck),
            ablations=ablation_rows.get(name, ()), statistics_href=page_path("statistics", name),
            markets=markets.get(cid, ()), headroom=boards.headroom.get(name),
            leaks=_leak_rows(engine, as_of, boards.leaks.get(name, ())),
            skill_by_horizon=tuple(split.get(name, {}).get("skill_by_horizon", ())),
            skill_by_category=tuple(split.get(name, {}).get("skill_by_category", ())),
        )
    return out
