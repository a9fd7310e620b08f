"""Worked examples of the research instruments for the methodology page, computed with the scoring library's own
functions on small, fixed inputs: skill by horizon and topic with the question filter, the cost–skill frontier,
information beyond the market (`scoring.beyond_market`) and the published question difficulty
(`scoring.question_difficulty`). Pure layout of numbers: no database."""

from __future__ import annotations

import numpy as np

from arena.web.env import usd
from arena.web.worked_example import WorkedExample


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


def beyond_market_example() -> WorkedExample:
    """The encompassing test worked through `scoring.beyond_market` on 80 planted markets and three seats."""
    import pandas as pd

    from arena.scoring.beyond_market import CLIP, beyond_market_table

    rng = np.random.default_rng(31)  # a fixed draw: the page shows the same numbers on every render
    n = 80
    public, private = rng.normal(0.0, 1.2, n), rng.normal(0.0, 1.0, n)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(public + private)))).astype(float)
    price = np.round(1.0 / (1.0 + np.exp(-public)), 2).clip(0.02, 0.98)
    informed = np.round(1.0 / (1.0 + np.exp(-(public + private))), 2)
    noisy = np.round(1.0 / (1.0 + np.exp(-(np.log(price / (1 - price)) + rng.normal(0.0, 0.7, n)))), 2)
    seats = {"informed": informed, "copier": price, "noise": noisy}
    rows = pd.concat([pd.DataFrame({"agent": a, "market_id": np.arange(n).astype(str), "probability": p,
                                    "market_price": price, "outcome_yes": y, "answered": True})
                      for a, p in seats.items()], ignore_index=True)
    t = beyond_market_table(rows, n_boot=500, seed=0).set_index("agent")

    def shown(a: str) -> str:
        r = t.loc[a]
        if not np.isfinite(r["beyond_market"]):
            return f"— ({r['beyond_market_note'].split(':')[0]})"
        return f"{r['beyond_market']:+.2f} [{r['beyond_market_lo']:+.2f}, {r['beyond_market_hi']:+.2f}]"

    return WorkedExample(
        "Information beyond the market on 80 planted markets",
        "Each market's outcome has log-odds public + private; the price shows sigmoid(public), rounded to a cent. "
        "Seat 'informed' states sigmoid(public + private) — it sees the private part; 'copier' states the price; "
        "'noise' states the price's logit plus noise of sd 0.7 that has nothing to do with the outcome. Each seat "
        f"is fitted on its 80 answered rows, probabilities clipped to [{CLIP}, {1 - CLIP}]; 500 market draws.",
        (("informed: beyond_market [95 %]", shown("informed")),
         ("informed: price_copy", f"{t.loc['informed', 'price_copy']:.2f}"),
         ("copier: beyond_market", shown("copier")),
         ("copier: price_copy", f"{t.loc['copier', 'price_copy']:.2f}"),
         ("noise: beyond_market [95 %]", shown("noise")),
         ("noise: price_copy", f"{t.loc['noise', 'price_copy']:.2f}")),
        "The informed seat's coefficient is near the planted 1 and its interval excludes 0: its number tells "
        "about the outcome what the price does not. The copier's number is the price itself, so the regression "
        "cannot weigh it apart from the price: no coefficient, and a price-copy index of 1. The noisy seat's "
        "interval holds 0: departing from the price is not the same as knowing more than it.")


def question_difficulty_example() -> WorkedExample:
    """A cohort's published question difficulty worked through `scoring.question_difficulty` on three questions."""
    import pandas as pd

    from arena.scoring.question_difficulty import question_difficulty

    f = pd.DataFrame({"cohort": "c", "agent": ["x"] * 3 + ["y"] * 3, "market_id": ["A", "B", "C"] * 2,
                      "question": ["A@1", "B@1", "C@1"] * 2, "probability": [0.8, 0.6, 0.3, 0.7, 0.5, 0.6],
                      "market_price": [0.75, 0.55, 0.5] * 2, "outcome_yes": [1.0, 1.0, 0.0] * 2})
    d = question_difficulty(f).set_index("market_id")
    return WorkedExample(
        "The difficulty of three questions",
        "Seats x and y answer three questions of one cohort: A (price 0.75, resolves YES; x 0.8, y 0.7), B (price "
        "0.55, YES; x 0.6, y 0.5) and C (price 0.50, NO; x 0.3, y 0.6). The fit also counts the two references, "
        "always-0.5 and the market's price, as the boards do: four forecasters on every question.",
        (("A: Briers x 0.04, y 0.09, always-0.5 0.25, market 0.0625; mean", f"{d.loc['A', 'mean_brier']:.4f}"),
         ("B: 0.16, 0.25, 0.25, 0.2025; mean", f"{d.loc['B', 'mean_brier']:.4f}"),
         ("C: 0.09, 0.36, 0.25, 0.25; mean", f"{d.loc['C', 'mean_brier']:.4f}"),
         ("difficulty A, B, C (mean Brier − mean over questions)",
          ", ".join(f"{d.loc[q, 'difficulty']:+.4f}" for q in "ABC")),
         ("IRT difficulty A, B, C (logits)", ", ".join(f"{d.loc[q, 'irt_difficulty']:+.2f}" for q in "ABC"))),
        "With every forecaster on every question the fixed-effects difficulty is the question's mean Brier minus "
        "the mean over the cohort's questions; where seats answered different questions the fit separates a "
        "question's difficulty from who happened to answer it. A is the easy one (the price was already near the "
        "outcome), C the hard one; the IRT fit orders them the same way on the logit scale.")


__all__ = ["beyond_market_example", "breakdown_example", "frontier_example", "question_difficulty_example"]
