"""The methodology page's worked example of the ladder check: ladders found by `domain.ladders`, scored by
`scoring.consistency.ladder_violations` (its own module: the methodology page's is at its size limit)."""

from __future__ import annotations

from arena.web.worked_example import WorkedExample


def ladder_example() -> WorkedExample:
    """One threshold ladder of three rungs and one date ladder of two, with a seat's forecasts and the venue's
    prices, worked through the real detection and scoring."""
    from datetime import datetime, timezone

    import pandas as pd

    from arena.domain.ladders import detect_ladders, ladder_ranks
    from arena.domain.market import Market
    from arena.scoring.consistency import ladder_violations

    june, march = datetime(2026, 6, 30, tzinfo=timezone.utc), datetime(2026, 3, 31, tzinfo=timezone.utc)
    questions = {"A": "Will BTC close above $100k on June 30?", "B": "Will BTC close above $110k on June 30?",
                 "C": "Will BTC close above $120k on June 30?", "M": "Will X happen by March 31?",
                 "J": "Will X happen by June 30?"}
    markets = [Market(id=k, venue="pm", question=q, close_time=march if k == "M" else june)
               for k, q in questions.items()]  # each closes at its deadline, which dates the year-less ones
    seat = {"A": 0.60, "B": 0.45, "C": 0.50, "M": 0.40, "J": 0.30}
    venue = {"A": 0.62, "B": 0.40, "C": 0.25, "M": 0.20, "J": 0.35}
    ladders = detect_ladders(markets)
    ranks = pd.DataFrame(ladder_ranks(ladders), columns=["ladder", "kind", "market_id", "rank"])
    rows = pd.concat([ranks.assign(agent=who, probability=ranks["market_id"].map(p))
                      for who, p in (("seat", seat), ("market", venue))], ignore_index=True)
    out = ladder_violations(rows).set_index("agent")
    order = "; ".join(" → ".join(lad.members) for lad in ladders)
    s, v = out.loc["seat"], out.loc["market"]
    return WorkedExample(
        "Ladders: a higher threshold, an earlier deadline, never likelier",
        "A seat states P(YES) on five markets: above $100k (A) 0.60, above $110k (B) 0.45, above $120k (C) 0.50, "
        "and X by March 31 (M) 0.40, by June 30 (J) 0.30. The venue prices them 0.62, 0.40, 0.25, 0.20, 0.35.",
        (("ladders found from the texts (each member implies the next)", order),
         ("the seat's pairs: C>B by 0.05, C<A, B<A; M>J by 0.10", f"{int(s['n_ladder_pairs'])} pairs, "
                                                                   f"{int(s['ladder_violations'])} violated"),
         ("the seat's ladder_violation_mean = (0.05 + 0.10) / 4", f"{s['ladder_violation_mean']:.4f}"),
         ("the venue's prices (the row \u201cmarket\u201d)", f"{int(v['n_ladder_pairs'])} pairs, "
                                                         f"{int(v['ladder_violations'])} violated, mean "
                                                         f"{v['ladder_violation_mean']:.4f}")),
        "Closing above $120k means closing above $110k, so P(above $120k) cannot exceed P(above $110k); X by March "
        "means X by June. The seat breaks two of its four pairs: a trader holding YES on B and NO on C (or YES on J "
        "and NO on M) loses nothing in any outcome and gains in some, at the seat's prices. The count says how "
        "often, the mean gap how badly; the venue's own row shows how coherent the prices the seats saw were.")


__all__ = ["ladder_example"]
