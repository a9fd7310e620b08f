"""`arena replay run`: the scheduler's own jobs (sync, cohort start, decision round, mark, settle) fired on a
simulated clock through the recorded markets. It completes cohorts, marks daily and settles; two runs with the
same inputs write the same facts and give byte-identical boards and sites; and the leaderboard as of T of a longer run equals that of a run stopped at T
(nothing written after T changes what was known at T).

The window is three weeks, cohorts decide for one week, and settlement runs daily here (a [schedule] override) to keep the test quick; the
benchmark runs the full three months on the default schedule."""

from __future__ import annotations

import json
import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.cli import main
from arena.store.engine import make_engine
from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, JobRunRow, PortfolioSnapshotRow,
                                ResolutionRow)

pytestmark = pytest.mark.shared

CONFIG = """
[cohort]
decision_weeks = 1
horizon_days = 14

[schedule]
settle = "0 1 * * *"
"""


@pytest.fixture
def replay_run(shared_dir, tmp_path, new_url):  # type: ignore[no-untyped-def]
    replay = shared_dir / "data" / "replay" / "replay_markets.jsonl"
    config = tmp_path / "arena.toml"
    config.write_text(CONFIG)

    def run(until: str, start: str = "2025-11-02") -> str:
        url = new_url()
        assert main(["replay", "run", str(replay), "--from", start, "--until", until, "--baselines-only",
                     "--config", str(config), "--db", url]) == 0
        return url

    return run


def facts(url: str) -> dict[str, list[tuple]]:
    """What the arena decided and what happened: fills, decisions and resolutions, by natural keys."""
    eng = make_engine(url)
    try:
        with Session(eng) as s:
            names = {a.id: (c.name, a.name) for a, c in s.execute(
                select(AgentRow, CohortRow).join(CohortRow, CohortRow.id == AgentRow.cohort_id)).all()}
            # (a fill's key holds its decision's surrogate id, which depends on which agent's claim of a
            # concurrent round was inserted first: ids aside, the facts must be equal)
            fills = sorted((*names[r.agent_id], str(r.at)[:19], r.market_id, r.outcome, r.kind, r.shares,
                            r.cash_micros, r.cost_micros, r.price_ppm, r.provenance) for r in s.scalars(select(FillRow)))
            decisions = sorted((*names[r.agent_id], r.round_key, r.status, str(r.as_of)[:19],
                                json.dumps(r.actions, sort_keys=True), r.error, r.cash_at_start_micros)
                               for r in s.scalars(select(DecisionRow)))
            resolutions = sorted((r.market_id, r.version, r.kind, json.dumps(r.payouts, sort_keys=True),
                                  str(r.recorded_at)[:19]) for r in s.scalars(select(ResolutionRow)))
        return {"fills": fills, "decisions": decisions, "resolutions": resolutions}
    finally:
        eng.dispose()


def board(url: str, as_of: str, capsys) -> dict:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main(["leaderboard", "--db", url, "--format", "json", "--as-of", as_of]) == 0
    data = json.loads(capsys.readouterr().out)
    data.pop("as_of")
    return data


