"""P/L decomposition: hand-computed bets, and a property test that the parts add up to the ledger's P/L exactly
for fills made by the real domain (buys, partial sells, settlements, void refunds, probabilistic resolutions and
reversals)."""

from datetime import datetime, timezone

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.domain.fill import Fill, FillKind
from arena.domain.ledger import Ledger
from arena.domain.market import YES, Resolution
from arena.domain.settlement import reverse, settle_position
from arena.domain.valuation import value_position
from arena.money import Money, Price, shares_for, value_of
from arena.scoring.decomposition import (
    DecompositionError,
    PositionFill,
    allocate,
    decompose,
    decompose_position,
    summarize,
)
from arena.scoring.registry import METRICS

T = datetime(2026, 1, 4, tzinfo=timezone.utc)
M = "sim:1"


def buy(key, amount_usd, price, mid=None, belief=None):
    a = Money.of(amount_usd).micros
    p = Price.of(price).ppm
    s = a * 1_000_000 // p
    return PositionFill(key, "buy", s, -a, a, p, Price.of(mid).ppm if mid else None,
                        Price.of(belief).ppm if belief else None)


def test_one_bet_held_to_a_yes_resolution_hand_computed():
    # $500 on YES at 0.40 (mid 0.38, belief 0.55) → 1,250 shares; last price 0.70; resolves YES → $1,250
    b = buy("b1", "500", "0.40", mid="0.38", belief="0.55")
    settle = PositionFill("s1", "settle", -b.shares, 1_250_000_000, -500_000_000, 1_000_000)
    (p,) = decompose_position([b, settle], Price.of("0.70").ppm)
    assert p.shares == 1_250_000_000 and p.amount == 500_000_000
    assert p.pnl == 750_000_000  # seed 001: realized P/L +$750
    assert p.slippage_cost == 25_000_000  # 1,250 × (0.40 − 0.38) = $25
    assert p.expected_pnl == 187_500_000  # 1,250 × (0.55 − 0.40) = $187.50
    assert p.move_captured == 375_000_000  # 1,250 × (0.70 − 0.40) = $375
    assert p.resolution_residual == 375_000_000  # 1,250 × (1 − 0.70) = $375
    assert p.belief_gap == 187_500_000  # 1,250 × (0.70 − 0.55)
    assert p.pnl == p.move_captured + p.resolution_residual == p.expected_pnl + p.belief_gap + p.resolution_residual


def test_open_bet_has_no_residual_and_move_is_the_unrealized_pnl():
    b = buy("b1", "100", "0.25", belief="0.5")  # 400 shares
    (p,) = decompose_position([b], Price.of("0.20").ppm)
    assert p.pnl == p.move_captured == -20_000_000  # 400 × (0.20 − 0.25)
    assert p.resolution_residual == 0 and p.slippage_cost == 0 and p.expected_pnl == 100_000_000
    (unpriced,) = decompose_position([b], None)  # no price: valued at cost basis, as the ledger does
    assert unpriced.pnl == 0 and unpriced.move_captured == 0


def test_sell_is_shared_pro_rata_and_void_refund_returns_the_basis():
    b1, b2 = buy("b1", "30", "0.5"), buy("b2", "10", "0.5")  # 60 and 20 shares
    sell = PositionFill("x", "sell", -40_000_000, 24_000_000, -20_000_000, 600_000)  # half at 0.60 → $24
    refund = PositionFill("r", "refund", -40_000_000, 20_000_000, -20_000_000)  # remaining basis back
    p1, p2 = decompose_position([b1, b2, sell, refund], Price.of("0.65").ppm)
    assert (p1.pnl, p2.pnl) == (3_000_000, 1_000_000)  # the $4 realized on the sell, 3:1
    # held into resolution: 30 and 10 shares valued at the last price 0.65, refunded at 0.50
    assert p1.move_captured == 18_000_000 + 19_500_000 - 30_000_000
    assert p1.resolution_residual == 15_000_000 - 19_500_000
    assert p1.expected_pnl is None and p1.belief_gap is None


def test_reversal_and_resettlement_leave_only_the_new_settlement():
    b = buy("b1", "40", "0.4", belief="0.6")  # 100 shares
    s1 = PositionFill("s1", "settle", -100_000_000, 100_000_000, -40_000_000, 1_000_000)
    r1 = PositionFill("r1", "reversal", 100_000_000, -100_000_000, 40_000_000, reverses="s1")
    s2 = PositionFill("s2", "settle", -100_000_000, 30_000_000, -40_000_000, 300_000)  # probabilistic 0.3
    (p,) = decompose_position([b, s1, r1, s2], Price.of("0.5").ppm)
    assert p.pnl == -10_000_000 and p.resolution_residual == 30_000_000 - 50_000_000
    (reopened,) = decompose_position([b, s1, r1], Price.of("0.5").ppm)  # un-resolved: open again, marked
    assert reopened.pnl == 10_000_000 and reopened.resolution_residual == 0


def test_bad_sequences_are_refused_and_empty_input_is_empty():
    b = buy("b1", "10", "0.5")
    with pytest.raises(DecompositionError):
        decompose_position([b, PositionFill("x", "sell", -b.shares - 1, 1, 0)], None)
    with pytest.raises(DecompositionError):
        decompose_position([b, PositionFill("r", "reversal", 5, -5, 0)], None)
    assert decompose_position([], 500_000) == []
    assert decompose(pd.DataFrame()).empty and list(decompose(pd.DataFrame()).columns)[:4] == [
        "agent", "market_id", "outcome", "bet"]
    assert summarize(decompose(pd.DataFrame()), ["agent"]).empty


