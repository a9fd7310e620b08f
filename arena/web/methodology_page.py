"""The methodology page: worked examples computed with the scoring library's own functions, the versions that
change a number (and the rows stamped with each), the metric registry, the bands and the default rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sqlalchemy.engine import Engine

from arena.domain.sizing import CohortRules
from arena.money import MICRO
from arena.scoring.board import RANK_METRICS
from arena.scoring.breakdown import HORIZON_RULE
from arena.scoring.brier import BSS_MARKET_FLOOR, brier_band
from arena.scoring.evidence import MIN_TIER_MARKETS, TIER_RESOLUTION
from arena.scoring.frontier import FRONTIER_RULE
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, PROVISIONAL_RULE
from arena.scoring.registry import METRICS
from arena.read.versions import code_versions, stored_versions
from arena.web.env import money
from arena.web.instrument_examples import (beyond_market_example, breakdown_example, frontier_example,
                                            question_difficulty_example)
from arena.web.values import flat
from arena.web.worked_example import WorkedExample


@dataclass(frozen=True)
class VersionRow:
    name: str
    value: str
    where: str


@dataclass(frozen=True)
class MetricView:
    name: str
    direction: str
    unit: str
    description: str


def _usd(x: float) -> str:
    return money(int(round(x * MICRO)), signed=x < 0)


def worked_examples() -> tuple[WorkedExample, ...]:
    """Seed 001's two pathologies and the reason BSS vs market is guarded, worked through with the real metric
    functions (`scoring.brier`, `scoring.coherence`) on small, fixed inputs."""
    from arena.scoring.brier import (bss_vs_market as bss_market, brier_score, brier_skill_score, forecast_yes,
                                     implied_confidence, kelly_probability, max_bet)
    from arena.scoring.coherence import contradicts

    cash = 10_000.0
    cap = float(max_bet(cash))
    # 1. a small YES bet reads as a confident NO: three $500 YES bets at a price of 0.50 from an agent that
    #    stated P(YES) = 0.30 (it believes NO), and all three resolve NO.
    amount, price, stated = 500.0, 0.5, 0.3
    c = float(implied_confidence(amount, cap))
    f = float(forecast_yes("YES", c))
    b1 = brier_score([f] * 3, [0.0] * 3)
    kelly = float(kelly_probability("YES", price, amount / cash))
    one = WorkedExample(
        "A small YES bet reads as a confident NO",
        f"Cash {_usd(cash)}, so the maximum bet is {_usd(cap)}. The agent states P(YES) = {stated:.2f} on a market "
        f"priced {price:.2f}, yet bets {_usd(amount)} on YES — three times; all three resolve NO.",
        (("implied confidence c = bet / max bet", f"{c:.2f}"),
         ("f_YES by bet size (a YES bet: f = c)", f"{f:.2f}"),
         ("implied-confidence Brier, mean of (0.2 − 0)²", f"{b1:.3f} — {brier_band(b1)}"),
         ("P/L", _usd(-3 * amount)),
         ("stated Brier (0.30 − 0)², the headline's input", f"{brier_score([stated] * 3, [0.0] * 3):.3f}"),
         ("Kelly-implied P(YES) = q + f(1 − q)", f"{kelly:.3f}"),
         ("Kelly-implied Brier", f"{brier_score([kelly] * 3, [0.0] * 3):.3f}"),
         ("coherence gap |stated − Kelly-implied|", f"{abs(stated - kelly):.3f}"),
         ("contradicting bets (YES bought above the stated P(YES))",
          f"{float(contradicts(['YES'] * 3, [stated] * 3, [price] * 3).mean()):.0%}")),
        "The bet-size Brier calls three losing bets Excellent: betting small on YES is read as a 20 % YES forecast. "
        "The headline scores what the agent said instead, and the coherence columns show its bets contradict it.")
    # 2. maximal bets on a near-certain market: perfect score, almost no money.
    q = 0.9995
    c2 = float(implied_confidence(cap, cap))
    b2 = brier_score([float(forecast_yes("YES", c2))], [1.0])
    profit = cap / q - cap
    two = WorkedExample(
        "Maximal bets on a near-certain market score Perfect",
        f"The agent stakes the maximum, {_usd(cap)}, on YES of a market priced {q} that resolves YES.",
        (("implied confidence c = bet / max bet", f"{c2:.2f}"),
         ("implied-confidence Brier (1 − 1)²", f"{b2:.3f} — {brier_band(b2)}"),
         ("P/L of the bet", f"{money(int(round(profit * MICRO)), signed=True)} (+{100 * profit / cap:.2f} % of the stake)"),
         ("the market's own Brier on it (0.9995 − 1)²", f"{(1 - q) ** 2:.2e}"),
         ("Kelly-implied P(YES)", f"{float(kelly_probability('YES', q, cap / cash)):.6f}")),
        "A perfect bet-size Brier for repeating the market's own certainty: it earns nothing and says nothing the "
        "market did not. On the forecast set such an agent is scored on the same questions as everyone else — and "
        "against the market reference row, which it cannot beat by copying.")
    # 3. why BSS vs market is guarded: a reference Brier near 0 makes the ratio explode.
    f3 = 0.966
    bs3 = brier_score([f3], [1.0])
    raw = float(brier_skill_score(bs3, (1 - q) ** 2))
    three = WorkedExample(
        "Why skill vs market is shown only when the market's Brier is large enough",
        f"One forecast of {f3} on the same market priced {q}, resolving YES.",
        (("the forecast's Brier (0.966 − 1)²", f"{bs3:.6f}"),
         ("the market's Brier (0.9995 − 1)²", f"{(1 - q) ** 2:.2e}"),
         ("1 − BS / BS_market, unguarded", f"{raw:,.0f}"),
         ("Brier − market Brier (bounded in [−1, 1])", f"{bs3 - (1 - q) ** 2:+.6f}"),
         ("skill vs market as shown",
          "—" if math.isnan(bss_market([f3], [q], [1.0])) else f"{bss_market([f3], [q], [1.0]):.2f}")),
        f"Dividing by a reference Brier near 0 turns a tiny difference into thousands. Skill vs market is shown only "
        f"where the market's Brier on the same questions is at least {BSS_MARKET_FLOOR} (so it lies in "
        f"[{1 - 1 / BSS_MARKET_FLOOR:.0f}, 1]); elsewhere it reads — with the reason on hover. Brier minus market is "
        "the comparison that cannot blow up, and it carries an interval.")
    return (one, two, three)


def imputation_example() -> WorkedExample:
    """A missing forecast scored as a stated 0.5, worked through with the headline's own functions
    (`scoring.headline`) on four fixed questions."""
    import pandas as pd

    from arena.scoring.headline import forecast_summary, score_forecasts

    prices, outcomes = (0.04, 0.30, 0.70, 0.97), (0.0, 0.0, 1.0, 1.0)
    questions = [f"q{i + 1}" for i in range(len(prices))]
    sure = [not 0.10 < p < 0.90 for p in prices]
    rows = []
    for q, p, o, keep in zip(questions, prices, outcomes, sure):
        base = dict(market_id=q, question=q, outcome_yes=o, market_price=p)
        rows.append(dict(base, agent="follower", probability=p, answered=True))
        rows.append(dict(base, agent="selective", probability=p if keep else 0.5, answered=keep))
    frame = pd.DataFrame(rows)
    scored = forecast_summary(score_forecasts(frame, references=False)).set_index("agent")
    alone = forecast_summary(score_forecasts(frame[frame["answered"]], references=False)).set_index("agent")
    quoted = ", ".join(f"{p:.2f} → {'YES' if o else 'NO'}" for p, o in zip(prices, outcomes))
    return WorkedExample(
        "A question left out counts as a stated 0.5",
        f"Four questions priced (and resolving) {quoted}. The follower states the price on all four; the selective "
        "seat states it only where it is at most 0.10 or at least 0.90 and leaves the two questions in between out.",
        (("follower: Brier over its 4 answers", f"{scored.loc['follower', 'forecast_brier']:.4f}"),
         ("selective, over its 2 answers alone (not how it is scored)", f"{alone.loc['selective', 'forecast_brier']:.4f}"),
         ("selective, the 2 left out scored as 0.5: answered", f"{int(scored.loc['selective', 'n_answered'])}/"
                                                                f"{int(scored.loc['selective', 'n_asked'])}"),
         ("selective, as scored: mean of (0.04 − 0)², (0.5 − 0)², (0.5 − 1)², (0.97 − 1)²",
          f"{scored.loc['selective', 'forecast_brier']:.4f}")),
        "Averaged over its answers alone the selective seat would beat every honest forecaster by answering only "
        "the easy questions. Scored on every question it was asked, it gets exactly what stating 0.5 on the hard "
        "ones earns — so leaving a question out can never rank a seat better than stating 0.5 on it.")


def inference_examples() -> tuple[WorkedExample, ...]:
    """The unit of evidence, the tiers and the clustering across cohorts, worked through with the functions the
    boards use (`scoring.evidence`, `scoring.headline`) on small, fixed inputs."""
    import numpy as np
    import pandas as pd

    from arena.scoring.evidence import (MIN_TIER_MARKETS, TIER_RESOLUTION, cluster_t_test, market_frame,
                                        paired_tiers)

    # 1. the unit: a market asked in three rounds and one asked once, both resolving NO
    rows = pd.DataFrame({"cohort": "c", "agent": "a", "market": ["A", "A", "A", "B"], "round": [1, 2, 3, 1],
                         "brier": [0.36, 0.25, 0.16, 0.04]})
    obs = market_frame(rows).set_index("market")
    unit = WorkedExample(
        "The unit of evidence: one observation per market",
        "A seat states P(YES) = 0.6, 0.5 and 0.4 on market A in three rounds and 0.2 on market B once; both "
        "resolve NO. Market A resolves once and the seat's view of it carries over from round to round, so its "
        "three rounds are one piece of evidence.",
        (("Brier of A's rounds", "0.36, 0.25, 0.16"),
         ("A's observation: the mean over its rounds", f"{obs.at['A', 'brier']:.3f}"),
         ("B's observation (one round)", f"{obs.at['B', 'brier']:.3f}"),
         ("headline: the mean over markets", f"{obs['brier'].mean():.3f}"),
         ("the mean over market@round rows (not used)", f"{rows['brier'].mean():.3f}")),
        "Averaging rows would give A three votes to B's one and treat them as independent; the headline, its "
        "interval, P(first), the tiers, the confidence sequences and `arena compare` all take one observation "
        "per market, every round of it weighing the same.")
    # 2. the tiers: an exact paired test, no Monte Carlo
    n = 30
    base = np.linspace(0.05, 0.45, n)
    wiggle = 0.02 * np.sin(np.arange(n))
    tier_obs = pd.DataFrame({"agent": ["lead"] * n + ["close"] * n + ["far"] * n,
                             "market_id": [f"m{i}" for i in range(n)] * 3,
                             "brier": np.r_[base, base + 0.004 + wiggle, base + 0.05 + wiggle]})
    t = paired_tiers(tier_obs)
    at = {a: i for i, a in enumerate(t.agents)}
    few = paired_tiers(tier_obs[tier_obs["market_id"].isin(["m1", "m2", "m3", "m4"])])
    tiers = WorkedExample(
        "Tiers from exact paired tests",
        f"Three seats on the same {n} resolved markets. 'close' is 0.004 worse than 'lead' on average, 'far' "
        "0.05 worse, each with a per-market wobble of ±0.02.",
        (("p, close vs lead (paired t on the 30 market differences)", f"{t.p[at['close'], at['lead']]:.3f}"),
         ("p, far vs lead", f"{t.p[at['far'], at['lead']]:.1e}"),
         ("tiers lead / close / far (1 + rows significantly better)", " / ".join(f"{t.tier[at[a]]:.0f}" for a in ("lead", "close", "far"))),
         ("pairs in the Benjamini–Hochberg correction", str(t.tested)),
         ("the same seats on 4 markets: tiers", " / ".join(f"{few.tier[at[a]]:.0f}" for a in ("lead", "close", "far"))
          + f" (no pair tested below {MIN_TIER_MARKETS} shared markets)")),
        "The test has no random draws, so the tiers are the same for every bootstrap seed and number of draws; "
        f"a difference below {TIER_RESOLUTION} never splits tiers, a row whose interval lies wholly above the "
        "leader's is never in its tier, provisional rows get none and a seat equal to a reference on every "
        "question is shown once ('market-follower = market') and adds no pair.")
    # 3. clustering: four cohorts asking the same 10 markets
    d = np.array([0.03, -0.02, 0.05, 0.01, -0.04, 0.06, 0.02, -0.01, 0.04, 0.00])
    units = np.tile(d, 4)
    shared = cluster_t_test(units, np.tile(np.arange(10), 4))
    naive = cluster_t_test(units, np.arange(40))
    cluster = WorkedExample(
        "Clustering: a market shared by cohorts is one piece of evidence",
        "Four consecutive cohorts ask the same 10 markets; a model's difference from another on each market is "
        "the same in every cohort (the market resolved once). That is 40 (cohort, market) observations.",
        (("pooled difference", f"{shared.estimate:+.4f}"),
         ("95 % interval, cohorts taken as independent (40 units)", f"[{naive.ci_low:+.4f}, {naive.ci_high:+.4f}]"),
         ("95 % interval, distinct markets as clusters (10)", f"[{shared.ci_low:+.4f}, {shared.ci_high:+.4f}]"),
         ("width ratio", f"{(shared.ci_high - shared.ci_low) / (naive.ci_high - naive.ci_low):.1f}×")),
        "Treating the cohorts as independent counts each market four times and gives an interval half as wide as "
        "the evidence allows. The overall board's intervals resample distinct markets (every cohort's row on a "
        "drawn market comes with it), and the model pages pool (cohort, market) observations with a t interval "
        "clustered by market; I² still describes the spread between weeks.")
    return (unit, tiers, cluster)


@dataclass(frozen=True)
class MethodologyPage:
    examples: tuple[WorkedExample, ...]
    provisional_rule: str
    bss_floor: float
    rank_choices: tuple[str, ...]
    versions: tuple[VersionRow, ...]
    seen: tuple[tuple[str, str, int], ...]  # what, version, rows stamped with it
    metrics: tuple[MetricView, ...]
    brier_bands: tuple[tuple[str, str], ...]
    return_bands: tuple[tuple[str, str], ...]
    default_rules: tuple[tuple[str, str], ...]
    provisional_min: int
    schema_revision: str
    headroom: WorkedExample | None = None  # the forecast set's headroom, worked (`headroom_example`)
    imputation: WorkedExample | None = None  # how a missing forecast is scored (`imputation_example`)
    inference: tuple[WorkedExample, ...] = ()  # the unit, the tiers, the clustering (`inference_examples`)
    min_tier_markets: int = 10
    tier_resolution: float = 5e-4
    leakage: WorkedExample | None = None  # the leakage audit's three rules, worked (`leakage_example`)
    risk: tuple[WorkedExample, ...] = ()  # decision value, Sharpe and drawdown, P/L at the bid (`risk_examples`)
    breakdown: WorkedExample | None = None  # skill by horizon and topic, and the question filter
    frontier: WorkedExample | None = None  # the cost–skill frontier and p_dominated
    horizon_rule: str = ""
    frontier_rule: str = ""
    beyond_market: WorkedExample | None = None  # the encompassing test, worked (`beyond_market_example`)
    question_difficulty: WorkedExample | None = None  # published question difficulty (`question_difficulty_example`)
    contamination: WorkedExample | None = None  # the replays' contamination guard (`contamination_example`)
    ladders: WorkedExample | None = None  # the ladder check (`web.ladder_example`)


def leakage_example() -> WorkedExample:
    """The leakage audit's three rules worked through `domain.leakage.find_leaks` on one round of five
    questions."""
    from datetime import datetime, timezone

    from arena.domain.leakage import Asked, MarketText, ResolutionFact, find_leaks

    t = datetime(2026, 1, 13, 0, 5, tzinfo=timezone.utc)
    monday, long_ago = datetime(2026, 1, 12, 9, tzinfo=timezone.utc), datetime(2025, 12, 1, tzinfo=timezone.utc)
    texts = {
        "pm:alice": ("Will Alice win the club election?", "club"), "pm:bob": ("Will Bob win the club election?", "club"),
        "pm:snow": ("Will it snow in Paris on 1 January 2026?", ""),
        "mf:snow": ("Will it snow in Paris on 1 January 2026? (Météo-France)", ""),
        "pm:rain": ("Will it rain in Rome on 2 January 2026?", ""), "mf:rain": ("will it RAIN in Rome on 2 January 2026", ""),
        "pm:euro": ("Will the euro close above $1.10 on 30 January?", ""),
    }
    markets = {mid: MarketText(mid, q, g, long_ago) for mid, (q, g) in texts.items()}
    asked = [Asked("w", "2026-01-13", mid, t, i) for i, mid in enumerate(["pm:alice", "pm:snow", "pm:rain",
                                                                           "mf:rain", "pm:euro"])]
    facts = [ResolutionFact("pm:bob", 1, monday, "winner", MICRO), ResolutionFact("mf:snow", 1, monday, "winner", 0)]
    flags = {x.market_id: x for x in find_leaks(asked, markets, facts)}
    rows = tuple((f"“{texts[a.market_id][0]}” ({a.market_id})",
                  f"{flags[a.market_id].reason} — {flags[a.market_id].other_market_id}" if a.market_id in flags
                  else "clean") for a in asked)
    return WorkedExample(
        "The leakage audit: three ways a round gives its answer away",
        "A round on Tuesday 13 January 2026, 00:05 UTC, asks five questions. On Monday Bob's market — Alice's "
        "sibling in the exclusive group “who wins the club election” — resolved YES, and Manifold's copy of the "
        "Paris snow question resolved NO; the Rome rain question is listed on both venues and both copies were "
        "asked.",
        rows + (("left out of the headline (n_leaked)", str(len(flags))),
                ("scored on the headline", str(len(asked) - len(flags)))),
        "Alice cannot win once Bob has; the snow question's answer is already public in its resolved copy; and the "
        "rain question asked twice would count its outcome twice (the first copy stays). A seat stating those "
        "answers would score well for reading the round, not for forecasting: the flagged questions are listed on "
        "the cohort page and in the JSON (leaks) and scored on no board.")


BRIER_BANDS = (("0", "Perfect"), ("(0, 0.10]", "Excellent"), ("(0.10, 0.20]", "Good"),
               ("(0.20, 0.25]", "Fair (at or near random)"), ("(0.25, 0.40]", "Poor"), ("> 0.40", "Very Poor"))


RETURN_BANDS = (("> +50 %", "Exceptional"), ("(+20 %, +50 %]", "Excellent"), ("(+5 %, +20 %]", "Good"),
                ("[−5 %, +5 %]", "Neutral"), ("[−20 %, −5 %)", "Poor"), ("< −20 %", "Very Poor"))


def headroom_example() -> WorkedExample:
    """A forecast set's headroom worked through `scoring.headroom` on four questions and two seats."""
    import pandas as pd

    from arena.scoring.headroom import headroom, markets_needed, z_sum

    nan = float("nan")
    asked = pd.DataFrame({"market_id": ["A", "A", "B", "C"], "market_price": [0.6, 0.8, 0.3, 0.02],
                          "in_band": [True, True, True, False], "filled": [False, False, False, True],
                          "outcome_yes": [1.0, 1.0, 0.0, nan]})
    seats = pd.DataFrame([("x", "A", 0.7, 1.0), ("x", "A", 0.7, 1.0), ("x", "B", 0.2, 0.0), ("x", "C", 0.1, nan),
                          ("y", "A", 0.5, 1.0), ("y", "A", 0.5, 1.0), ("y", "B", 0.5, 0.0), ("y", "C", 0.5, nan)],
                         columns=["agent", "market_id", "probability", "outcome_yes"])
    h = headroom(asked, seats)
    z = z_sum()
    return WorkedExample(
        "The headroom of a four-question set",
        "Market A is asked in two rounds, priced 0.60 then 0.80, and resolves YES; B is asked once at 0.30 and "
        "resolves NO; C is asked once at 0.02 — below the band [0.05, 0.95], taken only to fill the set — and is "
        "still open. Seat x states 0.7 on A and 0.2 on B; seat y states 0.5 everywhere.",
        (("market's Brier: A mean of 0.4² and 0.2² = 0.10, B 0.3² = 0.09; mean over markets", f"{h.market_brier:.3f}"),
         ("always-0.5's Brier", f"{h.half_brier:.3f}"),
         ("in band: 3 of 4 questions (filled: 1)", f"{h.in_band_share:.0%}"),
         ("x − y per market: A 0.09 − 0.25, B 0.04 − 0.25", "−0.16, −0.21"),
         ("paired sd (sample sd of the differences)", f"{h.paired_sd:.4f}"),
         ("z₀.₉₇₅ + z₀.₈", f"{z:.4f}"),
         (f"smallest detectable difference = {z:.3f} × {h.paired_sd:.4f} / √{h.n_markets} markets",
          f"{h.min_detectable_difference:.4f}"),
         ("markets needed to detect 0.02 = ⌈(z · sd / 0.02)²⌉", f"{markets_needed(0.02, h.paired_sd):d}")),
        "The set is three markets, so only a Brier difference of about 0.06 between two seats would show. No "
        "seat can score below 0, so none can beat the market by more than the market's Brier: where that is "
        "below the detectable difference — a set of near-certain markets, market Brier near 0 — there is little "
        "room to show any seat better than the market, and the cohort page says so. The sd is the seats' "
        "typical (mean over pairs) spread: two seats that agree more closely are told apart at smaller "
        "differences. With a fixed sd, the detectable difference shrinks as 1/√n: four times the markets halve "
        "it.")


