"""Replicates through the real decide path: k independent asks per decision under one claim, replicate 1's
actions executed, every replicate's forecasts and model calls stored and tagged, and a crashed decision
resumed per replicate (the replicates already recorded are not asked again)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import select, update
from sqlmodel import Session

from arena.agents.view import AgentView
from arena.domain.decision import Bet, Decision, ModelCall
from arena.domain.market import NO, YES, Market, Quote
from arena.domain.sizing import CohortRules
from arena.money import Money, Price
from arena.usecases import decide, ingest
from arena.usecases.cohorts import LineupEntry, start_cohort

from arena.store.engine import session_scope
from arena.store.tables import AgentRow, DecisionReplicateRow, DecisionRow, FillRow, ForecastRow, ModelCallRow
from arena.store.frames import forecast_set_frame

T0 = datetime(2026, 1, 4, 0, 5, tzinfo=timezone.utc)


class Crash(BaseException):
    """Not an Exception: it escapes the agent-failure handling, as a killed process would stop the round."""


class PerReplicate:
    """States P(YES) = 0.1 × replicate on sim:1, bets YES in replicate 1 and NO in the others; one model call
    per ask. `crash_at`: replicate whose ask crashes the round (once); `fail_at`: replicate that raises."""

    def __init__(self, name: str, crash_at: int | None = None, fail_at: int | None = None) -> None:
        self.name, self.crash_at, self.fail_at = name, crash_at, fail_at
        self.asked: list[int] = []

    def decide(self, view: AgentView) -> Decision:
        r = view.replicate
        self.asked.append(r)
        if r == self.crash_at:
            self.crash_at = None
            raise Crash()
        if r == self.fail_at:
            raise RuntimeError(f"endpoint down in replicate {r}")
        side = YES if r == 1 else NO
        call = ModelCall(attempt=1, prompt=f"prompt r{r}", raw_response=f"reply r{r}", parsed={"r": r})
        return Decision((Bet("sim:1", side, Money.of(100), 0.1 * r),), {"sim:1": round(0.1 * r, 4)},
                        reasoning=f"replicate {r}", calls=(call,))


def seed(engine, replicates: int = 3):  # type: ignore[no-untyped-def]
    m = Market(id="sim:1", venue="sim", question="Will it?", close_time=T0 + timedelta(days=5), volume_24h=10.0)
    with session_scope(engine) as s:
        ingest.record_observations(s, T0 - timedelta(hours=1), [m],
                                   [Quote("sim:1", {YES: Price.of("0.40")}, T0 - timedelta(hours=1),
                                          T0 - timedelta(hours=1), source="t")])
        cohort, _ = start_cohort(s, T0 - timedelta(minutes=5), CohortRules(),
                                 [LineupEntry("solo", config={"replicates": replicates}), LineupEntry("plain")], T0)
        return cohort


def test_each_replicate_is_asked_stored_and_tagged_and_replicate_one_is_executed(engine):
    cohort = seed(engine)
    solo, plain = PerReplicate("solo"), PerReplicate("plain")
    outs = decide.run_round(engine, cohort, {"solo": solo, "plain": plain}, "w1", T0, forecast_k=1)
    assert [(o.agent, o.status) for o in outs] == [("solo", "executed"), ("plain", "executed")]
    assert solo.asked == [1, 2, 3] and plain.asked == [1]  # an unreplicated seat is asked once, as before
    with Session(engine) as s:
        fills = s.scalars(select(FillRow).where(FillRow.kind == "buy")).all()
        assert sorted(f.outcome for f in fills) == [YES, YES]  # replicate 1's YES, never the others' NO
        rows = s.exec(select(ForecastRow.agent_id, ForecastRow.source, ForecastRow.replicate, ForecastRow.probability)
                      .order_by(ForecastRow.agent_id, ForecastRow.source, ForecastRow.replicate)).all()
        solo_id = s.scalar(select(AgentRow.id).where(AgentRow.name == "solo"))
        solo_decision = s.scalar(select(DecisionRow.id).where(DecisionRow.agent_id == solo_id))
        solo_rows = [(src, r, p) for a, src, r, p in rows if a == solo_id]
        assert solo_rows == [("bet", 1, 0.1), ("forecast_set", 1, 0.1), ("forecast_set", 2, 0.2),
                             ("forecast_set", 3, 0.3)]
        calls = s.exec(select(ModelCallRow.decision_id, ModelCallRow.attempt, ModelCallRow.replicate,
                              ModelCallRow.prompt).order_by(ModelCallRow.decision_id, ModelCallRow.attempt)).all()
        assert [(a, r, p) for d, a, r, p in calls if d == solo_decision] == [(1, 2, "prompt r2"), (2, 3, "prompt r3"),
                                                               (3, 1, "prompt r1")]
        reps = s.exec(select(DecisionReplicateRow.replicate, DecisionReplicateRow.status,
                             DecisionReplicateRow.actions).order_by(DecisionReplicateRow.replicate)).all()
        assert [(r, st) for r, st, _ in reps] == [(1, "executed"), (2, "answered"), (3, "answered")]
        assert reps[1][2][0]["outcome"] == NO  # the intended actions of the others are kept
        # the headline reads the executed replicate only; the comparison reads all of them
        assert sorted(forecast_set_frame(s, [cohort.id])["probability"]) == [0.1, 0.1]
        assert sorted(forecast_set_frame(s, [cohort.id], all_replicates=True)["replicate"]) == [1, 1, 2, 3]
    again = decide.run_round(engine, cohort, {"solo": solo, "plain": plain}, "w1", T0, forecast_k=1)
    assert {o.status for o in again} == {"skipped"} and solo.asked == [1, 2, 3]  # a re-run asks nobody


def test_a_crashed_decision_resumes_per_replicate(engine):
    cohort = seed(engine, replicates=4)
    solo = PerReplicate("solo", crash_at=3)
    try:
        decide.run_round(engine, cohort, {"solo": solo}, "w1", T0, forecast_k=1, concurrency=1)
    except Crash:
        pass
    else:  # pragma: no cover - the crash must stop the round
        raise AssertionError("the round should have crashed")
    assert solo.asked == [1, 2, 3]
    with session_scope(engine) as s:
        assert s.scalars(select(DecisionReplicateRow.replicate)).all() == [2]  # replicate 2 survived the crash
        s.execute(update(DecisionRow).values(lease_until=T0 - timedelta(days=1)))  # the dead runner's lease ran out
    solo.asked.clear()
    (out,) = [o for o in decide.run_round(engine, cohort, {"solo": solo}, "w1", T0, forecast_k=1)
              if o.agent == "solo"]
    assert (out.status, out.attempt) == ("executed", 2)
    assert solo.asked == [1, 3, 4]  # replicate 2 was not asked again
    with Session(engine) as s:
        assert sorted(s.scalars(select(ForecastRow.replicate).where(ForecastRow.source == "forecast_set"))) == [
            1, 2, 3, 4]
        numbers = sorted(s.scalars(select(ModelCallRow.attempt)))
        assert numbers == [1, 2, 3, 4]  # calls numbered across replicates and tries, none lost or doubled
        assert len(s.scalars(select(FillRow)).all()) == 1


def test_a_failed_replicate_is_recorded_and_the_executed_one_still_trades(engine):
    cohort = seed(engine)
    solo = PerReplicate("solo", fail_at=2)
    (out, _) = decide.run_round(engine, cohort, {"solo": solo}, "w1", T0, forecast_k=1)
    assert out.status == "executed"
    with Session(engine) as s:
        reps = dict(s.exec(select(DecisionReplicateRow.replicate, DecisionReplicateRow.status)).all())
        assert reps == {1: "executed", 2: "failed", 3: "answered"}
        err = s.scalar(select(DecisionReplicateRow.error).where(DecisionReplicateRow.replicate == 2))
        assert "endpoint down in replicate 2" in err
        assert sorted(s.scalars(select(ForecastRow.replicate).where(ForecastRow.source == "forecast_set"))) == [1, 3]
