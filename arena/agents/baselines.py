"""Scripted baseline agents (always-0.5, market follower, random, Kelly extremizer, noisy oracle) and the demo lineup.

Pure: no I/O, no wall clock, no global random state. Each agent's randomness comes from its own seed mixed
with the view (agent id, as-of time, market id, and `view.replicate` when a seat is asked k times), so a
decision depends only on the seed and the view — never on how many times the agent was called before.
Replicate 1 draws exactly what an unreplicated agent draws; replicates 2..k draw fresh run-to-run noise.
Imports only `arena.money`, `arena.domain` and `arena.agents.view`; it must not import a venue (the oracle
gets its hidden truth as a plain function).

Rules every agent here keeps (the broker checks them too): it bets only on binary markets in the view that are
open at `view.as_of`; each stake is whole cents (rounded down), at least `view.min_bet`, at most
`view.max_bet`; the decision's stakes sum to at most `view.cash`. Each agent states P(YES) for every market id
in `view.forecast_set` (`Decision.forecasts`) and on each Bet (`stated_probability`).

Prices an agent reads: the *market probability* q is the quote's YES price (the mid); the *cost* of a share is
the ask for YES and 1 − bid for NO when the quote has a book, else the mid — so edges and Kelly sizes already
pay the spread. The price of selling is the bid for YES and 1 − ask for NO (else the mid).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from datetime import datetime
from decimal import Decimal
from typing import Protocol

import numpy as np

from arena.agents.view import Agent, AgentView, MarketView
from arena.domain.decision import Action, Bet, Decision, Sell
from arena.domain.market import NO, YES, MarketKind, Quote
from arena.money import Money

CENT_MICROS = 10_000  # micro-USD per cent
PROB_DECIMALS = 4  # stated probabilities are rounded to 4 decimals so stored numbers are stable and readable


# -- pure helpers ------------------------------------------------------------------------------------------------


def stable_int(*parts: object) -> int:
    """A 64-bit integer from `parts` that is the same in every process (unlike `hash`, which is salted)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def rng_for(seed: int, *parts: object) -> np.random.Generator:
    """A numpy Generator determined by the agent's seed and `parts` (e.g. agent id, as-of time)."""
    return np.random.default_rng(np.random.SeedSequence([seed & (2**63 - 1), stable_int(*parts)]))


def floor_cents(micros: float | int) -> Money:
    """The largest whole-cent amount ≤ `micros` micro-USD (never negative)."""
    whole = int(math.floor(micros)) if micros > 0 else 0
    return Money(whole - whole % CENT_MICROS)


def logit(p: float) -> float:
    return math.log(p) - math.log1p(-p)


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def extremize(q: float, alpha: float) -> float:
    """q^α / (q^α + (1 − q)^α): push a probability away from 0.5 (α > 1) or toward it (α < 1)."""
    if q <= 0.0 or q >= 1.0:
        return q
    return sigmoid(alpha * logit(q))


def kelly_fraction(belief: float, cost: float) -> float:
    """Kelly fraction of bankroll for one side: (b − c) / (1 − c), or 0 when there is no edge.

    `belief` is the agent's probability that the side wins and `cost` the price of one share of it,
    both in [0, 1]; a share pays 1 if the side wins. E.g. belief 0.55, cost 0.40 → 0.25.
    """
    if not 0.0 < cost < 1.0 or belief <= cost:
        return 0.0
    return (belief - cost) / (1.0 - cost)


def market_probability(quote: Quote) -> float:
    """The quote's YES price (the market's P(YES)) as a float in [0, 1]."""
    return float(quote.yes_price())


def buy_cost(quote: Quote, outcome: str) -> float:
    """Price of one share of `outcome` when buying: the ask for YES, 1 − bid for NO; the mid without a book."""
    if outcome == YES:
        return float(quote.ask) if quote.ask is not None else float(quote.yes_price())
    return 1.0 - float(quote.bid) if quote.bid is not None else float(quote.price(NO))


def sell_price(quote: Quote, outcome: str) -> float:
    """Price one share of `outcome` fetches when selling: the bid for YES, 1 − ask for NO; the mid without a book."""
    if outcome == YES:
        return float(quote.bid) if quote.bid is not None else float(quote.yes_price())
    return 1.0 - float(quote.ask) if quote.ask is not None else float(quote.price(NO))


