"""The methodology page's worked examples of decision value, the daily marks' Sharpe ratio and drawdown, and the
P/L at the bid: small fixed inputs put through the scoring library's own functions (`scoring.decision_value`,
`scoring.risk`, `domain.valuation`), so the page prints what the boards compute."""

from __future__ import annotations

import numpy as np

from arena.domain.valuation import complement_ppm, value_micros
from arena.money import MICRO
from arena.scoring.decision_value import KELLY_FRACTION, MAX_BET_FRACTION, decision_returns, kelly_stake
from arena.scoring.risk import MIN_RETURNS, daily_returns, equity_risk
from arena.web.env import money
from arena.web.methodology_page import WorkedExample


def _pct(x: float, digits: int = 2) -> str:
    if x == 0:
        return "0 %"
    return f"{100.0 * x:+.{digits}f} %".replace("-", "−")


def decision_value_example() -> WorkedExample:
    """Three questions of one seat: a YES bet that wins, a NO bet that loses, and a question it left out."""
    q, p, o = [0.70, 0.20, 0.50], [0.50, 0.40, 0.20], [1.0, 1.0, 1.0]
    answered = [True, True, False]
    stake, _ = kelly_stake(q, p)
    r = decision_returns(q, p, o, answered)
    value = float(np.mean(r))
    return WorkedExample(
        "Decision value of three questions",
        f"A seat states 0.70 on A priced 0.50, 0.20 on B priced 0.40, and leaves C (priced 0.20) out; all three "
        f"resolve YES. The rule bets {KELLY_FRACTION:g} × Kelly, capped at {MAX_BET_FRACTION:g} of the bankroll, "
        "on each stated forecast at the price the seat saw.",
        (("A: buys YES; Kelly (0.70 − 0.50) / (1 − 0.50) = 0.40, stake ¼ × 0.40", f"{stake[0]:.3f}"),
         ("A: return 0.100 × (1 / 0.50 − 1)", _pct(r[0])),
         ("B: buys NO at 0.60; Kelly (0.40 − 0.20) / 0.40 = 0.50, stake ¼ × 0.50", f"{stake[1]:.3f}"),
         ("B: NO loses its stake", _pct(r[1])),
         ("C: imputed 0.5 — no bet, counted as 0 (0.5 at 0.20 would have bought YES and won)", _pct(r[2])),
         ("decision value: mean over the three markets", _pct(value)),
         ("the market reference (states the price): never bets", _pct(0.0))),
        "The seat's own bets play no part: a seat that bet nothing, or everything, on these forecasts gets the same "
        "value, so seats compare on what their stated forecasts are worth to one fixed bettor. Each question is "
        "a fresh bankroll of 1, so the expected return is ¼ · (q − p)(t − p) / (p (1 − p)) with t the true "
        "chance: it rewards moving from the price towards the truth, and is noisy where the price is near 0 or "
        "1 (cheap contracts pay many times their stake), hence the interval.")


def risk_example() -> WorkedExample:
    """A six-point daily equity path: its returns, Sharpe ratio and maximum drawdown."""
    equity = np.array([10_000, 11_000, 9_900, 12_100, 10_890, 11_979], dtype=np.int64) * MICRO
    r = daily_returns(equity)
    risk = equity_risk(equity)
    return WorkedExample(
        "Sharpe ratio and drawdown of a daily equity path",
        "A seat starts with $10,000; the last mark of each of its five days reads $11,000, $9,900, $12,100, "
        "$10,890 and $11,979.",
        (("daily returns", ", ".join(_pct(x, 1) for x in r)),
         ("mean of the returns", _pct(float(np.mean(r)))),
         ("sample sd (n − 1)", f"{100.0 * float(np.std(r, ddof=1)):.2f} %"),
         ("Sharpe = mean / sd, per day (not annualised)", f"{risk.sharpe:+.3f}"),
         ("falls from a running peak: 11,000 → 9,900 and 12,100 → 10,890", "10.0 %, 10.0 %"),
         ("maximum drawdown", f"{100.0 * (risk.max_drawdown or 0.0):.1f} %")),
        f"Below {MIN_RETURNS} daily returns the Sharpe ratio is not reported (“—”, the reason on hover and in "
        "risk_note); a book that never moved has none either. The drawdown needs one daily mark. Annualising "
        "(× √365) would only rescale every row alike.")


def bid_example() -> WorkedExample:
    """A book of one YES and one NO position marked at the mid and at the bid."""
    start, cash = 10_000 * MICRO, 9_000 * MICRO
    yes_shares, no_shares = 1_250 * MICRO, 1_000 * MICRO
    mid, bid, ask = 550_000, 530_000, 570_000  # YES, ppm
    at_mid = value_micros(np.array([yes_shares, no_shares]), np.array([mid, complement_ppm(np.array([mid]))[0]]))
    at_bid = value_micros(np.array([yes_shares, no_shares]), np.array([bid, complement_ppm(np.array([ask]))[0]]))
    pnl_mid = cash + int(at_mid.sum()) - start
    pnl_bid = cash + int(at_bid.sum()) - start
    return WorkedExample(
        "P/L at the bid beside P/L at the mid",
        "A seat started with $10,000, holds $9,000 cash, 1,250 YES shares of a market whose YES trades at "
        "0.53 bid / 0.57 ask (mid 0.55), and 1,000 NO shares of the same market.",
        (("YES at the mid: 1,250 × 0.55", money(int(at_mid[0]))),
         ("NO at the mid: 1,000 × (1 − 0.55)", money(int(at_mid[1]))),
         ("P/L at the mid", money(pnl_mid, signed=True)),
         ("YES at the bid: 1,250 × 0.53", money(int(at_bid[0]))),
         ("NO at its bid, 1 − the YES ask: 1,000 × (1 − 0.57)", money(int(at_bid[1]))),
         ("P/L at the bid", money(pnl_bid, signed=True))),
        "The bid is what selling now would fetch, so a long book is worth less there than at the mid by half the "
        "spread per share. Only YES snapshots record a bid and an ask: a seat holding a position with none "
        "recorded shows “—”, not a guess; a seat holding nothing has the same P/L at either mark.")


def risk_examples() -> tuple[WorkedExample, ...]:
    return (decision_value_example(), risk_example(), bid_example())


__all__ = ["bid_example", "decision_value_example", "risk_example", "risk_examples"]
