"""Statistics: read the stored facts into the pure statistics of `arena.scoring` — paired-bootstrap intervals,
ranks with ties where differences are not significant, interim (provisional) scores against today's prices,
calibration, consistency and the proxy's validity — per cohort, for the pages and exports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.domain.ladders import detect_ladders, ladder_ranks
from arena.domain.market import YES, Market, MarketKind
from arena.money import MICRO
from arena.scoring.calibration import murphy_by_group, reliability_table
from arena.clock import utc
from arena.read.contamination import contamination, lineup_dates
from arena.scoring.consistency import (answer_scores, group_answers, ladder_violations, multi_class_brier,
                                      negation_violations, sum_deviation)
from arena.scoring.evidence import equal_to_reference, market_rows, paired_tiers
from arena.scoring.headline import REF_MARKET, REFERENCE_AGENTS, score_forecasts
from arena.scoring.interim import interim_scores
from arena.scoring.leaderboard import per_bet_scores
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.scoring.proxy import aggregate_rows
from arena.scoring.sequential import DEFAULT_ALPHA, compare_sequentially
from arena.scoring.stats import BootstrapResult, bootstrap_bet_metrics, paired_bootstrap
from arena.scoring.validity import proxy_validity
from arena.read.ablation import PairComparison, compare_pairs, resolution_times
from arena.read.breakdown import breakdowns, scored_with_facts



from arena.store.tables import AgentRow, CohortRow, DecisionRow, FillRow, ForecastRow, MarketRow
from arena.store.frames import bets_frame, forecast_set_frame, latest_resolutions, price_frame, rows_frame

DEFAULT_MIN_RESOLVED = PROVISIONAL_MIN_RESOLVED  # the one provisional rule (arena/scoring/provisional.py)
DEFAULT_DRAWS = 1000
MARKET_REFERENCE = "market"  # the consistency table's reference row: the venues' own YES prices, as a forecaster


@dataclass
class CohortStatistics:
    cohort: str
    min_resolved: int
    bootstrap: dict[str, BootstrapResult] = field(default_factory=dict)  # metric → intervals, tiers, p_first
    interim: pd.DataFrame = field(default_factory=pd.DataFrame)  # PROVISIONAL scores against today's prices
    reliability: pd.DataFrame = field(default_factory=pd.DataFrame)  # per agent and bin (stated forecasts)
    murphy: pd.DataFrame = field(default_factory=pd.DataFrame)  # per agent: ECE and the decomposition
    consistency: pd.DataFrame = field(default_factory=pd.DataFrame)  # per agent
    proxy_validity: dict[str, Any] = field(default_factory=dict)
    # ablation pairs of the lineup (variant vs base, one row per metric) and replicated seats' run-to-run spread
    ablations: pd.DataFrame = field(default_factory=pd.DataFrame)
    replicates: pd.DataFrame = field(default_factory=pd.DataFrame)
    # anytime-valid comparisons on the headline: each forecaster vs the cohort's No. 1 and vs the market reference
    sequences: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Brier − market per seat by days-to-resolution bucket and by market category (`scoring.breakdown`)
    by_horizon: pd.DataFrame = field(default_factory=pd.DataFrame)
    by_category: pd.DataFrame = field(default_factory=pd.DataFrame)

    def summary(self) -> pd.DataFrame:
        """One row per agent: the headline intervals and significance, ready for a table."""
        rows: dict[str, dict[str, Any]] = {}
        for metric, res in self.bootstrap.items():
            for rec in res.table.to_dict("records"):
                r = rows.setdefault(rec["agent"], {"agent": rec["agent"]})
                r[f"{metric}_ci_low"], r[f"{metric}_ci_high"] = rec["ci_low"], rec["ci_high"]
                if metric == "brier":
                    r.update(tier=rec["tier"], p_first=rec["p_first"], pct_beat_first=rec["pct_beat_first"],
                             p_vs_first_adj=rec["p_vs_first_adj"], provisional=rec["provisional"],
                             n_resolved=rec["n"])
        return pd.DataFrame(list(rows.values()))


def _cohort_ids(session: Session, names: list[str] | None) -> dict[int, str]:
    q = select(CohortRow.id, CohortRow.name).order_by(CohortRow.period_start)
    if names:
        q = q.where(col(CohortRow.name).in_(names))
    return dict(session.execute(q).all())


def _price_now(session: Session, as_of: datetime, bets: pd.DataFrame) -> pd.Series:
    """The YES price (or the bet outcome's own price on a multi-outcome market) at `as_of`, per bet."""
    prices = price_frame(session, as_of, bets["market_id"].unique().tolist())
    direct = {(m, o): p / MICRO for m, o, p in zip(prices["market_id"], prices["outcome"], prices["price_ppm"])}
    out = []
    for mid, outcome, kind in zip(bets["market_id"], bets["outcome"], bets["market_kind"]):
        key = (mid, YES) if kind == "binary" else (mid, outcome)
        out.append(direct.get(key, np.nan))
    return pd.Series(out, index=bets.index, dtype=float)


def _stated(session: Session, cohort_ids: list[int]) -> pd.DataFrame:
    """Stated forecasts (answered only: calibration and consistency judge what was said) with the market's kind,
    group and resolution: agent, cohort, question, probability."""
    rows = session.connection().execute(
        select(CohortRow.name, AgentRow.name, ForecastRow.market_id, ForecastRow.source, ForecastRow.probability,
               DecisionRow.round_key, DecisionRow.id, MarketRow.kind, MarketRow.group_id,
               ForecastRow.market_price_ppm, DecisionRow.as_of)
        .join(DecisionRow, DecisionRow.id == ForecastRow.decision_id)
        .join(AgentRow, AgentRow.id == ForecastRow.agent_id)
        .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
        .join(MarketRow, MarketRow.id == ForecastRow.market_id)
        .where(col(DecisionRow.cohort_id).in_(cohort_ids), col(ForecastRow.replicate) == 1)
    ).all()
    df = rows_frame(rows, ["cohort", "agent", "market_id", "source", "probability", "round", "decision_id", "kind",
                       "group_id", "market_price_ppm", "decided_at"])
    # a fixed order (the seats' answers are recorded in any order), so every sum over them is the same bits
    df = df.sort_values(["cohort", "round", "market_id", "agent", "source"], kind="stable").reset_index(drop=True)
    res = latest_resolutions(session).set_index("market_id")
    outcome, winner = [], []
    for mid in df["market_id"]:
        if mid in res.index and res.at[mid, "kind"] in ("winner", "probabilistic"):
            pay = res.at[mid, "payouts"]
            outcome.append(int(pay.get(YES, 0)) / MICRO if YES in pay else np.nan)
            winner.append(next((k for k, v in pay.items() if int(v) == MICRO), None))
        else:
            outcome.append(np.nan)
            winner.append(None)
    df["outcome_yes"] = outcome
    df["winner"] = winner
    return df


def _group_members(session: Session, stated: pd.DataFrame) -> pd.DataFrame:
    """The stored binary markets of every group that has a stated forecast: group_id, market_id, first_seen_at,
    close_time (to count the members a group had open at a round)."""
    groups = sorted({g for g in stated["group_id"] if g}) if len(stated) else []
    rows = session.connection().execute(
        select(MarketRow.group_id, MarketRow.id, MarketRow.first_seen_at, MarketRow.close_time)
        .where(col(MarketRow.group_id).in_(groups), col(MarketRow.kind) == "binary")
    ).all() if groups else []
    return pd.DataFrame([tuple(r) for r in rows], columns=["group_id", "market_id", "first_seen_at", "close_time"])


LADDER_MEMBER_COLUMNS = ["market_id", "ladder", "ladder_kind", "rank"]


def _ladder_members(session: Session, stated: pd.DataFrame) -> pd.DataFrame:
    """The threshold and date ladders (`domain.ladders`) among the binary markets with a stated forecast:
    market_id, ladder (its key), ladder_kind and rank (P(YES) must not decrease with it). A market in two ladders
    (a threshold one and a date one) has two rows."""
    ids = sorted(set(stated["market_id"])) if len(stated) else []
    rows = session.connection().execute(
        select(MarketRow.id, MarketRow.venue, MarketRow.question, MarketRow.close_time)
        .where(col(MarketRow.id).in_(ids), col(MarketRow.kind) == "binary")
    ).all() if ids else []
    markets = [Market(id=r[0], venue=r[1], question=r[2], kind=MarketKind.BINARY,
                      close_time=utc(r[3]) if r[3] is not None else None) for r in rows]
    return pd.DataFrame(ladder_ranks(detect_ladders(markets)), columns=["ladder", "ladder_kind", "market_id", "rank"]
                        )[LADDER_MEMBER_COLUMNS]


def _answers(session: Session, cohort_ids: list[int]) -> pd.DataFrame:
    """Bets on named outcomes of multi-outcome markets: the outcome chosen (from the BUY fill), the stated
    probability of that outcome and the resolved answer (seed 004's S′)."""
    rows = session.connection().execute(
        select(CohortRow.name, AgentRow.name, FillRow.market_id, FillRow.outcome, ForecastRow.probability)
        .join(ForecastRow, (ForecastRow.decision_id == FillRow.decision_id)
              & (ForecastRow.market_id == FillRow.market_id) & (ForecastRow.source == "bet"))
        .join(AgentRow, AgentRow.id == FillRow.agent_id)
        .join(CohortRow, CohortRow.id == FillRow.cohort_id)
        .join(MarketRow, MarketRow.id == FillRow.market_id)
        .where(FillRow.kind == "buy", MarketRow.kind == "multi",
               col(FillRow.cohort_id).in_(cohort_ids))
    ).all()
    df = rows_frame(rows, ["cohort", "agent", "market_id", "answer", "q"])
    res = latest_resolutions(session).set_index("market_id")
    df["resolved_answer"] = [
        next((k for k, v in res.at[m, "payouts"].items() if int(v) == MICRO), None)
        if m in res.index and res.at[m, "kind"] == "winner" else None for m in df["market_id"]]
    return df


def _pnl_by_market(session: Session, cohort_ids: list[int], names: dict[int, str]) -> pd.DataFrame:
    """Realized P/L per (agent, market) on markets whose positions have all settled (USD)."""
    rows = session.connection().execute(
        select(FillRow.cohort_id, AgentRow.name, FillRow.market_id, func.sum(FillRow.cash_micros),
               func.sum(FillRow.shares))
        .join(AgentRow, AgentRow.id == FillRow.agent_id)
        .where(col(FillRow.cohort_id).in_(cohort_ids))
        .group_by(FillRow.cohort_id, AgentRow.name, FillRow.market_id)
    ).all()
    df = rows_frame(rows, ["cohort_id", "agent", "market_id", "cash", "shares"])
    df = df[df["shares"] == 0] if len(df) else df
    return pd.DataFrame({"cohort": df["cohort_id"].map(names), "agent": df["agent"], "market_id": df["market_id"],
                         "pnl": df["cash"].astype(float) / MICRO})


def cohort_statistics(engine: Engine, as_of: datetime, cohort_names: list[str] | None = None, *,
                      n_boot: int = DEFAULT_DRAWS, seed: int = 0,
                      min_resolved: int = DEFAULT_MIN_RESOLVED,
                      ablations: Mapping[str, list[PairComparison]] | None = None) -> dict[str, CohortStatistics]:
    """Everything statistical about each cohort, recomputed from stored facts. Seeded: the same database
    gives the same intervals. `ablations`: the cohorts' ablation pairs already compared with the same `n_boot`
    and `seed` (`services.ablation.compare_pairs`), so a render compares each pair once; None compares them here."""
    out: dict[str, CohortStatistics] = {}
    with Session(engine) as s:
        names = _cohort_ids(s, cohort_names)
        if not names:
            return out
        ids = list(names)
        bets = bets_frame(s, ids)
        if len(bets):
            bets["price_yes_now"] = _price_now(s, as_of, bets)
        headline = forecast_set_frame(s, ids)
        stated = _stated(s, ids)
        members = _group_members(s, stated)
        ladders = _ladder_members(s, stated)
        answers = _answers(s, ids)
        pnl = _pnl_by_market(s, ids, names)
        resolved_at = resolution_times(s, as_of)
        dates = lineup_dates(engine, ids)
        if dates and len(headline):  # a replay's contaminated questions leave the headline, as on the boards
            headline = headline[~contamination(engine, utc(as_of), headline, dates).mask].reset_index(drop=True)
        split = breakdowns(scored_with_facts(s, headline, as_of), within=("cohort",)) if len(headline) else {}
    from arena.read.score import cohort_leaderboards

    board = cohort_leaderboards(engine, as_of, list(names.values()))
    options = dict(n_boot=n_boot, seed=seed, min_resolved=min_resolved)
    for name in names.values():
        st = CohortStatistics(name, min_resolved)
        if split:
            st.by_horizon, st.by_category = (split[k][split[k]["cohort"] == name].drop(columns=["cohort"])
                                             for k in ("skill_by_horizon", "skill_by_category"))
        b = bets[bets["cohort"] == name] if len(bets) else bets
        if len(b):
            scored = per_bet_scores(b)
            resolved = scored[scored["resolved"]]
            if len(resolved):
                st.bootstrap = bootstrap_bet_metrics(resolved, **options)
            st.interim = interim_scores(b)
        h = headline[headline["cohort"] == name].drop(columns=["cohort"]) if len(headline) else headline
        if len(h):  # the headline: forecast Brier of stated P(YES) on the forecast set, references included
            scored_h = score_forecasts(h)
            same = equal_to_reference(scored_h, REFERENCE_AGENTS)
            scored_h = scored_h[scored_h["brier"].notna()]
            if len(scored_h):
                # the unit of evidence: one observation per market, its rounds averaged (`scoring.evidence`)
                markets_h = market_rows(scored_h, ("brier",), keys=())
                res = paired_bootstrap(markets_h, "brier", metric="forecast_brier", stratum=None, market="market_id",
                                       **options)
                st.bootstrap["forecast_brier"] = res
                table = res.table
                n_q = scored_h.groupby("agent")["brier"].size()
                table["n"] = table["agent"].map(n_q).fillna(0).astype(np.int64)  # resolved questions, as on boards
                table["provisional"] = table["n"] < min_resolved
                tiers = paired_tiers(markets_h, value="brier", unit=("market_id",), cluster="market_id",
                                     eligible=table.loc[~table["provisional"], "agent"].tolist(), same_as=same,
                                     intervals=table[["agent", "ci_low", "ci_high"]]).series()
                table["tier"] = table["agent"].map(tiers).to_numpy(dtype=float)
                first = str(table["agent"].iloc[0]) if table["estimate"].notna().any() else None
                st.sequences = sequences(scored_h, first, resolved_at)
        p = pnl[pnl["cohort"] == name] if len(pnl) else pnl
        if len(p):
            st.bootstrap["pnl"] = paired_bootstrap(p, "pnl", statistic="total", metric="pnl",
                                                   higher_is_better=True, **options)
        f = stated[(stated["cohort"] == name) & (stated["source"] == "forecast_set")] if len(stated) else stated
        if len(f):
            q = f["market_id"].astype(str) + "@" + f["round"].astype(str)
            agg = aggregate_rows(q, f["probability"].to_numpy(dtype=float), aggregators=["logit_pool"])
            errs = f.assign(question=q, proxy_err=(f["probability"].to_numpy(dtype=float)
                                                   - agg["logit_pool"]) ** 2)
            st.bootstrap["crowd_proxy"] = paired_bootstrap(errs, "proxy_err", metric="crowd_proxy",
                                                           higher_is_better=False, market="question",
                                                           **{**options, "min_resolved": 0})
            known = f[f["outcome_yes"].notna()]
            if len(known):
                fc, oc, ag = (known["probability"].to_numpy(dtype=float), known["outcome_yes"].to_numpy(dtype=float),
                              known["agent"].to_numpy())
                st.reliability = reliability_table(fc, oc, groups=ag)
                st.murphy = murphy_by_group(fc, oc, ag)
        st.consistency = _consistency(stated[stated["cohort"] == name] if len(stated) else stated,
                                      answers[answers["cohort"] == name] if len(answers) else answers, members,
                                      ladders)
        cb = board[board["cohort"] == name] if len(board) else board
        if len(cb) and cb["brier"].notna().sum() >= 3:
            st.proxy_validity = proxy_validity(cb)
        pairs = ablations.get(name, []) if ablations is not None else None
        st.ablations, st.replicates = _ablations(engine, name, as_of, n_boot, seed, pairs)
        out[name] = st
    return out


SEQUENCE_COLUMNS = ("agent", "versus", "n", "estimate", "lower", "upper", "first_date", "verdict")


def sequences(scored: pd.DataFrame, first: str | None, resolved_at: pd.Series,
              alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """Anytime-valid comparisons on a cohort's forecast set: for every forecaster, the confidence sequence
    (`scoring.sequential`) on its per-market Brier (the mean over the market's rounds) minus the cohort's No. 1's
    (`first`) and minus the market reference's, the markets taken in the order their resolutions were recorded (`resolved_at`: market_id →
    time). A reader may look every day: the chance that any of these ever wrongly excludes 0 stays ≤ alpha per
    comparison. One row per comparison (SEQUENCE_COLUMNS): the running estimate and bounds after the last
    question, the first date the sequence excluded 0, and the verdict then ("better"/"worse" than the other,
    or "not yet")."""
    df = scored.assign(resolved_at=scored["market_id"].map(resolved_at))
    df = df[df["brier"].notna() & df["resolved_at"].notna()]
    agents = sorted(pd.unique(df["agent"]).tolist())
    pairs = [(a, first) for a in agents if first is not None and a != first]
    pairs += [(a, REF_MARKET) for a in agents if a != REF_MARKET and REF_MARKET in agents]
    rows = []
    for a, b in pairs:
        # one observation per market (the mean over its rounds), in resolution order: a market's rounds share
        # its outcome and the seat's error on it, so taking them one by one would overstate the evidence
        cs, _ = compare_sequentially(df, a, b, alpha, question="market_id", value="brier", time="resolved_at")
        if not cs.n:
            continue
        verdict = "not yet" if cs.first_time is None else ("better" if cs.sign < 0 else "worse")
        rows.append({"agent": a, "versus": "No. 1 (" + b + ")" if b == first else "market", "n": cs.n,
                     "estimate": float(cs.estimate[-1]), "lower": float(cs.lower[-1]), "upper": float(cs.upper[-1]),
                     "first_date": None if cs.first_time is None else pd.Timestamp(cs.first_time).date().isoformat(),
                     "verdict": verdict})
    return pd.DataFrame(rows, columns=list(SEQUENCE_COLUMNS))


def _ablations(engine: Engine, cohort: str, as_of: datetime, n_boot: int, seed: int,
               pairs: list[PairComparison] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every `variant_of` pair of the cohort's lineup compared (services.ablation; `pairs`: already compared),
    one row per metric, and the run-to-run spread of its replicated seats."""
    if pairs is None:
        pairs = compare_pairs(engine, as_of, [cohort], n_boot=n_boot, seed=seed).get(cohort, [])
    rows, spread = [], []
    for pair in pairs:
        base, variant, factor, c = pair.base, pair.variant, pair.factor, pair.comparison
        for metric, d in c.differences.items():
            rows.append({"pair": f"{variant} vs {base}", "factor": factor, **d.to_json(), "metric": metric,
                         "first_date": c.sequence.get("first_date") if metric == "forecast_brier" else None})
        spread.extend(r for r in c.spread.to_dict("records") if r["replicates"] > 1)
    spread_df = pd.DataFrame(spread).drop_duplicates("agent") if spread else pd.DataFrame()
    return pd.DataFrame(rows), spread_df


def _open_members(members: pd.DataFrame, group_id: str, at: datetime) -> int:
    """How many stored members of `group_id` were listed and not yet closed at `at` (a round's decision time)."""
    m = members[members["group_id"] == group_id] if len(members) else members
    return sum(1 for seen, close in zip(m["first_seen_at"], m["close_time"])
               if utc(seen) <= at and (close is None or pd.isna(close) or utc(close) > at))


def _ladder_coherence(stated: pd.DataFrame, ladders: pd.DataFrame) -> pd.DataFrame:
    """Per agent, plus the reference row "market": the ladder checks (`scoring.consistency.ladder_violations`)
    on each round's forecast set — a ladder is taken per round (`ladder@round`), with the members asked in it."""
    asked = stated[stated["source"] == "forecast_set"] if len(stated) else stated
    if not len(asked) or not len(ladders):
        return pd.DataFrame()
    rows = asked.merge(ladders, on="market_id")
    if not len(rows):
        return pd.DataFrame()
    rows = rows.assign(ladder=rows["ladder"] + "@" + rows["round"].astype(str))
    priced = rows[rows["market_price_ppm"].notna()].drop_duplicates(["ladder", "market_id"])
    market = priced.assign(agent=MARKET_REFERENCE, probability=priced["market_price_ppm"].astype(float) / MICRO)
    out = ladder_violations(pd.concat([rows, market], ignore_index=True))
    return out.set_index("agent") if len(out) else pd.DataFrame()


def _consistency(stated: pd.DataFrame, answers: pd.DataFrame, members: pd.DataFrame | None = None,
                 ladders: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per agent, plus the reference row "market" (the venues' YES prices at decision time, checked the same
    way): how far stated probabilities of an exclusive group stray from summing to 1; seed 003's negation
    violations on two-member groups (P and ¬P); seed 004's S′ on answers — named outcomes bet on in
    multi-outcome markets, and on each complete group the member given the highest P(YES); and on each complete
    resolved group the full multi-class Brier of the stated P(YES) over its members (`multi_class_brier`); and on
    the threshold and date ladders of each round's set (`ladders`: `_ladder_members`), the pairs whose order is
    violated (`_ladder_coherence`).

    A group is taken per round (`group@round`). Its size is the number of its stored markets listed and open at
    the round (at least the members anyone forecast), so a group only partly in the forecast set is not taken
    for complete: it counts only when its partial sum already exceeds 1 (see `probability_sums`), and yields no
    negation pair or answer.
    """
    parts = []
    members = members if members is not None else pd.DataFrame(columns=["group_id", "market_id", "first_seen_at",
                                                                         "close_time"])
    grouped = stated[(stated["group_id"] != "") & (stated["source"] == "forecast_set")] if len(stated) else stated
    if len(grouped):
        grouped = grouped.assign(group=grouped["group_id"] + "@" + grouped["round"].astype(str))
        size = {}
        for (gid, key), g in grouped.groupby(["group_id", "group"]):
            size[key] = max(_open_members(members, gid, utc(min(g["decided_at"]))), g["market_id"].nunique())
        grouped = grouped.assign(group_size=grouped["group"].map(size))
        priced = grouped[grouped["market_price_ppm"].notna()].drop_duplicates(["group", "market_id"])
        market = priced.assign(agent=MARKET_REFERENCE,
                               probability=priced["market_price_ppm"].astype(float) / MICRO)
        per_round = pd.concat([grouped, market], ignore_index=True)
        parts.append(sum_deviation(per_round, group="group", group_size="group_size").set_index("agent"))
        pairs = []
        for (agent, grp), g in per_round.groupby(["agent", "group"]):
            if len(g) == 2 and int(g["group_size"].iloc[0]) == 2:  # a complete two-member exclusive group:
                a, b = g.sort_values("market_id")["probability"].tolist()  # each is the other's negation
                pairs.append({"agent": agent, "p": a, "p_not": b})
        if pairs:
            parts.append(negation_violations(pd.DataFrame(pairs)).set_index("agent"))
        multi = multi_class_brier(per_round)
        if len(multi):
            parts.append(multi.set_index("agent"))
        answers = pd.concat([answers[["agent", "answer", "q", "resolved_answer"]] if len(answers) else None,
                             group_answers(per_round)[["agent", "answer", "q", "resolved_answer"]]],
                            ignore_index=True)
    if len(answers):
        parts.append(answer_scores(answers).set_index("agent").rename(columns={"n": "n_answers"}))
    if ladders is not None and len(ladders):
        coherence = _ladder_coherence(stated, ladders)
        if len(coherence):
            parts.append(coherence)
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, axis=1).reset_index().rename(columns={"index": "agent"})
    out["reference"] = out["agent"] == MARKET_REFERENCE
    return out.sort_values(["reference", "agent"], kind="stable").reset_index(drop=True)