def test_replay_run_completes_cohorts_marks_daily_settles_and_is_point_in_time(replay_run, capsys, tmp_path):
    full = replay_run("2025-11-23")
    out = capsys.readouterr().out
    assert "job runs:" in out and "decision_round ok" in out
    eng = make_engine(full)
    with Session(eng) as s:
        cohorts = {c.name: c.status for c in s.scalars(select(CohortRow))}
        assert "completed" in cohorts.values(), cohorts
        assert len(cohorts) == 4  # one per Sunday from 2025-11-02 to 2025-11-23
        first = s.scalars(select(AgentRow).join(CohortRow, CohortRow.id == AgentRow.cohort_id)
                          .where(CohortRow.name == "cohort-2025-11-02")).first()
        days = {str(r.as_of)[:10] for r in s.scalars(select(PortfolioSnapshotRow)
                                                      .where(PortfolioSnapshotRow.agent_id == first.id))}
        assert cohorts["cohort-2025-11-02"] == "completed"
        assert len(days) >= 10  # marked every day from its opening to its completion on 2025-11-12
        assert s.scalars(select(FillRow).where(FillRow.kind == "settle")).first() is not None
        assert {r.status for r in s.scalars(select(JobRunRow))} == {"ok"}
        # the scheduler's own jobs ran, each once per period: one decision round per Sunday
        rounds = [r.period_key for r in s.scalars(select(JobRunRow).where(JobRunRow.job == "decision_round")
                                                  .order_by(JobRunRow.period_key))]
        assert rounds == ["2025-11-02", "2025-11-09", "2025-11-16"]  # 11-23 00:05 is past --until
    eng.dispose()

    cut = "2025-11-13T12:00"  # after the first cohort completed
    stopped = replay_run(cut)
    again = replay_run(cut)
    # the same inputs give the same facts
    assert facts(stopped) == facts(again)
    assert facts(stopped)["fills"] and facts(stopped)["resolutions"]
    # … and the same bytes: the boards as JSON, and every page of the site (sums run over rows in a fixed order,
    # whichever order the concurrent seats' answers and fills were recorded in)
    assert board_text(stopped, cut, capsys) == board_text(again, cut, capsys)
    assert site_bytes(stopped, cut, tmp_path / "one") == site_bytes(again, cut, tmp_path / "two")
    # the longer run, seen as of the cut, is the run stopped at the cut
    later, then = board(full, cut, capsys), board(stopped, cut, capsys)
    assert then["cohorts"] and then["overall"]
    assert later == then


def board_text(url: str, as_of: str, capsys) -> str:  # type: ignore[no-untyped-def]
    """`arena leaderboard --format json` as printed (its as_of is the one asked for)."""
    capsys.readouterr()
    assert main(["leaderboard", "--db", url, "--format", "json", "--as-of", as_of]) == 0
    text = capsys.readouterr().out
    assert '"crowd_proxy": 0.' in text  # (the proxy, summed over seats, was the value that moved)
    return text


# what may differ between two runs of a site: the render's own bookkeeping (keys naming rows in one database)
# and the operations page, whose job runs name the process that ran them
RUN_SPECIFIC = {".arena-site.json", "operations.html"}


def site_bytes(url: str, as_of: str, out) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    assert main(["render", "--db", url, "--out", str(out), "--as-of", as_of]) == 0
    files = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert "index.html" in files and any(f.startswith("markets/") for f in files)
    return {k: v for k, v in files.items() if k not in RUN_SPECIFIC}



def test_event_driven_settling_writes_the_same_facts_as_firing_every_tick(shared_dir, tmp_path, new_url, capsys):
    """On the default hourly schedules: settle and decision-round ticks that could only find nothing are not fired; every
    table (but the record of job runs) and the board equal those of the run that fires every tick."""
    from table_facts import table_facts

    replay = shared_dir / "data" / "replay" / "replay_markets.jsonl"
    config = tmp_path / "arena.toml"
    config.write_text("[cohort]\ndecision_weeks = 1\nhorizon_days = 14\n")
    urls, lines = [], []
    for extra in ([], ["--every-tick"]):
        url = new_url()
        capsys.readouterr()
        assert main(["replay", "run", str(replay), "--from", "2025-11-02", "--until", "2025-11-24", "--baselines-only",
                     "--config", str(config), "--db", url, *extra]) == 0
        lines.append(capsys.readouterr().out)
        urls.append(url)
    event, every = (table_facts(u, skip={"job_runs", "sync_runs"}) for u in urls)
    assert event["fills"] and any(f for f in event["fills"] if "settle" in str(f))  # settlements happened
    assert event == every
    assert board(urls[0], "2025-11-24", capsys) == board(urls[1], "2025-11-24", capsys)
    idle = int(lines[0].split("not fired: ")[1].split()[0])
    assert idle > 600 and "not fired" not in lines[1]  # most of the 2 × 23 × 24 hourly ticks were not fired
    work = ("settled", "refunded", "reversed", "completed_cohorts")
    settles = []
    for url in urls:
        with Session(make_engine(url)) as s:
            runs = s.scalars(select(JobRunRow).where(JobRunRow.job == "settle")).all()
            settles.append((len(runs), sorted(r.period_key for r in runs if any(r.counts.get(k) for k in work))))
    assert settles[0][0] < settles[1][0] and settles[0][1] == settles[1][1]  # the settle runs that did work: the same
