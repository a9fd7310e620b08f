"""Hand-computed cases for the ledger fold, the broker's limits, valuation and settlement (seed 001)."""

from datetime import datetime, timezone
from decimal import Decimal

import numpy as np
import pytest

from arena.domain import broker, settlement
from arena.domain.decision import Bet, Decision, Sell
from arena.domain.fill import FillKind
from arena.domain.ledger import Ledger, fold
from arena.domain.market import NO, YES, Market, MarketKind, MarketStatus, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.domain.valuation import value_ledger, value_micros
from arena.errors import LedgerError
from arena.money import Money, Price, value_of

NOW = datetime(2026, 1, 4, tzinfo=timezone.utc)
LATER = datetime(2026, 2, 1, tzinfo=timezone.utc)
RULES = CohortRules()


def mkt(mid="sim:1", **kw):
    return Market(id=mid, venue="sim", question=f"Q {mid}?", close_time=LATER, **kw)


def quotes(**yes):
    return {f"sim:{k[1:]}": Quote(f"sim:{k[1:]}", {YES: Price.of(v)}, NOW) for k, v in yes.items()}


def run(decision, ledger=None, markets=None, q=None, rules=RULES, decision_id="d1"):
    ledger = ledger or Ledger("a", rules.starting_cash)
    markets = markets or {"sim:1": mkt("sim:1"), "sim:2": mkt("sim:2")}
    q = q or quotes(m1="0.40", m2="0.80")
    return broker.execute(decision, ledger, markets, broker.QuotePricer(q), rules, NOW, decision_id), ledger


def test_seed_001_buy_yes_settle_yes_realizes_750():
    ex, ledger = run(Decision((Bet("sim:1", YES, Money.of(500)),)))
    assert ex.accepted
    (fill,) = ex.fills
    assert fill.shares == 1_250_000_000 and fill.cash == Money.of(-500) and fill.price == Price.of("0.4")
    ledger.apply(fill)
    pos = ledger.position("sim:1", YES)
    assert pos.entry_price == Price.of("0.4")
    res = Resolution.winner("sim:1", YES)
    s = settlement.settle_position("a", pos, res, LATER)
    assert s.kind is FillKind.SETTLE and s.cash == Money.of(1250) and s.realized == Money.of(750)
    ledger.apply(s)
    assert ledger.cash == Money.of(10_750) and ledger.realized == Money.of(750)
    with pytest.raises(LedgerError):  # settling the same position twice is impossible
        ledger.apply(s)


def test_no_bet_uses_complement_price_and_loses_when_yes_wins():
    ex, ledger = run(Decision((Bet("sim:2", NO, Money.of(200)),)))
    (fill,) = ex.fills
    assert fill.price == Price.of("0.2")  # 1 − 0.80
    assert fill.shares == 1_000_000_000
    ledger.apply(fill)
    s = settlement.settle_position("a", ledger.position("sim:2", NO), Resolution.winner("sim:2", YES), LATER)
    assert s.cash == Money.zero() and s.realized == Money.of(-200)


def test_void_refunds_remaining_cost_basis_and_probabilistic_pays_p():
    ledger = Ledger("a", RULES.starting_cash)
    ex, _ = run(Decision((Bet("sim:1", YES, Money.of(300)), Bet("sim:2", NO, Money.of(100)))), ledger)
    ledger.apply_all(ex.fills)
    refund = settlement.settle_position("a", ledger.position("sim:1", YES), Resolution.void("sim:1"), LATER)
    assert refund.kind is FillKind.REFUND and refund.cash == Money.of(300) and refund.realized == Money.zero()
    half = Resolution.probabilistic_yes("sim:2", Price.of("0.5"))
    pos = ledger.position("sim:2", NO)  # 500 NO shares at 0.20
    paid = settlement.settle_position("a", pos, half, LATER)
    assert paid.cash == Money.of(250) and paid.realized == Money.of(150)


def test_adding_to_a_position_averages_cost_and_partial_sell_realizes_on_sold_part():
    ledger = Ledger("a", RULES.starting_cash)
    ex, _ = run(Decision((Bet("sim:1", YES, Money.of(400)),)), ledger)  # 1,000 sh at 0.40
    ledger.apply_all(ex.fills)
    dup, _ = run(Decision((Bet("sim:1", YES, Money.of(600)),)), ledger)  # same decision id: refused
    assert [r.reason for r in dup.rejections] == ["duplicate_fill"]
    ex2, _ = run(Decision((Bet("sim:1", YES, Money.of(600)),)), ledger, q=quotes(m1="0.60", m2="0.8"),
                 decision_id="d2")
    ledger.apply_all(ex2.fills)
    pos = ledger.position("sim:1", YES)
    assert pos.shares == 2_000_000_000 and pos.cost_basis == Money.of(1000)
    assert pos.entry_price == Price.of("0.5")
    ex3, _ = run(Decision((Sell("sim:1", YES, Decimal("0.25")),)), ledger, q=quotes(m1="0.70", m2="0.8"),
                 decision_id="d3")
    (sell,) = ex3.fills
    assert sell.shares == -500_000_000 and sell.cash == Money.of(350) and sell.cost == Money.of(-250)
    assert sell.realized == Money.of(100)


def test_max_bet_is_fixed_from_cash_at_start_of_decision_not_recomputed_between_legs():
    # Cash $10,000 → max $2,500 for every leg, even though cash falls to $5,000 after two legs.
    legs = tuple(Bet(f"sim:{i}", YES, Money.of(2500)) for i in (1, 2, 3))
    markets = {f"sim:{i}": mkt(f"sim:{i}") for i in (1, 2, 3)}
    q = quotes(m1="0.5", m2="0.5", m3="0.5")
    ex, _ = run(Decision(legs), markets=markets, q=q)
    assert ex.accepted and ex.max_bet == Money.of(2500) and len(ex.fills) == 3