def tradable(view: AgentView) -> list[MarketView]:
    """The view's binary markets open at `view.as_of` with a usable price (strictly between 0 and 1), by id."""
    out = []
    for mv in view.markets:
        if mv.market.kind is not MarketKind.BINARY or not mv.market.is_open_at(view.as_of):
            continue
        if mv.quote.market_id != mv.market.id:
            continue
        q = market_probability(mv.quote)
        if 0.0 < q < 1.0:
            out.append(mv)
    return sorted(out, key=lambda mv: mv.market.id)


def held_markets(view: AgentView) -> set[str]:
    return {p.market_id for p in view.positions if p.shares > 0}


def rounded(p: float) -> float:
    return round(min(max(p, 0.0), 1.0), PROB_DECIMALS)


class Budget:
    """Sizes stakes within the view's limits: whole cents, ≥ min_bet, ≤ max_bet, and in total ≤ cash."""

    def __init__(self, view: AgentView) -> None:
        self.min_bet = view.min_bet
        self.max_bet = view.max_bet
        self.remaining = view.cash if view.cash.micros > 0 else Money.zero()

    def stake(self, wanted_micros: float | int) -> Money | None:
        """The stake to place for a wish of `wanted_micros` micro-USD, or None when it would be below min_bet."""
        cap = min(self.max_bet.micros, self.remaining.micros)
        amount = floor_cents(min(wanted_micros, cap))
        if amount.micros <= 0 or amount < self.min_bet:
            return None
        return amount

    def spend(self, amount: Money) -> None:
        self.remaining = self.remaining - amount


# -- the agents ------------------------------------------------------------------------------------------------


class AlwaysHalf:
    """States P(YES) = 0.5 on every market of the forecast set and never bets (ForecastBench's always-0.5)."""

    version = "always-half-1"

    def __init__(self, name: str = "always-0.5") -> None:
        self.name = name

    def decide(self, view: AgentView) -> Decision:
        return Decision(forecasts={mid: 0.5 for mid in view.forecast_set}, reasoning="always 0.5; never bets")


class MarketFollower:
    """States the market's YES price as its P(YES) and never bets. Forecast-set markets without a quote in the
    view get 0.5 (no information), the imputation ForecastBench uses for missing forecasts."""

    version = "market-follower-1"

    def __init__(self, name: str = "market-follower") -> None:
        self.name = name

    def decide(self, view: AgentView) -> Decision:
        forecasts = {}
        for mid in view.forecast_set:
            mv = view.market(mid)
            forecasts[mid] = rounded(market_probability(mv.quote)) if mv is not None else 0.5
        return Decision(forecasts=forecasts, reasoning="states the market price; never bets")


class RandomBettor:
    """Bets on up to `max_bets` random open markets with random sides and random stakes in [min_bet, max_bet];
    states a uniformly random P(YES) for every market it forecasts or bets on."""

    version = "random-1"

    def __init__(self, name: str = "random", seed: int = 0, max_bets: int = 3) -> None:
        self.name = name
        self.seed = seed
        self.max_bets = max_bets

    def decide(self, view: AgentView) -> Decision:
        rng = rng_for(self.seed, self.name, view.agent_id, view.as_of.isoformat(), *_replicate_key(view))
        markets = tradable(view)
        ids = sorted(set(view.forecast_set) | {mv.market.id for mv in markets})
        stated = {mid: rounded(float(rng.uniform(0.01, 0.99))) for mid in ids}
        budget = Budget(view)
        actions: list[Action] = []
        n = int(rng.integers(0, min(self.max_bets, len(markets)) + 1)) if markets else 0
        picks = sorted(int(i) for i in rng.choice(len(markets), size=n, replace=False)) if n else []
        for i in picks:
            mv = markets[i]
            outcome = YES if rng.random() < 0.5 else NO
            cap = min(budget.max_bet.micros, budget.remaining.micros)
            if cap < max(budget.min_bet.micros, CENT_MICROS):
                break
            wish = float(rng.uniform(budget.min_bet.micros, cap))
            amount = budget.stake(max(wish, budget.min_bet.micros))
            if amount is None:
                continue
            budget.spend(amount)
            actions.append(Bet(mv.market.id, outcome, amount, stated[mv.market.id], rationale="random"))
        forecasts = {mid: stated[mid] for mid in view.forecast_set}
        return Decision(tuple(actions), forecasts, reasoning=f"random: {len(actions)} bet(s)")