def _contamination_example() -> WorkedExample:
    from arena.web.contamination_example import contamination_example

    return contamination_example()


def methodology_context(engine: Engine) -> MethodologyPage:
    from arena.web.ladder_example import ladder_example
    from arena.web.risk_examples import risk_examples  # (it builds on WorkedExample, defined here)

    versions = tuple(VersionRow(v.name, v.value, v.where) for v in code_versions())
    stored = stored_versions(engine)
    metrics = tuple(MetricView(m.name, m.direction, m.unit, m.description)
                    for m in sorted(METRICS.values(), key=lambda m: m.name))
    rules = CohortRules().to_json()
    return MethodologyPage(worked_examples(), PROVISIONAL_RULE, BSS_MARKET_FLOOR, tuple(RANK_METRICS),
                           versions, stored.seen, metrics, BRIER_BANDS, RETURN_BANDS,
                           tuple((k, flat(v)) for k, v in rules.items()), PROVISIONAL_MIN_RESOLVED,
                           stored.schema_revision, headroom_example(), imputation_example(), inference_examples(), MIN_TIER_MARKETS,
                           TIER_RESOLUTION, leakage_example(), risk=risk_examples(), breakdown=breakdown_example(),
                           frontier=frontier_example(), horizon_rule=HORIZON_RULE, frontier_rule=FRONTIER_RULE,
                           beyond_market=beyond_market_example(), question_difficulty=question_difficulty_example(),
                           contamination=_contamination_example(), ladders=ladder_example())
