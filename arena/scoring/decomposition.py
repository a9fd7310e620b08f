"""P/L decomposition: each bet's realized + unrealized P/L split into parts that add up exactly (pure, integers).

Owns the fold of one position's fills into per-bet lots and the exact split of each lot's P/L; imports only
numpy, pandas and the standard library, never the store or the clock. Money is integer micro-USD, prices and
probabilities integer ppm, shares micro-shares (arena.money's scales).

A *bet* is one BUY fill: `amount` micro-USD paid for `shares` micro-shares of one side at average price
c = amount / shares, with the mid m at the time (FillRow.mid_ppm) and the agent's stated probability b of that side
(its P(YES), or 1 − P(YES) for a NO bet). Write V(x) = floor(shares × x / 10⁶), the lot's value at price x.
Per bet, all in micro-USD:

    slippage_cost   = amount − V(m)                  what was paid above the mid value of the shares received
                                                     (≈ shares × (c − m); 0 when no mid is known; with m = c it is
                                                     the ≤ 1 micro-USD lost to flooring the share count)
    expected_pnl    = V(b) − amount                  P/L expected under the agent's own belief at entry
                                                     (≈ shares × (b − c)); None without a stated probability
    move_captured   = proceeds + V_h(L) − amount     the price move captured: what sells brought in, plus the
                                                     shares held to the end valued at the last price L
                                                     (≈ shares × (L − c) when nothing was sold)
    resolution_residual = end_value − V_h(L)         what resolution paid beyond the last price
                                                     (≈ shares × (outcome − L)); 0 while the market is open
    belief_gap      = move_captured − expected_pnl   how far the market (last price, exit prices) went from the
                                                     agent's belief (≈ shares × (L − b)); None without a belief
    pnl             = proceeds + end_value − amount  the bet's realized + unrealized P/L

so, exactly and in integers:

    pnl = move_captured + resolution_residual = expected_pnl + belief_gap + resolution_residual

and expected_pnl + belief_gap + resolution_residual − pnl = 0 is the "skill vs luck" reading: expected_pnl is the
edge the agent claimed, belief_gap + resolution_residual = shares × (outcome − b) is what its own belief calls luck
(mean zero if the belief was right). Note that the issue's four named parts (expected, slippage, move, residual)
do not add up to P/L as named (slippage is already inside both the expected P/L and the move captured), so they
are kept as named and the additive chain above is built beside them; slippage is a view, not an addend.

How a position's fills become per-bet amounts (the rounding design that makes the sums exact):
- a SELL of k micro-shares is taken from the lots pro rata to the shares each still holds, and its cash pro rata
  to the shares each gave up, both by largest remainder (floor shares, then one unit each to the largest
  fractional parts, ties to the earlier bet), so the lots' parts sum exactly to the fill. This matches the ledger's
  average-cost basis. A SETTLE/REFUND takes every held share; its cash is split by the same rule;
- a REVERSAL gives each lot back exactly what the settlement it undoes (its `reverses` key, else the latest
  settlement in force) took, so a re-resolution leaves no trace but the new settlement;
- end_value: the cash of the settlement in force, or, while shares are held, the position's marked value
  floor(held × L / 10⁶) (the ledger's value_of; at cost basis when no price is known, as valuation.py does),
  split by largest remainder;
- V_h(L): the shares held into resolution (taken by the settlement in force, or still held) valued at the last
  price before resolution, floor(h × L / 10⁶) at the position level, split the same way. For an open position it
  is the mark, so the residual is 0. A void refund's residual is the refund minus that value. With no last price
  known it is the held shares' share of their bets' cost, so the whole result counts as residual.
V(m) and V(b) are per-lot floors; they need not add up to anything, because every part is a difference of amounts
that telescope: the sum over a position's bets of pnl is Σ cash of its fills + its marked value, the ledger's
realized + unrealized P/L, to the micro-dollar.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.scoring.registry import register

MICRO = 1_000_000  # micro-USD per USD, ppm per unit probability, micro-shares per share (as arena.money)
KINDS = ("buy", "sell", "settle", "refund", "reversal")
PART_COLUMNS = ("amount", "shares", "pnl", "slippage_cost", "expected_pnl", "move_captured", "belief_gap",
                "resolution_residual")
SUM_COLUMNS = ("amount", "pnl", "slippage_cost", "expected_pnl", "belief_gap", "move_without_belief",
               "move_captured", "resolution_residual")

for _name, _hib, _desc in (
    ("expected_pnl", True, "P/L expected under the agent's own stated belief at entry: shares x (belief - price paid)"),
    ("slippage_cost", False, "What bets paid above the mid value of the shares received: shares x (price - mid)"),
    ("move_captured", True, "Price move captured: sell proceeds + held shares at the last price - amount paid"),
    ("resolution_residual", True, "What resolution paid beyond the last price before it: shares x (outcome - last)"),
    ("belief_gap", True, "Move captured minus expected P/L: how far later prices went from the stated belief"),
):
    register(_name, higher_is_better=_hib, description=_desc, unit="USD (micro-USD in exact frames)")


class DecompositionError(ValueError):
    """A position's fills cannot be folded (shares sold that no bet holds, a reversal of nothing)."""


