"""No reward for abstaining: a seat that leaves forecast-set questions out — a market-follower that states the
price only where it is ≤ 0.10 or ≥ 0.90, what the parser stores when a model omits the others — runs through the
real round path (simulated cohorts, `decide.run_round`, the stored asked sets, `standings`) and is scored as if it
had stated 0.5 on every question it left out. Scored on its answered questions alone it would lead the board;
with the imputation it ranks below the honest market-follower and oracle-fair, on the headline and on the
difficulty-adjusted and IRT columns, on every cohort board and the overall board."""

from datetime import datetime, timedelta, timezone

from arena.agents.baselines import MarketFollower, demo_lineup
from arena.domain.decision import Decision
from arena.domain.sizing import CohortRules
from arena.read.standings import boards_json, standings
from arena.scoring.board import overall_board
from arena.cache.frame_cache import cohort_frames
from arena.store.frames import forecast_set_frame
from arena.store.tables import CohortRow
from arena.usecases.cohorts import LineupEntry
from arena.usecases.simulation import simulate
from arena.venues.simulated import SimulatedUniverse
from sqlmodel import Session, select

START = datetime(2026, 1, 4, tzinfo=timezone.utc)
LATER = datetime(2027, 1, 1, tzinfo=timezone.utc)
ABSTAINER = "selective-follower"


class SelectiveFollower(MarketFollower):
    """The market-follower, leaving out every question whose price lies in (0.10, 0.90)."""

    version = "selective-follower-1"

    def decide(self, view):  # type: ignore[no-untyped-def]
        d = super().decide(view)
        kept = {mid: p for mid, p in d.forecasts.items() if not 0.10 < p < 0.90}
        return Decision(forecasts=kept, reasoning="states the price where it is sure; leaves the rest out")


def _run(engine):  # type: ignore[no-untyped-def]
    universe = SimulatedUniverse.generate(7, START, weeks=6, markets_per_week=20)
    agents = [a for a in demo_lineup(universe, 7) if a.name in ("oracle-sharp", "oracle-fair", "market-follower",
                                                                 "always-0.5", "random")]
    agents.append(SelectiveFollower(ABSTAINER))
    lineup = [LineupEntry(a.name, "scripted") for a in agents]
    simulate(engine, universe, {a.name: a for a in agents}, START, 3, CohortRules(decision_weeks=2), lineup,
             universe.end + timedelta(days=1), forecast_k=12)


def _rank(rows, name, key="agent"):  # type: ignore[no-untyped-def]
    return next(r["rank"] for r in rows if r[key] == name)


def test_leaving_questions_out_ranks_no_better_than_stating_half(engine) -> None:  # type: ignore[no-untyped-def]
    _run(engine)
    with Session(engine) as s:
        ids = list(s.scalars(select(CohortRow.id).order_by(CohortRow.id)))
        frame = forecast_set_frame(s, ids, LATER)
    mine = frame[frame["agent"] == ABSTAINER]
    left_out = mine[~mine["answered"]]
    # it did leave in-band questions out, and each is scored as a stated 0.5 at the price shown
    assert len(left_out) > 0.3 * len(mine)
    assert (left_out["probability"] == 0.5).all() and left_out["market_price"].between(0.10, 0.90).all()
    assert frame[frame["agent"] != ABSTAINER]["answered"].all()
    # every seat is scored on the same questions
    sizes = frame.groupby("agent").size()
    assert sizes.nunique() == 1

    # sensitivity: scored on its answered questions alone (the old rule), the abstainer leads the overall board,
    # on the headline and on the difficulty-adjusted Brier, ahead of both oracles
    answered_only = overall_board(frame[frame["answered"]], *_others(engine), n_boot=200).set_index("model")
    assert answered_only["rank"].idxmin() == ABSTAINER
    assert answered_only["brier_adjusted"].idxmin() == ABSTAINER

    data = boards_json(standings(engine, LATER))
    for c in data["cohorts"]:
        rows = c["rows"]
        me = next(r for r in rows if r["agent"] == ABSTAINER)
        assert me["n_answered"] < me["n_asked"] == next(r["n_asked"] for r in rows if r["agent"] == "oracle-fair")
        for better in ("oracle-fair", "market-follower"):
            assert _rank(rows, ABSTAINER) > _rank(rows, better), (c["name"], better)
    overall = data["overall"]
    for better in ("oracle-fair", "market-follower"):
        assert _rank(overall, ABSTAINER, "model") > _rank(overall, better, "model")
    # the fitted columns score the imputed rows too
    for key, sign in (("brier_adjusted", 1), ("irt_skill", -1)):
        ranked = boards_json(standings(engine, LATER, rank_by=key))
        for rows, name in [(c["rows"], "agent") for c in ranked["cohorts"]] + [(ranked["overall"], "model")]:
            get = {r[name]: r[key] for r in rows}
            assert sign * get[ABSTAINER] > sign * get["market-follower"], key
            assert _rank(rows, ABSTAINER, name) > _rank(rows, "oracle-fair", name), key