@pytest.mark.parametrize(
    "bet,reason",
    [
        (Bet("sim:1", YES, Money.of("2500.01")), "over_max_bet"),
        (Bet("sim:1", YES, Money.of("49.99")), "below_min_bet"),
        (Bet("sim:9", YES, Money.of(100)), "unknown_market"),
        (Bet("sim:1", "MAYBE", Money.of(100)), "unknown_outcome"),
        (Bet("sim:1", YES, Money.of(100), stated_probability=1.2), "bad_probability"),
        (Bet("sim:1", YES, Money.of(-100)), "bad_amount"),
    ],
)
def test_rejections_carry_reasons_and_reject_the_whole_decision(bet, reason):
    ok = Bet("sim:2", YES, Money.of(100))
    ex, _ = run(Decision((ok, bet)))
    assert not ex.accepted and ex.fills == []
    assert [r.reason for r in ex.rejections] == [reason]
    assert ex.rejections[0].index == 1


def test_closed_market_and_total_over_cash_are_rejected():
    closed = {"sim:1": mkt("sim:1", status=MarketStatus.CLOSED), "sim:2": mkt("sim:2")}
    ex, _ = run(Decision((Bet("sim:1", YES, Money.of(100)),)), markets=closed)
    assert [r.reason for r in ex.rejections] == ["market_closed"]
    rules = CohortRules(max_bet_fraction=Decimal("0.6"))
    ex, _ = run(Decision((Bet("sim:1", YES, Money.of(6000)), Bet("sim:2", YES, Money.of(5000)))), rules=rules)
    assert [r.reason for r in ex.rejections] == ["over_cash"]


def test_sell_without_position_and_bad_fraction_are_rejected():
    ex, _ = run(Decision((Sell("sim:1", YES, Decimal("0.5")),)))
    assert [r.reason for r in ex.rejections] == ["no_position"]
    ex, _ = run(Decision((Sell("sim:1", YES, Decimal("1.5")),)))
    assert [r.reason for r in ex.rejections] == ["bad_fraction"]


def test_multi_outcome_market_buys_a_named_outcome_at_its_price():
    m = Market(id="mf:mc", venue="manifold", question="Who?", kind=MarketKind.MULTI, outcomes=("a1", "a2", "a3"),
               outcome_labels=("Ann", "Bob", "Cy"), close_time=LATER)
    q = {"mf:mc": Quote("mf:mc", {"a1": Price.of("0.5"), "a2": Price.of("0.3"), "a3": Price.of("0.2")}, NOW)}
    ex, ledger = run(Decision((Bet("mf:mc", "a2", Money.of(300)),)), markets={"mf:mc": m}, q=q)
    (f,) = ex.fills
    assert f.shares == 1_000_000_000
    ledger.apply(f)
    res = Resolution.winner("mf:mc", "a2", m.outcomes)
    assert settlement.settle_position("a", ledger.position("mf:mc", "a2"), res, LATER).cash == Money.of(1000)


def test_seed_001_total_value_pnl_and_return():
    ledger = Ledger("a", Money.of(10_000))
    ex, _ = run(Decision((Bet("sim:1", YES, Money.of(2500)),)), ledger)
    ledger.apply_all(ex.fills)  # cash 7,500; 6,250 YES shares at 0.40
    pv = value_ledger(ledger, {("sim:1", YES): Price.of("0.512")})  # 6,250 × 0.512 = 3,200
    assert pv.cash == Money.of(7500) and pv.positions_value == Money.of(3200)
    assert pv.total_value == Money.of(10_700) and pv.pnl == Money.of(700) and pv.return_pct == pytest.approx(7.0)
    assert pv.positions[0].unrealized == Money.of(700)


def test_unpriced_position_is_valued_at_cost_not_zero():
    ledger = Ledger("a", Money.of(10_000))
    ex, _ = run(Decision((Bet("sim:1", YES, Money.of(1000)),)), ledger)
    ledger.apply_all(ex.fills)
    pv = value_ledger(ledger, {})
    assert pv.total_value == Money.of(10_000) and pv.unpriced == 1


def test_vectorised_value_matches_exact_scalar_value_without_overflow():
    rng = np.random.default_rng(7)
    shares = rng.integers(0, 10**13, size=5000, dtype=np.int64)  # up to 10 million shares
    prices = rng.integers(0, 1_000_001, size=5000, dtype=np.int64)
    vec = value_micros(shares, prices)
    for s, p, v in zip(shares[:500], prices[:500], vec[:500]):
        assert value_of(int(s), Price(int(p))).micros == int(v)
    assert int(vec.max()) <= 10**13


def test_reversal_undoes_settlement_exactly():
    ledger = Ledger("a", RULES.starting_cash)
    ex, _ = run(Decision((Bet("sim:1", YES, Money.of(500)),)), ledger)
    ledger.apply_all(ex.fills)
    s = settlement.settle_position("a", ledger.position("sim:1", YES), Resolution.winner("sim:1", YES), LATER)
    ledger.apply(s)
    r = settlement.reverse(s, LATER)
    ledger.apply(r)
    assert ledger.cash == Money.of(9500) and ledger.position("sim:1", YES).shares == 1_250_000_000
    s2 = settlement.settle_position("a", ledger.position("sim:1", YES),
                                    Resolution.winner("sim:1", NO, version=2), LATER)
    ledger.apply(s2)
    assert ledger.cash == Money.of(9500) and ledger.realized == Money.of(-500)
    assert fold("a", RULES.starting_cash, [*ex.fills, s, r, s2]).cash == ledger.cash