@dataclass(frozen=True)
class PositionFill:
    """One fill of one position, in the order recorded. shares/cash are the fill's deltas (micro-shares,
    micro-USD), cost its cost-basis delta; price_ppm / mid_ppm the side price and mid; belief_ppm the stated
    probability of this side (BUY only); reverses the key of the settlement a REVERSAL undoes."""

    key: str
    kind: str
    shares: int
    cash: int
    cost: int = 0
    price_ppm: int | None = None
    mid_ppm: int | None = None
    belief_ppm: int | None = None
    reverses: str | None = None


@dataclass(frozen=True)
class BetParts:
    """The decomposition of one bet (one BUY fill); every amount in micro-USD, shares in micro-shares."""

    key: str
    amount: int
    shares: int
    pnl: int
    slippage_cost: int
    expected_pnl: int | None
    move_captured: int
    belief_gap: int | None
    resolution_residual: int


@dataclass
class _Lot:
    key: str
    amount: int
    shares: int
    mid: int | None
    belief: int | None
    held: int = 0
    proceeds: int = 0
    end_cash: int = 0
    into_resolution: int = 0
    mark: int = 0
    pre_value: int = 0


@dataclass
class _Settlement:
    key: str
    taken: list[int]
    cash: list[int]
    reversed: bool = False


