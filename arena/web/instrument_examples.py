"""Worked examples of the research instruments for the methodology page — skill by horizon and topic with the
question filter, and the cost–skill frontier — computed with the scoring library's own functions on small, fixed
inputs. Pure layout of numbers: no database."""

from __future__ import annotations

from arena.web.env import usd
from arena.web.methodology_page import WorkedExample


def breakdown_example() -> WorkedExample:
    """Skill by horizon and by category and the question filter, worked through `scoring.breakdown` and
    `domain.question_filter` on three markets of one seat."""
    from datetime import date, datetime, timedelta, timezone

    import pandas as pd

    from arena.scoring.breakdown import skill_by_category, skill_by_horizon
    from arena.scoring.headline import score_forecasts
    from arena.domain.question_filter import QuestionFilter

    t0 = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    # market, round, decided (days after t0), resolves (days after t0), category, stated, price; all resolve YES
    spec = [("A", "r1", 0, 10, "sports", 0.9, 0.6), ("A", "r2", 7, 10, "sports", 0.8, 0.7),
            ("B", "r1", 0, 45, "sports", 0.4, 0.6), ("C", "r2", 7, 45, "politics", 0.9, 0.8)]
    frame = pd.DataFrame([{"cohort": "c", "agent": "s", "market_id": m, "question": f"{m}@{r}", "probability": p,
                           "market_price": q, "outcome_yes": 1.0} for m, r, _, _, _, p, q in spec])
    facts = pd.DataFrame([{"question": f"{m}@{r}", "decided_at": t0 + timedelta(days=d),
                           "resolved_at": t0 + timedelta(days=e), "category": c}
                          for m, r, d, e, c, _, _ in spec])
    scored = score_forecasts(frame, references=False).merge(facts, on="question")
    hz = skill_by_horizon(scored).set_index("group")
    cat = skill_by_category(scored).set_index("group")
    window = QuestionFilter(date(2026, 3, 8), date(2026, 3, 14), ("sports",))
    kept = scored[window.mask(scored["decided_at"], scored["category"])]
    return WorkedExample(
        "Brier − market by horizon, by category, and a filtered board",
        "A seat is asked market A (sports) on 1 March at 0.60 and on 8 March at 0.70 and states 0.9 then 0.8; A "
        "resolves YES on 11 March, 10 and 3 days after the two rounds. B (sports, priced 0.60, stated 0.4) is "
        "asked on 1 March, C (politics, priced 0.80, stated 0.9) on 8 March; both resolve YES on 15 April.",
        (("A: (0.9 − 1)² − (0.6 − 1)² and (0.8 − 1)² − (0.7 − 1)²", "−0.15, −0.05"),
         ("≤7 d: A's second round (3 days)", f"{hz.at['≤7 d', 'brier_minus_market']:+.3f} "
                                             f"({int(hz.at['≤7 d', 'n_markets'])} market)"),
         ("8–30 d: A's first round (10 days)", f"{hz.at['8–30 d', 'brier_minus_market']:+.3f} "
                                               f"({int(hz.at['8–30 d', 'n_markets'])} market)"),
         ("31–90 d: B (0.36 − 0.16 = +0.20) and C (0.01 − 0.04 = −0.03)",
          f"{hz.at['31–90 d', 'brier_minus_market']:+.3f} ({int(hz.at['31–90 d', 'n_markets'])} markets)"),
         ("sports: A's observation (the mean of its rounds, −0.10) and B's",
          f"{cat.at['sports', 'brier_minus_market']:+.3f}"),
         ("politics: C", f"{cat.at['politics', 'brier_minus_market']:+.3f}"),
         ("--from 2026-03-08 --until 2026-03-14 --category sports keeps", ", ".join(kept["question"]))),
        "A market is one observation within a group — A's two rounds are averaged within a category, as on the "
        "boards, and counted once in each horizon bucket its rounds fall in — and the "
        "group's interval is a t interval clustered by market, so a bucket with few markets shows a wide one. A "
        "filtered board keeps only the questions decided in the window on markets of the chosen categories and is "
        "scored exactly as a whole board is; its money columns are empty, since cash and P/L are not split by "
        "question.")


def frontier_example() -> WorkedExample:
    """The cost–skill frontier worked through `scoring.frontier` on three models' fixed observations and calls."""
    import numpy as np
    import pandas as pd

    from arena.scoring.frontier import cost_skill_frontier

    n = 20
    wobble = 0.03 * np.sin(np.arange(n))
    skill = {"small": -0.01, "large": -0.04, "middling": 0.01}
    obs = pd.DataFrame([{"agent": m, "market_id": f"m{k}", "diff_market": s + wobble[k] + 0.005 * np.cos(3 * k + j)}
                        for j, (m, s) in enumerate(skill.items()) for k in range(n)])
    per_call = {"small": 200, "large": 3_000, "middling": 2_500}  # micro-USD, 40 calls each
    calls = pd.DataFrame([{"agent": m, "cost_micros": float(c + (k % 5) * c // 10)}
                          for m, c in per_call.items() for k in range(40)])
    t = cost_skill_frontier(obs, calls, {m: n for m in skill}, n_boot=1000, seed=0).set_index("model")

    def row(m: str) -> tuple[str, str]:
        r = t.loc[m]
        return (f"{m}: {usd(r['cost_usd'])} [{usd(r['cost_usd_lo'])}, {usd(r['cost_usd_hi'])}] per forecast, "
                f"Brier − market {r['brier_minus_market']:+.3f} [{r['brier_minus_market_lo']:+.3f}, "
                f"{r['brier_minus_market_hi']:+.3f}]",
                f"{'on the frontier' if r['on_frontier'] else 'dominated'}, P(dominated) {r['p_dominated']:.0%}")
    return WorkedExample(
        "The cost–skill frontier and P(dominated)",
        f"Three models answer the same {n} resolved markets, each with 40 calls (two per resolved forecast): 'small' "
        "costs about $0.00024 a call, 'large' $0.0036 and 'middling' $0.0030; their Brier − market is about −0.01, "
        "−0.04 and +0.01.",
        tuple(row(m) for m in ("small", "large", "middling")),
        "'small' and 'large' are both on the frontier — one is cheaper, the other better. 'middling' costs more "
        "than 'small' and forecasts worse: in nearly every joint draw (calls resampled for the cost, markets for "
        "the skill, every model on the same markets) 'small' is both cheaper and better, so its P(dominated) is "
        "near 1. A model whose calls report no cost is listed without one and is never on the frontier.")


__all__ = ["breakdown_example", "frontier_example"]
