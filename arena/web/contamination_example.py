"""The methodology page's worked example of the replays' contamination guard, computed by `domain.contamination`
(its own module: the methodology page's is at its size limit)."""

from __future__ import annotations

from arena.web.methodology_page import WorkedExample


def contamination_example() -> WorkedExample:
    """The contamination guard worked through `domain.contamination` on four markets and one cutoff."""
    from datetime import date, datetime, timezone

    import pandas as pd

    from arena.domain.contamination import cutoff_instant, model_age_days, pre_cutoff_lines, verdict

    def at(m: int, d: int) -> datetime:
        return datetime(2025, m, d, tzinfo=timezone.utc)

    cut = cutoff_instant(date(2025, 6, 30))
    paths = {  # market → (resolved at, recorded YES prices (observed at, ppm))
        "A": (at(6, 20), [(at(6, 1), 500_000)]),
        "B": (at(8, 1), [(at(6, 1), 500_000), (at(6, 25), 990_000)]),
        "C": (at(8, 1), [(at(6, 1), 500_000), (at(6, 10), 990_000), (at(6, 20), 600_000)]),
        "D": (cut, [(at(6, 1), 500_000)]),
    }
    why = {m: verdict(cut, r, prices) or "clean" for m, (r, prices) in paths.items()}
    stated = {"A": 0.97, "B": 0.95, "C": 0.7, "D": 0.4}
    outcome = {"A": 1.0, "B": 1.0, "C": 1.0, "D": 0.0}
    hit = [m for m in paths if why[m] != "clean"]
    line = pre_cutoff_lines(pd.DataFrame({"agent": ["s"] * len(hit), "market_id": hit,
                                          "probability": [stated[m] for m in hit],
                                          "outcome_yes": [outcome[m] for m in hit]}), ["agent"]).iloc[0]
    clean = [m for m in paths if why[m] == "clean"]
    headline = sum((stated[m] - outcome[m]) ** 2 for m in clean) / len(clean)
    age = model_age_days(at(6, 1).replace(minute=5), date(2025, 7, 1))
    return WorkedExample(
        "Four replayed markets and a cutoff of 2025-06-30",
        "A seat declares knowledge_cutoff = 2025-06-30 and released = 2025-07-01; its cutoff instant is "
        f"{cut:%Y-%m-%d %H:%M} UTC. A replay asks it four markets on 2025-06-01 00:05, all priced 0.50 then. "
        "Later, A resolves on 06-20; B is priced 0.99 from 06-25 on; C goes to 0.99 on 06-10 and back to 0.60 on "
        "06-20; D resolves at 07-01 00:00 exactly. It states 0.97, 0.95, 0.70 and 0.40; A, B and C resolve YES, "
        "D NO.",
        (("A: resolved 06-20, before the cutoff", why["A"]),
         ("B: last price before the cutoff 0.99, beyond [0.02, 0.98]", why["B"]),
         ("C: settled on 06-10, but its last price before the cutoff is 0.60", why["C"]),
         ("D: resolved exactly at the cutoff instant (not before it)", why["D"]),
         ("n_contaminated", f"{int(line['n_contaminated'])}"),
         ("pre_cutoff_brier: mean of (0.97 − 1)² and (0.95 − 1)²", f"{line['pre_cutoff_brier']:.4f}"),
         ("headline on the clean questions: mean of (0.70 − 1)² and (0.40 − 0)²", f"{headline:.4f}"),
         ("model_age_days at 2025-06-01 00:05 (released 07-01: after the decision)", f"{age:d}")),
        "The two answers the model could have remembered score almost perfectly; they are shown on the "
        "pre-cutoff line and left out of the ranking, which rests on C and D alone. A live round never marks "
        "anything: its questions are asked on the wall clock, after any cutoff the configuration accepts.")


__all__ = ["contamination_example"]
