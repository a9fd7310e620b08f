"""Simulated arenas shaped like the real one, for the validity benchmarks (`validity.py`, `validity_research.py`).

Not a benchmark by itself. A *run* is a sequence of consecutive weekly cohorts. Each cohort's forecast set holds
`questions` markets, each asked in `rounds` decision rounds (a question is market@round, as in the arena); cohort
c + 1 keeps a share `shared` of cohort c's markets (the rest are new), so a market can be asked by several cohorts.

A market has a hidden truth p, drawn from the distribution of YES prices in the shared replay file
(../shared/data/replay/replay_markets.jsonl, read at run time, never copied: every history point inside the
forecast-set band [0.05, 0.95], each market the same total weight); without the file, from Beta(0.9, 0.9)
restricted to the band (the output says which). It resolves YES with probability p, once, for every cohort that
asked it; the market's price is q = sigmoid(logit p + 0.7 · u), u ~ N(0, 1), one price per market.

A seat of skill s states P(YES) = sigmoid(logit p + s · (market_error_sd · z + round_error_sd · e)): z ~ N(0, 1)
is the seat's persistent error on the market (the same in every round and every cohort that asks it), e ~ N(0, 1)
is fresh per round. Smaller s, better seat; s = 0 is an oracle.

Seats: ten honest seats (a wide spread s = 0, 0.25, …, 2.25 or a narrow one s = 0, 0.1, …, 0.9), a twin of equal
skill for the null comparisons, and four gamers of skill s_g (between two honest skills):
- seed-001 gamer: states honestly with skill s_g (its bets game seed 001's implied-confidence Brier; the headline
  only sees its stated forecasts);
- selective abstainer: leaves out every question whose price is inside (0.10, 0.90), answers the rest honestly;
  a missing answer is scored as a stated 0.5 (the arena's rule);
- market copier: states the market price (the board shows it as equal to the market reference);
- 0.5-on-hard: states 0.5 where its own forecast lies in (0.25, 0.75), its forecast elsewhere.
The references (always-0.5 and the market) are added by `arena.scoring.headline.score_forecasts`, as on a board.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPLAY_FILE = Path(__file__).resolve().parents[2] / "shared" / "data" / "replay" / "replay_markets.jsonl"
BAND = (0.05, 0.95)  # the forecast set's default price band
ABSTAIN_BAND = (0.10, 0.90)  # the selective abstainer leaves out questions priced inside it
HARD_BAND = (0.25, 0.75)  # 0.5-on-hard states 0.5 where its own forecast lies inside it
MARKET_SD = 0.7  # logit noise of the market's price around the truth
FALLBACK_BETA = (0.9, 0.9)
WIDE = np.round(np.arange(10) * 0.25, 2)
NARROW = np.round(np.arange(10) * 0.10, 2)
GAMER_SD = {"wide": 1.125, "narrow": 0.45}

HONEST = [f"honest s{i}" for i in range(10)]
TWIN = "twin"
GAMERS = {"seed001": "seed-001 gamer", "abstainer": "selective abstainer", "copier": "market copier",
          "half_hard": "0.5-on-hard"}
SEATS = [*HONEST, TWIN, *GAMERS.values()]


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


@dataclass(frozen=True)
class Prices:
    """The truth distribution: `values` drawn with probabilities `weights`; `source` says where they came from."""

    values: np.ndarray
    weights: np.ndarray | None
    source: str

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.weights is None:
            out = np.empty(0)
            while out.size < n:  # Beta restricted to the band, by rejection
                x = rng.beta(*FALLBACK_BETA, 2 * n)
                out = np.concatenate([out, x[(x >= BAND[0]) & (x <= BAND[1])]])
            return out[:n]
        return self.values[rng.choice(self.values.size, n, p=self.weights)]


def load_prices(path: Path = REPLAY_FILE) -> Prices:
    """Every in-band history price of the replay file, each market weighted equally; a Beta fallback without it."""
    if not path.is_file():
        return Prices(np.empty(0), None, f"no replay file at {path}: truths from Beta{FALLBACK_BETA} restricted "
                                         f"to [{BAND[0]}, {BAND[1]}]")
    vals, wts, n_markets = [], [], 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            hist = np.array([p for _, p in json.loads(line)["history"]], dtype=float)
            hist = hist[(hist >= BAND[0]) & (hist <= BAND[1])]
            if hist.size:
                n_markets += 1
                vals.append(hist)
                wts.append(np.full(hist.size, 1.0 / hist.size))
    v, w = np.concatenate(vals), np.concatenate(wts)
    return Prices(v, w / w.sum(), f"truths from the replay file's in-band prices ({v.size:,} history points of "
                                  f"{n_markets} markets inside [{BAND[0]}, {BAND[1]}], each market weighted "
                                  f"equally; mean {float(np.dot(v, w / w.sum())):.3f})")


@dataclass(frozen=True)
class Design:
    label: str
    spread: str  # "wide" or "narrow"
    rounds: int
    questions: int  # forecast-set markets per cohort
    cohorts: int  # cohorts per run
    shared: float  # share of a cohort's markets kept by the next cohort
    market_error_sd: float
    round_error_sd: float

    @property
    def skills(self) -> np.ndarray:
        return WIDE if self.spread == "wide" else NARROW

    @property
    def seat_skills(self) -> np.ndarray:
        g = GAMER_SD[self.spread]
        return np.concatenate([self.skills, [g], np.full(len(GAMERS), g)])


def stated(design: Design, p: np.ndarray, q: np.ndarray, z: np.ndarray, e: np.ndarray) -> np.ndarray:
    """(units × seats) stated P(YES), NaN where a seat left the question out. p, q: truth and price per unit; z, e:
    (units × seats) persistent and per-round standard normal errors."""
    s = design.seat_skills
    f = sigmoid(logit(p)[:, None] + s[None, :] * (design.market_error_sd * z + design.round_error_sd * e))
    k = len(HONEST) + 1  # the gamers' columns follow the honest seats and the twin
    abst, copier, hard = k + 1, k + 2, k + 3
    inside = (q > ABSTAIN_BAND[0]) & (q < ABSTAIN_BAND[1])
    f[inside, abst] = np.nan
    f[:, copier] = q
    h = f[:, hard]
    f[:, hard] = np.where((h > HARD_BAND[0]) & (h < HARD_BAND[1]), 0.5, h)
    return f


def population_targets(design: Design, prices: Prices, rng: np.random.Generator, n: int = 400_000
                       ) -> dict[str, float]:
    """Each seat's expected Brier per question (a missing answer scored as 0.5) and the references', by Monte
    Carlo over n questions: what a seat's headline estimates, whatever the rounds and sharing."""
    from arena.scoring.headline import REF_HALF, REF_MARKET

    p = prices.draw(n, rng)
    y = (rng.random(n) < p).astype(float)
    q = sigmoid(logit(p) + MARKET_SD * rng.standard_normal(n))
    k = design.seat_skills.size
    f = stated(design, p, q, rng.standard_normal((n, k)), rng.standard_normal((n, k)))
    f = np.where(np.isnan(f), 0.5, f)
    out = dict(zip(SEATS, ((f - y[:, None]) ** 2).mean(axis=0)))
    out[REF_HALF] = 0.25
    out[REF_MARKET] = float(((q - y) ** 2).mean())
    return out


