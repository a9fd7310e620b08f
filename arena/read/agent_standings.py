"""Each agent's standing at `as_of`: cash folded from its fills plus its open positions marked at the latest price
fetched by then (`services.mark`), total value and exact P/L against the starting cash, its cohort-board metrics from
the scoring library (in the library's order), the per-model table across cohorts and the equity curves. Reads the
store once per table, never writes, formats nothing: the web layer reshapes this for its pages."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.money import MICRO
from arena.scoring.leaderboard import leaderboard
from arena.usecases.mark import value_positions
from arena.read.score import overall_table

from arena.read.standings import Boards, standings as compute_boards
from arena.cache.memo import Recent, kept
from arena.store.tables import AgentRow, CohortRow, PortfolioSnapshotRow
from arena.store.frames import bets_frame, cash_frame, forecasts_frame, position_frame, price_frame


@dataclass(frozen=True)
class AgentMoney:
    """An agent's book at `as_of`, exact integer micro-USD."""

    start_micros: int
    cash_micros: int
    positions_value_micros: int  # open positions marked at the latest price (unpriced ones at 0)
    open_positions: int
    unpriced_positions: int

    @property
    def total_value_micros(self) -> int:
        return self.cash_micros + self.positions_value_micros

    @property
    def pnl_micros(self) -> int:
        return self.total_value_micros - self.start_micros


@dataclass(frozen=True)
class AgentStandings:
    as_of: datetime
    cohorts: Mapping[int, str]  # cohort id → name
    agents: tuple[tuple[int, int, str, str, str], ...]  # agent id, cohort id, name, kind, model id
    money: Mapping[int, AgentMoney]  # agent id → its book
    positions: Mapping[int, tuple[dict[str, Any], ...]]  # agent id → valued open positions (micro units, with
    #   `unrealized` = value − cost)
    metrics: Mapping[tuple[str, str], Mapping[str, Any]]  # (cohort, agent) → its `scoring.leaderboard` row
    order: Mapping[tuple[str, str], int]  # (cohort, agent) → its place in the scoring library's order
    overall: pd.DataFrame | None  # per model across cohorts (`overall_table`), when asked for
    curves: Mapping[int, tuple[tuple[datetime, int], ...]]  # agent id → (as_of, total value micro-USD) by time
    boards: Boards | None = None  # services.standings: the headline boards (intervals, tiers, references)

    def pnl_by_name(self) -> dict[str, int]:
        """Agent (lineup) name → its P/L summed over its cohorts here, micro-USD."""
        out: dict[str, int] = defaultdict(int)
        for aid, _, name, *_ in self.agents:
            out[name] += self.money[aid].pnl_micros
        return dict(out)

    def cohort_pnl(self) -> dict[int, int]:
        """Cohort id → its agents' P/L together, micro-USD."""
        out: dict[int, int] = defaultdict(int)
        for aid, cid, *_ in self.agents:
            out[cid] += self.money[aid].pnl_micros
        return dict(out)


def _in(q: Any, column: Any, keys: Sequence[Any] | None) -> Any:
    return q if keys is None else q.where(column.in_(list(keys)))


def agent_standings(engine: Engine, as_of: datetime, cohort_ids: Sequence[int] | None = None,
                    with_overall: bool = False, with_boards: bool = True,
                    keys: Mapping[int, str] | None = None) -> AgentStandings:
    """Standings of the given cohorts' agents (None: all). P/L is exact: cash folded from fills plus open positions
    marked at the latest price fetched by `as_of` (`services.mark`), minus the starting cash.

    The scoring frames are read once (`services.score`) and fed to the scoring library, so the cohort boards and
    the overall table share one read of the bets instead of two.

    `keys` (cohort id → a key naming every fact its agents' standings are read from, such as `web.page_keys`
    gives): a cohort whose key this process read before is taken from memory, and only the others are read —
    every number here is computed within one cohort, except the overall table, which is computed again from
    the cohorts' bets and portfolios."""
    with engine.connect() as conn:
        cq = select(CohortRow.id, CohortRow.name)
        if cohort_ids is not None:
            cq = cq.where(CohortRow.id.in_(list(cohort_ids)))  # type: ignore[attr-defined]
        cohorts = dict(conn.execute(cq).all())
    ids = list(cohorts)
    boards = (compute_boards(engine, as_of, cohort_names=None if cohort_ids is None else list(cohorts.values()))
              if ids and with_boards else None)  # the bootstraps: only for the pages that show the boards
    if not ids:
        return AgentStandings(as_of, cohorts, (), {}, {}, {}, {},
                              overall_table(pd.DataFrame(), pd.DataFrame()) if with_overall else None, {}, boards)
    if keys is None or any(c not in keys for c in ids):
        part = _read(engine, as_of, cohorts, cohort_ids is None)
        return replace(part.standings, boards=boards,
                       overall=overall_table(part.bets, part.portfolios) if with_overall else None)
    found = kept({c: keys[c] for c in ids}, _SLICES, None,
                 lambda missing: _read(engine, as_of, {c: cohorts[c] for c in missing}, False).split(),
                 filed=str, now=None)
    parts = [found[c] for c in ids]
    merged = _Slice.merge(parts, cohorts)
    return replace(merged.standings, as_of=as_of, boards=boards,
                   overall=overall_table(merged.bets, merged.portfolios) if with_overall else None)


