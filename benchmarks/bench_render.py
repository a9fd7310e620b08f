"""Benchmark: render the static site of 100 weekly cohorts × 10 agents on SQLite.

The database is filled by bulk inserts (cohorts, agents, markets, daily price snapshots, resolutions, decisions
with actions and reasoning, stated forecasts, buy and settle fills, daily portfolio snapshots, some model calls
and rejections) — not by the slow simulation. Then it times `render_site` (one batched context build per page
kind) against a naive baseline measured in the same run: every page rendered on its own through
`render_path`, each building its own context with its own queries and its own leaderboard — what a per-page
N+1 renderer (or the live server, page by page) does. The naive way runs on a sample of pages of each kind and
is extrapolated per kind; the sampled pages must be byte-identical to the batched site.

The render runs on the store as of the render time (as the scheduled render job does) and is timed twice: with
the board cache empty, and as a scheduled render sees it — the open cohorts' boards recomputed (their facts moved
since the last render), the completed cohorts' boards taken from `services.board_cache`.

Usage: python benchmarks/bench_render.py [--cohorts 100] [--agents 10] [--naive-fraction 0.1]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import delete, insert, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from arena.domain.sizing import SIZING_VERSION, CohortRules  # noqa: E402
from arena.read.point_in_time import copy_as_of, store_as_of  # noqa: E402
from arena.store.engine import make_engine, migrate  # noqa: E402
from arena.store.tables import (  # noqa: E402
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    ForecastRow,
    MarketRow,
    MemoRow,
    ModelCallRow,
    PortfolioSnapshotRow,
    PriceSnapshotRow,
    RejectionRow,
    ResolutionRow,
)
from arena.web.env import page_path  # noqa: E402
from arena.web.one_page import render_path  # noqa: E402
from arena.cache.memo import forget_all  # noqa: E402
from arena.web.render import render_site  # noqa: E402
from arena.web.site_manifest import NAME  # noqa: E402

GOAL_SECONDS = 2.0
T0 = datetime(2024, 1, 7, tzinfo=timezone.utc)  # a Sunday
DAY, WEEK = timedelta(days=1), timedelta(weeks=1)
MICRO = 1_000_000
START_CASH = 10_000 * MICRO


def mark_open_cohorts(engine, at: datetime) -> None:  # type: ignore[no-untyped-def]
    """A new portfolio snapshot for every agent of every open cohort at `at` (what an hourly mark writes)."""
    with engine.begin() as conn:
        seats = conn.execute(select(AgentRow.cohort_id, AgentRow.id).join(CohortRow, CohortRow.id == AgentRow.cohort_id)
                             .where(CohortRow.status == "open")).all()
        conn.execute(insert(PortfolioSnapshotRow), [
            dict(cohort_id=cid, agent_id=aid, as_of=at, cash_micros=START_CASH - aid, positions_value_micros=aid,
                 total_value_micros=START_CASH + aid % 7 * MICRO) for cid, aid in seats])


def files(out: Path) -> dict[str, bytes]:
    """Every file of a rendered site but its manifest, by path."""
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != NAME}


def build(url: str, n_cohorts: int, n_agents: int, markets_per_week: int, rounds: int, bets: int,
          forecasts: int, seed: int = 1) -> datetime:
    """Fill a fresh database; returns the as-of time to render at (the last cohorts still hold positions)."""
    rng = random.Random(seed)
    engine = make_engine(url)
    migrate(engine)
    weeks = n_cohorts + rounds + 3
    as_of = T0 + (n_cohorts + rounds - 1) * WEEK + 2 * DAY
    rules = CohortRules(decision_weeks=rounds).to_json()
    lineup = [{"name": f"model-{k}", "kind": "llm" if k == 0 else "scripted", "model_id": f"vendor/model-{k}",
               "config": {}} for k in range(n_agents)]

    markets, prices, resolutions = [], [], []
    price_at: dict[tuple[int, int], int] = {}  # (market, day) → YES ppm
    outcome: dict[int, int] = {}
    for i in range(weeks * markets_per_week):
        opened = T0 + (i // markets_per_week) * WEEK
        closes = opened + 3 * WEEK
        yes = rng.random() < 0.5
        outcome[i] = MICRO if yes else 0
        markets.append(dict(id=f"bench:{i}", venue="bench", native_id=str(i), question=f"Will bench event {i} happen?",
                            description="A benchmark market.", kind="binary", outcomes=["YES", "NO"],
                            outcome_labels=["Yes", "No"], status="resolved" if closes <= as_of else "open",
                            close_time=closes, url=f"https://example.invalid/m/{i}", category="bench", group_id="",
                            extra={}, first_seen_at=opened, updated_at=opened))
        p = rng.uniform(0.2, 0.8)
        d0 = (opened - T0).days
        for d in range(d0, d0 + 21):
            t = T0 + d * DAY
            if t > as_of:
                break
            p = min(0.98, max(0.02, p + rng.gauss(0.02 if yes else -0.02, 0.05)))
            ppm = int(p * 1000) * 1000
            price_at[(i, d)] = ppm
            prices.append(dict(market_id=f"bench:{i}", outcome="YES", price_ppm=ppm, bid_ppm=ppm - 5000,
                               ask_ppm=ppm + 5000, observed_at=t, fetched_at=t, source="bench"))
        if closes <= as_of:
            resolutions.append(dict(market_id=f"bench:{i}", version=1, kind="winner",
                                    payouts={"YES": outcome[i], "NO": MICRO - outcome[i]}, resolved_at=closes,
                                    recorded_at=closes, source="bench"))

    cohorts = [dict(id=c + 1, name=f"cohort-{(T0 + c * WEEK):%Y-%m-%d}", period_start=T0 + c * WEEK,
                    status="completed" if T0 + (c + rounds + 3) * WEEK <= as_of else "open",
                    starting_cash_micros=START_CASH, rules=rules, lineup=lineup, created_at=T0 + c * WEEK,
                    completed_at=None) for c in range(n_cohorts)]
    agents = [dict(id=c * n_agents + k + 1, cohort_id=c + 1, name=f"model-{k}", kind=lineup[k]["kind"],
                   model_id=lineup[k]["model_id"], config={}) for c in range(n_cohorts) for k in range(n_agents)]

    decisions, fills, forecast_rows, snapshots, calls, rejections = [], [], [], [], [], []
    did = 0
    for a in agents:
        c = a["cohort_id"] - 1
        cash = START_CASH
        for r in range(rounds):
            t = T0 + (c + r) * WEEK + timedelta(minutes=5)
            if t > as_of:
                break
            day = (t - T0).days
            did += 1
            live = [i for i in range((c + r) * markets_per_week - 2 * markets_per_week, (c + r + 1) * markets_per_week)
                    if i >= 0 and (i, day) in price_at]
            chosen = rng.sample(live, min(bets, len(live)))
            cash_at_start = cash
            max_bet = cash // 4
            actions = []
            for i in chosen:
                amount = rng.randint(50, max(50, max_bet // MICRO)) * MICRO
                if amount > cash or amount > max_bet:
                    continue
                side = "YES" if rng.random() < 0.5 else "NO"
                yes = price_at[(i, day)]
                price = yes if side == "YES" else MICRO - yes
                shares = amount * MICRO // price
                cash -= amount
                actions.append({"type": "BET", "market_id": f"bench:{i}", "outcome": side,
                                "amount": str(amount // MICRO), "stated_probability": round(rng.random(), 4),
                                "rationale": f"edge on event {i}"})
                fills.append(dict(key=f"buy:{did}:{i}", cohort_id=c + 1, agent_id=a["id"], market_id=f"bench:{i}",
                                  outcome=side, kind="buy", shares=shares, cash_micros=-amount, cost_micros=amount,
                                  price_ppm=price, mid_ppm=price, provenance="bench", decision_id=did, at=t))
                forecast_rows.append(dict(decision_id=did, agent_id=a["id"], market_id=f"bench:{i}", source="bet",
                                          probability=actions[-1]["stated_probability"], market_price_ppm=yes, as_of=t))
                close = T0 + ((i // markets_per_week) + 3) * WEEK
                if close <= as_of:
                    payout = outcome[i] if side == "YES" else MICRO - outcome[i]
                    proceeds = shares * payout // MICRO
                    cash += proceeds
                    fills.append(dict(key=f"settle:{did}:{i}", cohort_id=c + 1, agent_id=a["id"],
                                      market_id=f"bench:{i}", outcome=side, kind="settle", shares=-shares,
                                      cash_micros=proceeds, cost_micros=-amount, price_ppm=payout, mid_ppm=None,
                                      provenance="bench", decision_id=None, resolution_version=1,
                                      at=close + timedelta(hours=1)))
            decisions.append(dict(id=did, cohort_id=c + 1, agent_id=a["id"], round_key=f"{t:%Y-%m-%d}",
                                  status="executed" if actions else "hold", as_of=t,
                                  cash_at_start_micros=cash_at_start, max_bet_micros=max_bet, actions=actions,
                                  reasoning=f"Round {r}: {len(actions)} bets. " + "Reasoning text. " * 20, error="",
                                  sizing_version=SIZING_VERSION, claimed_at=t, completed_at=t))
            for i in rng.sample(live, min(forecasts, len(live))):
                forecast_rows.append(dict(decision_id=did, agent_id=a["id"], market_id=f"bench:{i}",
                                          source="forecast_set", probability=round(rng.random(), 4),
                                          market_price_ppm=price_at[(i, day)], as_of=t))
            if a["name"] == "model-0":
                calls.append(dict(decision_id=did, attempt=1, prompt="You are a forecaster.\n" + "market line\n" * 150,
                                  raw_response='{"bets": []}', parsed={"bets": []}, error="", prompt_tokens=3000,
                                  completion_tokens=200, cost_micros=4_000, latency_s=2.5, served_model="vendor/m0",
                                  prompt_version="prompt-1", at=t))
            if rng.random() < 0.1:
                rejections.append(dict(decision_id=did, action_index=-1, reason="min_bet",
                                       message="bet below the minimum", action={}, at=t))
        value = START_CASH
        for d in range(0, (rounds + 3) * 7):
            t = T0 + (c * 7 + d) * DAY + timedelta(hours=23)
            if t > as_of:
                break
            value = max(0, value + rng.randint(-200, 210) * MICRO)
            snapshots.append(dict(cohort_id=c + 1, agent_id=a["id"], as_of=t, cash_micros=value // 2,
                                  positions_value_micros=value - value // 2, total_value_micros=value,
                                  open_positions=3, unpriced_positions=0, final=False))

    with engine.begin() as conn:
        for table, rows in ((MarketRow, markets), (PriceSnapshotRow, prices), (ResolutionRow, resolutions),
                            (CohortRow, cohorts), (AgentRow, agents), (DecisionRow, decisions), (FillRow, fills),
                            (ForecastRow, forecast_rows), (PortfolioSnapshotRow, snapshots), (ModelCallRow, calls),
                            (RejectionRow, rejections)):
            for k in range(0, len(rows), 5_000):
                conn.execute(insert(table), rows[k:k + 5_000])
    print(f"data: {len(cohorts)} cohorts, {len(agents)} agents, {len(markets)} markets, {len(prices):,} price "
          f"snapshots, {len(decisions):,} decisions, {len(fills):,} fills, {len(forecast_rows):,} forecasts, "
          f"{len(snapshots):,} portfolio snapshots, {len(calls)} model calls")
    engine.dispose()
    return as_of


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=100)
    ap.add_argument("--agents", type=int, default=10)
    ap.add_argument("--markets-per-week", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=4, help="weekly decision rounds per cohort")
    ap.add_argument("--bets", type=int, default=3, help="bets per decision")
    ap.add_argument("--forecasts", type=int, default=10, help="stated forecasts per decision")
    ap.add_argument("--naive-fraction", type=float, default=0.1,
                    help="share of each page kind the naive per-page renderer does (extrapolated); 1 = all")
    ap.add_argument("--repeat", type=int, default=3, help="batched renders; the best is reported")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{Path(d) / 'bench.sqlite'}"
        t = time.perf_counter()
        as_of = build(url, args.cohorts, args.agents, args.markets_per_week, args.rounds, args.bets, args.forecasts)
        print(f"setup {time.perf_counter() - t:.1f} s")
        # The scheduled render runs at "now": the store holds nothing later. Materialise the store as of `as_of`
        # (the bench data runs on past it) so the render reads it directly, as the render job does.
        full = make_engine(url)
        engine = make_engine(f"sqlite:///{Path(d) / 'now.sqlite'}")
        migrate(engine)  # (the migrations' triggers keep the versions the caches key on)
        copy_as_of(full, as_of, engine)
        full.dispose()
        open_cohorts = [name for (name,) in engine.connect().execute(
            select(CohortRow.name).where(CohortRow.status == "open"))]

        def clear_cache(cohorts: list[str] | None = None) -> None:
            with engine.begin() as conn:
                q = delete(MemoRow).where(MemoRow.kind != "frames")
                conn.execute(q if cohorts is None else q.where(MemoRow.cohort.in_(cohorts)))

        render_site(engine, Path(d) / "warm", as_of, statistics="none")  # compile the templates, warm imports
        clear_cache()
        cold = render_site(engine, Path(d) / "cold", as_of, statistics="none")
        print(f"first render, board cache empty: {cold.total_pages:,} pages in {cold.seconds:.2f} s "
              f"(standings {cold.stages['standings']:.2f} s)")
        # A full render into an empty folder (every page built), the open cohorts' boards recomputed (their
        # inputs moved since the last render), the completed cohorts' boards from the cache.
        times, report = [], None
        for k in range(args.repeat):
            clear_cache(open_cohorts)
            report = render_site(engine, Path(d) / f"site{k}", as_of, statistics="none")
            times.append(report.seconds)
        assert report is not None
        fast = min(times)
        print(f"full render into an empty folder ({len(open_cohorts)} open cohorts' boards recomputed, the rest "
              f"cached): {report.total_pages:,} pages {report.pages} in {fast:.2f} s (best of {args.repeat}: "
              f"{', '.join(f'{x:.2f}' for x in times)}; {cold.seconds / fast:.1f}× the cold render)")
        print("  stages of the last run: " + ", ".join(f"{k} {v:.2f}" for k, v in report.stages.items()))
        # What the render job does each hour: render into the folder it rendered last time, after the mark job
        # wrote a new portfolio snapshot for every agent of every open cohort — only the pages whose inputs moved
        # are built (`web.page_keys`), and only files whose bytes changed are written.
        scheduled_times, scheduled = [], None
        for k in range(args.repeat):
            mark_open_cohorts(engine, as_of - timedelta(minutes=30 - k))
            scheduled = render_site(engine, Path(d) / "site0", as_of, statistics="none")
            scheduled_times.append(scheduled.seconds)
        assert scheduled is not None
        best = min(scheduled_times)
        print(f"scheduled render (the render job: the last render's folder, every open cohort's agents marked "
              f"again): {scheduled.total_pages:,} pages built {scheduled.pages}, {sum(scheduled.kept.values()):,} "
              f"kept, {scheduled.written} files written, in {best:.2f} s (best of {args.repeat}: "
              f"{', '.join(f'{x:.2f}' for x in scheduled_times)}; {fast / best:.1f}× faster than the full render) "
              f"[goal ≤ {GOAL_SECONDS:.0f} s: {'met' if best <= GOAL_SECONDS else 'MISSED'}]")
        print("  stages of the last run: " + ", ".join(f"{k} {v:.2f}" for k, v in scheduled.stages.items()))
        forget_all()  # the check below is computed from the facts alone
        render_site(engine, Path(d) / "check", as_of, statistics="none", full=True)
        same = files(Path(d) / "site0") == files(Path(d) / "check")
        print(f"  the folder after the scheduled renders equals a full render: {'yes' if same else 'NO'}")
        assert same

        site = Path(d) / "site0"
        by_kind: dict[str, list[str]] = {}
        for p in sorted(site.rglob("*.html")):
            rel = str(p.relative_to(site))
            if rel == "404.html":  # not a page of the site: what a static host serves for a missing path
                continue
            kind = rel.split("/")[0] if "/" in rel else rel
            by_kind.setdefault(kind, []).append(rel)
        rng = random.Random(2)
        naive_total, sampled, different = 0.0, 0, []
        # The data holds facts recorded after as_of: render_site shows the store as it stood then (a copy, made
        # inside its timing); the per-page renderer reads that same store, as `arena serve --as-of` does.
        past_store = store_as_of(engine, as_of)
        past = past_store.__enter__()
        for kind, paths in by_kind.items():
            n = max(1, round(len(paths) * args.naive_fraction))
            sample = rng.sample(paths, n)
            t = time.perf_counter()
            for path in sample:
                page = render_path(past, path, as_of)
                assert page is not None, path
                if page[1] != (site / path).read_text(encoding="utf-8"):
                    different.append(path)
            spent = time.perf_counter() - t
            naive_total += spent * len(paths) / n
            sampled += n
        print(f"naive per-page rendering: {sampled} pages sampled → {naive_total:.1f} s extrapolated to all "
              f"{report.total_pages:,} pages; sampled pages differing from the batched site: {different or 'none'}")
        print(f"speed-up: {naive_total / fast:.0f}×   full render {fast:.2f} s (≤ {GOAL_SECONDS:.0f} s: "
              f"{'met' if fast <= GOAL_SECONDS else 'MISSED'}); the render job's scheduled render {best:.2f} s "
              f"({naive_total / best:.0f}× the naive renderer; goal ≤ {GOAL_SECONDS:.0f} s: "
              f"{'met' if best <= GOAL_SECONDS else 'MISSED'})")
        assert not different
        # The statistics pages (1,000 bootstrap draws per cohort) are timed on their own: a scheduled render
        # recomputes only the open cohorts' pages, a completed cohort's page is written once.
        from arena.web.render import statistics_pages

        t = time.perf_counter()
        (Path(d) / "stats" / "cohorts").mkdir(parents=True)
        n_all = statistics_pages(past, Path(d) / "stats", as_of, "all").get("statistics", 0)
        all_s = time.perf_counter() - t
        t = time.perf_counter()
        n_open = statistics_pages(past, Path(d) / "stats", as_of, "open").get("statistics", 0)
        open_s = time.perf_counter() - t
        print(f"statistics pages: all {n_all} cohorts in {all_s:.1f} s ({all_s / max(n_all, 1):.2f} s each); "
              f"a scheduled re-render ({n_open} open cohorts) in {open_s:.1f} s")
        assert page_path("index") in by_kind.get("index.html", ["index.html"])
        past_store.__exit__(None, None, None)
        engine.dispose()


if __name__ == "__main__":
    main()
