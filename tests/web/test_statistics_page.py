"""The statistics page: the full pairwise difference / BH-adjusted p-value matrix of the headline as a heat table
(every cell is the bootstrap's own number, coloured by its significance), and a reliability diagram per agent as
an inline SVG whose points carry the bins' counts — all from `services.statistics`, nothing recomputed."""

from __future__ import annotations

import html
import re

from arena.scoring.provisional import PROVISIONAL_RULE
from arena.read.statistics import cohort_statistics
from arena.web.statistics_page import statistics_context
from arena.web.env import page_path, render_page

N_BOOT = 200


def _stats(sim_arena):  # type: ignore[no-untyped-def]
    stats = cohort_statistics(sim_arena.engine, sim_arena.as_of, n_boot=N_BOOT)
    name = sorted(stats)[0]
    return stats[name], statistics_context(sim_arena.as_of, stats[name], N_BOOT)


def test_pairwise_matrix_is_the_bootstraps_numbers_with_their_significance(sim_arena):
    st, page = _stats(sim_arena)
    res = st.bootstrap["forecast_brier"]
    mx = page.matrices[0]
    assert mx.title.startswith("Headline")
    agents = list(mx.agents)
    assert sorted(agents) == sorted(res.diff.index) and len(agents) >= 4
    assert "always-0.5 (reference)" in agents and "market (reference)" in agents
    assert agents == res.table["agent"].tolist()  # best first, as the bootstrap ranks them
    n_sig = 0
    for a, cells in mx.rows:
        assert len(cells) == len(agents)
        for b, c in zip(agents, cells):
            if a == b:
                assert c.css == "self"
                continue
            assert c.diff == res.diff.at[a, b] and c.p_adjusted == res.p_adjusted.at[a, b]
            significant = res.p_adjusted.at[a, b] < res.alpha
            assert (c.css != "ns") == significant
            if significant:
                n_sig += 1
                assert c.css.startswith("sig-better" if res.diff.at[a, b] < 0 else "sig-worse")  # lower is better
    assert n_sig > 0  # the simulated cohort has clearly different forecasters

    text = render_page("statistics.html", page, page_path("statistics", st.cohort))
    body = text[text.index('id="matrix-1"'):]
    body = body[:body.index("</table>")]
    assert body.count('<td class="cell') == len(agents) ** 2
    first_row = mx.rows[0]
    shown = re.findall(r'<td class="cell [^"]*"[^>]*>([^<]*)<br>', body)
    assert shown[0] == f"{first_row[1][1].diff:+.3f}"
    assert html.escape(PROVISIONAL_RULE, quote=False) in text


def test_reliability_diagram_per_agent_with_bin_counts(sim_arena):
    st, page = _stats(sim_arena)
    rel = st.reliability[st.reliability["count"] > 0]
    assert [c.title for c in page.reliability] == sorted(st.reliability["group"].unique())
    text = render_page("statistics.html", page, page_path("statistics", st.cohort))
    for chart in page.reliability:
        bins = rel[rel["group"] == chart.title]
        counts = sorted(int(n) for n in bins["count"])
        labels = sorted(int(r.label) for r in chart.rules if r.css == "count")
        assert labels == counts and len(chart.markers) == len(bins)
        for m in chart.markers:  # points inside the plot box: observed frequency and forecast are in 0..1
            assert chart.left <= m.x <= chart.right and chart.top <= m.y <= chart.bottom
    assert text.count("<svg") == len(page.reliability) > 0


def test_interim_bss_vs_market_is_not_shown_over_a_tiny_market_brier(sim_arena):
    from arena.scoring.brier import BSS_MARKET_FLOOR
    from arena.web.statistics_page import _guard_bss

    rows = _guard_bss(({"agent": "a", "interim_market_brier": 2.5e-7, "interim_bss_vs_market": -2.59e33},
                       {"agent": "b", "interim_market_brier": BSS_MARKET_FLOOR, "interim_bss_vs_market": 0.4},
                       {"agent": "c", "interim_market_brier": None, "interim_bss_vs_market": 0.1}))
    assert [r["interim_bss_vs_market"] for r in rows] == [None, 0.4, None]
    st, page = _stats(sim_arena)
    interim = next(t for t in page.tables if t.title.startswith("Interim"))
    for r in interim.rows:  # every shown value lies in the metric's documented range
        v = r.get("interim_bss_vs_market")
        assert v is None or 1 - 1 / BSS_MARKET_FLOOR <= v <= 1


