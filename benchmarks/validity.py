"""Benchmark: does the leaderboard recover known skill, do the bootstrap intervals cover, and is the bootstrap fast?

Not a test. Run with `.venv/bin/python benchmarks/validity.py [--quick] [--designs-only] [design options]`
(--quick: about a minute; the default: about ten minutes of CPU, most of it section 6).

Simulated cohorts come from `arena.venues.simulated.SimulatedUniverse` (hidden truths p and resolutions drawn
from them). Forecasters of known skill state P(YES) = sigmoid(logit(p) + sd · z), z ~ N(0, 1) fresh per market,
with sd increasing down the list — no trading engine is needed to score forecasts. Each cohort draws its events
at random (without replacement) from the universe's non-void markets, so the universe is the population and
every cohort an i.i.d.-like sample of it.

1. Skill recovery: Spearman between the true skill order (sd) and the Brier order, per cohort, at several event
   counts, for a wide and a narrow spread of skills. Goal: >= 0.9 at 500 resolved events per agent.
2. Coverage of the 95 % bootstrap intervals (arena.scoring.stats.paired_bootstrap, 1,000 draws) for each agent's
   mean Brier, against two targets:
   - the conditional expectation given the cohort's markets and forecasts, mean of (f − p)² + p(1 − p) (what the
     brief asks for). Resampling markets also counts the market-to-market spread of that expectation, which
     this target holds fixed, so intervals are wider than it needs: expect over-coverage;
   - the population expectation, E over the universe's markets and the noise of (f − p)² + p(1 − p) (computed
     exactly with Gauss–Hermite quadrature over z) — what a market bootstrap estimates. Goal: 93–97 %.
   Run dense (every agent on every event) and sparse (each agent on a random 70 % of the events: missing cells),
   with the events split into 5 strata (weeks) to exercise the stratified path.
3. Null check: 5 agents of identical skill, twice as many cohorts; share of pairwise p < 0.05 (≈ 5 % expected)
   and of cohorts where any BH-adjusted p < 0.05 (false discoveries; ≤ 5 % expected) and where every agent
   shares tier 1.
4. Crowd-proxy validity (arena.scoring.validity): correlation of within-cohort z-scores of the crowd proxy
   (logit pool, leave-one-out) and the final Brier, pooled over the simulated cohorts.
5. Speed: 1,000 draws for 50 agents × 5,000 events (goal ≤ 5 s), against a naive per-draw pandas loop timed on
   fewer draws of the same run (the very same draws, checked equal), extrapolated to 1,000 draws.
6. The arena's designs (benchmarks/arena_designs.py: runs of consecutive cohorts whose forecast-set markets are
   asked in one or several rounds, with a seat's error persistent per market plus a per-round part, markets shared
   between consecutive cohorts, truths drawn from the shared replay file's prices), measured with the arena's own
   estimators (arena.scoring.evidence): the cohort headline (one observation per market) and its interval, the
   overall board's interval (distinct markets resampled), the exact-test tiers and the confidence sequence. Ten
   honest seats (wide or narrow skill spread), an equal-skill twin and four gamers (seed-001 gamer, selective
   abstainer, market copier, 0.5-on-hard) beside the two references. Per design: Spearman(true skill, headline
   order) over the honest seats; 95 % coverage of each seat's population Brier by the cohort and by the overall
   intervals (goal 93-97 %); the sequences' false-win rate between the equal-skill pair with a look after every
   market (goal <= 5 %); per gamer, the share of cohorts whose tiers rank it above an honest seat of truly better
   Brier (goal <= 5 %). Options: --rounds, --market-error-sd, --round-error-sd, --shared-markets, --questions,
   --cohorts, --runs, --paths, --boot, --seed, --replay; --designs-only runs this section alone.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from arena.scoring.evidence import (equal_to_reference, headline_intervals, market_rows,  # noqa: E402
                                    market_sequence, paired_tiers)
from arena.scoring.headline import REF_HALF, REFERENCE_AGENTS, score_forecasts  # noqa: E402
from arena.scoring.leaderboard import crowd_proxy  # noqa: E402
from arena.scoring.stats import cluster_bootstrap, draw_indices, paired_bootstrap  # noqa: E402
from arena.scoring.validity import proxy_validity, spearman  # noqa: E402
from arena.venues.simulated import SimulatedUniverse  # noqa: E402
from benchmarks.arena_designs import (GAMERS, HONEST, NARROW, REPLAY_FILE, TWIN, WIDE, Design,  # noqa: E402
                                      Prices, load_prices, population_targets, simulate_run)

START = datetime(2024, 1, 7, tzinfo=timezone.utc)
GOAL_SECONDS = 5.0


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


def load_universe(seed: int, weeks: int, per_week: int) -> tuple[np.ndarray, np.ndarray]:
    """Truths and 0/1 outcomes of the universe's resolved, non-void markets (probabilistic resolutions off)."""
    u = SimulatedUniverse.generate(seed, START, weeks, per_week, probabilistic_rate=0.0)
    end = u.end  # a property that scans every market: read it once
    truth, outcome = [], []
    for mid in u.market_ids():
        res = u.resolution_at(mid, end)
        pay = res.payout("YES") if res is not None else None
        if pay is None:  # void: refunded, never scored
            continue
        truth.append(u.truth(mid))
        outcome.append(pay.ppm / 1_000_000)
    return np.array(truth), np.array(outcome)