def simulate_run(design: Design, prices: Prices, rng: np.random.Generator, days_per_cohort: int = 7,
                 horizon: int = 28) -> pd.DataFrame:
    """One run's stated forecasts, one row per (cohort, seat, market@round): cohort, agent, market_id, question,
    round, probability (0.5 where left out), answered, market_price, outcome_yes, resolved_at (the market's
    resolution day: within `horizon` days of the first cohort that asked it)."""
    q_n, n_keep = design.questions, int(round(design.shared * design.questions))
    members, next_id = [], 0
    for c in range(design.cohorts):
        keep = (rng.choice(members[-1], n_keep, replace=False) if c and n_keep else np.empty(0, np.int64))
        fresh = np.arange(next_id, next_id + q_n - keep.size)
        next_id += fresh.size
        members.append(np.sort(np.concatenate([keep, fresh]).astype(np.int64)))
    n_m = next_id
    first = np.empty(n_m, dtype=np.int64)
    for c in reversed(range(design.cohorts)):
        first[members[c]] = c
    p = prices.draw(n_m, rng)
    y = (rng.random(n_m) < p).astype(float)
    q = sigmoid(logit(p) + MARKET_SD * rng.standard_normal(n_m))
    k = design.seat_skills.size
    z = rng.standard_normal((n_m, k))  # persistent: the same in every round and cohort asking the market
    resolved = first * days_per_cohort + rng.integers(1, horizon + 1, n_m)
    parts = []
    for c, ms in enumerate(members):
        m = np.repeat(ms, design.rounds)
        r = np.tile(np.arange(design.rounds), ms.size)
        f = stated(design, p[m], q[m], z[m], rng.standard_normal((m.size, k)))
        answered = np.isfinite(f)
        parts.append(pd.DataFrame({
            "cohort": f"c{c:02d}",
            "agent": np.tile(SEATS, m.size),
            "market_id": np.repeat([f"m{i:05d}" for i in m], k),
            "question": np.repeat([f"m{i:05d}@{j}" for i, j in zip(m, r)], k),
            "round": np.repeat(r, k),
            "probability": np.where(answered, f, 0.5).ravel(),
            "answered": answered.ravel(),
            "market_price": np.repeat(q[m], k),
            "outcome_yes": np.repeat(y[m], k),
            "resolved_at": np.repeat(resolved[m], k),
        }))
    return pd.concat(parts, ignore_index=True)
