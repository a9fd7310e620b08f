"""Ablation comparisons: B vs A over their shared questions, from stored facts — the paired difference in
forecast Brier (net of replicate noise), Kelly-implied Brier and realized P/L with paired-bootstrap intervals,
the anytime-valid confidence sequence on the forecast-Brier difference with the first date it excluded 0, and
each seat's run-to-run spread. Feeds `arena compare` and the cohort statistics page's ablation table.

Shared questions: the forecast-set questions (market @ round) of the cohorts whose frozen lineup holds both
seats, resolved by `as_of`. Seats are named as on the boards (a lineup name, stable across cohorts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.clock import utc
from arena.errors import InputError
from arena.read.contamination import contamination, lineup_dates
from arena.scoring.ablation import PairedDifference, paired_difference, replicate_spread
from arena.scoring.evidence import market_rows
from arena.scoring.leaderboard import per_bet_scores
from arena.scoring.sequential import DEFAULT_ALPHA, confidence_sequence



from arena.store.tables import AgentRow, CohortRow, FillRow, ResolutionRow
from arena.store.frames import bets_frame, forecast_set_frame, rows_frame

MICRO = 1_000_000
METRICS = ("forecast_brier", "kelly_brier", "pnl")


@dataclass
class Comparison:
    """B vs A. `differences`: metric → PairedDifference (B − A; for the Briers negative = B better; for P/L
    positive = B earned more, USD). `sequence`: the confidence sequence on the per-question forecast-Brier
    difference (replicate means) in resolution order: n, lower, upper, estimate, alpha, first_date (ISO date
    the sequence first excluded 0, or None), sign. `spread`: replicate_spread rows of the two seats."""

    a: str
    b: str
    cohorts: list[str]
    as_of: datetime
    factor: str | None = None  # set when one seat is declared `variant_of` the other
    differences: dict[str, PairedDifference] = field(default_factory=dict)
    sequence: dict[str, Any] = field(default_factory=dict)
    spread: pd.DataFrame = field(default_factory=pd.DataFrame)

    def to_json(self) -> dict[str, Any]:
        spread = [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                  for r in self.spread.to_dict("records")]
        return {"a": self.a, "b": self.b, "factor": self.factor, "cohorts": self.cohorts,
                "as_of": self.as_of.isoformat(), "differences": {k: d.to_json() for k, d in self.differences.items()},
                "sequence": self.sequence, "spread": spread}


def ablation_pairs(engine: Engine, cohort: str | None = None) -> list[tuple[str, str, str]]:
    """(base, variant, factor) for every seat frozen with `variant_of`, in the named cohort or any."""
    seen: dict[tuple[str, str], str] = {}
    for name, pairs in ablation_pairs_by_cohort(engine, cohort).items():
        for base, variant, factor in pairs:
            seen.setdefault((base, variant), factor)
    return [(a, b, f) for (a, b), f in sorted(seen.items())]


def ablation_pairs_by_cohort(engine: Engine, cohort: str | None = None) -> dict[str, list[tuple[str, str, str]]]:
    """cohort → its (base, variant, factor) pairs, sorted, for the cohorts (the named one, or all) that have any."""
    with Session(engine) as s:
        q = select(AgentRow.name, AgentRow.config, CohortRow.name).join(CohortRow, CohortRow.id == AgentRow.cohort_id)
        if cohort is not None:
            q = q.where(CohortRow.name == cohort)
        out: dict[str, dict[tuple[str, str], str]] = {}
        for name, config, cohort_name in s.execute(q).all():
            base = (config or {}).get("variant_of")
            if base:
                out.setdefault(cohort_name, {}).setdefault((str(base), name), str((config or {}).get("factor") or ""))
    return {c: [(a, b, f) for (a, b), f in sorted(pairs.items())] for c, pairs in out.items()}


@dataclass(frozen=True)
class PairComparison:
    """One `variant_of` pair of a cohort's lineup compared over that cohort's shared questions (`compare`)."""

    base: str
    variant: str
    factor: str  # as the variant's config declares it ("" when it names none)
    comparison: Comparison


def compare_pairs(engine: Engine, as_of: datetime, cohorts: list[str] | None = None, *, n_boot: int = 1000,
                  seed: int = 0) -> dict[str, list[PairComparison]]:
    """cohort → each of its ablation pairs compared within it (None: every cohort that has any), computed once so
    the cohort page and the statistics page show — and pay for — the same comparisons."""
    out: dict[str, list[PairComparison]] = {}
    for cohort, pairs in ablation_pairs_by_cohort(engine).items():
        if cohorts is not None and cohort not in cohorts:
            continue
        out[cohort] = [PairComparison(base, variant, factor,
                                      compare(engine, base, variant, as_of, [cohort], n_boot=n_boot, seed=seed))
                       for base, variant, factor in pairs]
    return out


def _shared_cohorts(session: Session, a: str, b: str, names: list[str] | None, as_of: datetime) -> dict[int, str]:
    rows = session.execute(select(CohortRow.id, CohortRow.name, AgentRow.name)
                           .join(AgentRow, AgentRow.cohort_id == CohortRow.id)
                           .where(col(CohortRow.created_at) <= as_of)).all()
    cohorts = {cid: cname for cid, cname, _ in rows}
    seats: dict[int, set[str]] = {}
    for cid, _, agent in rows:
        seats.setdefault(cid, set()).add(agent)
    if names:
        unknown = [n for n in names if n not in cohorts.values()]
        if unknown:
            known = sorted(set(cohorts.values()))
            raise InputError(f"unknown cohort {unknown[0]!r}",
                             fix="choose from " + (", ".join(known[-8:]) if known else "(no cohorts yet)")
                             + " (see `arena leaderboard`)")
    everyone = set().union(*seats.values()) if seats else set()
    for seat in (a, b):
        if seat not in everyone:
            raise InputError(f"unknown agent {seat!r}",
                             fix="name a seat of the lineup: " + (", ".join(sorted(everyone)) or "(no cohorts yet)"))
    if a == b:
        raise InputError(f"compare needs two different agents, got {a!r} twice", fix="name the base and the variant")
    out = {cid: cohorts[cid] for cid in sorted(seats) if {a, b} <= seats[cid]
           and (not names or cohorts[cid] in names)}
    return out


def resolution_times(session: Session, as_of: datetime) -> pd.Series:
    """market_id → when its latest resolution (recorded by `as_of`) was recorded."""
    rows = session.execute(select(ResolutionRow.market_id, func.max(ResolutionRow.recorded_at))
                           .where(col(ResolutionRow.recorded_at) <= as_of)
                           .group_by(ResolutionRow.market_id)).all()
    return pd.Series({m: pd.Timestamp(t) for m, t in rows}, dtype=object)


def _cash_rows(session: Session, ids: dict[int, str], seat: str, as_of: datetime) -> pd.DataFrame:
    """One seat's net cash (micro-USD) and net shares per (cohort name, market) from its fills recorded by `as_of`."""
    rows = session.execute(
        select(FillRow.cohort_id, AgentRow.name, FillRow.market_id, func.sum(FillRow.cash_micros),
               func.sum(FillRow.shares))
        .join(AgentRow, AgentRow.id == FillRow.agent_id)
        .where(col(FillRow.cohort_id).in_(list(ids)), col(AgentRow.name) == seat,
               col(FillRow.at) <= as_of)
        .group_by(FillRow.cohort_id, AgentRow.name, FillRow.market_id)).all()
    df = rows_frame(rows, ["cohort_id", "agent", "market_id", "cash", "shares"])
    df["cohort"] = df["cohort_id"].map(ids) if len(df) else pd.Series(dtype=object)
    return df


