"""The broker: checks one decision against the cohort's rules and turns it into fills, all or nothing (pure).

Every action is checked before any is executed; if one is rejected the whole decision is, and each failing
action comes back with its reason, so nothing partial ever reaches the ledger. Prices come from an injected
`Pricer` (the venue's probability here; a book-walking pricer where the venue has an order book).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from arena.domain.decision import Bet, Decision, Sell
from arena.domain.fill import Fill, FillKind
from arena.domain.ledger import Ledger
from arena.domain.market import Market, Quote
from arena.domain.sizing import CohortRules
from arena.errors import ArenaError, RejectedOrder
from arena.money import MICRO, Money, Price, shares_for, value_of


@dataclass(frozen=True)
class PricedOrder:
    """What a pricer says an order would fill at: micro-shares, cash moved (positive), average price, mid."""

    shares: int
    cash: Money
    price: Price
    mid: Price | None
    provenance: str


class Pricer(Protocol):
    def buy(self, market: Market, outcome: str, amount: Money) -> PricedOrder: ...

    def sell(self, market: Market, outcome: str, shares: int) -> PricedOrder: ...


@dataclass
class QuotePricer:
    """Fills at the venue's quoted probability (Manifold, simulations, markets without a book).

    The whole stake is spent and the share count is floored, so the fill never creates money.
    """

    quotes: Mapping[str, Quote]
    provenance: str = "venue_probability"

    def _price(self, market: Market, outcome: str) -> Price:
        quote = self.quotes.get(market.id)
        if quote is None:
            raise RejectedOrder(f"no price is known for {market.id}", reason="no_price", market_id=market.id)
        try:
            return quote.price(outcome)
        except KeyError as exc:
            raise RejectedOrder(str(exc), reason="no_price", market_id=market.id) from exc

    def buy(self, market: Market, outcome: str, amount: Money) -> PricedOrder:
        price = self._price(market, outcome)
        if price.ppm == 0 or price.ppm == MICRO:
            raise RejectedOrder(f"{market.id} {outcome} is priced at {price}: nothing to buy",
                                reason="untradable_price", market_id=market.id)
        shares = shares_for(amount, price)
        if shares <= 0:
            raise RejectedOrder(f"{amount} buys no shares at {price}", reason="too_small", market_id=market.id)
        return PricedOrder(shares, amount, price, price, self.provenance)

    def sell(self, market: Market, outcome: str, shares: int) -> PricedOrder:
        price = self._price(market, outcome)
        return PricedOrder(shares, value_of(shares, price), price, price, self.provenance)


@dataclass(frozen=True)
class Rejection:
    """Why one action (by its index in the decision, or −1 for the decision as a whole) was refused."""

    index: int
    reason: str
    message: str


@dataclass
class Execution:
    """The broker's answer: the fills to record (empty when rejected) and every rejection with its reason."""

    fills: list[Fill] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    cash_at_start: Money = field(default_factory=Money.zero)
    max_bet: Money = field(default_factory=Money.zero)

    @property
    def accepted(self) -> bool:
        return not self.rejections


