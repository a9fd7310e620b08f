"""The equity chart stays readable when one agent dominates: past a ratio of LOG_SCALE_RATIO between the highest
and the lowest value its y axis turns logarithmic (ticks at round steps, equal ratios equally spaced), the
chart says so, and the start line sits where the start value does; a chart without a dominant line stays linear."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from arena.web.charts import LOG_SCALE_RATIO, equity_chart

T0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
START = 10_000 * 1_000_000


def _curve(*dollars: float) -> list[tuple[datetime, int]]:
    return [(T0 + timedelta(days=i), int(d * 1_000_000)) for i, d in enumerate(dollars)]


def _ys(points: str) -> list[float]:
    return [float(p.split(",")[1]) for p in points.split()]


def test_a_dominant_curve_turns_the_axis_logarithmic():
    top = 10_000 * LOG_SCALE_RATIO * 1.5
    chart = equity_chart("Equity", [("winner", _curve(10_000, 20_000, top)), ("flat", _curve(10_000, 9_000, 8_000))],
                         START)
    assert chart.title == "Equity (log scale)"
    ticks = {t.label: t.pos for t in chart.y_ticks}
    assert {"$10k", "$20k", "$40k"} <= set(ticks)
    # equal ratios, equal steps: $10k→$20k spans as many pixels as $20k→$40k
    assert math.isclose(ticks["$10k"] - ticks["$20k"], ticks["$20k"] - ticks["$40k"], abs_tol=0.15)
    # the winner's 2nd point ($20k) lies on the $20k tick; the start line on the $10k tick
    assert math.isclose(_ys(chart.series[0].points)[1], ticks["$20k"], abs_tol=0.15)
    assert math.isclose(chart.rules[0].y1, ticks["$10k"], abs_tol=0.15)
    # on a log axis the flat agent's $1,000 fall is not squeezed: it spans at least a tenth of the plot
    flat = _ys(chart.series[1].points)
    assert flat[-1] - flat[0] > 0.1 * (chart.bottom - chart.top)


def test_no_dominant_curve_keeps_the_axis_linear():
    chart = equity_chart("Equity", [("a", _curve(10_000, 12_000, 14_000)), ("b", _curve(10_000, 9_000, 8_000))],
                         START)
    assert chart.title == "Equity"
    labels = [t.label for t in chart.y_ticks]
    steps = [b.pos - a.pos for a, b in zip(chart.y_ticks, chart.y_ticks[1:])]
    assert len(labels) >= 3 and max(steps) - min(steps) < 0.2  # evenly spaced dollars


def test_a_curve_that_reaches_zero_stays_linear():
    chart = equity_chart("Equity", [("bust", _curve(10_000, 0)), ("up", _curve(10_000, 50_000))], START)
    assert chart.title == "Equity"


def test_a_stored_time_is_read_as_utc_whether_naive_or_aware():
    # SQLite gives naive UTC times, PostgreSQL aware ones (in any zone): the same instant is the same second
    from arena.web.charts import epoch

    plus2 = timezone(timedelta(hours=2))
    for t in (T0, T0 + timedelta(microseconds=123_457), datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=timezone.utc),
              datetime(2262, 4, 11, 23, 47, 16, 854_775, tzinfo=timezone.utc)):
        want = t.timestamp()
        assert epoch(t) == want
        assert epoch(t.replace(tzinfo=None)) == want
        assert epoch(t.astimezone(plus2)) == want
