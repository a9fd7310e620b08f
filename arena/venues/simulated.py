"""A simulated venue: a deterministic universe of binary markets with hidden truths, daily prices and resolutions.

Owns the generative model and the as-of queries over it (markets open at t, the quote at t, the resolution
at t). Pure: no I/O, no wall clock, no global random state; everything follows from the seed and the config.
It imports only `arena.money`, `arena.domain.market`, `arena.clock.utc` and `arena.errors`.

The model, per market n (each market has its own random stream seeded by (seed, n), so a universe with
more weeks or more markets contains the smaller one's markets unchanged):

* truth p ~ Beta(a, b): the hidden P(YES) when the market opens.
* it opens at `start + week × 7 days` and closes 7–42 days later (whole days, configurable); it resolves at
  close + `resolution_delay`.
* information arrives as a latent random walk S with one step per day, and YES happens iff S ends above 0.
  Step variances are shaped so that the share of information revealed by day k of n is (k / n) ** γ
  (`information_power`; γ > 1 keeps most news for the end). S starts at Φ⁻¹(p), so P(YES) = p exactly:
  the resolution is drawn from the truth. The informed probability on day k is
      π_k = P(YES | S_k) = Φ(S_k / √(remaining variance)),   π_0 = p,   π_n ∈ {0, 1},
  a martingale that moves toward the realized outcome as close approaches (`truth_at`).
* a share of markets is voided (`void_rate`; the path still runs, the venue cancels) and a few resolve to a
  probability (`probabilistic_rate`: they pay p rounded to 0.01 per YES share and π stays at p).
* the YES price is π seen through mispricing noise: logit(price_k) = logit(π_k) + e_k, e a stationary AR(1)
  (sd `noise_sd`, daily persistence `noise_persistence`). Early prices are noisy around the truth; late
  ones sit near the outcome. Prices are quantized to 0.001 and clipped to [0.01, 0.99]; bid/ask sit a
  per-market half-spread either side.

Exclusive groups (`groups_per_week`, default 0): a group of k binary markets ("sim:g<G>-<j>", group_id
"sim:group:<G>"; k drawn from `group_size`) of which exactly one resolves YES, like a Polymarket neg-risk event.
Each group has its own random stream seeded by (seed, G, a group tag), so adding groups leaves every single
market unchanged. The truths p ~ Dirichlet(`group_concentration`) sum to 1; the winner is drawn from them.
News is a k-dimensional signal X_j(t) = μ·t·1[j = winner] + W_j(t) (W independent Brownian motions, t the
revealed share as above, μ = `group_signal`), and the informed probabilities are the exact posterior
π_j(t) ∝ p_j·exp(μ·X_j(t)): a martingale that sums to 1 every day and reaches the winner at close. Each
member's YES price is its π through its own AR(1) logit noise, quantized and clipped like a single market's,
so the group's prices are noisy and need not sum to 1. Group members are never voided or resolved to a
probability.

Ladders (`ladders_per_week`, default 0; the demo turns them on): each week opens that many threshold ladders and
as many date ladders, each of `ladder_size` binary markets whose outcomes are nested, so a coherent forecaster's
P(YES) must be ordered along them (`arena.domain.ladders`). A **threshold ladder** ("sim:t<L>-<j>": "Will the
Sim-<L> index close above $X on <date>?", X rising with j) shares one latent walk S as a single market's, with
YES at threshold j iff S ends above c_j (c_1 < c_2 < …), so a higher threshold never resolves YES when a lower
one resolves NO; the informed probability of rung j on day k is Φ((S_k − c_j) / √(remaining variance)). A **date
ladder** ("sim:d<L>-<j>": "Will sim event D<L> happen by <date>?", deadlines at j/k of its horizon, each rung
closing at its deadline) has one event time T — with probability q uniform over the horizon H, else never —,
rung j resolves YES iff T ≤ its deadline d_j, and its informed probability on day t is 1 once T ≤ t, 0 at a
deadline passed without it, and q(d_j − t)/H ÷ (1 − qt/H) before. Each rung's YES price is its π through its own
AR(1) logit noise, so the venue's prices may break the order. Ladders draw from their own streams (seed, L, a tag), so
adding them leaves every single market and group unchanged; they are never voided.

`quote_at(id, t)` returns the last daily point at or before t and never reads a later one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from statistics import NormalDist

import numpy as np

from arena.clock import utc
from arena.errors import ConfigError, NotFound
from arena.domain.market import NO, YES, Market, MarketKind, MarketStatus, Quote, Resolution
from arena.money import Price

SIMULATOR_VERSION = "sim-1"  # bump when the generative model changes the numbers a seed produces

DAY = timedelta(days=1)
WEEK = timedelta(days=7)
TICK_PPM = 1_000  # prices move in steps of 0.001
MIN_TICKS = 10  # 0.01: lowest YES price while a market trades
MAX_TICKS = 990  # 0.99: highest
_PI_CLIP = 1e-4  # π is clipped to [1e-4, 1 − 1e-4] before its logit, so a decided market prices at 0.01/0.99

DEFAULT_CATEGORIES = ("politics", "economics", "sports", "crypto", "science", "technology", "entertainment")


@dataclass(frozen=True)
class SimulationConfig:
    """The knobs of the generative model. Probabilities are in [0, 1]; sds are in logit units."""

    void_rate: float = 0.05  # share of markets resolved VOID (refunded)
    probabilistic_rate: float = 0.02  # share of markets resolved to a probability (p rounded to 0.01)
    truth_beta: tuple[float, float] = (0.9, 0.9)  # Beta(a, b) of the hidden P(YES)
    horizon_days: tuple[int, int] = (7, 42)  # close − open, whole days, inclusive range
    noise_sd: float = 0.5  # stationary sd of the logit mispricing around the truth
    noise_persistence: float = 0.85  # daily AR(1) coefficient of the mispricing, in [0, 1)
    information_power: float = 2.0  # share of the outcome's information revealed by day k of n: (k/n) ** power
    spread: tuple[float, float] = (0.01, 0.04)  # range of the full bid/ask spread (probability units)
    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    resolution_delay: timedelta = timedelta(0)  # resolved_at − close_time
    venue: str = "sim"
    groups_per_week: int = 0  # exclusive groups (exactly one member resolves YES) opened each week
    group_size: tuple[int, int] = (2, 4)  # members per group, inclusive range
    group_concentration: float = 1.0  # Dirichlet parameter of a group's truths (small: one clear favourite)
    group_signal: float = 4.0  # μ: how strongly the news separates the winner by close (posterior odds e^{μ²})
    ladders_per_week: int = 0  # threshold ladders opened each week, and as many date ladders
    ladder_size: int = 3  # rungs per ladder

    def check(self) -> None:
        """Raise ConfigError when a knob is out of range."""
        problems = []
        if not 0 <= self.void_rate <= 1:
            problems.append("void_rate must be in [0, 1]")
        if not 0 <= self.probabilistic_rate <= 1:
            problems.append("probabilistic_rate must be in [0, 1]")
        if min(self.truth_beta) <= 0:
            problems.append("truth_beta parameters must be positive")
        lo, hi = self.horizon_days
        if not 1 <= lo <= hi:
            problems.append("horizon_days must satisfy 1 <= low <= high")
        if self.noise_sd < 0:
            problems.append("noise_sd must be >= 0")
        if not 0 <= self.noise_persistence < 1:
            problems.append("noise_persistence must be in [0, 1)")
        if self.information_power <= 0:
            problems.append("information_power must be positive")
        if not 0 <= self.spread[0] <= self.spread[1] < 1:
            problems.append("spread must satisfy 0 <= low <= high < 1")
        if not self.categories:
            problems.append("categories must not be empty")
        if self.resolution_delay < timedelta(0):
            problems.append("resolution_delay must be >= 0")
        if self.groups_per_week < 0:
            problems.append("groups_per_week must be >= 0")
        if not 2 <= self.group_size[0] <= self.group_size[1]:
            problems.append("group_size must satisfy 2 <= low <= high")
        if self.ladders_per_week < 0:
            problems.append("ladders_per_week must be >= 0")
        if self.ladder_size < 2:
            problems.append("ladder_size must be >= 2")
        if self.group_concentration <= 0 or self.group_signal <= 0:
            problems.append("group_concentration and group_signal must be positive")
        if problems:
            raise ConfigError("; ".join(problems), problems=problems)


@dataclass(frozen=True)
class SimulatedMarket:
    """Everything the simulator knows about one market, hidden parts included (tests and benchmarks only).

    `ticks[k]` is the YES price in units of 0.001 on day k, observed at `opened_at + k days`;
    the last point (k = horizon days) is observed at `closes_at`.
    """

    market: Market
    truth: float  # hidden P(YES) in (0, 1)
    opened_at: datetime
    closes_at: datetime
    resolves_at: datetime
    resolution: Resolution
    ticks: tuple[int, ...] = field(repr=False)
    informed: tuple[float, ...] = field(repr=False)  # π_k: P(YES | information up to day k), hidden
    half_spread_ticks: int = 0

    @property
    def id(self) -> str:
        return self.market.id

    def point_index(self, t: datetime) -> int | None:
        """Index of the last daily point observed at or before t; None before the market opened."""
        if t < self.opened_at:
            return None
        return min((t - self.opened_at) // DAY, len(self.ticks) - 1)

    def point_time(self, k: int) -> datetime:
        return self.opened_at + k * DAY

    def quote_of_point(self, k: int) -> Quote:
        """The Quote of daily point k (fetched when observed: the simulator has no fetch lag)."""
        mid = self.ticks[k]
        bid = max(mid - self.half_spread_ticks, 1)
        ask = min(mid + self.half_spread_ticks, 999)
        when = self.point_time(k)
        return Quote(
            market_id=self.market.id,
            prices={YES: Price(mid * TICK_PPM)},
            observed_at=when,
            fetched_at=when,
            bid=Price(bid * TICK_PPM),
            ask=Price(ask * TICK_PPM),
            source="simulated",
        )

    def status_at(self, t: datetime) -> MarketStatus:
        if t >= self.resolves_at:
            return MarketStatus.RESOLVED
        if t >= self.closes_at:
            return MarketStatus.CLOSED
        return MarketStatus.OPEN


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _price_ticks(informed: list[float], shocks: np.ndarray, cfg: SimulationConfig) -> np.ndarray:
    """Daily YES prices in ticks: the informed probability through a stationary AR(1) mispricing in logit space
    (started from its stationary distribution; `shocks` are its standard-normal innovations, one per point)."""
    phi, sd = cfg.noise_persistence, cfg.noise_sd
    innovation_sd = sd * math.sqrt(1 - phi * phi)
    noise = [sd * float(shocks[0])]
    for z in shocks[1:].tolist():  # plain floats: a short loop over numpy scalars is slower
        noise.append(phi * noise[-1] + innovation_sd * z)
    pi = np.clip(np.array(informed), _PI_CLIP, 1 - _PI_CLIP)
    x = np.log(pi) - np.log1p(-pi) + np.array(noise)
    prices = 1 / (1 + np.exp(-x))
    return np.clip(np.rint(prices * 1000), MIN_TICKS, MAX_TICKS).astype(int)


def _half_spread_range(cfg: SimulationConfig) -> tuple[int, int]:
    lo_half = math.ceil(cfg.spread[0] * 1000 / 2)
    return lo_half, max(lo_half, math.floor(cfg.spread[1] * 1000 / 2))


def _simulate_market(seed: int, n: int, opened_at: datetime, cfg: SimulationConfig) -> SimulatedMarket:
    """One market from its own random stream (seed, n). The order of draws is part of SIMULATOR_VERSION."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n]))
    truth = float(rng.beta(*cfg.truth_beta))
    truth = min(max(truth, 1e-6), 1 - 1e-6)  # a Beta draw can round to 0 or 1; keep Φ⁻¹ and logit finite
    horizon = int(rng.integers(cfg.horizon_days[0], cfg.horizon_days[1] + 1))
    category = cfg.categories[int(rng.integers(len(cfg.categories)))]
    lo_half, hi_half = _half_spread_range(cfg)
    half_spread = int(rng.integers(lo_half, hi_half + 1))
    u_void, u_prob = rng.random(2)
    news = rng.standard_normal(horizon)  # the information steps, one per day
    shocks = rng.standard_normal(horizon + 1)  # the mispricing innovations, one per daily point

    closes_at = opened_at + horizon * DAY
    resolves_at = closes_at + cfg.resolution_delay
    market_id = f"{cfg.venue}:{n}"

    # Latent walk S over total variance 1: revealed share by day k is (k/n)^γ; YES iff S_n > 0.
    revealed = (np.arange(horizon + 1) / horizon) ** cfg.information_power
    revealed[-1] = 1.0
    steps = np.sqrt(np.diff(revealed)) * news
    walk = NormalDist().inv_cdf(truth) + np.concatenate(([0.0], np.cumsum(steps)))
    yes_won = bool(walk[-1] > 0.0)
    remaining = 1.0 - revealed
    informed = [_normal_cdf(w / math.sqrt(r)) for w, r in zip(walk[:-1].tolist(), remaining[:-1].tolist())]
    informed.append(1.0 if yes_won else 0.0)

    if u_void < cfg.void_rate:
        resolution = Resolution.void(market_id, resolved_at=resolves_at, source="simulated")
    elif u_prob < cfg.probabilistic_rate:
        payout = Price(int(round(truth * 100)) * 10_000)
        resolution = Resolution.probabilistic_yes(market_id, payout, resolved_at=resolves_at, source="simulated")
        informed = [truth] * (horizon + 1)  # nothing to learn: the venue will pay the probability itself
    else:
        resolution = Resolution.winner(market_id, YES if yes_won else NO, resolved_at=resolves_at,
                                       source="simulated")

    ticks = _price_ticks(informed, shocks, cfg)

    question = f"Will event {n} happen by {closes_at.date().isoformat()}?"
    market = Market(
        id=market_id,
        venue=cfg.venue,
        question=question,
        kind=MarketKind.BINARY,
        close_time=closes_at,
        status=MarketStatus.OPEN,
        description=(f"Simulated {category} market: opens {opened_at.isoformat()}, closes {closes_at.isoformat()}, "
                     "resolves YES if the event happens."),
        url="",
        category=category,
    )
    return SimulatedMarket(
        market=market,
        truth=truth,
        opened_at=opened_at,
        closes_at=closes_at,
        resolves_at=resolves_at,
        resolution=resolution,
        ticks=tuple(int(v) for v in ticks),
        informed=tuple(float(v) for v in informed),
        half_spread_ticks=half_spread,
    )