def execute(
    decision: Decision,
    ledger: Ledger,
    markets: Mapping[str, Market],
    pricer: Pricer,
    rules: CohortRules,
    now: datetime,
    decision_id: str,
) -> Execution:
    """Check `decision` against `rules` and the book in `ledger`; return its fills, or its rejections.

    The ledger is not modified: fills are applied to a scratch copy to prove they are valid.
    """
    cash_at_start = ledger.cash
    max_bet = rules.max_bet(cash_at_start)
    result = Execution(cash_at_start=cash_at_start, max_bet=max_bet)
    if len(decision.actions) > rules.max_actions:
        result.rejections.append(Rejection(-1, "too_many_actions",
                                           f"{len(decision.actions)} actions; at most {rules.max_actions}"))
        return result

    scratch = Ledger(ledger.agent_id, ledger.starting_cash)
    scratch.cash = ledger.cash
    scratch.positions = dict(ledger.positions)
    scratch.keys = set(ledger.keys)
    total_bets = Money.zero()
    fills: list[Fill] = []
    seen_sells: set[tuple[str, str]] = set()

    def reject(i: int, exc: Exception) -> None:
        reason = getattr(exc, "reason", "rejected")
        result.rejections.append(Rejection(i, reason, str(exc)))

    # Sells first: they never depend on bets, and a sell-then-rebuy in one reply should see its own shares freed.
    order = [i for i, a in enumerate(decision.actions) if isinstance(a, Sell)]
    order += [i for i, a in enumerate(decision.actions) if isinstance(a, Bet)]
    for i in order:
        action = decision.actions[i]
        try:
            market = markets.get(action.market_id)
            if market is None:
                raise RejectedOrder(f"unknown market {action.market_id!r}", reason="unknown_market")
            if not market.has_outcome(action.outcome):
                raise RejectedOrder(f"{action.market_id} has no outcome {action.outcome!r}",
                                    reason="unknown_outcome")
            if not market.is_open_at(now):
                raise RejectedOrder(f"{action.market_id} is not open for trading ({market.status.value})",
                                    reason="market_closed")
            key = f"{decision_id}:{i}"
            if isinstance(action, Bet):
                fill = _bet_fill(action, market, pricer, rules, max_bet, cash_at_start, total_bets,
                                 ledger.agent_id, key, now, decision_id)
                total_bets = total_bets + action.amount
            else:
                if (action.market_id, action.outcome) in seen_sells:
                    raise RejectedOrder("the same position is sold twice in one decision", reason="duplicate_sell")
                seen_sells.add((action.market_id, action.outcome))
                fill = _sell_fill(action, market, pricer, scratch, ledger.agent_id, key, now, decision_id)
            scratch.apply(fill)
            fills.append(fill)
        except ArenaError as exc:  # a broken rule or ledger invariant rejects the decision, with its reason
            reject(i, exc)
    if not result.rejections:
        result.fills = fills
    return result


def _bet_fill(bet: Bet, market: Market, pricer: Pricer, rules: CohortRules, max_bet: Money,
              cash_at_start: Money, total_bets: Money, agent_id: str, key: str, now: datetime,
              decision_id: str) -> Fill:
    amount = bet.amount
    if amount.micros <= 0:
        raise RejectedOrder(f"bet amount must be positive, got {amount}", reason="bad_amount")
    if amount < rules.min_bet:
        raise RejectedOrder(f"bet {amount} is below the minimum {rules.min_bet}", reason="below_min_bet")
    if amount > max_bet:
        raise RejectedOrder(f"bet {amount} exceeds the max bet {max_bet} "
                            f"({rules.max_bet_fraction} of {cash_at_start} at the start of the decision)",
                            reason="over_max_bet")
    if total_bets + amount > cash_at_start:
        raise RejectedOrder(f"bets total {total_bets + amount}, more than the {cash_at_start} in cash",
                            reason="over_cash")
    if bet.stated_probability is not None and not 0.0 <= bet.stated_probability <= 1.0:
        raise RejectedOrder(f"stated probability {bet.stated_probability} outside [0, 1]",
                            reason="bad_probability")
    priced = pricer.buy(market, bet.outcome, amount)
    return Fill(key=key, agent_id=agent_id, market_id=market.id, outcome=bet.outcome, kind=FillKind.BUY,
                shares=priced.shares, cash=-priced.cash, cost=priced.cash, at=now, price=priced.price,
                mid=priced.mid, provenance=priced.provenance, decision_id=decision_id)


def _sell_fill(sell: Sell, market: Market, pricer: Pricer, book: Ledger, agent_id: str, key: str,
               now: datetime, decision_id: str) -> Fill:
    fraction = sell.fraction
    if not isinstance(fraction, Decimal):
        fraction = Decimal(str(fraction))
    if not Decimal(0) < fraction <= Decimal(1):
        raise RejectedOrder(f"sell fraction {fraction} outside (0, 1]", reason="bad_fraction")
    pos = book.position(sell.market_id, sell.outcome)
    if pos.shares <= 0:
        raise RejectedOrder(f"no {sell.outcome} position in {sell.market_id} to sell", reason="no_position")
    num, den = fraction.as_integer_ratio()
    shares = pos.shares if fraction == 1 else (pos.shares * num) // den
    if shares <= 0:
        raise RejectedOrder("the fraction sells less than one micro-share", reason="too_small")
    released = pos.cost_basis if shares == pos.shares else pos.cost_basis.fraction(shares, pos.shares)
    priced = pricer.sell(market, sell.outcome, shares)
    return Fill(key=key, agent_id=agent_id, market_id=market.id, outcome=sell.outcome, kind=FillKind.SELL,
                shares=-priced.shares, cash=priced.cash, cost=-released, at=now, price=priced.price,
                mid=priced.mid, provenance=priced.provenance, decision_id=decision_id)