def test_anytime_valid_comparisons_vs_no_1_and_market_on_the_page(sim_arena):
    st, page = _stats(sim_arena)
    seq = st.sequences
    first = st.bootstrap["forecast_brier"].table["agent"].iloc[0]
    agents = set(st.bootstrap["forecast_brier"].table["agent"])
    # every forecaster but No. 1 against No. 1, every forecaster but the market against the market
    assert set(seq.loc[seq["versus"].str.startswith("No. 1"), "agent"]) == agents - {first}
    assert set(seq.loc[seq["versus"] == "market", "agent"]) == agents - {"market (reference)"}
    for r in seq.to_dict("records"):
        assert r["lower"] <= r["estimate"] <= r["upper"]
        excluded = r["lower"] > 0 or r["upper"] < 0
        # a sequence that excludes 0 now did so first on some date; the verdict is the side it fell on
        if excluded:
            assert r["first_date"] is not None
            assert r["verdict"] == ("better" if r["upper"] < 0 else "worse")
        if r["first_date"] is None:
            assert r["verdict"] == "not yet"
    text = render_page("statistics.html", page, page_path("statistics", st.cohort))
    section = text[text.index("Anytime-valid comparisons"):]
    section = section[: section.index("</table>")]
    assert section.count("<tr><td") == len(seq)


def test_sequences_find_a_planted_difference_and_not_a_null_one():
    import numpy as np
    import pandas as pd

    from arena.read.statistics import sequences

    rng = np.random.default_rng(3)
    n = 300
    outcome = rng.integers(0, 2, n).astype(float)
    truth = np.clip(0.5 + (outcome - 0.5) * 0.6 + rng.normal(0, 0.1, n), 0.01, 0.99)
    rows = []
    for agent, p in (("sharp", truth), ("twin", truth.copy()), ("coin", np.full(n, 0.5)),
                     ("market (reference)", np.clip(truth + rng.normal(0, 0.05, n), 0.01, 0.99))):
        for i in range(n):
            rows.append({"agent": agent, "market_id": f"m{i}", "question": f"q{i}", "brier": (p[i] - outcome[i]) ** 2})
    scored = pd.DataFrame(rows)
    when = pd.Series({f"m{i}": pd.Timestamp("2026-01-01") + pd.Timedelta(hours=6 * i) for i in range(n)})
    seq = sequences(scored, "sharp", when).set_index(["agent", "versus"])
    assert seq.loc[("coin", "No. 1 (sharp)"), "verdict"] == "worse"
    assert seq.loc[("coin", "No. 1 (sharp)"), "first_date"] is not None
    assert seq.loc[("twin", "No. 1 (sharp)"), "verdict"] == "not yet"  # identical forecasts: no difference
    assert seq.loc[("coin", "market"), "verdict"] == "worse"
    assert len(seq) == 3 + 3


def test_skill_by_horizon_and_category_tables_per_seat(sim_arena):
    """Each seat's Brier − market by horizon bucket and by category: the buckets' markets add up to the seat's
    resolved markets with a price (a market whose rounds straddle two buckets is in both), the categories' to
    exactly those, and the page shows one row per (seat, group)."""
    from arena.scoring.breakdown import HORIZON_BUCKETS

    st, page = _stats(sim_arena)
    hz, cat = st.by_horizon, st.by_category
    assert len(hz) and len(cat)
    assert set(hz["group"]) <= set(HORIZON_BUCKETS)
    for agent, rows in cat.groupby("agent"):
        assert rows["n_markets"].sum() <= hz[hz["agent"] == agent]["n_markets"].sum()
        assert rows["n_forecasts"].sum() == hz[hz["agent"] == agent]["n_forecasts"].sum()
    market = cat[cat["agent"] == "market (reference)"]
    assert (market["brier_minus_market"] == 0).all()  # the market against itself
    text = render_page("statistics.html", page, page_path("statistics", st.cohort))
    for title, table in (("Skill by horizon", hz), ("Skill by topic", cat)):
        section = text[text.index(title):]
        section = section[: section.index("</table>")]
        assert section.count("<tr><td") == len(table)
    assert "arena leaderboard --from D --until D --category C" in text and "api/leaderboard.json?from=D" in text


def test_consistency_table_shows_the_ladder_columns_for_seats_and_the_market():
    from datetime import datetime, timezone

    import pandas as pd

    from arena.read.statistics import CohortStatistics

    st = CohortStatistics("c", 20)
    st.consistency = pd.DataFrame({"agent": ["sloppy", "market"], "n_ladder_pairs": [4, 4],
                                   "ladder_violations": [3, 1], "ladder_violation_mean": [0.225, 0.0125],
                                   "reference": [False, True]})
    page = statistics_context(datetime(2026, 2, 1, tzinfo=timezone.utc), st, N_BOOT)
    table = next(t for t in page.tables if t.title == "Consistency")
    assert [r["agent"] for r in table.rows] == ["sloppy", "market"]
    assert table.rows[0]["ladder_violations"] == 3 and table.rows[1]["ladder_violation_mean"] == 0.0125
    text = render_page("statistics.html", page, page_path("statistics", "c"))
    body = text[text.index("Consistency"):]
    for needle in ("ladder pairs", "ladder violations", "mean ladder violation", "0.225"):
        assert needle in body, needle