_GROUP_STREAM = 0x67726F75  # tags a group's random stream, so (seed, G, tag) never meets a market's (seed, n)
_OPTION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _simulate_group(seed: int, g: int, opened_at: datetime, cfg: SimulationConfig) -> list[SimulatedMarket]:
    """One exclusive group from its own random stream (seed, G, tag): k binary members, exactly one wins.
    The order of draws is part of SIMULATOR_VERSION."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, g, _GROUP_STREAM]))
    k = int(rng.integers(cfg.group_size[0], cfg.group_size[1] + 1))
    truths = np.maximum(rng.dirichlet([cfg.group_concentration] * k), 1e-6)
    truths = truths / truths.sum()  # a Dirichlet draw can round a member to 0; keep every log finite
    horizon = int(rng.integers(cfg.horizon_days[0], cfg.horizon_days[1] + 1))
    category = cfg.categories[int(rng.integers(len(cfg.categories)))]
    winner = int(rng.choice(k, p=truths))
    news = rng.standard_normal((horizon, k))
    lo_half, hi_half = _half_spread_range(cfg)
    half_spreads = rng.integers(lo_half, hi_half + 1, size=k)
    shocks = rng.standard_normal((k, horizon + 1))

    closes_at = opened_at + horizon * DAY
    resolves_at = closes_at + cfg.resolution_delay
    revealed = (np.arange(horizon + 1) / horizon) ** cfg.information_power
    revealed[-1] = 1.0
    dt = np.diff(revealed)
    mu = cfg.group_signal
    won = np.zeros(k)
    won[winner] = 1.0
    signal = np.vstack([np.zeros(k), np.cumsum(mu * dt[:, None] * won + np.sqrt(dt)[:, None] * news, axis=0)])
    logpost = np.log(truths) + mu * signal  # the exact posterior given the signal so far, up to a constant
    logpost -= logpost.max(axis=1, keepdims=True)
    posterior = np.exp(logpost)
    posterior /= posterior.sum(axis=1, keepdims=True)
    posterior[-1] = won  # the close reveals the winner

    group_id = f"{cfg.venue}:group:{g}"
    members = []
    for j in range(k):
        market_id = f"{cfg.venue}:g{g}-{j + 1}"
        option = _OPTION_LETTERS[j % len(_OPTION_LETTERS)] + (str(j // len(_OPTION_LETTERS)) if j >= 26 else "")
        informed = [float(v) for v in posterior[:, j]]
        resolution = Resolution.winner(market_id, YES if j == winner else NO, resolved_at=resolves_at,
                                       source="simulated")
        market = Market(
            id=market_id, venue=cfg.venue,
            question=f"Event group {g} ({k} options, exactly one wins by {closes_at.date().isoformat()}): "
                     f"will option {option} win?",
            kind=MarketKind.BINARY, close_time=closes_at, status=MarketStatus.OPEN,
            description=(f"Simulated {category} group: opens {opened_at.isoformat()}, closes {closes_at.isoformat()}; "
                         f"exactly one of its {k} options resolves YES."),
            category=category, group_id=group_id,
        )
        members.append(SimulatedMarket(
            market=market, truth=float(truths[j]), opened_at=opened_at, closes_at=closes_at, resolves_at=resolves_at,
            resolution=resolution, ticks=tuple(int(v) for v in _price_ticks(informed, shocks[j], cfg)),
            informed=tuple(informed), half_spread_ticks=int(half_spreads[j]),
        ))
    return members


_THRESHOLD_LADDER_STREAM = 0x6C616474  # tags a threshold ladder's random stream
_DATE_LADDER_STREAM = 0x6C616464  # tags a date ladder's random stream


def _long_date(d: datetime) -> str:
    return f"{d:%B} {d.day}, {d.year}"


def _rung(market: Market, truth: float, opened_at: datetime, closes_at: datetime, yes: bool,
          informed: list[float], shocks: np.ndarray, half_spread: int, cfg: SimulationConfig) -> SimulatedMarket:
    resolution = Resolution.winner(market.id, YES if yes else NO, resolved_at=closes_at + cfg.resolution_delay,
                                   source="simulated")
    return SimulatedMarket(market=market, truth=truth, opened_at=opened_at, closes_at=closes_at,
                           resolves_at=closes_at + cfg.resolution_delay, resolution=resolution,
                           ticks=tuple(int(v) for v in _price_ticks(informed, shocks, cfg)),
                           informed=tuple(informed), half_spread_ticks=half_spread)


def _simulate_threshold_ladder(seed: int, n: int, opened_at: datetime, cfg: SimulationConfig) -> list[SimulatedMarket]:
    """One threshold ladder from its own random stream (seed, L, tag): `ladder_size` rungs on one latent walk.
    The order of draws is part of SIMULATOR_VERSION."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, _THRESHOLD_LADDER_STREAM]))
    k = cfg.ladder_size
    p_low = float(rng.uniform(0.35, 0.9))  # P(YES) of the lowest threshold
    gaps = rng.uniform(0.3, 0.8, size=k - 1)  # latent distance between consecutive thresholds
    cuts = -NormalDist().inv_cdf(p_low) + np.concatenate(([0.0], np.cumsum(gaps)))
    horizon = int(rng.integers(cfg.horizon_days[0], cfg.horizon_days[1] + 1))
    category = cfg.categories[int(rng.integers(len(cfg.categories)))]
    base, step = 10 * int(rng.integers(5, 50)), 10 * int(rng.integers(1, 5))
    news = rng.standard_normal(horizon)
    lo_half, hi_half = _half_spread_range(cfg)
    half_spreads = rng.integers(lo_half, hi_half + 1, size=k)
    shocks = rng.standard_normal((k, horizon + 1))

    closes_at = opened_at + horizon * DAY
    revealed = (np.arange(horizon + 1) / horizon) ** cfg.information_power
    revealed[-1] = 1.0
    walk = np.concatenate(([0.0], np.cumsum(np.sqrt(np.diff(revealed)) * news)))
    remaining = np.sqrt(1.0 - revealed[:-1])
    members = []
    for j in range(k):
        yes = bool(walk[-1] > cuts[j])
        informed = [_normal_cdf(float(v)) for v in (walk[:-1] - cuts[j]) / remaining] + [1.0 if yes else 0.0]
        market = Market(
            id=f"{cfg.venue}:t{n}-{j + 1}", venue=cfg.venue,
            question=f"Will the Sim-{n} index close above ${base + j * step:,} on {_long_date(closes_at)}?",
            kind=MarketKind.BINARY, close_time=closes_at, status=MarketStatus.OPEN,
            description=(f"Simulated {category} threshold ladder: opens {opened_at.isoformat()}, closes "
                         f"{closes_at.isoformat()}; {k} thresholds of one index, a higher one YES only if every "
                         "lower one is."),
            category=category,
        )
        members.append(_rung(market, float(_normal_cdf(-float(cuts[j]))), opened_at, closes_at, yes, informed,
                             shocks[j], int(half_spreads[j]), cfg))
    return members