class KellyBettor:
    """Believes the extremized market price p = extremize(q, alpha) and bets `kelly_multiplier` × the Kelly
    fraction of its cash on the side with the edge: f = (p − c)/(1 − c) for YES at cost c, symmetric for NO.

    Stakes are f × view.cash (the cash at the start of the decision), capped at max_bet and at the cash left,
    largest edges first; stakes below min_bet are skipped. It does not add to markets it already holds.
    """

    version = "kelly-extremizer-1"

    def __init__(self, name: str = "kelly-extremizer", alpha: float = 1.5, kelly_multiplier: float = 1.0,
                 max_bets: int | None = None, seed: int = 0) -> None:
        if alpha <= 0 or kelly_multiplier <= 0:
            raise ValueError("alpha and kelly_multiplier must be positive")
        self.name = name
        self.alpha = alpha
        self.kelly_multiplier = kelly_multiplier
        self.max_bets = max_bets
        self.seed = seed  # unused (the rule is deterministic); kept so every baseline is built the same way

    def belief(self, q: float) -> float:
        return extremize(q, self.alpha)

    def decide(self, view: AgentView) -> Decision:
        forecasts = {}
        for mid in view.forecast_set:
            mv = view.market(mid)
            forecasts[mid] = rounded(self.belief(market_probability(mv.quote))) if mv is not None else 0.5
        held = held_markets(view)
        candidates = []
        for mv in tradable(view):
            if mv.market.id in held:
                continue
            p = self.belief(market_probability(mv.quote))
            side, f = _best_side(p, mv.quote)
            if f > 0:
                candidates.append((f, mv, side, p))
        candidates.sort(key=lambda c: (-c[0], c[1].market.id))
        actions = _sized_bets(view, candidates, self.kelly_multiplier, self.max_bets,
                              lambda f, p, side, c: f"extremized p={p:.3f} (α={self.alpha}); {side} Kelly f={f:.3f}")
        return Decision(tuple(actions), forecasts, reasoning=f"kelly on extremized price: {len(actions)} bet(s)")