def allocate(total: int, weights: Sequence[int]) -> list[int]:
    """Split the integer `total` in proportion to non-negative integer `weights`, exactly (largest remainder).

    Each part is floor(total × w / Σw), then the units left over go one each to the largest fractional parts, ties
    to the earlier weight. A negative total is split as −allocate(−total). A part never exceeds its weight's exact
    share rounded up, so taking k ≤ Σw shares never takes more than a lot holds. Zero weights get zero."""
    if total < 0:
        return [-x for x in allocate(-total, weights)]
    w_sum = sum(weights)
    if w_sum <= 0:
        if total:
            raise DecompositionError(f"cannot split {total} over zero weights")
        return [0] * len(weights)
    base = [total * w // w_sum for w in weights]
    rema = [total * w % w_sum for w in weights]
    left = total - sum(base)
    for i in sorted(range(len(weights)), key=lambda j: (-rema[j], j))[:left]:
        base[i] += 1
    return base


def _floor_value(shares: int, ppm: int) -> int:
    return shares * ppm // MICRO


def decompose_position(fills: Sequence[PositionFill], last_price_ppm: int | None) -> list[BetParts]:
    """Per-bet parts of one position (one agent, market and outcome) from its fills in recorded order.

    last_price_ppm: the side price the position is valued at — the last price before resolution for a settled
    position, the current price for an open one (None: unknown; an open position is then valued at cost basis).
    Raises DecompositionError when the fills are not a valid sequence. Empty fills give an empty list.
    """
    lots: list[_Lot] = []
    settlements: list[_Settlement] = []
    basis = 0
    for f in fills:
        kind = f.kind.lower()
        if kind not in KINDS:
            raise DecompositionError(f"fill {f.key}: unknown kind {f.kind!r}")
        basis += f.cost
        if kind == "buy":
            if f.shares <= 0 or f.cash >= 0:
                raise DecompositionError(f"BUY {f.key} must add shares and spend cash")
            lots.append(_Lot(f.key, -f.cash, f.shares, f.mid_ppm, f.belief_ppm, held=f.shares))
            continue
        held = [lot.held for lot in lots]
        if kind == "sell":
            k = -f.shares
            if k <= 0 or k > sum(held):
                raise DecompositionError(f"SELL {f.key} of {k} micro-shares; {sum(held)} held")
            taken = allocate(k, held)
            for lot, t, c in zip(lots, taken, allocate(f.cash, taken)):
                lot.held -= t
                lot.proceeds += c
        elif kind in ("settle", "refund"):
            if -f.shares != sum(held) or sum(held) == 0:
                raise DecompositionError(f"{kind.upper()} {f.key} takes {-f.shares} micro-shares; {sum(held)} held")
            cash = allocate(f.cash, held)
            for lot, c in zip(lots, cash):
                lot.held = 0
                lot.end_cash += c
            settlements.append(_Settlement(f.key, held, cash))
        else:  # reversal
            live = [s for s in settlements if not s.reversed]
            target = next((s for s in live if s.key == f.reverses), live[-1] if live else None)
            if target is None or sum(target.taken) != f.shares or sum(target.cash) != -f.cash:
                raise DecompositionError(f"REVERSAL {f.key} does not mirror a settlement in force")
            target.reversed = True
            for lot, t, c in zip(lots, target.taken, target.cash):
                lot.held += t
                lot.end_cash -= c
    if not lots:
        return []

    held = [lot.held for lot in lots]
    in_force = [s for s in settlements if not s.reversed]
    if sum(held) > 0:  # open: the end value is the mark, and the shares held are those "into resolution"
        total = _floor_value(sum(held), last_price_ppm) if last_price_ppm is not None else basis
        for lot, v in zip(lots, allocate(total, held)):
            lot.mark = lot.pre_value = v
            lot.into_resolution = lot.held
    elif in_force:
        into = in_force[-1].taken
        if last_price_ppm is not None:
            pre = allocate(_floor_value(sum(into), last_price_ppm), into)
        else:
            pre = [lot.amount * t // lot.shares for lot, t in zip(lots, into)]
        for lot, t, v in zip(lots, into, pre):
            lot.into_resolution, lot.pre_value = t, v

    out = []
    for lot in lots:
        end_value = lot.end_cash + lot.mark
        pnl = lot.proceeds + end_value - lot.amount
        slippage = lot.amount - _floor_value(lot.shares, lot.mid) if lot.mid is not None else 0
        expected = _floor_value(lot.shares, lot.belief) - lot.amount if lot.belief is not None else None
        move = lot.proceeds + lot.pre_value - lot.amount
        out.append(BetParts(lot.key, lot.amount, lot.shares, pnl, slippage, expected, move,
                            move - expected if expected is not None else None, end_value - lot.pre_value))
    return out


def decompose(fills: pd.DataFrame, last_prices: pd.DataFrame | None = None,
              position: Sequence[str] = ("agent", "market_id", "outcome")) -> pd.DataFrame:
    """Per-bet decomposition of many positions.

    fills: one row per fill in recorded order, with the `position` columns, key, kind, shares, cash, cost (ints)
        and optionally price_ppm, mid_ppm, belief_ppm (side probability, ppm) and reverses (nullable).
    last_prices: the `position` columns and last_price_ppm (nullable) — see `decompose_position`; a position
        missing from it has no known price.
    Returns one row per BUY: the position columns, bet (the BUY's key) and PART_COLUMNS as nullable Int64 (micro-USD;
    shares in micro-shares). Empty input gives an empty frame with those columns.
    """
    pos = list(position)
    cols = [*pos, "bet", *PART_COLUMNS]
    if fills is None or fills.empty:
        return pd.DataFrame({c: pd.Series(dtype="Int64" if c in PART_COLUMNS else object) for c in cols})
    prices: dict[Hashable, int | None] = {}
    if last_prices is not None and not last_prices.empty:
        for rec in last_prices[[*pos, "last_price_ppm"]].itertuples(index=False):
            p = rec[-1]
            prices[tuple(rec[:-1])] = None if _missing(p) else int(p)

    def opt(row: dict, name: str) -> int | None:
        v = row.get(name)
        return None if _missing(v) else int(v)

    # One pass over the records, grouped by position in order of first appearance (fills keep their order):
    # a pandas groupby makes a frame per position, whose fixed cost dwarfs the few fills each position has.
    groups: dict[tuple, list[dict]] = {}
    cols_used = [*dict.fromkeys([*pos, "key", "kind", "shares", "cash"]),
                 *(c for c in ("cost", "price_ppm", "mid_ppm", "belief_ppm", "reverses") if c in fills.columns)]
    for values in zip(*(fills[c].tolist() for c in cols_used)):
        r = dict(zip(cols_used, values))
        groups.setdefault(tuple(None if _missing(r[c]) else r[c] for c in pos), []).append(r)
    rows = []
    for keys, grp in groups.items():
        seq = [PositionFill(str(r["key"]), str(r["kind"]), int(r["shares"]), int(r["cash"]), int(r.get("cost", 0)),
                            opt(r, "price_ppm"), opt(r, "mid_ppm"), opt(r, "belief_ppm"),
                            None if _missing(r.get("reverses")) else str(r["reverses"]))
               for r in grp]
        for parts in decompose_position(seq, prices.get(keys)):
            rows.append((*keys, parts.key, *(getattr(parts, c) for c in PART_COLUMNS)))
    if not rows:
        return decompose(fills.iloc[0:0], None, position)
    out = pd.DataFrame(rows, columns=cols)
    for c in PART_COLUMNS:
        out[c] = pd.array(out[c].tolist(), dtype="Int64")
    return out


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA


def summarize(parts: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Sum per-bet parts over groups (e.g. ["agent"] or ["cohort"]), keeping the exact identity per group:

        pnl = expected_pnl + belief_gap + move_without_belief + resolution_residual = move_captured + residual

    expected_pnl and belief_gap are summed over bets with a stated belief; move_without_belief is the move captured
    by bets without one (0 when every bet stated its belief). Adds n_bets and n_without_belief. Int64, micro-USD.
    """
    by = list(by)
    if parts.empty:
        cols = {c: pd.Series(dtype=object) for c in by}
        cols |= {c: pd.Series(dtype="Int64") for c in ("n_bets", "n_without_belief", *SUM_COLUMNS)}
        return pd.DataFrame(cols)
    df = parts.copy()
    no_belief = df["expected_pnl"].isna()
    df["n_without_belief"] = no_belief.astype("int64")
    df["move_without_belief"] = df["move_captured"].where(no_belief, 0)
    df["expected_pnl"] = df["expected_pnl"].fillna(0)
    df["belief_gap"] = df["belief_gap"].fillna(0)
    agg = {c: "sum" for c in (*SUM_COLUMNS, "n_without_belief")}
    out = df.groupby(by, sort=True, dropna=False).agg(agg)
    out.insert(0, "n_bets", df.groupby(by, sort=True, dropna=False).size())
    return out.reset_index().astype({c: "Int64" for c in ("n_bets", "n_without_belief", *SUM_COLUMNS)})


__all__ = ["BetParts", "DecompositionError", "PART_COLUMNS", "PositionFill", "SUM_COLUMNS", "allocate", "decompose",
           "decompose_position", "summarize"]
