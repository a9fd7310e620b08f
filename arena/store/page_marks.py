"""Page marks: cheap summaries of what the site's pages show, so a render can tell which pages' inputs changed
without building them (`web.page_keys`).

A cohort's pages (its page, its agents' pages, its statistics page and its JSON) show its frames — summarised by
`store.fingerprints.cohort_marks` — and beside them:
- its cohort row and agent rows (name, status, rules, lineup, model, config);
- its portfolio snapshots by T (the equity chart);
- its decisions' status, reasoning and error (rewritten while a decision runs), its model calls and rejections;
- the markets it touched (forecast or traded): their rows (question, status, close time …), their resolutions and
  their prices by T.

A market's row is summarised by the fields the pages show (not the sync's bookkeeping: `updated_at` and the
hashes move when a quote is stored, which the prices already tell). A market's page shows its row, prices and
resolutions (`market_marks`) and every agent's fills and forecasts on it (named by the marks of the cohorts that
touched it, `web.page_keys`).

As in `store.fingerprints`, each set of rows is summarised by (count, max id, sum of ids) plus sums of the values
shown, and a row's text by a digest of its columns. Not seen: an edit that leaves every such sum unchanged, and
the link of a market that only a rejected action names (whether that market has a page depends on other cohorts).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import func, select, union
from sqlmodel import Session

from arena.store.fingerprints import Marks, chunks, in_markets, summary
from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, ForecastRow, MarketRow, ModelCallRow,
                                PortfolioSnapshotRow, PriceSnapshotRow, RejectionRow, ResolutionRow)


def digest(values: Any) -> int:
    """A 63-bit integer naming `values` (JSON-able; datetimes as ISO text)."""
    raw = orjson.dumps(values, default=str, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big") >> 1


def _grouped(conn: Any, q: Any) -> dict[Any, list[int]]:
    return {key: [int(v) for v in rest] for key, *rest in conn.execute(q)}


def cohort_page_marks(session: Session, cohort_ids: Sequence[int], as_of: datetime) -> dict[int, Marks]:
    """cohort id → integers summarising what its pages show beyond its frames (module docstring), markets
    excepted (`cohort_markets`, `market_marks`)."""
    conn = session.connection()
    out: dict[int, list[int]] = {}
    for part in chunks(list(cohort_ids)):
        rows = conn.execute(select(CohortRow.id, CohortRow.name, CohortRow.status, CohortRow.period_start,
                                   CohortRow.completed_at, CohortRow.rules, CohortRow.lineup)
                            .where(CohortRow.id.in_(part))).all()  # type: ignore[attr-defined]
        agents: dict[int, list[Any]] = defaultdict(list)
        for r in conn.execute(select(AgentRow.cohort_id, AgentRow.id, AgentRow.name, AgentRow.kind, AgentRow.model_id,
                                     AgentRow.config).where(AgentRow.cohort_id.in_(part))  # type: ignore[attr-defined]
                              .order_by(AgentRow.id)):
            agents[r[0]].append(list(r[1:]))
        for cid, *row in rows:
            out[cid] = [digest([row, agents.get(cid, [])])]
        in_part = lambda col: col.in_(part)  # noqa: E731
        snaps = _grouped(conn, select(PortfolioSnapshotRow.cohort_id,
                                      *summary(PortfolioSnapshotRow.id, values=(PortfolioSnapshotRow.total_value_micros,
                                                                                PortfolioSnapshotRow.cash_micros)))
                         .where(in_part(PortfolioSnapshotRow.cohort_id), PortfolioSnapshotRow.as_of <= as_of)
                         .group_by(PortfolioSnapshotRow.cohort_id))
        text = (func.length(func.coalesce(DecisionRow.status, "")), func.length(func.coalesce(DecisionRow.error, "")),
                func.length(func.coalesce(DecisionRow.reasoning, "")), func.length(func.coalesce(DecisionRow.round_key, "")))
        decisions = _grouped(conn, select(DecisionRow.cohort_id, func.count(),
                                          *(func.coalesce(func.sum(t * DecisionRow.id), 0) for t in text))
                             .where(in_part(DecisionRow.cohort_id)).group_by(DecisionRow.cohort_id))
        calls = _grouped(conn, select(DecisionRow.cohort_id, *summary(ModelCallRow.id, values=(ModelCallRow.attempt,)))
                         .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                         .where(in_part(DecisionRow.cohort_id)).group_by(DecisionRow.cohort_id))
        rejections = _grouped(conn, select(DecisionRow.cohort_id, *summary(RejectionRow.id,
                                                                           values=(RejectionRow.action_index,)))
                              .join(DecisionRow, DecisionRow.id == RejectionRow.decision_id)
                              .where(in_part(DecisionRow.cohort_id)).group_by(DecisionRow.cohort_id))
        for cid in out:
            for found, width in ((snaps, 5), (decisions, 5), (calls, 4), (rejections, 4)):
                out[cid] += found.get(cid, [0] * width)
    return {cid: tuple(m) for cid, m in out.items()}


def cohort_markets(session: Session, cohort_ids: Sequence[int]) -> dict[int, list[str]]:
    """cohort id → the markets its agents forecast or traded, sorted."""
    conn = session.connection()
    out: dict[int, set[str]] = defaultdict(set)
    for part in chunks(list(cohort_ids)):
        fq = select(FillRow.cohort_id, FillRow.market_id).where(FillRow.cohort_id.in_(part))  # type: ignore[attr-defined]
        oq = (select(AgentRow.cohort_id, ForecastRow.market_id).join(AgentRow, AgentRow.id == ForecastRow.agent_id)
              .where(AgentRow.cohort_id.in_(part)))  # type: ignore[attr-defined]
        for cid, mid in conn.execute(union(fq, oq)):
            out[cid].add(mid)
    return {cid: sorted(out.get(cid, ())) for cid in cohort_ids}


def market_marks(session: Session, market_ids: Iterable[str], as_of: datetime) -> dict[str, Marks]:
    """market id → integers summarising its row, its resolutions and its prices recorded by `as_of` (what its page
    and the pages of the cohorts that touched it show of it; the agents' fills and forecasts on it are named by
    those cohorts' marks). Markets without a row get zeros."""
    ids = sorted(set(market_ids))
    conn = session.connection()
    out: dict[str, list[int]] = {m: [0] * 8 for m in ids}
    row_q = select(MarketRow.id, MarketRow.venue, MarketRow.question, func.length(MarketRow.description),
                   MarketRow.description_hash, MarketRow.kind, MarketRow.status, MarketRow.outcomes,
                   MarketRow.outcome_labels, MarketRow.close_time, MarketRow.url, MarketRow.category)
    parts = [
        (select(ResolutionRow.market_id, *summary(ResolutionRow.id, values=(ResolutionRow.version,)))
         .where(ResolutionRow.recorded_at <= as_of).group_by(ResolutionRow.market_id), ResolutionRow.market_id, 1),
        (select(PriceSnapshotRow.market_id, *summary(PriceSnapshotRow.id))
         .where(PriceSnapshotRow.fetched_at <= as_of, PriceSnapshotRow.observed_at <= as_of)
         .group_by(PriceSnapshotRow.market_id), PriceSnapshotRow.market_id, 5)]
    for mid, *row in in_markets(conn, row_q, MarketRow.id, ids):
        out[mid][0] = digest(row)
    for q, column, at in parts:
        for mid, *vals in in_markets(conn, q, column, ids):
            out[mid][at:at + len(vals)] = [int(v) for v in vals]
    return {m: tuple(v) for m, v in out.items()}


__all__ = ["cohort_markets", "cohort_page_marks", "digest", "market_marks"]