class NoisyOracle:
    """An agent of known skill: its belief is the hidden truth seen through logit-space noise.

    belief_i = sigmoid(logit(truth_i) + skill_sd · z_i + replicate_sd · e_ir), with z_i ~ N(0, 1) fixed per
    (seed, `error_key` (default: the name), market): the same market always gets the same error from the same
    agent; e_ir ~ N(0, 1) is run-to-run noise, drawn per (seed, name, market, as-of, replicate r) — what asking
    a model the same question twice changes (0 by default: every replicate then answers alike). Two oracles
    with one `error_key` and one seed are the same forecaster at two skill levels (an ablation pair).
    `belief(market_id)` gives the hidden truth; pass `belief_at(market_id, as_of)` instead to use the truth
    given what was known at the view's time (the simulator's `truth_at`), so the oracle does not bet on stale knowledge as news arrives.

    It bets where its belief beats the cost of a side by more than `edge_threshold`, sizing
    `kelly_multiplier` × Kelly × view.cash (capped at max_bet), at most `max_bets` bets per decision, best
    edges first, and never adds to a market it holds. With `sell_edge` set, it sells a whole position when
    the side's sell price exceeds its belief by more than `sell_edge` (the market has moved past it).
    """

    version = "noisy-oracle-1"

    def __init__(self, name: str, skill_sd: float, belief: Callable[[str], float] | None = None, *,
                 belief_at: Callable[[str, datetime], float] | None = None, seed: int = 0,
                 edge_threshold: float = 0.05, kelly_multiplier: float = 0.5, max_bets: int = 5,
                 sell_edge: float | None = 0.1, replicate_sd: float = 0.0, error_key: str | None = None) -> None:
        if belief is None and belief_at is None:
            raise ValueError("NoisyOracle needs belief(market_id) or belief_at(market_id, as_of)")
        if skill_sd < 0 or edge_threshold < 0 or kelly_multiplier <= 0 or max_bets < 0:
            raise ValueError("skill_sd, edge_threshold must be >= 0; kelly_multiplier > 0; max_bets >= 0")
        self.name = name
        self.skill_sd = skill_sd
        self._belief = belief
        self._belief_at = belief_at
        self.seed = seed
        self.edge_threshold = edge_threshold
        self.kelly_multiplier = kelly_multiplier
        self.max_bets = max_bets
        self.sell_edge = sell_edge
        if replicate_sd < 0:
            raise ValueError("replicate_sd must be >= 0")
        self.replicate_sd = replicate_sd
        self.error_key = error_key or name

    def error(self, market_id: str) -> float:
        """This agent's fixed standard-normal error for `market_id` (before scaling by skill_sd)."""
        return float(rng_for(self.seed, self.error_key, "error", market_id).standard_normal())

    def replicate_error(self, market_id: str, as_of: datetime, replicate: int) -> float:
        """The standard-normal run-to-run error of one ask (before scaling by replicate_sd)."""
        return float(rng_for(self.seed, self.name, "replicate", market_id, as_of.isoformat(),
                             replicate).standard_normal())

    def belief(self, market_id: str, as_of: datetime, replicate: int = 1) -> float:
        """Its P(YES) for `market_id` at `as_of` in replicate `replicate`, in (0, 1)."""
        truth = self._belief_at(market_id, as_of) if self._belief_at is not None else self._belief(market_id)
        truth = min(max(float(truth), 1e-4), 1 - 1e-4)
        x = logit(truth) + self.skill_sd * self.error(market_id)
        if self.replicate_sd:
            x += self.replicate_sd * self.replicate_error(market_id, as_of, replicate)
        return sigmoid(x)

    def decide(self, view: AgentView) -> Decision:
        beliefs: dict[str, float] = {}

        def believe(mid: str) -> float:
            if mid not in beliefs:
                beliefs[mid] = self.belief(mid, view.as_of, view.replicate)
            return beliefs[mid]

        forecasts = {mid: rounded(believe(mid)) for mid in view.forecast_set}
        actions: list[Action] = []
        open_by_id = {mv.market.id: mv for mv in tradable(view)}

        if self.sell_edge is not None:
            for pos in sorted(view.positions, key=lambda p: (p.market_id, p.outcome)):
                mv = open_by_id.get(pos.market_id)
                if pos.shares <= 0 or mv is None or not pos.market_open:
                    continue
                p = believe(pos.market_id)
                side_belief = p if pos.outcome == YES else 1.0 - p
                price = sell_price(mv.quote, pos.outcome)
                if price - side_belief > self.sell_edge:
                    actions.append(Sell(pos.market_id, pos.outcome, Decimal(1),
                                        rationale=f"belief {side_belief:.3f} < sell price {price:.3f}"))

        held = held_markets(view)
        candidates = []
        for mid, mv in open_by_id.items():
            if mid in held:
                continue
            p = believe(mid)
            side, f = _best_side(p, mv.quote)
            side_belief = p if side == YES else 1.0 - p
            if f > 0 and side_belief - buy_cost(mv.quote, side) > self.edge_threshold:
                candidates.append((f, mv, side, p))
        candidates.sort(key=lambda c: (-c[0], c[1].market.id))
        bets = _sized_bets(view, candidates, self.kelly_multiplier, self.max_bets,
                           lambda f, p, side, c: f"belief p={p:.3f}; {side} costs {c:.3f}; Kelly f={f:.3f}")
        actions.extend(bets)
        sells = len(actions) - len(bets)
        return Decision(tuple(actions), forecasts,
                        reasoning=f"oracle sd={self.skill_sd}: {len(bets)} bet(s), {sells} sell(s)")


