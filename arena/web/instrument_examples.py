"""Worked examples of two research instruments for the methodology page, computed by the scoring library on
small fixed inputs: information beyond the market (`scoring.beyond_market`) and the published question
difficulty (`scoring.question_difficulty`)."""

from __future__ import annotations

import numpy as np

from arena.web.worked_example import WorkedExample


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


__all__ = ["beyond_market_example", "question_difficulty_example"]