def _simulate_date_ladder(seed: int, n: int, opened_at: datetime, cfg: SimulationConfig) -> list[SimulatedMarket]:
    """One date ladder from its own random stream (seed, L, tag): `ladder_size` deadlines of one event time.
    The order of draws is part of SIMULATOR_VERSION."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, _DATE_LADDER_STREAM]))
    k = cfg.ladder_size
    span = int(rng.integers(max(cfg.horizon_days[0], k), max(cfg.horizon_days[1], k) + 1))  # H, days
    q = float(rng.uniform(0.3, 0.95))  # P(the event happens within the horizon)
    happens, when = bool(rng.random() < q), float(rng.uniform(0.0, span))
    event = when if happens else math.inf  # T, days after opening
    category = cfg.categories[int(rng.integers(len(cfg.categories)))]
    lo_half, hi_half = _half_spread_range(cfg)
    half_spreads = rng.integers(lo_half, hi_half + 1, size=k)
    deadlines = [round(span * (j + 1) / k) for j in range(k)]
    shocks = [rng.standard_normal(d + 1) for d in deadlines]
    members = []
    for j, d in enumerate(deadlines):
        closes_at = opened_at + d * DAY
        informed = []
        for t in range(d + 1):
            if event <= t:
                informed.append(1.0)
            elif t >= d:
                informed.append(0.0)
            else:
                informed.append(q * (d - t) / span / (1.0 - q * t / span))
        market = Market(
            id=f"{cfg.venue}:d{n}-{j + 1}", venue=cfg.venue,
            question=f"Will sim event D{n} happen by {_long_date(closes_at)}?",
            kind=MarketKind.BINARY, close_time=closes_at, status=MarketStatus.OPEN,
            description=(f"Simulated {category} date ladder: opens {opened_at.isoformat()}; one event, {k} "
                         "deadlines, YES by an earlier one only if YES by every later one."),
            category=category,
        )
        members.append(_rung(market, q * d / span, opened_at, closes_at, event <= d, informed, shocks[j],
                             int(half_spreads[j]), cfg))
    return members


class SimulatedUniverse:
    """A fixed set of simulated markets queried as of a moment. Build one with `generate`.

    Every query takes the moment `t` (an aware datetime; naive values are taken as UTC) and uses only what
    was observable at t — except `truth`, `truth_at` and `spec`, which reveal hidden state (tests and
    benchmarks only; never hand the universe to an agent).
    """

    def __init__(self, seed: int, start: datetime, weeks: int, markets_per_week: int,
                 config: SimulationConfig, markets: list[SimulatedMarket]) -> None:
        self.seed = seed
        self.start = start
        self.weeks = weeks
        self.markets_per_week = markets_per_week
        self.config = config
        self.version = SIMULATOR_VERSION
        self._markets = list(markets)
        self._by_id = {m.id: m for m in self._markets}

    @classmethod
    def generate(cls, seed: int, start: datetime, weeks: int, markets_per_week: int,
                 config: SimulationConfig | None = None, **overrides: object) -> SimulatedUniverse:
        """A universe of `weeks × markets_per_week` binary markets, ids "sim:1", "sim:2", …, plus
        `weeks × groups_per_week` exclusive groups (config) of binary members "sim:g1-1", "sim:g1-2", …, plus
        `weeks × ladders_per_week` threshold ladders "sim:t1-1", … and as many date ladders "sim:d1-1", …

        Week w's markets open at `start + w weeks`. `overrides` replace fields of `config`
        (e.g. `void_rate=0.1`). Same seed and arguments → the same universe.
        """
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ConfigError(f"seed must be a non-negative int, got {seed!r}")
        if weeks < 0 or markets_per_week < 0:
            raise ConfigError("weeks and markets_per_week must be >= 0")
        cfg = config or SimulationConfig()
        known = {f.name for f in fields(SimulationConfig)}
        unknown = set(overrides) - known
        if unknown:
            raise ConfigError(f"unknown simulation options: {sorted(unknown)}")
        cfg = replace(cfg, **overrides)  # type: ignore[arg-type]
        cfg.check()
        start = utc(start)
        markets = []
        n = g = ladder = 0
        for week in range(weeks):
            opened_at = start + week * WEEK
            for _ in range(markets_per_week):
                n += 1
                markets.append(_simulate_market(seed, n, opened_at, cfg))
            for _ in range(cfg.groups_per_week):
                g += 1
                markets.extend(_simulate_group(seed, g, opened_at, cfg))
            for _ in range(cfg.ladders_per_week):
                ladder += 1
                markets.extend(_simulate_threshold_ladder(seed, ladder, opened_at, cfg))
                markets.extend(_simulate_date_ladder(seed, ladder, opened_at, cfg))
        return cls(seed, start, weeks, markets_per_week, cfg, markets)

    # -- what anyone may ask -------------------------------------------------------------------------------

    def all_markets(self) -> list[Market]:
        """Every market as listed (status OPEN, as when it opened), in id order."""
        return [m.market for m in self._markets]

    def market_ids(self) -> list[str]:
        return [m.id for m in self._markets]

    def __len__(self) -> int:
        return len(self._markets)

    def __iter__(self) -> Iterator[Market]:
        return iter(self.all_markets())

    def market(self, market_id: str) -> Market:
        """The market as listed (status OPEN). Use `market_at` for its status at a moment."""
        return self.spec(market_id).market

    def market_at(self, market_id: str, t: datetime) -> Market:
        """The market with its status at t: OPEN before close, CLOSED until resolved, then RESOLVED.

        Raises NotFound if the market had not opened by t (it did not exist yet).
        """
        t = utc(t)
        spec = self.spec(market_id)
        if t < spec.opened_at:
            raise NotFound(f"market {market_id} opens at {spec.opened_at.isoformat()}, not listed at {t.isoformat()}",
                           market_id=market_id)
        status = spec.status_at(t)
        return spec.market if status is MarketStatus.OPEN else replace(spec.market, status=status)

    def markets_open_at(self, t: datetime) -> list[Market]:
        """Markets accepting bets at t (opened ≤ t < close), status OPEN, in id order."""
        t = utc(t)
        return [m.market for m in self._markets if m.opened_at <= t < m.closes_at]

    def markets_listed_at(self, t: datetime) -> list[Market]:
        """Every market that had opened by t, with its status at t (open, closed or resolved)."""
        t = utc(t)
        return [self.market_at(m.id, t) for m in self._markets if m.opened_at <= t]

    def quote_at(self, market_id: str, t: datetime) -> Quote:
        """The last daily quote observed at or before t (after close: the closing quote).

        Raises NotFound before the market opened. Never reads a point observed after t.
        """
        t = utc(t)
        spec = self.spec(market_id)
        k = spec.point_index(t)
        if k is None:
            raise NotFound(f"no quote for {market_id} before it opens at {spec.opened_at.isoformat()}",
                           market_id=market_id)
        return spec.quote_of_point(k)

    def quotes_until(self, market_id: str, t: datetime) -> list[Quote]:
        """The daily quotes observed at or before t, oldest first (empty before the market opened)."""
        t = utc(t)
        spec = self.spec(market_id)
        k = spec.point_index(t)
        return [] if k is None else [spec.quote_of_point(i) for i in range(k + 1)]

    def resolution_at(self, market_id: str, t: datetime) -> Resolution | None:
        """The market's resolution once t ≥ its resolution time; None before."""
        t = utc(t)
        spec = self.spec(market_id)
        return spec.resolution if t >= spec.resolves_at else None

    def resolutions_until(self, t: datetime) -> list[Resolution]:
        """Every resolution published at or before t, in id order."""
        t = utc(t)
        return [m.resolution for m in self._markets if t >= m.resolves_at]

    def opened_at(self, market_id: str) -> datetime:
        return self.spec(market_id).opened_at

    def resolves_at(self, market_id: str) -> datetime:
        return self.spec(market_id).resolves_at

    @property
    def end(self) -> datetime:
        """When the last market resolves (start if the universe is empty)."""
        return max((m.resolves_at for m in self._markets), default=self.start)

    def week_starts(self) -> list[datetime]:
        """The moments each week's markets open: start + w weeks."""
        return [self.start + w * WEEK for w in range(self.weeks)]

    # -- hidden state: tests and benchmarks only; never hand the universe to an agent ------------------------

    def truth(self, market_id: str) -> float:
        """The hidden true P(YES) of the market, in (0, 1)."""
        return self.spec(market_id).truth

    def truth_at(self, market_id: str, t: datetime) -> float:
        """The hidden P(YES) given the information revealed by the last daily point at or before t.

        Equals `truth` on the opening day and moves to the outcome (0 or 1) by close; a probabilistic market
        stays at its truth. Never uses information after t. Raises NotFound before the market opened.
        """
        t = utc(t)
        spec = self.spec(market_id)
        k = spec.point_index(t)
        if k is None:
            raise NotFound(f"{market_id} has not opened at {t.isoformat()}", market_id=market_id)
        return spec.informed[k]

    def spec(self, market_id: str) -> SimulatedMarket:
        """Everything about one market, including its future. Raises NotFound for an unknown id."""
        try:
            return self._by_id[market_id]
        except KeyError:
            raise NotFound(f"no simulated market {market_id!r}", market_id=market_id) from None

    def specs(self) -> list[SimulatedMarket]:
        return list(self._markets)

    def __repr__(self) -> str:
        return (f"SimulatedUniverse(seed={self.seed}, start={self.start.isoformat()}, weeks={self.weeks}, "
                f"markets_per_week={self.markets_per_week}, version={self.version!r})")


__all__ = [
    "DEFAULT_CATEGORIES",
    "SIMULATOR_VERSION",
    "SimulatedMarket",
    "SimulatedUniverse",
    "SimulationConfig",
]
