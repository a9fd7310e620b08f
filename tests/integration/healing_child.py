"""A job run in a real child process that stops mid-job until it is killed (tests/integration/test_healing.py).

    python healing_child.py JOB DB_URL AT MARKER

Runs the job as `arena jobs run JOB --db DB_URL` does (`arena.jobs.scheduler.run_now` on a configured runtime), on an
arena clock fixed at AT (ISO, UTC; leases stay on real time), with one hook that, at a known point in the middle of the job, creates MARKER and then blocks forever:

- decision_round: the agent seated "blocker" blocks once the other agents' decisions are written (the
  other seats bet, see `scripted_agent`);
- settle: after the settlement fills are committed, before the finished cohorts are completed;
- mark: inside the marking transaction (valuing the positions), before the snapshots are written.

The lease is whatever ARENA_LEASE_SECONDS says (the test sets a short one). Never used outside tests.
"""

from __future__ import annotations

import sys
import threading
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlmodel import Session

from arena.domain.decision import Bet, Decision
from arena.domain.market import YES
from arena.money import Money


class Better:
    """Bets $100 on YES of every market it is shown (the seats of the kill tests)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def decide(self, view):  # type: ignore[no-untyped-def]
        return Decision(tuple(Bet(m.market.id, YES, Money.of(100)) for m in view.markets))


def scripted_agent(row, *args, **kwargs):  # type: ignore[no-untyped-def]
    """`lifecycle.build_agent` for the kill tests: every seat is a Better."""
    return Better(row.name)


def _block(marker: Path) -> None:
    marker.write_text("blocked")
    threading.Event().wait()  # until kill -9


def main(job: str, url: str, at: str, marker: Path) -> int:
    from arena.clock import FixedClock
    from arena.config import default_config
    from arena.usecases import lifecycle
    from arena.store.engine import open_store
    from arena.store.tables import DecisionRow
    from arena.jobs.runtime import Runtime, configure
    from arena.jobs.scheduler import run_now

    rt = configure(Runtime(engine=open_store(url), clock=FixedClock(datetime.fromisoformat(at)),
                           config=default_config(), environ={}))

    if job == "decision_round":
        class Blocker:
            name = "blocker"

            def decide(self, view):  # type: ignore[no-untyped-def]
                with Session(rt.engine) as s:  # wait until the other seats' decisions are written
                    for _ in range(2000):
                        n = s.scalar(select(func.count()).select_from(DecisionRow)
                                     .where(DecisionRow.status != "claimed"))
                        if n is not None and n >= 2:
                            break
                        s.rollback()
                        threading.Event().wait(0.01)
                _block(marker)

        lifecycle.build_agent = lambda row, *a, **k: Blocker() if row.name == "blocker" else scripted_agent(row)
    elif job == "settle":
        import arena.jobs.settle

        arena.jobs.settle.complete_cohorts = lambda *a, **k: _block(marker)
    elif job == "mark":
        import arena.usecases.mark

        arena.usecases.mark.agent_values = lambda *a, **k: _block(marker)  # both backends value through it
    out = run_now(job)
    print(out.status, out.counts)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])))