class MetricGamer:
    """Games seed 001's implied-confidence Brier while stating honest-but-noisy beliefs (issue 12, item 10).

    Its stated P(YES) — on the forecast set and on every bet — is the hidden truth seen through logit noise of
    `skill_sd`, like a NoisyOracle. Its bets are chosen for the size-implied metric, not for profit: on markets
    priced at least `certain` (or at most 1 − `certain`) it stakes the maximum on the favourite (a maximum bet
    reads as 100 % confidence, and the favourite nearly always wins); on up to `max_tiny` other markets where it
    is most sure, it stakes the minimum on the side it believes LESS (a minimum NO bet reads as P(YES) ≈ 1). The
    headline (the stated forecasts' Brier) ranks it by its noisy beliefs; seed 001's column is fooled.
    """

    version = "metric-gamer-1"

    def __init__(self, name: str = "metric-gamer", skill_sd: float = 1.2, belief: Callable[[str], float] | None = None,
                 *, belief_at: Callable[[str, datetime], float] | None = None, seed: int = 0, certain: float = 0.93,
                 max_certain: int = 3, max_tiny: int = 3) -> None:
        self.name = name
        self.skill_sd = skill_sd
        self.seed = seed
        self.certain = certain
        self.max_certain = max_certain
        self.max_tiny = max_tiny
        self._oracle = NoisyOracle(name, skill_sd, belief, belief_at=belief_at, seed=seed)

    def decide(self, view: AgentView) -> Decision:
        beliefs: dict[str, float] = {}

        def believe(mid: str) -> float:
            if mid not in beliefs:
                beliefs[mid] = self._oracle.belief(mid, view.as_of)
            return beliefs[mid]

        forecasts = {mid: rounded(believe(mid)) for mid in view.forecast_set}
        held = held_markets(view)
        markets = [mv for mv in tradable(view) if mv.market.id not in held]
        certain = sorted((mv for mv in markets if max(market_probability(mv.quote),
                                                     1 - market_probability(mv.quote)) >= self.certain),
                         key=lambda mv: (-abs(market_probability(mv.quote) - 0.5), mv.market.id))[: self.max_certain]
        taken = {mv.market.id for mv in certain}
        others = sorted((mv for mv in markets if mv.market.id not in taken),
                        key=lambda mv: (-abs(believe(mv.market.id) - 0.5), mv.market.id))[: self.max_tiny]
        budget = Budget(view)
        actions: list[Action] = []
        for mv, wish, side in ([(mv, budget.max_bet.micros, YES if market_probability(mv.quote) >= 0.5 else NO)
                                for mv in certain]
                               + [(mv, budget.min_bet.micros, NO if believe(mv.market.id) >= 0.5 else YES)
                                  for mv in others]):
            amount = budget.stake(wish)
            if amount is None:
                continue
            budget.spend(amount)
            actions.append(Bet(mv.market.id, side, amount, rounded(believe(mv.market.id)),
                               rationale="sized for seed 001's implied-confidence Brier, not for profit"))
        return Decision(tuple(actions), forecasts, reasoning=f"metric gamer: {len(actions)} bet(s)")


def _replicate_key(view: AgentView) -> tuple[object, ...]:
    """What a replicate adds to a random stream: nothing for replicate 1 (an unreplicated agent's stream)."""
    return () if view.replicate == 1 else ("replicate", view.replicate)


def _best_side(p_yes: float, quote: Quote) -> tuple[str, float]:
    """The side with the larger Kelly fraction at its buy cost, and that fraction (0 when neither has an edge)."""
    f_yes = kelly_fraction(p_yes, buy_cost(quote, YES))
    f_no = kelly_fraction(1.0 - p_yes, buy_cost(quote, NO))
    return (YES, f_yes) if f_yes >= f_no else (NO, f_no)


def _sized_bets(view: AgentView, candidates: Iterable[tuple[float, MarketView, str, float]], multiplier: float,
                max_bets: int | None, why: Callable[[float, float, str, float], str]) -> list[Bet]:
    """Bets for (kelly f, market, side, P(YES)) candidates in order: stake = multiplier × f × view.cash."""
    budget = Budget(view)
    bets: list[Bet] = []
    for f, mv, side, p in candidates:
        if max_bets is not None and len(bets) >= max_bets:
            break
        amount = budget.stake(multiplier * f * view.cash.micros)
        if amount is None:
            continue
        budget.spend(amount)
        cost = buy_cost(mv.quote, side)
        bets.append(Bet(mv.market.id, side, amount, rounded(p), rationale=why(f, p, side, cost)))
    return bets


# -- the demo lineup -------------------------------------------------------------------------------------------


class TruthSource(Protocol):
    """Anything that knows the hidden P(YES) of a market (the simulated universe)."""

    def truth(self, market_id: str) -> float: ...