def test_allocate_is_exact_and_never_exceeds_a_weight():
    assert allocate(10, [1, 1, 1]) == [4, 3, 3]
    assert allocate(-10, [1, 1, 1]) == [-4, -3, -3]
    assert allocate(0, [0, 0]) == [0, 0]
    assert allocate(7, [0, 7]) == [0, 7]


def test_the_parts_are_registered_metrics():
    for name in ("expected_pnl", "slippage_cost", "move_captured", "resolution_residual", "belief_gap"):
        assert name in METRICS
    assert not METRICS["slippage_cost"].higher_is_better


# -- property: the parts of fills made by the real domain add up to the ledger's P/L -----------------------------

price_st = st.integers(10_000, 990_000)
op_st = st.one_of(
    st.tuples(st.just("buy"), st.integers(1_000_000, 200_000_000), price_st, st.integers(-20_000, 20_000),
              st.one_of(st.none(), st.integers(0, 1_000_000))),
    st.tuples(st.just("sell"), st.integers(1, 4), price_st),
    st.tuples(st.just("settle"), st.sampled_from(["yes", "no", "void", "prob"]), st.integers(0, 1_000_000)),
    st.tuples(st.just("reverse")),
)


@settings(max_examples=120, deadline=None)
@given(ops=st.lists(op_st, min_size=1, max_size=12), last=st.one_of(st.none(), st.integers(0, 1_000_000)))
def test_parts_add_up_to_the_ledger_pnl_exactly(ops, last):
    ledger = Ledger("a", Money(10**12))
    fills: list[Fill] = []
    rows: list[PositionFill] = []
    version = 0
    settled: list[Fill] = []
    for n, op in enumerate(ops):
        pos = ledger.position(M, YES)
        f = None
        if op[0] == "buy" and not pos.settled:
            _, amount, price, dm, belief = op
            shares = shares_for(Money(amount), Price(price))
            f = Fill(f"b{n}", "a", M, YES, FillKind.BUY, shares, Money(-amount), Money(amount), T, Price(price),
                     Price(min(max(price + dm, 0), 1_000_000)))
            rows.append(PositionFill(f.key, "buy", shares, -amount, amount, price, f.mid.ppm, belief))
        elif op[0] == "sell" and pos.shares > 0 and not pos.settled:
            _, den, price = op
            k = pos.shares // den
            if k <= 0:
                continue
            released = pos.cost_basis if k == pos.shares else pos.cost_basis.fraction(k, pos.shares)
            f = Fill(f"x{n}", "a", M, YES, FillKind.SELL, -k, value_of(k, Price(price)), -released, T, Price(price))
        elif op[0] == "settle" and pos.shares > 0:
            version += 1
            _, kind, p = op
            res = {"yes": Resolution.winner(M, YES, version=version),
                   "no": Resolution.winner(M, "NO", version=version),
                   "void": Resolution.void(M, version=version),
                   "prob": Resolution.probabilistic_yes(M, Price(p), version=version)}[kind]
            f = settle_position("a", pos, res, T)
            settled.append(f)
        elif op[0] == "reverse" and settled and pos.settled:
            f = reverse(settled.pop(), T)
        if f is None:
            continue
        ledger.apply(f)
        fills.append(f)
        if f.kind is not FillKind.BUY:
            rows.append(PositionFill(f.key, f.kind.value, f.shares, f.cash.micros, f.cost.micros,
                                     f.price.ppm if f.price else None,
                                     reverses=f.provenance.removeprefix("reverses:") or None))
    parts = decompose_position(rows, last)
    pos = ledger.position(M, YES)
    marked = value_position(pos, Price(last) if last is not None else None).value if pos.shares > 0 else Money(0)
    ledger_pnl = ledger.cash.micros - 10**12 + marked.micros
    assert sum(p.pnl for p in parts) == ledger_pnl
    buys = [r for r in rows if r.kind == "buy"]
    assert [p.key for p in parts] == [b.key for b in buys]
    for p, b in zip(parts, buys):
        assert p.pnl == p.move_captured + p.resolution_residual
        if p.expected_pnl is not None:
            assert p.pnl == p.expected_pnl + p.belief_gap + p.resolution_residual
            assert abs(p.expected_pnl - (p.shares * b.belief_ppm / 1e6 - p.amount)) < 1  # floor of the rational
        assert abs(p.slippage_cost - (p.amount - p.shares * b.mid_ppm / 1e6)) < 1
    if not any(r.kind == "sell" for r in rows) and pos.shares > 0 and last is not None and len(parts) == 1:
        (p,) = parts  # one bet, nothing sold, open: the move is shares × (last − price paid), floored
        assert p.move_captured == value_of(p.shares, Price(last)).micros - p.amount and p.resolution_residual == 0
    frame = decompose(pd.DataFrame([dict(agent="a", market_id=M, outcome=YES, **r.__dict__) for r in rows]),
                      pd.DataFrame([dict(agent="a", market_id=M, outcome=YES, last_price_ppm=last)]))
    if parts:
        total = summarize(frame, ["agent"]).iloc[0]
        assert int(total["pnl"]) == ledger_pnl
        assert int(total["expected_pnl"] + total["belief_gap"] + total["move_without_belief"]
                   + total["resolution_residual"]) == ledger_pnl