def forecasts(p: np.ndarray, sds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(markets × agents) stated P(YES): truth seen through logit noise of each agent's sd."""
    z = rng.standard_normal((p.size, sds.size))
    return sigmoid(logit(p)[:, None] + sds[None, :] * z)


def population_brier(pool: np.ndarray, sds: np.ndarray, nodes: int = 60) -> np.ndarray:
    """E over the pool's markets and z ~ N(0, 1) of (f − p)² + p(1 − p), per sd (Gauss–Hermite in z)."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    f = sigmoid(logit(pool)[:, None, None] + sds[None, :, None] * x[None, None, :])
    sq = ((f - pool[:, None, None]) ** 2 * w).sum(axis=2)
    return (sq + (pool * (1 - pool))[:, None]).mean(axis=0)


def long_frame(f: np.ndarray, y: np.ndarray, p: np.ndarray, mask: np.ndarray | None, strata: int) -> pd.DataFrame:
    n, k = f.shape
    m_idx, a_idx = np.nonzero(np.ones((n, k), bool) if mask is None else mask)
    return pd.DataFrame({
        "cohort": m_idx * strata // n,
        "market_id": m_idx,
        "agent": a_idx,
        "brier": (f[m_idx, a_idx] - y[m_idx]) ** 2,
        "expected": (f[m_idx, a_idx] - p[m_idx]) ** 2 + p[m_idx] * (1 - p[m_idx]),
        "probability": f[m_idx, a_idx],
    })


def skill_recovery(pool_p: np.ndarray, pool_y: np.ndarray, cohorts: int, rng: np.random.Generator) -> None:
    print("\n1. Skill recovery: Spearman(true skill order, Brier order) per cohort, 10 agents")
    print(f"   {'skills':<34}{'events':>7}{'mean':>8}{'median':>8}{'p10':>8}{'share >= 0.9':>14}")
    for label, sds in (("wide: sd 0, 0.25, ..., 2.25", WIDE), ("narrow: sd 0, 0.1, ..., 0.9", NARROW)):
        for events in (100, 250, 500, 1000):
            rho = np.empty(cohorts)
            for c in range(cohorts):
                pick = rng.choice(pool_p.size, events, replace=False)
                f = forecasts(pool_p[pick], sds, rng)
                brier = ((f - pool_y[pick, None]) ** 2).mean(axis=0)
                rho[c] = spearman(sds, brier)
            print(f"   {label:<34}{events:>7}{rho.mean():>8.3f}{np.median(rho):>8.3f}"
                  f"{np.quantile(rho, 0.1):>8.3f}{(rho >= 0.9).mean():>13.0%}")


def coverage(pool_p: np.ndarray, pool_y: np.ndarray, cohorts: int, events: int, n_boot: int,
             rng: np.random.Generator) -> None:
    print(f"\n2. Coverage of 95 % intervals of mean Brier ({n_boot} draws, {events} events, 5 strata, 10 agents, "
          f"wide skills, {cohorts} cohorts)")
    truth_pop = population_brier(pool_p, WIDE)
    for design, share in (("dense", None), ("sparse 70 %", 0.7)):
        hit_cond, hit_pop, width, elapsed = [], [], [], 0.0
        for c in range(cohorts):
            pick = rng.choice(pool_p.size, events, replace=False)
            p, y = pool_p[pick], pool_y[pick]
            f = forecasts(p, WIDE, rng)
            mask = None if share is None else rng.random(f.shape) < share
            frame = long_frame(f, y, p, mask, strata=5)
            t0 = time.perf_counter()
            res = paired_bootstrap(frame, "brier", n_boot=n_boot, seed=1000 + c)
            elapsed += time.perf_counter() - t0
            t = res.table.set_index("agent").sort_index()
            cond = frame.groupby("agent")["expected"].mean().sort_index().to_numpy()
            lo, hi = t["ci_low"].to_numpy(), t["ci_high"].to_numpy()
            hit_cond.append((lo <= cond) & (cond <= hi))
            hit_pop.append((lo <= truth_pop) & (truth_pop <= hi))
            width.append(hi - lo)
        hc, hp = np.array(hit_cond), np.array(hit_pop)
        per_agent = ", ".join(f"{v:.0%}" for v in hp.mean(axis=0))
        print(f"   {design:<12} population target {hp.mean():6.1%}   conditional target {hc.mean():6.1%}   "
              f"mean width {np.mean(width):.4f}   {elapsed / cohorts * 1000:.0f} ms per bootstrap")
        print(f"   {'':<12} population coverage by agent (sd 0 → 2.25): {per_agent}")


def null_check(pool_p: np.ndarray, pool_y: np.ndarray, cohorts: int, events: int, n_boot: int,
               rng: np.random.Generator) -> None:
    sds = np.full(5, 0.5)
    raw, any_bh, all_tier1 = [], [], []
    for c in range(cohorts):
        pick = rng.choice(pool_p.size, events, replace=False)
        f = forecasts(pool_p[pick], sds, rng)
        frame = long_frame(f, pool_y[pick], pool_p[pick], None, strata=1)
        res = paired_bootstrap(frame, "brier", n_boot=n_boot, seed=5000 + c)
        iu = np.triu_indices(5, 1)
        raw.extend(res.p_value.to_numpy()[iu])
        any_bh.append((res.p_adjusted.to_numpy()[iu] < 0.05).any())
        all_tier1.append((res.table["tier"] == 1).all())
    print(f"\n3. Null check: 5 agents of equal skill (sd 0.5), {events} events, {cohorts} cohorts")
    print(f"   pairwise raw p < 0.05: {np.mean(np.array(raw) < 0.05):.1%} of pairs (≈ 5 % expected); "
          f"any BH-adjusted p < 0.05: {np.mean(any_bh):.1%} of cohorts; all in tier 1: {np.mean(all_tier1):.1%}")


def proxy_check(pool_p: np.ndarray, pool_y: np.ndarray, cohorts: int, events: int,
                rng: np.random.Generator) -> None:
    rows = []
    for c in range(cohorts):
        pick = rng.choice(pool_p.size, events, replace=False)
        f = forecasts(pool_p[pick], WIDE, rng)
        frame = long_frame(f, pool_y[pick], pool_p[pick], None, strata=1).assign(cohort=c)
        proxy = crowd_proxy(frame.rename(columns={"market_id": "question"}), leave_one_out=True)
        brier = frame.groupby(["cohort", "agent"], as_index=False)["brier"].mean()
        rows.append(proxy.merge(brier, on=["cohort", "agent"]))
    res = proxy_validity(pd.concat(rows, ignore_index=True))
    print(f"\n4. Crowd-proxy validity (logit pool, leave-one-out; wide skills, {events} events, {cohorts} cohorts): "
          f"Pearson {res['proxy_validity_pearson']:.3f}, Spearman {res['proxy_validity_spearman']:.3f} "
          f"over {res['n']} agent-cohorts")


def naive_draws(frame: pd.DataFrame, idx: np.ndarray, markets: pd.DataFrame) -> pd.DataFrame:
    """The obvious implementation: per draw, materialise the resampled bets and group-by mean."""
    out = []
    for b in range(idx.shape[0]):
        drawn = markets.iloc[idx[b]]
        sample = drawn.merge(frame, on=["cohort", "market_id"], how="inner")
        out.append(sample.groupby("agent")["brier"].mean())
    return pd.DataFrame(out).reset_index(drop=True)


def speed(n_agents: int, n_events: int, n_boot: int, naive_n: int, rng: np.random.Generator) -> None:
    p = rng.beta(0.9, 0.9, n_events)
    y = (rng.random(n_events) < p).astype(float)
    f = forecasts(p, np.linspace(0.0, 2.0, n_agents), rng)
    frame = long_frame(f, y, p, None, strata=1).drop(columns=["expected", "probability"])
    frame = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)  # no help from pre-sorted rows
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        res = paired_bootstrap(frame, "brier", n_boot=n_boot, seed=7)
        times.append(time.perf_counter() - t0)
    best = min(times)
    markets = frame[["cohort", "market_id"]].drop_duplicates().sort_values(["cohort", "market_id"])
    idx = draw_indices([len(markets)], naive_n, seed=7)
    t0 = time.perf_counter()
    naive = naive_draws(frame, idx, markets.reset_index(drop=True))
    naive_time = time.perf_counter() - t0
    same = np.allclose(naive.to_numpy(), res.draws.iloc[:naive_n].to_numpy())
    per_draw = naive_time / naive_n
    print(f"\n5. Speed: {n_boot} draws, {n_agents} agents x {n_events} events ({len(frame):,} rows)")
    print(f"   vectorised: best of 3 {best:.2f} s (runs {', '.join(f'{t:.2f}' for t in times)} s; "
          f"goal <= {GOAL_SECONDS:.0f} s: {'met' if best <= GOAL_SECONDS else 'MISSED'})")
    print(f"   naive per-draw pandas loop: {naive_n} draws in {naive_time:.2f} s = {per_draw * 1000:.0f} ms/draw "
          f"-> {per_draw * n_boot:.0f} s for {n_boot} draws (extrapolated); speed-up x{per_draw * n_boot / best:.0f}; "
          f"same draws give the same values: {same}")


# -- 6. the arena's designs ----------------------------------------------------------------------------------------

COVERAGE_GOAL = (0.93, 0.97)
FALSE_WIN_GOAL = 0.05
GAMER_GOAL = 0.05
TABLE_COLUMNS = ("design", "Spearman", "cohort cov.", "overall cov.", "false wins", *GAMERS.values(),
                 "any gamer, paired")


def arena_designs(args: argparse.Namespace) -> list[Design]:
    """Every design the arena has: one round and several rounds per market; several rounds with markets shared
    between consecutive cohorts; each with the wide and the narrow skill spread."""
    common = dict(questions=args.questions, cohorts=args.cohorts, market_error_sd=args.market_error_sd,
                  round_error_sd=args.round_error_sd)
    out = []
    for spread in ("wide", "narrow"):
        out.append(Design(f"{spread}, 1 round", spread, 1, shared=0.0, **common))
        out.append(Design(f"{spread}, {args.rounds} rounds", spread, args.rounds, shared=0.0, **common))
        out.append(Design(f"{spread}, {args.rounds} rounds, {args.shared_markets:.0%} shared", spread, args.rounds,
                          shared=args.shared_markets, **common))
    return out


def measure_design(design: Design, prices: Prices, runs: int, paths: int, n_boot: int, rng: np.random.Generator,
                   target_n: int = 400_000) -> dict[str, float]:
    """The arena's own estimators on `runs` simulated runs of `design`: Spearman(true skill, cohort headline) over
    the honest seats; coverage of each seat's population Brier by the cohort interval (markets resampled within the
    cohort) and by the overall board's (distinct markets resampled); the false-win rate of the confidence sequence
    between two seats of equal skill (one observation per market, in resolution order, looked at after each), over
    the full runs and further runs simulated for it and the overall interval alone, `paths` in all; per gamer, the
    share of cohorts whose tiers put it in a strictly better tier than an honest seat of better true Brier, and the
    share where a gamer's paired test (BH-adjusted) says it beats one."""
    targets = population_targets(design, prices, rng, target_n)
    rho, cohort_hit, overall_hit, false_win = [], [], [], []
    above: dict[str, list[bool]] = {g: [] for g in GAMERS.values()}
    paired: list[bool] = []
    better = {g: [h for h in HONEST if targets[h] < targets[g]] for g in GAMERS.values()}
    covered = [a for a in targets if a != REF_HALF]  # always-0.5's interval is the point 0.25: it covers trivially
    for run in range(runs):
        rows = simulate_run(design, prices, rng)
        scored = score_forecasts(rows)
        iv = headline_intervals(scored, "brier", cohort="cohort", agent="agent", market="market_id", n_boot=n_boot,
                                seed=run)
        iv = iv[iv["agent"].isin(covered)]
        truth = iv["agent"].map(targets).to_numpy(dtype=float)
        hit = (iv["ci_low"].to_numpy() <= truth) & (truth <= iv["ci_high"].to_numpy())
        per_cohort = iv["cohort"].notna().to_numpy()
        cohort_hit.extend(hit[per_cohort])
        overall_hit.extend(hit[~per_cohort])
        cs = market_sequence(scored, GAMERS["seed001"], TWIN, market="market_id", time="resolved_at")
        false_win.append(cs.first_index is not None)
        obs = market_rows(scored[scored["brier"].notna()], ("brier",), keys=("cohort",))
        for cohort, group in obs.groupby("cohort", sort=True):
            est = group.groupby("agent")["brier"].mean()
            rho.append(spearman(design.skills, est.reindex(HONEST).to_numpy()))
            shown = iv[iv["cohort"] == cohort][["agent", "ci_low", "ci_high"]]
            same = equal_to_reference(scored[scored["cohort"] == cohort], REFERENCE_AGENTS)
            res = paired_tiers(group, value="brier", unit=("market_id",), cluster="market_id", same_as=same,
                               intervals=shown)
            tier = res.series()
            for g in GAMERS.values():
                above[g].append(bool(any(tier[g] < tier[h] for h in better[g])))
            idx = {a: i for i, a in enumerate(res.agents)}
            est_of = group.groupby("agent")["brier"].mean()
            paired.append(any(res.p_adjusted[idx[g], idx[h]] < 0.05 and est_of[g] < est_of[h]
                              for g in GAMERS.values() if g not in same for h in better[g]))
    pair = [GAMERS["seed001"], TWIN]
    for k in range(max(paths - runs, 0)):  # further runs for the overall interval and the sequence alone
        scored = score_forecasts(simulate_run(design, prices, rng))
        obs = market_rows(scored[scored["brier"].notna()], ("brier",), keys=("cohort",)).assign(_all="")
        t = cluster_bootstrap(obs, "brier", market="market_id", cluster="_all", n_boot=n_boot, seed=runs + k).table
        t = t[t["agent"].isin(covered)]
        truth = t["agent"].map(targets).to_numpy(dtype=float)
        overall_hit.extend((t["ci_low"].to_numpy() <= truth) & (truth <= t["ci_high"].to_numpy()))
        cs = market_sequence(scored, *pair, market="market_id", time="resolved_at")
        false_win.append(cs.first_index is not None)
    out = {"Spearman": float(np.nanmean(rho)), "cohort cov.": float(np.mean(cohort_hit)),
           "overall cov.": float(np.mean(overall_hit)), "false wins": float(np.mean(false_win))}
    out.update({g: float(np.mean(v)) for g, v in above.items()})
    out["any gamer, paired"] = float(np.mean(paired))
    out.update(n_cohort=len(cohort_hit), n_overall=len(overall_hit), n_paths=len(false_win), n_cohorts=len(rho))
    return out


