"""Chart labels that a phone shows whole: the equity axis's left margin holds its longest "$" amount at the
phone's text size, a forest plot's margin holds its row labels (a label longer than the widest margin is cut with
"…"), a reliability diagram carries axis titles and keeps count labels inside the plot, and a cheap run's cost
axis does not print "$0.00" on every tick."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from arena.web.charts import CHAR_EM, PHONE_FONT, equity_chart, frontier_chart, label_room
from arena.web.score_charts import IntervalRow, interval_chart, reliability_chart

T0 = datetime(2026, 1, 4, tzinfo=timezone.utc)


def _fits(label: str, room: float) -> bool:
    return len(label) * CHAR_EM * PHONE_FONT <= room + 0.05  # text ends at `room` units from the left edge


def test_the_equity_axis_keeps_room_for_its_dollar_amounts():
    curve = [(T0 + timedelta(days=i), v) for i, v in enumerate((10_000, 9_400, 9_000, 10_600))]
    c = equity_chart("Total value", [("a", [(t, v * 1_000_000) for t, v in curve])], 10_000_000_000)
    labels = [t.label for t in c.y_ticks]
    assert labels and all(lab.startswith("$") for lab in labels)
    assert any(len(lab) >= 6 for lab in labels)  # "$9,000", "$10.5k": wider than the old fixed margin held
    assert all(_fits(lab, c.left - 6) for lab in labels), (labels, c.left)


def test_forest_labels_fit_their_margin_or_are_cut_visibly():
    rows = [IntervalRow(name, 0.01 * i, -0.02, 0.03, "cohort", name) for i, name in
            enumerate(["cohort-2026-01-04", "market (reference)", "pooled (random effects)"])]
    c = interval_chart("t", rows, rule_at=0.0, signed=True)
    assert [t.label for t in c.y_ticks] == [r.label for r in rows]
    assert all(_fits(t.label, c.left - 6) for t in c.y_ticks)
    long = interval_chart("t", [IntervalRow("x" * 60, 0.0, -0.1, 0.1, "cohort", "x")])
    assert long.y_ticks[0].label.endswith("…") and _fits(long.y_ticks[0].label, long.left - 6)
    assert label_room(["abc"]) == round(3 * CHAR_EM * PHONE_FONT + 10, 1)


def test_reliability_diagrams_have_axis_titles_and_counts_inside():
    bins = [{"mean_forecast": 0.97, "observed_freq": 1.0, "count": 12, "lo": 0.9, "hi": 1.0},
            {"mean_forecast": 0.5, "observed_freq": 0.4, "count": 3, "lo": 0.4, "hi": 0.5}]
    c = reliability_chart("agent", bins)
    assert (c.x_title, c.y_title, c.css) == ("mean stated P(YES)", "observed YES frequency", "square")
    counts = [r for r in c.rules if r.css == "count"]
    assert len(counts) == 2
    for r in counts:
        assert c.top + 10 <= r.label_y <= c.bottom and (r.anchor == "end" or r.label_x <= c.right - 16)


def test_a_cheap_runs_cost_axis_reads_distinct_amounts():
    c = frontier_chart([{"model": "a", "cost_usd": 0.0027, "brier_minus_market": 0.02, "on_frontier": True},
                        {"model": "b", "cost_usd": 0.0015, "brier_minus_market": 0.03, "on_frontier": True}])
    assert c is not None
    labels = [t.label for t in c.x_ticks]
    assert len(set(labels)) == len(labels) == 5, labels


def test_the_frontier_chart_marks_the_frontier_draws_both_intervals_and_keeps_names_as_text():
    rows = [{"model": "<b>cheap</b>", "cost_usd": 0.001, "cost_usd_lo": 0.0008, "cost_usd_hi": 0.0012,
             "brier_minus_market": -0.02, "brier_minus_market_lo": -0.04, "brier_minus_market_hi": 0.0,
             "on_frontier": True, "p_dominated": 0.0},
            {"model": "dear", "cost_usd": 0.004, "cost_usd_lo": 0.003, "cost_usd_hi": 0.005,
             "brier_minus_market": 0.01, "brier_minus_market_lo": -0.01, "brier_minus_market_hi": 0.03,
             "on_frontier": False, "p_dominated": 0.97},
            {"model": "free", "cost_usd": None, "brier_minus_market": -0.05, "on_frontier": False}]
    c = frontier_chart(rows, highlight="dear")
    assert c is not None and len(c.markers) == 2  # a model without a cost is not drawn
    cheap, dear = c.markers
    assert "frontier" in cheap.css and "frontier" not in dear.css and "this" in dear.css
    assert "P(dominated) 97%" in dear.title and "on the frontier" in cheap.title
    assert cheap.x < dear.x and cheap.y > dear.y  # cheaper: left; better (lower Brier − market): lower
    bars = [r for r in c.rules if r.css == "ci model"]
    assert len(bars) == 4  # a cost bar and a skill bar per model
    assert [r.label for r in c.rules if r.css == "count"] == ["<b>cheap</b>", "dear"]  # escaped by the template
    assert frontier_chart([rows[2]]) is None
