"""The P/L decomposition read from stored facts adds up, per agent, to the P/L of the ledger fold of its fills."""

from datetime import datetime, timedelta, timezone

from sqlalchemy import select
from sqlmodel import Session

from arena.cli import main
from arena.domain.ledger import fold
from arena.domain.market import YES, Resolution
from arena.domain.valuation import value_ledger
from arena.money import Money, Price
from arena.usecases import ingest
from arena.read.decomposition import decomposition

from arena.store import repo
from arena.store.engine import make_engine, session_scope
from arena.store.tables import AgentRow, CohortRow, FillRow
from arena.store.frames import price_frame

LATER = datetime(2027, 1, 1, tzinfo=timezone.utc)


def ledger_pnl(engine, as_of):
    """(cohort, agent) → realized + unrealized P/L in micro-USD from the domain fold of the stored fills."""
    out = {}
    with Session(engine) as s:
        for agent in s.scalars(select(AgentRow)).all():
            cohort = s.get(CohortRow, agent.cohort_id)
            rows = s.scalars(select(FillRow).where(FillRow.agent_id == agent.id).order_by(FillRow.id)).all()
            ledger = fold(str(agent.id), Money(cohort.starting_cash_micros), [repo.fill_from_row(r) for r in rows])
            prices = price_frame(s, as_of, sorted({p.market_id for p in ledger.open_positions()}))
            direct = {(m, o): Price(int(p)) for m, o, p in prices.itertuples(index=False)}
            side = {(p.market_id, p.outcome): direct.get((p.market_id, p.outcome))
                    or (direct[(p.market_id, YES)].complement() if (p.market_id, YES) in direct else None)
                    for p in ledger.open_positions()}
            out[(cohort.name, agent.name)] = value_ledger(
                ledger, {k: v for k, v in side.items() if v is not None}).pnl.micros
    return out


def test_demo_cohorts_parts_add_up_to_each_agents_ledger_pnl(db_url, capsys, monkeypatch):
    assert main(["demo", "--seed", "7", "--cohorts", "2", "--decision-weeks", "2", "--markets-per-week", "15",
                 "--db", db_url]) == 0
    capsys.readouterr()
    engine = make_engine(db_url)
    d = decomposition(engine, LATER)
    truth = ledger_pnl(engine, LATER)
    agents = d.agents.set_index(["cohort", "agent"])
    assert len(d.bets) > 20 and agents["n_bets"].sum() == len(d.bets)
    for key, pnl in truth.items():
        if key not in agents.index:
            assert pnl == 0  # no bet, no P/L
            continue
        row = agents.loc[key]
        assert int(row["pnl"]) == pnl
        assert int(row["move_captured"] + row["resolution_residual"]) == pnl
        assert int(row["expected_pnl"] + row["belief_gap"] + row["move_without_belief"]
                   + row["resolution_residual"]) == pnl
    # the scripted agents state a belief on every bet, and the cohorts are settled: residuals are real
    assert int(d.agents["n_without_belief"].sum()) == 0
    assert (d.bets["resolution_residual"] != 0).any()
    for c, grp in d.agents.groupby("cohort"):
        assert int(d.cohorts.set_index("cohort").loc[c, "pnl"]) == int(grp["pnl"].sum())
    usd = d.usd(d.agents)
    assert float(usd["amount"].iloc[0]) == int(d.agents["amount"].iloc[0]) / 1e6  # dollars, converted once
    none = decomposition(engine, LATER, ["no-such-cohort"])
    assert none.bets.empty and list(none.bets.columns) == list(d.bets.columns) and none.agents.empty
    # the beliefs asked by decision id (a few cohorts) are those read whole (many): the same bets, the same parts
    import arena.read.decomposition as module

    one = sorted(d.bets["cohort"].unique())[:1]
    by_id = decomposition(engine, LATER, one).bets
    monkeypatch.setattr(module, "BELIEFS_BY_ID", 0)
    whole = decomposition(engine, LATER, one).bets
    assert by_id["belief_ppm"].notna().sum() > 5 and by_id.equals(whole)
    engine.dispose()


def test_an_open_bet_then_its_resolution(engine, one_bet_cohort):
    cohort, t0, later = one_bet_cohort(engine, 2000)
    (bet,) = decomposition(engine, later + timedelta(hours=1)).bets.to_dict("records")
    assert bet["shares"] == 5_000_000_000  # $2,000 at 0.40
    assert bet["expected_pnl"] == 2_500_000_000  # 5,000 × (0.9 − 0.4)
    assert bet["move_captured"] == bet["pnl"] == 1_500_000_000 and bet["resolution_residual"] == 0
    assert bet["slippage_cost"] == 0  # filled at the venue probability, which is also the mid
    assert (bet["price_ppm"], bet["belief_ppm"], bet["last_price_ppm"]) == (400_000, 900_000, 700_000)
    done = later + timedelta(days=1)
    with session_scope(engine) as s:
        ingest.record_observations(s, done, resolutions=[("sim:1", Resolution.winner("sim:1", YES,
                                                                                      resolved_at=done))])
    from arena.usecases.settle import settle_resolved

    settle_resolved(engine, done + timedelta(hours=1))
    (bet,) = decomposition(engine, done + timedelta(hours=2)).bets.to_dict("records")
    assert bet["pnl"] == 3_000_000_000 and bet["move_captured"] == 1_500_000_000
    assert bet["resolution_residual"] == 1_500_000_000  # 5,000 × (1 − 0.70)
    assert bet["belief_gap"] == -1_000_000_000  # 5,000 × (0.70 − 0.90)
    assert list(ledger_pnl(engine, done + timedelta(hours=2)).values()) == [bet["pnl"]]