def _mark(name: str, value: float) -> str:
    if name in ("cohort cov.", "overall cov."):
        ok = COVERAGE_GOAL[0] <= value <= COVERAGE_GOAL[1]
    elif name == "false wins":
        ok = value <= FALSE_WIN_GOAL
    elif name in GAMERS.values() or name == "any gamer, paired":
        ok = value <= GAMER_GOAL
    else:
        return f"{value:.3f}"
    return f"{value:.1%}" + ("" if ok else " missed")


def design_check(args: argparse.Namespace, runs: int, paths: int, n_boot: int, rng: np.random.Generator
                 ) -> list[dict]:
    prices = load_prices(Path(args.replay) if args.replay else REPLAY_FILE)
    designs = arena_designs(args)
    print(f"\n6. The arena's designs (arena.scoring.evidence: one observation per market, the cohort and overall "
          f"intervals, the exact-test tiers, the confidence sequence): {runs} runs per design, each "
          f"{args.cohorts} consecutive cohorts of {args.questions} forecast-set markets, {n_boot} draws; seat error "
          f"skill x (market error sd {args.market_error_sd} persistent per seat and market, round error sd "
          f"{args.round_error_sd} fresh per round); sequences over {max(paths, runs)} runs; seed {args.seed}")
    print(f"   {prices.source}")
    widths = [max(30, max(len(d.label) for d in designs) + 2), 9, 15, 15, 15,
              *(max(len(g), 13) + 2 for g in GAMERS.values()), 19]
    print("   " + "".join(f"{c:>{w}}" if i else f"{c:<{w}}" for i, (c, w) in enumerate(zip(TABLE_COLUMNS, widths))))
    table = []
    for design in designs:
        t0 = time.perf_counter()
        res = measure_design(design, prices, runs, paths, n_boot, rng, 100_000 if args.quick else 400_000)
        cells = [design.label, *(_mark(c, res[c]) for c in TABLE_COLUMNS[1:])]
        print("   " + "".join(f"{c:>{w}}" if i else f"{c:<{w}}" for i, (c, w) in enumerate(zip(cells, widths)))
              + f"   [{time.perf_counter() - t0:.0f} s]", flush=True)
        table.append({"design": design.label, **res})
    n_seats = table[0]["n_cohort"] // max(table[0]["n_cohorts"], 1)
    print(f"   Counts per design: {table[0]['n_cohorts']} cohorts x {n_seats} intervals, "
          f"{table[0]['n_overall'] // max(n_seats, 1)} runs x {n_seats} overall intervals, {table[0]['n_paths']} "
          f"sequences. A run's seats share its markets' outcomes, so a coverage share is good to about "
          f"+-{100 * np.sqrt(0.05 * 0.95 / max(table[0]['n_cohorts'], 1)):.0f} (cohort) and "
          f"+-{100 * np.sqrt(0.05 * 0.95 * n_seats / max(table[0]['n_overall'], 1)):.0f} (overall) points (one "
          f"binomial sd counting a cohort or a run as one draw).")
    print(f"   Goals: coverage {COVERAGE_GOAL[0]:.0%}-{COVERAGE_GOAL[1]:.0%} of every seat's and the market "
          f"reference's population Brier; false wins <= {FALSE_WIN_GOAL:.0%} (seed-001 gamer vs its equal-skill twin, "
          f"one sequence per run over all its cohorts' markets); gamer above a truly better honest seat (a strictly "
          f"better tier) in <= {GAMER_GOAL:.0%} of cohorts; any gamer, paired: the share of cohorts where a "
          f"gamer's exact paired test (BH-adjusted, the tiers' p-values) says it beats a truly better seat. "
          f"Spearman: mean over cohorts of the honest seats' true "
          f"skill order against their headline order.")
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=4,
                        help="consecutive cohorts per simulated run (section 6; sections 1-4 simulate 200 "
                             "independent cohorts, 40 with --quick)")
    parser.add_argument("--runs", type=int, default=None, help="simulated runs per design (default 15; quick 6)")
    parser.add_argument("--paths", type=int, default=None,
                        help="runs per design for the overall interval and the sequences (default 135; quick 20)")
    parser.add_argument("--questions", type=int, default=None,
                        help="forecast-set markets per cohort (default 125; quick 40)")
    parser.add_argument("--rounds", type=int, default=4, help="decision rounds asking each market (section 6)")
    parser.add_argument("--market-error-sd", type=float, default=1.0,
                        help="a seat's persistent error on a market, in units of its skill (section 6)")
    parser.add_argument("--round-error-sd", type=float, default=0.5,
                        help="a seat's per-round error, in units of its skill (section 6)")
    parser.add_argument("--shared-markets", type=float, default=0.5,
                        help="share of a cohort's markets the next cohort asks again (section 6)")
    parser.add_argument("--events", type=int, default=500, help="resolved events per agent for coverage")
    parser.add_argument("--boot", type=int, default=None,
                        help="bootstrap draws (default 1000; section 6 with --quick: 200)")
    parser.add_argument("--replay", default=None, help=f"the replay file for the price distribution "
                                                        f"(default {REPLAY_FILE})")
    parser.add_argument("--seed", type=int, default=20240107)
    parser.add_argument("--quick", action="store_true", help="fewer runs, markets and draws, a smaller speed run")
    parser.add_argument("--designs-only", action="store_true", help="run only section 6 (the arena's designs)")
    args = parser.parse_args(argv)
    bad = []
    if not 0.0 <= args.shared_markets < 1.0:
        bad.append("--shared-markets must lie in [0, 1)")
    if args.rounds < 1 or args.cohorts < 1:
        bad.append("--rounds and --cohorts must be at least 1")
    if args.market_error_sd < 0 or args.round_error_sd < 0:
        bad.append("--market-error-sd and --round-error-sd must be >= 0")
    if bad:
        parser.error("; ".join(bad))
    runs = args.runs or (6 if args.quick else 15)
    paths = args.paths or (20 if args.quick else 135)
    if args.questions is None:
        args.questions = 40 if args.quick else 125
    if args.questions < 12:
        parser.error("--questions must be at least 12 (the tiers test a pair on at least 10 markets)")
    n_boot = args.boot or 1000
    design_boot = args.boot or (200 if args.quick else 1000)
    cohorts = 40 if args.quick else 200
    rng = np.random.default_rng(args.seed)

    t0 = time.perf_counter()
    if args.designs_only:
        design_check(args, runs, paths, design_boot, rng)
        print(f"\nTotal {time.perf_counter() - t0:.0f} s")
        return
    weeks, per_week = 24, 500
    pool_p, pool_y = load_universe(args.seed % 100_000, weeks=weeks, per_week=per_week)
    print(f"Universe: {pool_p.size:,} resolved non-void simulated markets (of {weeks * per_week:,}), built in "
          f"{time.perf_counter() - t0:.1f} s; mean truth {pool_p.mean():.3f}, YES rate {pool_y.mean():.3f}")
    skill_recovery(pool_p, pool_y, cohorts, rng)
    coverage(pool_p, pool_y, cohorts, args.events, n_boot, rng)
    null_check(pool_p, pool_y, 2 * cohorts, args.events, n_boot, rng)  # rare events: twice the cohorts
    proxy_check(pool_p, pool_y, min(cohorts, 100), args.events, rng)
    speed(50, 1000 if args.quick else 5000, n_boot, 5 if args.quick else 20, rng)
    design_check(args, runs, paths, design_boot, rng)
    print(f"\nTotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
