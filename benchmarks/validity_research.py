"""Benchmark: are the research instruments valid? Anytime-valid comparisons, planted-effect coverage, random-effects
meta-analysis and the difficulty-adjusted Brier, on simulated cohorts with known truth.

Not a test. Run with `.venv/bin/python benchmarks/validity_research.py [--quick] [--seed N] [design options]` (a
few minutes of CPU; --quick, used by `make bench`, under a minute; its shares over 60-100 cohorts are only good to
about ±3-4 points).

Simulated forecasting: each question has a hidden truth p ~ Beta(0.9, 0.9) and resolves YES with probability p. A
forecaster of noise sd states P(YES) = sigmoid(logit(p) + sd · z), z ~ N(0, 1) fresh per question — smaller sd,
better forecaster. A paired per-question Brier difference is (f_A − y)² − (f_B − y)² in [−1, 1]; its population
mean (the planted effect) is E[(f_A − p)² − (f_B − p)²], computed by Monte Carlo over 2,000,000 questions.

1. Anytime-valid comparison (arena.scoring.sequential): 200 resolution days, 2 questions resolving per day, a
   researcher looking at the end of every day. Under no true difference (both sd 0.5) the share of cohorts that
   ever declare a winner must stay <= alpha = 5 %; the naive look (a fixed-sample 95 % z-interval recomputed every
   day) is measured in the same run for contrast. Under a true difference (sd 0.5 vs 1.0 and 0.5 vs 0.8), the
   median day of detection and the share detected by day 200.
1b. The same on the arena's structure (benchmarks/arena_designs.py): runs of consecutive weekly cohorts whose
   markets are asked in several rounds, a seat's error persistent per market plus a per-round part, markets shared
   between consecutive cohorts, truths from the shared replay file's prices. Two seats of equal skill; the share
   of runs whose confidence sequence ever declares a winner with one observation per market
   (arena.scoring.evidence.market_sequence, the arena's unit), beside market@round rows taken one by one.
   Options: --rounds, --market-error-sd, --round-error-sd, --shared-markets, --questions, --cohorts, --paths.
2. Planted-effect coverage (item 2's number): per cohort, 200 questions answered by A (sd 0.5) and B (sd 0.8); the
   95 % paired-bootstrap interval of mean Brier A − mean Brier B (arena.scoring.stats.paired_bootstrap, the
   per-draw difference of the two agents' draws) covers the planted effect in ~95 % of cohorts.
2b. Planted-effect coverage with replicates (issue 13, item 2): forecasters with a persistent per-question
   error (sd_A 1.0, sd_B 0.6, as the demo's ablation pair's planted improvement) plus run-to-run noise (sd 0.5,
   fresh per replicate), each asked k = 3 times per question, 200 questions per cohort. The 95 % interval of
   arena.scoring.ablation.paired_difference (B − A over replicate means, markets resampled) must cover the planted
   effect E[Brier_B − Brier_A] (per ask; Monte Carlo with the combined logit noise) in ~95 % of cohorts; the
   executed replicate's interval is measured beside it (also valid, wider).
3. Random-effects meta-analysis (arena.scoring.meta): per cohort a true effect θ_c ~ N(μ, τ²) (μ = −0.01,
   τ = 0.01) added to the per-question differences of two equally skilled forecasters (mean 0), 150 questions per
   cohort; coverage of μ by the 95 % DerSimonian–Laird, Hartung–Knapp and fixed-effect intervals, for 5, 10 and 20
   cohorts, and the mean estimated τ² and I².
3b. On the runs of 1b: coverage of a planted difference (honest skill 0.5 vs 1.0) by the pooled cross-cohort
   interval (arena.scoring.evidence.pooled_difference: one observation per (cohort, market), distinct markets as
   clusters), beside the same t interval treating each cohort's market as independent.
4. Difficulty-adjusted Brier (arena.scoring.difficulty): 10 forecasters (sd 0.2, 0.4, …, 2.0), 400 questions, each
   forecaster answering an overlapping subset of 150 in which the better forecasters get the hard questions
   (|p − 0.5| < 0.25) more often; Spearman between the true skill order and the order of raw Brier vs the
   difficulty-adjusted Brier vs the IRT skill (arena.scoring.irt: Rasch model of beating the question's median).
5. The cost–skill frontier (arena.scoring.frontier, issue 31 item 2): per run, 200 questions answered by a market
   (sd 0.6) and three models — "cheap" (sd 0.5, $0.001 a call), "dear-worse" (sd 0.8, $0.002: truly dominated by
   cheap) and "dear-better" (sd 0.3, $0.003: a true trade-off, not dominated) —, one call per question with a
   lognormal cost (sigma 0.5) around the model's mean. Coverage of each model's planted Brier − market
   (E[(f − p)² − (f_market − p)²], Monte Carlo) and of its planted cost per resolved forecast by the 95 %
   intervals, and p_dominated: its mean per model and the share of runs above 0.5 (for dear-worse: the power to
   call a dominated model dominated; for the others: false alarms).
6. Information beyond the market (arena.scoring.beyond_market, issue 31): per cohort n markets, each asked in two
   rounds; the price's logit per market ~ N(0, 1.2²) (± a per-round 0.1), the seat's logit = the price's + its
   private signal s ~ N(0, 1) (+ a per-round 0.1), and the outcome drawn from
   logit P(YES) = 0.8 · price logit + b · seat logit at the first round's values, logits capped at ±4.5 so the
   arena's clip [0.01, 0.99] never binds; b = 0.5 (planted information beyond the market) or 0 (the seat's signal
   is noise). The 95 % interval of `encompassing` (markets resampled, both rounds of a drawn market with it)
   must cover b in ~95 % of cohorts; the share of cohorts whose interval excludes 0 is the power (b = 0.5) or
   the false-positive rate (b = 0).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from arena.scoring.ablation import paired_difference  # noqa: E402
from arena.scoring.beyond_market import encompassing  # noqa: E402
from arena.scoring.evidence import cluster_t_test, market_sequence, pooled_difference  # noqa: E402
from arena.scoring.headline import score_forecasts  # noqa: E402
from arena.scoring.difficulty import difficulty_adjusted_brier  # noqa: E402
from arena.scoring.irt import irt_skill  # noqa: E402
from arena.scoring.meta import dersimonian_laird  # noqa: E402
from arena.scoring.sequential import confidence_sequence  # noqa: E402
from arena.scoring.stats import paired_bootstrap  # noqa: E402
from arena.scoring.sequential import compare_sequentially  # noqa: E402
from arena.scoring.validity import spearman  # noqa: E402
from benchmarks.arena_designs import (GAMERS, HONEST, REPLAY_FILE, TWIN, Design, load_prices,  # noqa: E402
                                      population_targets, simulate_run)

ALPHA = 0.05
Z95 = 1.959963984540054
NAIVE_MIN_N = 20  # the naive daily look starts once 20 questions have resolved (no one trusts a z-interval of 2)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


def questions(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = np.clip(rng.beta(0.9, 0.9, n), 1e-6, 1 - 1e-6)
    return p, (rng.random(n) < p).astype(float)


def forecast(p: np.ndarray, sd: float, rng: np.random.Generator) -> np.ndarray:
    return sigmoid(logit(p) + sd * rng.standard_normal(p.size))


def planted_effect(sd_a: float, sd_b: float, rng: np.random.Generator, n: int = 2_000_000) -> float:
    p, _ = questions(n, rng)
    return float(np.mean((forecast(p, sd_a, rng) - p) ** 2 - (forecast(p, sd_b, rng) - p) ** 2))


def differences(sd_a: float, sd_b: float, n: int, rng: np.random.Generator) -> np.ndarray:
    p, y = questions(n, rng)
    return (forecast(p, sd_a, rng) - y) ** 2 - (forecast(p, sd_b, rng) - y) ** 2


def anytime_valid(cohorts: int, days: int, per_day: int, rng: np.random.Generator) -> None:
    n = days * per_day
    print(f"\n1. Anytime-valid comparison: {days} resolution days x {per_day} questions, a look after every day, "
          f"alpha {ALPHA:.0%}, {cohorts} cohorts per scenario")
    for label, sd_a, sd_b in (("no difference (sd 0.5 vs 0.5)", 0.5, 0.5), ("sd 0.5 vs 0.8", 0.5, 0.8),
                              ("sd 0.5 vs 1.0", 0.5, 1.0), ("sd 0.5 vs 1.5", 0.5, 1.5), ("sd 0.5 vs 2.0", 0.5, 2.0)):
        effect = 0.0 if sd_a == sd_b else planted_effect(sd_a, sd_b, rng)
        cs_day, naive_day, fixed, wrong = [], [], [], 0
        t0 = time.perf_counter()
        for _ in range(cohorts):
            d = differences(sd_a, sd_b, n, rng)
            cs = confidence_sequence(d, ALPHA)
            cs_day.append(np.inf if cs.first_index is None else cs.first_index // per_day + 1)
            wrong += cs.sign == 1  # A (smaller sd) declared worse
            ends = np.arange(per_day, n + 1, per_day)  # the observation counts at which the researcher looks
            csum, csq = np.cumsum(d)[ends - 1], np.cumsum(d**2)[ends - 1]
            mean = csum / ends
            sd = np.sqrt(np.maximum(csq / ends - mean**2, 0.0) * ends / np.maximum(ends - 1, 1))
            naive = (np.abs(mean) > Z95 * sd / np.sqrt(ends)) & (ends >= NAIVE_MIN_N)
            naive_day.append(np.argmax(naive) + 1 if naive.any() else np.inf)
            fixed.append(bool(naive[-1]))  # one look, at day `days`: the fixed-horizon test
        elapsed = time.perf_counter() - t0
        cs_day, naive_day = np.array(cs_day), np.array(naive_day)
        if sd_a == sd_b:
            print(f"   {label}: cohorts ever declaring a winner — confidence sequence {np.isfinite(cs_day).mean():.1%} "
                  f"(goal <= {ALPHA:.0%}); naive daily 95 % z-interval (from day {NAIVE_MIN_N // per_day}) "
                  f"{np.isfinite(naive_day).mean():.1%}; one look at day {days} {np.mean(fixed):.1%}   "
                  f"[{elapsed / cohorts * 1000:.0f} ms per cohort]")
        else:
            med = np.median(cs_day)
            med_text = f"day {med:.0f}" if np.isfinite(med) else f"after day {days}"
            print(f"   {label} (planted mean Brier difference {effect:+.4f}): confidence sequence detects it by day "
                  f"{days} in {np.isfinite(cs_day).mean():.1%} of cohorts, median detection {med_text}; "
                  f"one look at day {days} detects {np.mean(fixed):.1%}; wrong-way declarations {wrong}")


def arena_structure(args: argparse.Namespace, paths: int, rng: np.random.Generator) -> None:
    """Sections 1b and 3b on runs shaped like the arena (benchmarks/arena_designs.py)."""
    prices = load_prices(Path(args.replay) if args.replay else REPLAY_FILE)
    design = Design("research", "wide", args.rounds, args.questions, args.cohorts, args.shared_markets,
                    args.market_error_sd, args.round_error_sd)
    null_pair = [GAMERS["seed001"], TWIN]  # equal skill
    a, b = HONEST[2], HONEST[4]  # skill 0.5 vs 1.0
    targets = population_targets(design, prices, rng)
    effect = targets[a] - targets[b]
    wins_market, wins_round, hit_pooled, hit_naive, n_obs, days = [], [], [], [], [], []
    t0 = time.perf_counter()
    for _ in range(paths):
        rows = simulate_run(design, prices, rng)
        scored = score_forecasts(rows[rows["agent"].isin([*null_pair, a, b])], references=False)
        cs = market_sequence(scored, *null_pair, market="market_id", time="resolved_at")
        wins_market.append(cs.first_index is not None)
        n_obs.append(cs.n)
        days.append(int(scored["resolved_at"].max()))
        unit = scored.assign(unit=scored["cohort"] + "/" + scored["question"])
        cs_round, _ = compare_sequentially(unit, *null_pair, ALPHA, question="unit", time="resolved_at")
        wins_round.append(cs_round.first_index is not None)
        pooled = pooled_difference(scored, a, b, market="market_id")
        hit_pooled.append(pooled.ci_low <= effect <= pooled.ci_high)
        obs = scored.groupby(["cohort", "market_id", "agent"])["brier"].mean().unstack("agent")
        d = (obs[a] - obs[b]).dropna()
        naive = cluster_t_test(d.to_numpy(), np.arange(d.size))  # every (cohort, market) its own cluster
        hit_naive.append(naive.ci_low <= effect <= naive.ci_high)
    print(f"\n1b. Anytime-valid on the arena's structure: {paths} runs of {args.cohorts} weekly cohorts "
          f"({np.mean(days):.0f} resolution days) of {args.questions} forecast-set markets x {args.rounds} rounds, "
          f"{args.shared_markets:.0%} of a cohort's markets asked again by the next, a seat's error = skill x "
          f"(persistent per market sd {args.market_error_sd} + per round sd {args.round_error_sd}); "
          f"{prices.source.split(' (')[0]}")
    print(f"   two seats of equal skill, a look after every observation (daily peeking included): cohorts ever "
          f"declaring a winner — one observation per market (arena.scoring.evidence.market_sequence, "
          f"{np.mean(n_obs):.0f} markets per run) {np.mean(wins_market):.1%} (goal <= {ALPHA:.0%}); market@round "
          f"rows taken one by one (the previous unit) {np.mean(wins_round):.1%}   "
          f"[{(time.perf_counter() - t0) / paths * 1000:.0f} ms per run]")
    print(f"3b. Pooled cross-cohort difference on the same runs ({a} vs {b}, planted {effect:+.4f} per question): "
          f"the 95 % interval of arena.scoring.evidence.pooled_difference (distinct markets as clusters) covers it "
          f"in {np.mean(hit_pooled):.1%} of runs (goal ~95 %); treating each cohort's market as independent "
          f"{np.mean(hit_naive):.1%}")


def planted_coverage(cohorts: int, n_q: int, n_boot: int, rng: np.random.Generator) -> None:
    sd_a, sd_b = 0.5, 0.8
    effect = planted_effect(sd_a, sd_b, rng)
    hits, widths = [], []
    t0 = time.perf_counter()
    for c in range(cohorts):
        p, y = questions(n_q, rng)
        fa, fb = forecast(p, sd_a, rng), forecast(p, sd_b, rng)
        frame = pd.DataFrame({"agent": np.repeat(["A", "B"], n_q), "market_id": np.tile(np.arange(n_q), 2),
                              "brier": np.concatenate([(fa - y) ** 2, (fb - y) ** 2])})
        res = paired_bootstrap(frame, "brier", stratum=None, n_boot=n_boot, seed=c)
        diff = (res.draws["A"] - res.draws["B"]).to_numpy()
        lo, hi = np.quantile(diff, [0.025, 0.975])
        hits.append(lo <= effect <= hi)
        widths.append(hi - lo)
    print(f"\n2. Planted-effect coverage: A sd {sd_a} vs B sd {sd_b} (planted difference {effect:+.4f}), {n_q} "
          f"questions, {n_boot} paired-bootstrap draws, {cohorts} cohorts: the 95 % interval of the difference "
          f"covers it in {np.mean(hits):.1%} of cohorts (mean width {np.mean(widths):.4f}; "
          f"{(time.perf_counter() - t0) / cohorts * 1000:.0f} ms per cohort)")


def replicate_coverage(cohorts: int, n_q: int, k: int, n_boot: int, rng: np.random.Generator) -> None:
    sd_a, sd_b, rep_sd = 1.0, 0.6, 0.5
    # one ask's logit noise is sd·z + rep_sd·e: Gaussian with the combined sd, so the per-ask effect is the same
    # Monte Carlo as above (B − A, so negative = B better)
    effect = planted_effect(float(np.hypot(sd_b, rep_sd)), float(np.hypot(sd_a, rep_sd)), rng)
    hits, widths, ex_hits, ex_widths, shares = [], [], [], [], []
    t0 = time.perf_counter()
    q_ids = np.arange(n_q)
    for c in range(cohorts):
        p, y = questions(n_q, rng)
        parts = []
        for name, sd in (("A", sd_a), ("B", sd_b)):
            persistent = sd * rng.standard_normal(n_q)
            for r in range(1, k + 1):
                f = sigmoid(logit(p) + persistent + rep_sd * rng.standard_normal(n_q))
                parts.append(pd.DataFrame({"agent": name, "cohort": "c", "market_id": q_ids, "question": q_ids,
                                           "replicate": r, "brier": (f - y) ** 2}))
        d = paired_difference(pd.concat(parts, ignore_index=True), "A", "B", "brier", n_boot=n_boot, seed=c)
        hits.append(d.lo <= effect <= d.hi)
        widths.append(d.hi - d.lo)
        ex_hits.append(d.executed_lo <= effect <= d.executed_hi)
        ex_widths.append(d.executed_hi - d.executed_lo)
        shares.append(d.replicate_share)
    print(f"\n2b. Planted-effect coverage with replicates: A sd {sd_a} vs B sd {sd_b}, run-to-run sd {rep_sd}, k = {k} "
          f"replicates, {n_q} questions, {n_boot} draws, {cohorts} cohorts (planted B − A {effect:+.4f} per ask): "
          f"the 95 % interval over replicate means covers it in {np.mean(hits):.1%} of cohorts (mean width "
          f"{np.mean(widths):.4f}); the executed replicate's alone in {np.mean(ex_hits):.1%} (mean width "
          f"{np.mean(ex_widths):.4f}); run-to-run share of the per-question variance left after averaging "
          f"{np.nanmean(shares):.0%}; {(time.perf_counter() - t0) / cohorts * 1000:.0f} ms per cohort")


def meta_coverage(reps: int, n_q: int, rng: np.random.Generator) -> None:
    mu, tau = -0.01, 0.01
    print(f"\n3. Random-effects meta-analysis: true effects theta_c ~ N({mu}, {tau}^2), {n_q} questions per cohort, "
          f"{reps} replications")
    for k in (5, 10, 20):
        re_hit, hk_hit, fe_hit, tau2, i2 = [], [], [], [], []
        for _ in range(reps):
            theta = rng.normal(mu, tau, k)
            est, se = np.empty(k), np.empty(k)
            for c in range(k):
                d = differences(0.5, 0.5, n_q, rng) + theta[c]
                est[c], se[c] = d.mean(), d.std(ddof=1) / np.sqrt(n_q)
            r = dersimonian_laird(est, se)
            re_hit.append(r.ci_low <= mu <= r.ci_high)
            hk_hit.append(r.hk_ci_low <= mu <= r.hk_ci_high)
            fe_hit.append(abs(r.fixed_estimate - mu) <= Z95 * r.fixed_se)
            tau2.append(r.tau2)
            i2.append(r.i2)
        print(f"   {k:>2} cohorts: DerSimonian-Laird 95 % interval covers mu in {np.mean(re_hit):.1%}; "
              f"Hartung-Knapp {np.mean(hk_hit):.1%}; fixed effect "
              f"{np.mean(fe_hit):.1%}; mean tau^2 {np.mean(tau2):.2e} (true {tau**2:.0e}); mean I^2 {np.mean(i2):.0f} %")


def difficulty(reps: int, rng: np.random.Generator) -> None:
    sds = np.round(np.arange(1, 11) * 0.2, 1)
    n_q, per_agent = 400, 150
    rho_raw, rho_adj, rho_irt = [], [], []
    for _ in range(reps):
        p, y = questions(n_q, rng)
        hard = np.abs(p - 0.5) < 0.25
        rows = []
        for i, sd in enumerate(sds):
            share_hard = 0.8 - 0.6 * i / (sds.size - 1)  # best forecaster: 80 % hard questions; worst: 20 %
            w = np.where(hard, share_hard / max(hard.sum(), 1), (1 - share_hard) / max((~hard).sum(), 1))
            pick = rng.choice(n_q, per_agent, replace=False, p=w / w.sum())
            f = forecast(p[pick], sd, rng)
            rows.append(pd.DataFrame({"agent": i, "question": pick, "brier": (f - y[pick]) ** 2}))
        out = difficulty_adjusted_brier(pd.concat(rows, ignore_index=True)).sort_values("agent")
        rho_raw.append(spearman(sds, out["brier"]))
        rho_adj.append(spearman(sds, out["brier_adjusted"]))
        skill = irt_skill(pd.concat(rows, ignore_index=True)).sort_values("agent")
        rho_irt.append(spearman(sds, -skill["irt_skill"].to_numpy()))  # higher skill = smaller sd
    print(f"\n4. Difficulty-adjusted Brier: 10 forecasters (sd 0.2 .. 2.0), {n_q} questions, {per_agent} each, the "
          f"better ones given the hard questions more often, {reps} replications")
    print(f"   Spearman(true skill order, score order): raw Brier mean {np.mean(rho_raw):.3f} (median "
          f"{np.median(rho_raw):.3f}); difficulty-adjusted mean {np.mean(rho_adj):.3f} (median {np.median(rho_adj):.3f}); IRT skill mean "
          f"{np.mean(rho_irt):.3f} (median {np.median(rho_irt):.3f})")


def frontier_validity(runs: int, n_q: int, n_boot: int, rng: np.random.Generator) -> None:
    from arena.scoring.frontier import cost_skill_frontier

    sd_market = 0.6
    models = {"cheap": (0.5, 1_000.0), "dear-worse": (0.8, 2_000.0), "dear-better": (0.3, 3_000.0)}
    sigma = 0.5  # lognormal cost per call; its mean is the model's mean cost
    skill = {m: planted_effect(sd, sd_market, rng) for m, (sd, _) in models.items()}
    cover_s = {m: [] for m in models}
    cover_c = {m: [] for m in models}
    p_dom = {m: [] for m in models}
    t0 = time.perf_counter()
    for r in range(runs):
        p, y = questions(n_q, rng)
        market = forecast(p, sd_market, rng)
        obs, calls = [], []
        for m, (sd, cost) in models.items():
            f = forecast(p, sd, rng)
            obs.append(pd.DataFrame({"agent": m, "market_id": np.arange(n_q),
                                     "diff_market": (f - y) ** 2 - (market - y) ** 2}))
            calls.append(pd.DataFrame({"agent": m, "cost_micros": cost * rng.lognormal(-sigma ** 2 / 2, sigma, n_q)}))
        t = cost_skill_frontier(pd.concat(obs, ignore_index=True), pd.concat(calls, ignore_index=True),
                                {m: n_q for m in models}, n_boot=n_boot, seed=r).set_index("model")
        for m, (_, cost) in models.items():
            cover_s[m].append(t.at[m, "brier_minus_market_lo"] <= skill[m] <= t.at[m, "brier_minus_market_hi"])
            cover_c[m].append(t.at[m, "cost_usd_lo"] <= cost / 1e6 <= t.at[m, "cost_usd_hi"])
            p_dom[m].append(t.at[m, "p_dominated"])
    print(f"\n5. Cost–skill frontier: {runs} runs of {n_q} questions, {n_boot} draws "
          f"({(time.perf_counter() - t0) / runs * 1000:.0f} ms per run)")
    for m, (sd, cost) in models.items():
        pd_m = np.asarray(p_dom[m])
        print(f"   {m:<12} sd {sd}, ${cost / 1e6:.4f} a call, planted Brier − market {skill[m]:+.4f}: skill interval "
              f"covers {np.mean(cover_s[m]):.1%}, cost interval {np.mean(cover_c[m]):.1%}; p_dominated mean "
              f"{pd_m.mean():.3f}, > 0.5 in {np.mean(pd_m > 0.5):.1%} of runs")


def beyond_market_coverage(reps: int, n_boot: int, rng: np.random.Generator) -> None:
    from arena.scoring.stats import draw_counts, draw_indices

    print(f"\n6. Information beyond the market: {reps} cohorts per row, each market asked in 2 rounds, {n_boot} "
          "market draws; truth logit P(YES) = 0.8 · price logit + b · seat logit")
    for n in (40, 150):
        for b in (0.5, 0.0):
            hits, excl, widths, missing = [], [], [], 0
            t0 = time.perf_counter()
            for r in range(reps):
                price = np.clip(rng.normal(0, 1.2, n), -4.0, 4.0)
                seat = np.clip(price + rng.normal(0, 1.0, n), -4.0, 4.0)
                y = (rng.random(n) < sigmoid(0.8 * price + b * seat)).astype(float)
                rounds = 2
                lp = np.clip(np.repeat(price, rounds) + np.tile([0.0, 1.0], n) * rng.normal(0, 0.1, n * rounds),
                             -4.5, 4.5)
                ls = np.clip(np.repeat(seat, rounds) + np.tile([0.0, 1.0], n) * rng.normal(0, 0.1, n * rounds),
                             -4.5, 4.5)
                rows = pd.DataFrame({"market_id": np.repeat(np.arange(n), rounds), "probability": sigmoid(ls),
                                     "market_price": sigmoid(lp), "outcome_yes": np.repeat(y, rounds)})
                counts = draw_counts(draw_indices([n], n_boot, seed=r), n)
                t = encompassing(rows, counts, rows["market_id"].to_numpy())
                if not np.isfinite(t.ci_low):
                    missing += 1
                    continue
                hits.append(t.ci_low <= b <= t.ci_high)
                excl.append(t.ci_low > 0 or t.ci_high < 0)
                widths.append(t.ci_high - t.ci_low)
            what = "power (excludes 0)" if b else "false positives (excludes 0)"
            print(f"   {n:>3} markets, b = {b:.1f}: the interval covers b in {np.mean(hits):.1%} of cohorts; "
                  f"{what} {np.mean(excl):.1%}; mean width {np.mean(widths):.2f}; no interval in {missing} "
                  f"({(time.perf_counter() - t0) / reps * 1000:.0f} ms per cohort)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer cohorts and draws (seconds, for make bench)")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--rounds", type=int, default=4, help="decision rounds asking each market (1b, 3b)")
    ap.add_argument("--market-error-sd", type=float, default=1.0,
                    help="a seat's persistent error on a market, in units of its skill (1b, 3b)")
    ap.add_argument("--round-error-sd", type=float, default=0.5,
                    help="a seat's per-round error, in units of its skill (1b, 3b)")
    ap.add_argument("--shared-markets", type=float, default=0.5,
                    help="share of a cohort's markets the next cohort asks again (1b, 3b)")
    ap.add_argument("--questions", type=int, default=40, help="forecast-set markets per cohort (1b, 3b)")
    ap.add_argument("--cohorts", type=int, default=26, help="consecutive weekly cohorts per run (1b, 3b)")
    ap.add_argument("--paths", type=int, default=None, help="runs for 1b and 3b (default 300; quick 60)")
    ap.add_argument("--replay", default=None, help=f"the replay file (default {REPLAY_FILE})")
    args = ap.parse_args(argv)
    if not 0.0 <= args.shared_markets < 1.0 or args.rounds < 1 or args.cohorts < 1 or args.questions < 2 \
            or args.market_error_sd < 0 or args.round_error_sd < 0:
        ap.error("need 0 <= --shared-markets < 1, --rounds and --cohorts >= 1, --questions >= 2 and error sds >= 0")
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    q = args.quick
    print(f"validity_research — seed {args.seed}{' (quick)' if q else ''}")
    anytime_valid(cohorts=100 if q else 1000, days=200, per_day=2, rng=rng)
    arena_structure(args, paths=args.paths or (60 if q else 300), rng=rng)
    planted_coverage(cohorts=100 if q else 1000, n_q=200, n_boot=500 if q else 1000, rng=rng)
    replicate_coverage(cohorts=100 if q else 1000, n_q=200, k=3, n_boot=500 if q else 1000, rng=rng)
    meta_coverage(reps=200 if q else 2000, n_q=150, rng=rng)
    difficulty(reps=20 if q else 200, rng=rng)
    # (its own stream, so its figures do not move with the sections before it)
    frontier_validity(runs=100 if q else 1000, n_q=200, n_boot=500 if q else 1000,
                      rng=np.random.default_rng([args.seed, 5]))
    beyond_market_coverage(reps=60 if q else 400, n_boot=200 if q else 1000, rng=rng)
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
