"""Property: any sequence of bets, sells, marks and settlements keeps the ledger's invariants.

- cash never negative (no reversals here), and derived cash = bankroll + Σ cash deltas of the fills;
- shares never negative; cost basis never negative;
- value conservation at settlement: settling moves exactly the marked value at the payout price from
  positions to cash, so total value at payout prices is unchanged by settlement;
- no money is created: total value ≤ bankroll + Σ (payout − price) × shares bought, with rounding only down.
"""

from datetime import datetime, timedelta, timezone
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.domain import broker, settlement
from arena.domain.decision import Bet, Decision, Sell
from arena.domain.ledger import Ledger, fold
from arena.domain.market import NO, YES, Market, MarketStatus, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.domain.valuation import value_ledger
from arena.money import MICRO, Money, Price, value_of

T0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
MARKETS = [f"sim:{i}" for i in range(4)]
RULES = CohortRules(min_bet=Money.of(1))

price_st = st.integers(min_value=1_000, max_value=999_000).map(Price)
bet_st = st.tuples(st.just("bet"), st.sampled_from(MARKETS), st.sampled_from([YES, NO]),
                   st.integers(min_value=1, max_value=3_000_000_000).map(Money), price_st)
sell_st = st.tuples(st.just("sell"), st.sampled_from(MARKETS), st.sampled_from([YES, NO]),
                    st.sampled_from([Decimal("0.1"), Decimal("0.5"), Decimal("1"), Decimal("0.333")]), price_st)
settle_st = st.tuples(st.just("settle"), st.sampled_from(MARKETS),
                      st.sampled_from(["yes", "no", "void", "half", "p"]), price_st, st.just(None))
mark_st = st.tuples(st.just("mark"), st.sampled_from(MARKETS), st.just(None), price_st, st.just(None))
ops_st = st.lists(st.one_of(bet_st, sell_st, settle_st, mark_st), min_size=1, max_size=40)


def _resolution(mid: str, kind: str, p: Price) -> Resolution:
    if kind == "yes":
        return Resolution.winner(mid, YES)
    if kind == "no":
        return Resolution.winner(mid, NO)
    if kind == "void":
        return Resolution.void(mid)
    return Resolution.probabilistic_yes(mid, Price.of("0.5") if kind == "half" else p)


@settings(max_examples=150, deadline=None)
@given(ops_st)
def test_random_sequences_keep_ledger_invariants(ops):
    ledger = Ledger("a", RULES.starting_cash)
    fills = []
    resolved: set[str] = set()
    prices = {m: Price.of("0.5") for m in MARKETS}
    for step, (op, mid, a, b, c) in enumerate(ops):
        now = T0 + timedelta(hours=step)
        if op == "mark":
            prices[mid] = b
            continue
        if op == "settle":
            if mid in resolved:
                continue
            res = _resolution(mid, a, b)
            at_payout = {(mid, o): (res.payout(o) or Price(0)) for o in (YES, NO)}
            before = _total_at(ledger, prices, mid, res)
            new = settlement.settle(ledger.agent_id, ledger.open_positions(), res, now)
            for f in new:
                ledger.apply(f)
                fills.append(f)
            resolved.add(mid)
            after = _total_at(ledger, prices, mid, res)
            assert before == after, "settlement must conserve value at payout prices"
            assert all(ledger.position(mid, o).shares == 0 for o in (YES, NO)), at_payout
            continue
        prices[mid] = c
        market = Market(id=mid, venue="sim", question="?", close_time=T0 + timedelta(days=365),
                        status=MarketStatus.RESOLVED if mid in resolved else MarketStatus.OPEN)
        quotes = {m: Quote(m, {YES: prices[m]}, now) for m in MARKETS}
        action = Bet(mid, a, b) if op == "bet" else Sell(mid, a, b)
        ex = broker.execute(Decision((action,)), ledger, {m: market if m == mid else market for m in [mid]},
                            broker.QuotePricer(quotes), RULES, now, f"d{step}")
        if ex.accepted:
            for f in ex.fills:
                ledger.apply(f)
                fills.append(f)
        else:
            assert ex.fills == [] and ex.rejections
        # invariants after every step
        assert ledger.cash.micros >= 0
        assert ledger.cash.micros == RULES.starting_cash.micros + sum(f.cash.micros for f in fills)
        for p in ledger.positions.values():
            assert p.shares >= 0 and p.cost_basis.micros >= 0
    # the fold of the stored fills is the same ledger
    again = fold("a", RULES.starting_cash, fills)
    assert again.cash == ledger.cash and again.positions == ledger.positions
    # realized P/L is exactly cash movement plus released cost basis
    assert ledger.realized.micros == sum(f.cash.micros + f.cost.micros for f in fills)
    # no money from nowhere: marked total ≤ bankroll + the most the positions could be worth
    pv = value_ledger(ledger, {(m, YES): prices[m] for m in MARKETS} | {(m, NO): prices[m].complement()
                                                                        for m in MARKETS})
    upper = ledger.cash + Money(sum(p.shares for p in ledger.open_positions()) // MICRO * MICRO + MICRO * 4)
    assert pv.total_value <= upper


def _total_at(ledger: Ledger, prices: dict, mid: str, res: Resolution) -> Money:
    """Cash plus the market's positions valued at the payout (cost basis for a void market)."""
    total = ledger.cash
    for o in (YES, NO):
        p = ledger.position(mid, o)
        payout = res.payout(o)
        total = total + (p.cost_basis if payout is None else value_of(p.shares, payout))
    return total
