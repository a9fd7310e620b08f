"""The call journal: every model call is on record from the moment it is sent. A runner that loses its claim
mid-call leaves an "abandoned" call the next runner finds (numbered before its own), and completes it with the
reply and cost if the reply still comes; an agent that fails mid-call leaves an abandoned call with the reason;
a runner without the claim sends nothing. Runs on SQLite and PostgreSQL (the stand-in answers over loopback)."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from sqlmodel import Session
from standin import json_reply, slow

from arena.agents.view import AgentView
from arena.config import parse_config
from arena.domain.decision import Decision
from arena.ops.leases import LeasePolicy
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow, DecisionAttemptRow, DecisionRow, ModelCallRow
from arena.usecases.call_journal import ClaimLost, StoreCallJournal
from arena.usecases.decide import claim_decision, decide_claimed
from arena.usecases.lifecycle import build_agent, start_current_cohort

from test_round_retries import REPLY, SUNDAY, seed, toml

AT = SUNDAY + timedelta(minutes=5)
ENV = {"ARENA_TEST_RETRY_KEY": "k"}


def _seat(engine):  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        cohort = s.scalars(select(CohortRow)).one()
        row = s.scalars(select(AgentRow).where(AgentRow.cohort_id == cohort.id)).one()
        s.expunge_all()
    return cohort, row


def _calls(engine) -> list[tuple[int, int, str, int | None]]:  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        return [(c.attempt, c.decision_attempt, c.status, c.cost_micros) for c in
                s.scalars(select(ModelCallRow).order_by(ModelCallRow.attempt))]


def test_a_call_cut_off_by_a_takeover_is_abandoned_then_completed_by_its_late_reply(engine, standin):
    seed(engine, SUNDAY)
    cfg = parse_config(toml(standin.base_url) + "price_per_million_input = 10.0\nprice_per_million_output = 20.0\n")
    start_current_cohort(engine, SUNDAY, cfg)
    cohort, row = _seat(engine)
    slow_reply = json.dumps({"actions": [], "forecasts": {"sim:1": 0.4}, "reasoning": "late"})
    standin.add("vendor/model-a", slow(slow_reply, 2.5), json_reply(REPLY))
    short = LeasePolicy(0.3)
    first, _ = claim_decision(engine, cohort.id, row.id, f"{SUNDAY:%Y-%m-%d}", AT, lease=short)
    assert first is not None
    outcome: list[object] = []
    runner_a = threading.Thread(target=lambda: outcome.append(decide_claimed(
        engine, cohort, row, build_agent(row, ENV), first, AT)))  # no heartbeat: its lease runs out mid-call
    runner_a.start()
    deadline = time.monotonic() + 10
    while not standin.requests:
        assert time.monotonic() < deadline, "runner A never sent its call"
        time.sleep(0.02)
    assert _calls(engine) == [(1, 1, "in_flight", None)]  # on record before any reply
    time.sleep(0.4)  # A's lease expires while its call is out
    second, why = claim_decision(engine, cohort.id, row.id, f"{SUNDAY:%Y-%m-%d}", AT, lease=LeasePolicy(60))
    assert why == "claimed" and second is not None and second.attempt == 2
    out_b = decide_claimed(engine, cohort, row, build_agent(row, ENV), second, AT)
    assert out_b.status == "executed"
    calls = _calls(engine)
    assert [(a, d, st) for a, d, st, _ in calls] == [(1, 1, "abandoned"), (2, 2, "done")]
    runner_a.join(timeout=20)
    assert [getattr(o, "status", None) for o in outcome] == ["lost"]
    calls = _calls(engine)
    assert [(a, d, st) for a, d, st, _ in calls] == [(1, 1, "done"), (2, 2, "done")]
    assert calls[0][3] is not None and calls[0][3] > 0  # the late reply's cost is on record
    with Session(engine) as s:
        d = s.scalars(select(DecisionRow)).one()
        assert (d.status, d.reasoning, d.attempts) == ("executed", "r", 2)  # B's decision stands, not A's
        late = s.scalars(select(ModelCallRow).where(ModelCallRow.attempt == 1)).one()
        assert "late" in late.raw_response and late.prompt.startswith("[")
        assert [t.attempt for t in s.scalars(select(DecisionAttemptRow))] == [2]


class _DiesMidCall:
    """An agent whose call is sent (journaled) and whose process then fails before the reply is read."""

    name = "model-a"

    def decide(self, view: AgentView) -> Decision:
        assert view.journal is not None
        view.journal.started(1, '[{"role": "user", "content": "q"}]', "decision-v3.1")
        raise ConnectionResetError("connection reset while reading the reply")


def test_an_agent_failing_mid_call_leaves_the_call_abandoned_with_the_reason(engine, standin):
    seed(engine, SUNDAY)
    cfg = parse_config(toml(standin.base_url))
    start_current_cohort(engine, SUNDAY, cfg)
    cohort, row = _seat(engine)
    c, _ = claim_decision(engine, cohort.id, row.id, f"{SUNDAY:%Y-%m-%d}", AT)
    assert c is not None
    out = decide_claimed(engine, cohort, row, _DiesMidCall(), c, AT)  # type: ignore[arg-type]
    assert out.status == "failed"
    with Session(engine) as s:
        (call,) = s.scalars(select(ModelCallRow)).all()
        assert (call.attempt, call.status, call.cost_micros) == (1, "abandoned", None)
        assert "ConnectionResetError" in call.error and "before this call's reply" in call.error
        assert s.scalars(select(DecisionRow)).one().status == "failed"


def test_a_runner_without_the_claim_sends_nothing(engine, standin):
    seed(engine, SUNDAY)
    start_current_cohort(engine, SUNDAY, parse_config(toml(standin.base_url)))
    cohort, row = _seat(engine)
    c, _ = claim_decision(engine, cohort.id, row.id, f"{SUNDAY:%Y-%m-%d}", AT)
    assert c is not None
    with session_scope(engine) as s:  # another runner took it over
        s.get(DecisionRow, c.decision_id).claimed_by = "someone-else"  # type: ignore[union-attr]
    journal = StoreCallJournal(engine, c.decision_id, c.token, c.attempt, 1, AT)
    with pytest.raises(ClaimLost):
        journal.started(1, "[]", "decision-v3.1")
    assert _calls(engine) == []
    out = decide_claimed(engine, cohort, row, build_agent(row, ENV), c, AT)
    assert out.status == "lost" and standin.requests == [] and _calls(engine) == []