DEMO_NAMES = ("oracle-sharp", "oracle-fair", "oracle-noisy", "kelly-extremizer", "random", "market-follower",
              "always-0.5", "metric-gamer", "forecaster-v1", "forecaster-v2")

# The demo's ablation pair: one scripted forecaster (same seed, same per-market errors) before and after a
# planted improvement (its persistent error shrinks from 1.6 to 0.4 in logit units, as a better prompt
# might), each asked DEMO_REPLICATES times per decision with run-to-run noise 0.4. How they are frozen into
# the lineup: seat name → extra lineup config.
DEMO_REPLICATES = 3
DEMO_ABLATION = {
    "forecaster-v1": {"replicates": DEMO_REPLICATES},
    "forecaster-v2": {"replicates": DEMO_REPLICATES, "variant_of": "forecaster-v1", "factor": "prompt version"},
}
ABLATION_SD = {"forecaster-v1": 1.6, "forecaster-v2": 0.4}
ABLATION_REPLICATE_SD = 0.4


def demo_lineup(universe: TruthSource, seed: int) -> list[Agent]:
    """The standard demo agents, in DEMO_NAMES order; each gets a seed derived from `seed` and its name.

    The oracles read `universe.truth_at(market_id, as_of)` when the universe has it (the truth given the news
    so far), else `universe.truth(market_id)`.
    """
    truth_at = getattr(universe, "truth_at", None)

    def oracle(name: str, sd: float) -> NoisyOracle:
        s = _derived_seed(seed, name)
        if truth_at is not None:
            return NoisyOracle(name, sd, belief_at=truth_at, seed=s)
        return NoisyOracle(name, sd, universe.truth, seed=s)

    return [
        oracle("oracle-sharp", 0.3),
        oracle("oracle-fair", 0.8),
        oracle("oracle-noisy", 1.6),
        KellyBettor("kelly-extremizer", alpha=1.5, seed=_derived_seed(seed, "kelly-extremizer")),
        RandomBettor("random", seed=_derived_seed(seed, "random")),
        MarketFollower("market-follower"),
        AlwaysHalf("always-0.5"),
        MetricGamer("metric-gamer", 1.2, **({"belief_at": truth_at} if truth_at is not None else
                                             {"belief": universe.truth}), seed=_derived_seed(seed, "metric-gamer")),
        *(NoisyOracle(name, sd, **({"belief_at": truth_at} if truth_at is not None else {"belief": universe.truth}),
                      seed=_derived_seed(seed, "forecaster"), error_key="forecaster",
                      replicate_sd=ABLATION_REPLICATE_SD) for name, sd in ABLATION_SD.items()),
    ]


def replay_lineup(outcome_of: Callable[[str], int], seed: int) -> list[Agent]:
    """Agents for a replay of recorded markets, which have no hidden truth: the baselines, plus two
    *clairvoyant* reference agents that are told the recorded outcome (blurred to 0.8 / 0.2 and then
    noised), so a replay shows that the scoring separates a forecaster who knows something from one who
    does not. They are labelled as such everywhere; they are not forecasters."""

    def blurred(market_id: str) -> float:
        return 0.8 if outcome_of(market_id) == 1 else 0.2

    return [
        NoisyOracle("clairvoyant-sharp", 0.5, blurred, seed=_derived_seed(seed, "clairvoyant-sharp")),
        NoisyOracle("clairvoyant-noisy", 1.5, blurred, seed=_derived_seed(seed, "clairvoyant-noisy")),
        KellyBettor("kelly-extremizer", alpha=1.5, seed=_derived_seed(seed, "kelly-extremizer")),
        RandomBettor("random", seed=_derived_seed(seed, "random")),
        MarketFollower("market-follower"),
        AlwaysHalf("always-0.5"),
    ]


def _derived_seed(seed: int, name: str) -> int:
    return stable_int("demo", seed, name) & (2**63 - 1)


__all__ = [
    "replay_lineup",
    "AlwaysHalf",
    "Budget",
    "DEMO_ABLATION",
    "DEMO_NAMES",
    "KellyBettor",
    "MarketFollower",
    "MetricGamer",
    "NoisyOracle",
    "RandomBettor",
    "TruthSource",
    "buy_cost",
    "demo_lineup",
    "extremize",
    "floor_cents",
    "kelly_fraction",
    "market_probability",
    "sell_price",
    "tradable",
]