def _others(engine):  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        cohorts = [(c.id, c.name) for c in s.scalars(select(CohortRow).order_by(CohortRow.id))]
    f = cohort_frames(engine, cohorts, LATER, cache=False)
    return f.bets, f.portfolios




class Answers:
    """States 0.3 on the asked markets it is given (all of them by default); `fail` raises instead."""

    def __init__(self, only=None, fail=False):  # type: ignore[no-untyped-def]
        self.only, self.fail = only, fail

    def decide(self, view):  # type: ignore[no-untyped-def]
        if self.fail:
            raise RuntimeError("endpoint down")
        return Decision(forecasts={m: 0.3 for m in view.forecast_set if self.only is None or m in self.only})


def test_who_was_asked_what(engine) -> None:  # type: ignore[no-untyped-def]
    """The rule of `forecast_set_frame`: a completed decision (a failed one too) was asked the round's set, less
    the markets closed by its decision time; a claim in progress, and a seat added after the round, were not."""
    from sqlalchemy import update

    from arena.domain.forecast_set import ForecastSetRules
    from arena.domain.market import YES, Market, Quote
    from arena.money import Price
    from arena.store.engine import session_scope
    from arena.store.tables import AgentRow, DecisionRow, MarketRow
    from arena.usecases import decide, ingest
    from arena.usecases.cohorts import start_cohort

    t0 = START
    ms = [Market(id=f"sim:{n}", venue="sim", question=f"{n}?", close_time=t0 + timedelta(days=30)) for n in "123"]
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, ms, [Quote(m.id, {YES: Price.of(p)}, t0, t0, source="t")
                                               for m, p in zip(ms, ("0.40", "0.60", "0.20"))])
        cohort, _ = start_cohort(s, t0, CohortRules(forecast=ForecastSetRules()),
                                 [LineupEntry(n) for n in ("full", "part", "down", "busy")], t0)
    at = t0 + timedelta(minutes=5)
    decide.run_round(engine, cohort, {"full": Answers(), "part": Answers(only={"sim:1"}), "down": Answers(fail=True)},
                     "w1", at, forecast_k=3)
    with Session(engine) as s:
        busy = s.exec(select(AgentRow).where(AgentRow.cohort_id == cohort.id, AgentRow.name == "busy")).one()
    decide.claim(engine, cohort.id, busy.id, "w1", at)  # claimed, never completed
    with session_scope(engine) as s:  # a seat added after round w1
        s.add(AgentRow(cohort_id=cohort.id, name="late", kind="scripted"))
    # round w2: market 3 closes between the first seats' decision and a resumed one's
    at2 = t0 + timedelta(days=7)
    with session_scope(engine) as s:
        ingest.record_observations(s, at2, ms, [Quote(m.id, {YES: Price.of(p)}, at2, at2, source="t")
                                                for m, p in zip(ms, ("0.45", "0.60", "0.20"))])
    decide.run_round(engine, cohort, {"full": Answers(), "late": Answers()}, "w2", at2, forecast_k=3)
    with session_scope(engine) as s:
        s.execute(update(MarketRow).where(MarketRow.id == "sim:3").values(close_time=at2 + timedelta(hours=1)))
    decide.run_round(engine, cohort, {"part": Answers()}, "w2", at2 + timedelta(hours=2), forecast_k=3)

    with Session(engine) as s:
        f = forecast_set_frame(s, [cohort.id])
        before_w2 = forecast_set_frame(s, [cohort.id], at2 - timedelta(days=1))
    got = {(a, q): (p, ok) for a, q, p, ok in zip(f["agent"], f["question"], f["probability"], f["answered"])}
    w1 = {(a, f"sim:{m}@w1") for a in ("full", "part", "down") for m in "123"}
    w2 = {(a, f"sim:{m}@w2") for a in ("full", "late") for m in "123"} | {("part", "sim:1@w2"), ("part", "sim:2@w2")}
    assert set(got) == w1 | w2
    assert got[("part", "sim:1@w1")] == (0.3, True) and got[("part", "sim:2@w1")] == (0.5, False)
    assert all(got[("down", f"sim:{m}@w1")] == (0.5, False) for m in "123")
    assert all(got[k][1] for k in w2)
    assert set(before_w2["question"].str.endswith("@w1")) == {True} and len(before_w2) == 9
    # the imputed rows carry the price shown when the set was chosen
    shown = dict(zip(f["question"], f["market_price"]))
    assert shown["sim:3@w1"] == 0.2 and f[f["question"] == "sim:2@w1"]["market_price"].tolist() == [0.6] * 3