def _pnl(cash: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Realized P/L (USD) per (cohort, market) for both seats over the markets either traded, 0 where a seat
    had no position; markets where either still holds shares are left out (not realized yet). `cash`: both
    seats' `_cash_rows`."""
    df = cash
    if df.empty:
        return pd.DataFrame(columns=["cohort", "market_id", "question", "agent", "pnl"])
    open_markets = set(zip(df.loc[df["shares"] != 0, "cohort"], df.loc[df["shares"] != 0, "market_id"]))
    out = []
    for (cohort, mid), _ in df.groupby(["cohort", "market_id"]):
        if (cohort, mid) in open_markets:
            continue
        for seat in (a, b):
            cash_ = df[(df["cohort"] == cohort) & (df["market_id"] == mid) & (df["agent"] == seat)]["cash"]
            out.append({"cohort": cohort, "market_id": mid, "question": mid, "agent": seat,
                        "pnl": float(cash_.sum()) / MICRO if len(cash_) else 0.0})
    return pd.DataFrame(out, columns=["cohort", "market_id", "question", "agent", "pnl"])


@dataclass
class _Side:
    """One seat's facts from one database: its cohorts (id → name), forecast-set rows, bets and fills' cash."""

    ids: dict[int, str]
    forecasts: pd.DataFrame
    bets: pd.DataFrame
    cash: pd.DataFrame


def _side(engine: Engine, s: Session, seat: str, ids: dict[int, str], as_of: datetime, label: str) -> _Side:
    """`seat`'s facts in `engine` over the cohorts `ids`, its rows relabelled `label` (the name it is compared
    under), its contaminated questions left out as on the boards."""
    if not ids:
        return _Side(ids, pd.DataFrame(), pd.DataFrame(), pd.DataFrame())
    f = forecast_set_frame(s, list(ids), as_of, all_replicates=True)
    f = f[f["agent"] == seat].reset_index(drop=True)
    dates = lineup_dates(engine, list(ids))
    if dates and len(f):  # a replay's contaminated questions leave each seat's side, as on the boards
        f = f[~contamination(engine, utc(as_of), f, dates).mask].reset_index(drop=True)
    bets = bets_frame(s, list(ids), as_of)
    if len(bets):
        bets = bets[bets["agent"] == seat]
    cash = _cash_rows(s, ids, seat, as_of)
    return _Side(ids, f.assign(agent=label), bets.assign(agent=label) if len(bets) else bets,
                 cash.assign(agent=label) if len(cash) else cash)


def _seats_of(session: Session, seat: str, names: list[str] | None, as_of: datetime, which: str) -> dict[int, str]:
    """The cohorts (id → name, created by `as_of`) whose lineup holds `seat`, of `names` when given; InputError for
    an unknown cohort or seat (`which` names the database in the message)."""
    rows = session.execute(select(CohortRow.id, CohortRow.name, AgentRow.name)
                           .join(AgentRow, AgentRow.cohort_id == CohortRow.id)
                           .where(col(CohortRow.created_at) <= as_of)).all()
    cohorts = {cid: cname for cid, cname, _ in rows}
    if names:
        unknown = [n for n in names if n not in cohorts.values()]
        if unknown:
            known = sorted(set(cohorts.values()))
            raise InputError(f"unknown cohort {unknown[0]!r} in {which}",
                             fix="choose from " + (", ".join(known[-8:]) if known else "(no cohorts yet)")
                             + " (see `arena leaderboard`)")
    everyone = {agent for _, _, agent in rows}
    if seat not in everyone:
        raise InputError(f"unknown agent {seat!r} in {which}",
                         fix="name a seat of its lineup: " + (", ".join(sorted(everyone)) or "(no cohorts yet)"))
    return {cid: cname for cid, cname, agent in sorted(rows) if agent == seat and (not names or cname in names)}


def compare(engine: Engine, a: str, b: str, as_of: datetime, cohorts: list[str] | None = None, *,
            engine_b: Engine | None = None, n_boot: int = 1000, seed: int = 0,
            alpha: float = DEFAULT_ALPHA) -> Comparison:
    """B vs A from the facts recorded by `as_of` (see the module docstring). With `engine_b`, B is read from that
    database (a fork of A's, `arena replay fork`) and A from `engine`: the shared questions are the (cohort name,
    market) keys both hold, and B may carry A's name. Raises InputError for an unknown agent or cohort."""
    if engine_b is None:
        return _compare_one(engine, a, b, as_of, cohorts, n_boot=n_boot, seed=seed, alpha=alpha)
    la, lb = (a, b) if a != b else (f"{a} (A)", f"{b} (B)")
    with Session(engine) as s, Session(engine_b) as sb:
        ids_a = _seats_of(s, a, cohorts, as_of, "the database of A")
        ids_b = _seats_of(sb, b, cohorts, as_of, "the database of B")
        shared = set(ids_a.values()) & set(ids_b.values())
        ids_a = {c: n for c, n in ids_a.items() if n in shared}
        ids_b = {c: n for c, n in ids_b.items() if n in shared}
        result = Comparison(la, lb, sorted(shared), as_of)
        frozen_a, frozen_b = _frozen(s, a), _frozen(sb, b)
        if frozen_b.get("variant_of") == a:
            result.factor = frozen_b.get("factor")
        elif frozen_a.get("variant_of") == b:
            result.factor = frozen_a.get("factor")
        if not shared:
            return result
        side_a = _side(engine, s, a, ids_a, as_of, la)
        side_b = _side(engine_b, sb, b, ids_b, as_of, lb)
        resolved = resolution_times(s, as_of)
    return _measure(result, side_a, side_b, resolved, n_boot=n_boot, seed=seed, alpha=alpha)


def _frozen(session: Session, seat: str) -> dict[str, Any]:
    """A seat's frozen record (its newest cohort's)."""
    row = session.execute(select(AgentRow.config).where(AgentRow.name == seat)
                          .order_by(col(AgentRow.id).desc()).limit(1)).scalar()
    return dict(row or {})


def _compare_one(engine: Engine, a: str, b: str, as_of: datetime, cohorts: list[str] | None, *, n_boot: int,
                 seed: int, alpha: float) -> Comparison:
    with Session(engine) as s:
        ids = _shared_cohorts(s, a, b, cohorts, as_of)
        result = Comparison(a, b, sorted(ids.values()), as_of)
        seats = select(AgentRow.name, AgentRow.config).where(col(AgentRow.name).in_([a, b]))
        factors = {name: (cfg or {}) for name, cfg in s.execute(seats).all()}
        for base, variant in ((a, b), (b, a)):
            if factors.get(variant, {}).get("variant_of") == base:
                result.factor = factors[variant].get("factor")
        if not ids:
            return result
        side_a = _side(engine, s, a, ids, as_of, a)
        side_b = _side(engine, s, b, ids, as_of, b)
        resolved = resolution_times(s, as_of)
    return _measure(result, side_a, side_b, resolved, n_boot=n_boot, seed=seed, alpha=alpha)


def _measure(result: Comparison, side_a: _Side, side_b: _Side, resolved: pd.Series, *, n_boot: int, seed: int,
             alpha: float) -> Comparison:
    """Fill `result` with the paired differences, the confidence sequence and the spread of the two sides."""
    a, b = result.a, result.b
    f = pd.concat([x for x in (side_a.forecasts, side_b.forecasts) if len(x)], ignore_index=True) \
        if len(side_a.forecasts) or len(side_b.forecasts) else side_a.forecasts
    if not len(f):
        f = pd.DataFrame(columns=["cohort", "agent", "market_id", "question", "probability", "outcome_yes"])
    f = f.copy()
    f["question"] = f["cohort"].astype(str) + "/" + f["question"].astype(str)
    f["brier"] = (f["probability"].astype(float) - f["outcome_yes"].astype(float)) ** 2
    if "replicate" not in f.columns:
        f["replicate"] = 1
    # the unit of evidence: per cohort, seat and replicate one observation per market, its rounds averaged
    markets = market_rows(f.dropna(subset=["brier"])[["cohort", "agent", "market_id", "replicate", "brier"]],
                          ("brier",), keys=("cohort", "replicate"))
    markets["question"] = markets["cohort"].astype(str) + "/" + markets["market_id"].astype(str)
    options = dict(n_boot=n_boot, seed=seed)
    result.differences["forecast_brier"] = paired_difference(markets, a, b, "brier", metric="forecast_brier",
                                                             **options)
    bets = pd.concat([x for x in (side_a.bets, side_b.bets) if len(x)], ignore_index=True) \
        if len(side_a.bets) or len(side_b.bets) else pd.DataFrame()
    if len(bets):
        scored = per_bet_scores(bets)
        scored = scored.assign(question=scored["market_id"])
        result.differences["kelly_brier"] = paired_difference(scored, a, b, "brier_kelly", metric="kelly_brier",
                                                              **options)
    else:
        result.differences["kelly_brier"] = paired_difference(pd.DataFrame(
            columns=["agent", "cohort", "market_id", "question", "brier_kelly"]), a, b, "brier_kelly",
            metric="kelly_brier")
    cash = pd.concat([x for x in (side_a.cash, side_b.cash) if len(x)], ignore_index=True) \
        if len(side_a.cash) or len(side_b.cash) else pd.DataFrame()
    result.differences["pnl"] = paired_difference(_pnl(cash, a, b), a, b, "pnl", metric="pnl", statistic="total",
                                                  **options)
    result.sequence = _sequence(markets, a, b, resolved, alpha)
    result.spread = replicate_spread(f)
    return result


def _sequence(markets: pd.DataFrame, a: str, b: str, resolved: pd.Series, alpha: float) -> dict[str, Any]:
    """The confidence sequence on the per-market B − A forecast-Brier difference — one observation per market
    (the mean over its cohorts, rounds and replicates), the markets taken in the order their resolutions were
    recorded."""
    per = markets.groupby(["market_id", "agent"], sort=True)["brier"].mean().unstack("agent")
    if a not in per.columns or b not in per.columns:
        return {"n": 0, "alpha": alpha, "first_date": None}
    d = (per[b] - per[a]).dropna()
    when = pd.Series([resolved.get(m) for m in d.index], index=d.index)
    frame = pd.DataFrame({"d": d, "t": when}).dropna().sort_values(["t"], kind="stable")
    if frame.empty:
        return {"n": 0, "alpha": alpha, "first_date": None}
    cs = confidence_sequence(frame["d"].to_numpy(dtype=float), alpha, times=list(frame["t"]))
    first = None if cs.first_time is None else pd.Timestamp(cs.first_time).date().isoformat()
    return {"n": cs.n, "alpha": alpha, "estimate": float(cs.estimate[-1]), "lower": float(cs.lower[-1]),
            "upper": float(cs.upper[-1]), "first_date": first, "sign": cs.sign}


def _fmt(x: float | None, digits: int = 3, signed: bool = True) -> str:
    if x is None or not np.isfinite(x):
        return "—"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def compare_text(c: Comparison) -> str:
    """A short report of a Comparison for the terminal."""
    role = f" (variant: {c.factor})" if c.factor else ""
    lines = [f"{c.b} vs {c.a}{role} — B − A over shared questions, as of {c.as_of:%Y-%m-%d %H:%M} UTC",
             f"cohorts: {', '.join(c.cohorts) if c.cohorts else '(none holds both seats)'}", ""]
    head = (f"{'metric':<15} {'n':>5} {'B − A':>9} {'95% CI':>20} {'p':>6} {'executed':>9} "
            f"{'executed CI':>20} {'reps A/B':>8} {'rep.noise':>9}")
    lines += [head, "-" * len(head)]
    for name, d in c.differences.items():
        digits = 2 if name == "pnl" else 4
        share = "—" if not np.isfinite(d.replicate_share) else f"{d.replicate_share:.0%}"
        lines.append(f"{name:<15} {d.n:>5} {_fmt(d.estimate, digits):>9} "
                     f"{'[' + _fmt(d.lo, digits) + ', ' + _fmt(d.hi, digits) + ']':>20} "
                     f"{_fmt(d.p_value, 3, False):>6} {_fmt(d.executed, digits):>9} "
                     f"{'[' + _fmt(d.executed_lo, digits) + ', ' + _fmt(d.executed_hi, digits) + ']':>20} "
                     f"{str(d.replicates_a) + '/' + str(d.replicates_b):>8} {share:>9}")
    sq = c.sequence
    if sq.get("n"):
        when = (f"first excluded 0 on {sq['first_date']} ({'B' if sq['sign'] < 0 else 'A'} better)"
                if sq.get("first_date") else "has not excluded 0")
        lines += ["", f"anytime-valid {1 - sq['alpha']:.0%} confidence sequence on the forecast-Brier difference "
                      f"after {sq['n']} resolved markets: [{_fmt(sq['lower'], 4)}, {_fmt(sq['upper'], 4)}]; {when}"]
    if len(c.spread) and (c.spread["replicates"] > 1).any():
        lines += ["", "run-to-run spread: agent, replicates, SD of stated P(YES) (mean over questions), SD of the "
                      "forecast Brier across replicates [min, max]"]
        for r in c.spread.to_dict("records"):
            lines.append(f"  {r['agent']:<20} {r['replicates']:>2}  p_sd {_fmt(r['p_sd'], 4, False)}  brier_sd "
                         f"{_fmt(r['brier_sd'], 4, False)} [{_fmt(r['brier_min'], 4, False)}, "
                         f"{_fmt(r['brier_max'], 4, False)}]")
    lines += ["", "B − A < 0 on a Brier means B forecasts better; on pnl > 0 means B earned more (USD, realized). "
                  "One observation per (cohort, market): the mean over its rounds. Intervals: paired bootstrap "
                  "resampling distinct markets (a market shared by cohorts moves with all of them); with "
                  "replicates each market counts the mean of its replicates (run-to-run noise averaged out; rep.noise = the share of the "
                  "per-question variance still due to it); executed = replicate 1 only, as on the boards."]
    return "\n".join(lines)


__all__ = ["Comparison", "ablation_pairs", "ablation_pairs_by_cohort", "compare", "compare_text", "resolution_times"]
