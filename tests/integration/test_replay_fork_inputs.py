"""`arena replay fork` refuses bad input with one line `arena replay fork: <problem> — <fix>`, exit 2, and writes
nothing; with the source's own config it is a control: an unchanged lineup replays the source's facts exactly."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.cli import main
from arena.store.engine import make_engine
from arena.store.tables import AgentRow, CohortRow, DecisionRow, FillRow, PortfolioSnapshotRow

pytestmark = [pytest.mark.shared, pytest.mark.slow]

COHORT = "cohort-2025-11-02"


@pytest.fixture
def source(shared_dir, tmp_path, db_url):  # type: ignore[no-untyped-def]
    replay = shared_dir / "data" / "replay" / "replay_markets.jsonl"
    config = tmp_path / "arena.toml"
    config.write_text('[cohort]\ndecision_weeks = 2\nhorizon_days = 10\n\n[schedule]\nsettle = "0 1 * * *"\n')
    assert main(["replay", "run", str(replay), "--from", "2025-11-02", "--until", "2025-11-12", "--baselines-only",
                 "--config", str(config), "--db", db_url]) == 0
    return db_url


@pytest.mark.parametrize("change, problem", [
    ({"--cohort": "cohort-1999-01-03"}, "unknown cohort 'cohort-1999-01-03'"),
    ({"--at": "2025-11-01T23:00"}, "is outside cohort 'cohort-2025-11-02'"),
    ({"--at": "2025-12-20"}, "is outside cohort 'cohort-2025-11-02'"),
    ({"--out": "exists"}, "already exists"),
    ({"--config": "two-seats"}, "the configuration's lineup has 2 seats and the cohort's 4"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(source, tmp_path, capsys, change, problem):
    out = tmp_path / "fork.sqlite"
    args = {"--db": source, "--cohort": COHORT, "--at": "2025-11-05", "--out": str(out)}
    if change.get("--out") == "exists":
        out.write_bytes(b"")
        change = {}
    if change.get("--config") == "two-seats":
        cfg = tmp_path / "two.toml"
        cfg.write_text('baselines = false\n\n[[agents]]\nname = "k"\nkind = "kelly"\n\n'
                       '[[agents]]\nname = "h"\nkind = "always-0.5"\n')
        change = {"--config": str(cfg)}
    args.update(change)
    capsys.readouterr()
    assert main(["replay", "fork", *[x for kv in args.items() for x in kv]]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena replay fork: ") and " — " in lines[0], captured.err
    assert problem in lines[0] and "Traceback" not in captured.err and captured.out == ""
    assert not out.exists() or out.read_bytes() == b""  # nothing written (an existing file left as it was)


def test_a_fork_with_the_sources_own_config_replays_the_source_exactly(source, tmp_path, capsys):
    # the source's config: its lineup is the cohort's (no seat changed), its [schedule] the source's (settling at
    # 01:00, not hourly, so every settlement lands at the same time)
    out = tmp_path / "control.sqlite"
    assert main(["replay", "fork", "--db", source, "--cohort", COHORT, "--at", "2025-11-05", "--out", str(out),
                 "--config", str(tmp_path / "arena.toml")]) == 0
    assert "seats changed: none (a control fork)" in capsys.readouterr().out

    def facts(url: str) -> dict:
        eng = make_engine(url)
        try:
            with Session(eng) as s:
                cid = s.scalar(select(CohortRow.id).where(CohortRow.name == COHORT))
                names = dict(s.execute(select(AgentRow.id, AgentRow.name).where(AgentRow.cohort_id == cid)).all())
                return {
                    "fills": sorted((names[f.agent_id], str(f.at)[:19], f.market_id, f.outcome, f.kind, f.shares,
                                     f.cash_micros) for f in s.scalars(select(FillRow).where(FillRow.cohort_id == cid))),
                    "decisions": sorted((names[d.agent_id], d.round_key, d.status, str(d.actions)) for d in s.scalars(
                        select(DecisionRow).where(DecisionRow.cohort_id == cid))),
                    "values": sorted((names[p.agent_id], str(p.as_of)[:19], p.total_value_micros) for p in s.scalars(
                        select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.cohort_id == cid))),
                }
        finally:
            eng.dispose()

    src, fork = facts(source), facts(f"sqlite:///{out}")
    assert fork == src and len(src["decisions"]) == 8 and src["fills"]  # two rounds of four seats, replayed as they were