@dataclass(frozen=True)
class _Slice:
    """Agent standings of some cohorts without boards or overall table, with the bets and portfolios read."""

    standings: AgentStandings
    bets: pd.DataFrame
    portfolios: pd.DataFrame

    def split(self) -> dict[int, _Slice]:
        """One slice per cohort."""
        st = self.standings
        agents_of: dict[int, list[tuple[int, int, str, str, str]]] = defaultdict(list)
        for a in st.agents:
            agents_of[a[1]].append(a)
        bets = dict(tuple(self.bets.groupby("cohort", sort=False))) if len(self.bets) else {}
        ports = dict(tuple(self.portfolios.groupby("cohort", sort=False))) if len(self.portfolios) else {}
        out = {}
        for cid, name in st.cohorts.items():
            mine = agents_of.get(cid, [])
            aids = {a[0] for a in mine}
            out[cid] = _Slice(AgentStandings(
                st.as_of, {cid: name}, tuple(mine), {a: st.money[a] for a in aids if a in st.money},
                {a: st.positions[a] for a in aids if a in st.positions},
                {k: v for k, v in st.metrics.items() if k[0] == name}, {k: v for k, v in st.order.items() if k[0] == name},
                None, {a: st.curves[a] for a in aids if a in st.curves}),
                bets.get(name, self.bets.iloc[0:0]), ports.get(name, self.portfolios.iloc[0:0]))
        return out

    @staticmethod
    def merge(parts: Sequence[_Slice], cohorts: Mapping[int, str]) -> _Slice:
        first = parts[0].standings
        agents = tuple(sorted((a for p in parts for a in p.standings.agents), key=lambda a: a[0]))
        union = lambda f: {k: v for p in parts for k, v in getattr(p.standings, f).items()}  # noqa: E731
        return _Slice(AgentStandings(first.as_of, dict(cohorts), agents, union("money"), union("positions"),
                                     union("metrics"), union("order"), None, union("curves")),
                      pd.concat([p.bets for p in parts], ignore_index=True),
                      pd.concat([p.portfolios for p in parts], ignore_index=True))


_SLICES: Recent[_Slice] = Recent("agent standings")  # cohort key → its slice (`agent_standings(keys=...)`)


def _read(engine: Engine, as_of: datetime, cohorts: Mapping[int, str], every: bool) -> _Slice:
    """The agent standings of `cohorts` (`every`: they are all the cohorts there are) read from the facts."""
    ids = list(cohorts)
    with engine.connect() as conn:
        agents = conn.execute(_in(select(AgentRow.id, AgentRow.cohort_id, AgentRow.name, AgentRow.kind,
                                         AgentRow.model_id), AgentRow.cohort_id,
                                  None if every else ids)).all()
        sq = (select(PortfolioSnapshotRow.agent_id, PortfolioSnapshotRow.as_of,
                     PortfolioSnapshotRow.total_value_micros)
              .where(PortfolioSnapshotRow.as_of <= as_of)
              .order_by(PortfolioSnapshotRow.agent_id, PortfolioSnapshotRow.as_of))
        curves: dict[int, list[tuple[datetime, int]]] = defaultdict(list)
        for aid, t, v in conn.execute(_in(sq, PortfolioSnapshotRow.cohort_id, None if every else ids)).all():
            curves[aid].append((t, v))
    with Session(engine) as s:
        cash = cash_frame(s, ids)
        positions = position_frame(s, ids)
        valued = value_positions(positions, price_frame(s, as_of, positions["market_id"].unique().tolist()))
        bets = bets_frame(s, ids)
        forecasts = forecasts_frame(s, ids)

    pos_by_agent: dict[int, list[dict[str, Any]]] = defaultdict(list)
    pv: dict[int, int] = defaultdict(int)
    unpriced: dict[int, int] = defaultdict(int)
    for rec in valued.to_dict("records"):
        aid = int(rec["agent_id"])
        rec["unrealized"] = int(rec["value"]) - int(rec["cost"])  # micro-USD: marked value − cost basis
        pos_by_agent[aid].append(rec)
        pv[aid] += int(rec["value"])
        unpriced[aid] += 0 if bool(rec["priced"]) else 1
    cash_by_agent = {int(a): (int(st), int(c)) for a, st, c in zip(cash["agent_id"], cash["start"], cash["cash"])}

    # services.score.portfolios_frame, from the integers just computed (same fold, same marks)
    names = [(aid, cohorts[cid], name) for aid, cid, name, *_ in agents]
    portfolios = pd.DataFrame({
        "cohort": [c for _, c, _ in names], "agent": [n for _, _, n in names],
        "starting_balance": [cash_by_agent.get(a, (0, 0))[0] / MICRO for a, _, _ in names],
        "total_value": [(cash_by_agent.get(a, (0, 0))[1] + pv[a]) / MICRO for a, _, _ in names],
    })
    board = leaderboard(bets, portfolios, forecasts)
    metrics: dict[tuple[str, str], dict[str, Any]] = {}
    order: dict[tuple[str, str], int] = {}
    for rank_in, rec in enumerate(board.to_dict("records")):
        metrics[(rec["cohort"], rec["agent"])] = rec
        order[(rec["cohort"], rec["agent"])] = rank_in
    money = {}
    for aid, *_ in agents:
        start, c = cash_by_agent.get(aid, (0, 0))
        money[aid] = AgentMoney(start, c, pv[aid], len(pos_by_agent[aid]), unpriced[aid])
    return _Slice(AgentStandings(as_of, dict(cohorts), tuple(tuple(a) for a in agents), money,
                                 {a: tuple(p) for a, p in pos_by_agent.items()}, metrics, order, None,
                                 {a: tuple(c) for a, c in curves.items()}), bets, portfolios)
