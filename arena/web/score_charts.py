"""Charts of scores rather than of time: the reliability diagram and the interval (forest) chart of points with
their 95 % intervals. Pure layout of numbers computed elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.web.charts import CHAR_EM, PHONE_FONT, Tick, Series, Marker, Rule, Chart, label_room, marker_path
from arena.web.values import num


_RW, _RH = 360, 330


_RL, _RR, _RT, _RB = 62.0, 14.0, 12.0, 52.0  # room for the tick labels and the axis titles
_R_TITLES = ("mean stated P(YES)", "observed YES frequency")


def reliability_chart(title: str, bins: Sequence[Mapping[str, Any]]) -> Chart:
    """A reliability diagram: observed frequency of YES against the mean forecast per bin (both 0..1), the
    diagonal of perfect calibration, each bin's point labelled with its count of forecasts."""
    left, right, top, bottom = _RL, _RW - _RR, _RT, _RH - _RB
    pts = [(float(b["mean_forecast"]), float(b["observed_freq"]), int(b["count"]), b) for b in bins
           if b.get("count")
           and not (math.isnan(num(b.get("mean_forecast"))) or math.isnan(num(b.get("observed_freq"))))]
    if not pts:
        return Chart(title, _RW, _RH, left, top, right, bottom, (), (), (), (), (), True, False, "square",
                     *_R_TITLES)

    def x(v: float) -> float:
        return round(left + v * (right - left), 1)

    def y(v: float) -> float:
        return round(bottom - v * (bottom - top), 1)

    ticks = (0.0, 0.25, 0.5, 0.75, 1.0)
    x_ticks = tuple(Tick(x(v), f"{v:g}", "start" if v == 0 else "end" if v == 1 else "middle") for v in ticks)
    y_ticks = tuple(Tick(y(v), f"{v:g}") for v in ticks)
    # the diagonal's label low on the right, away from the top corner where well-calibrated points end up
    rules = [Rule(x(0), y(0), x(1), y(1), "perfect calibration", "ref", x(1) - 4, y(0.06), "end")]
    markers = []
    for f, o, n, b in pts:
        px, py = x(f), y(o)
        markers.append(Marker(px, py, marker_path(px, py, "dot"), "bin",
                              f"bin {num(b.get('lo')):.1f}–{num(b.get('hi')):.1f}: {n} forecasts, mean {f:.3f}, "
                              f"YES {o:.3f}"))
        # the count above and right of its point, kept inside the plot at the top and right edges
        lx, anchor = (px + 8, "start") if px < right - 24 else (px - 8, "end")
        ly = py - 8 if py - 8 >= top + 10 else py + 18
        rules.append(Rule(px, py, px, py, str(n), "count", lx, ly, anchor))
    line = Series(title, " ".join(f"{x(f)},{y(o)}" for f, o, _, _ in pts), "s0")
    return Chart(title, _RW, _RH, left, top, right, bottom, (line,), tuple(markers), tuple(rules), x_ticks,
                 y_ticks, False, False, "square", *_R_TITLES)


@dataclass(frozen=True)
class IntervalRow:
    """One row of an `interval_chart`: a point with its interval (NaN bounds: the point alone)."""

    label: str
    estimate: float
    lo: float
    hi: float
    css: str  # the marker's class (e.g. "cohort", "pooled", "reference")
    title: str  # the marker's tooltip


_IW, _IL, _IR, _IT, _IROW, _IB = 900, 190.0, 24.0, 30.0, 30.0, 34.0
_IL_MAX = 420.0  # a label longer than this margin holds is cut with "…" (the marker's tooltip has it whole)


def _fit(label: str, room: float) -> str:
    n = int((room - 10) / (CHAR_EM * PHONE_FONT) + 0.01)  # label_room rounds to 0.1 unit
    return label if len(label) <= n else label[:max(n - 1, 1)] + "…"


def interval_chart(title: str, rows: Sequence[IntervalRow], *, rule_at: float | None = None, rule_label: str = "",
                   signed: bool = False) -> Chart:
    """Points with their intervals, one row each top to bottom (a forest plot, or a board's scores with their
    95 % intervals), an optional vertical reference line (e.g. at 0), x ticks on a round step."""
    rows = [r for r in rows if math.isfinite(num(r.estimate))]
    height = int(_IT + _IROW * max(len(rows), 1) + _IB)
    # every label whole at a phone's text size ("cohort-2026-01-04", "market (reference)"), up to _IL_MAX
    left = min(max(_IL, label_room(r.label for r in rows)), _IL_MAX)
    right, top, bottom = _IW - _IR, _IT, height - _IB
    if not rows:
        return Chart(title, _IW, height, left, top, right, bottom, (), (), (), (), (), True, False)
    values = [v for r in rows for v in (r.estimate, r.lo, r.hi) if math.isfinite(num(v))]
    values += [rule_at] if rule_at is not None else []
    x0, x1 = min(values), max(values)
    pad = max((x1 - x0) * 0.08, 0.005)
    x0, x1 = x0 - pad, x1 + pad

    def x(v: float) -> float:
        return round(left + (v - x0) / (x1 - x0) * (right - left), 1)

    rules, markers, y_ticks = [], [], []
    if rule_at is not None:
        rules.append(Rule(x(rule_at), top, x(rule_at), bottom, rule_label, "ref", x(rule_at) + 4, top - 8, "start"))
    for i, r in enumerate(rows):
        yy = round(top + _IROW * (i + 0.5), 1)
        y_ticks.append(Tick(yy, _fit(r.label, left)))
        if math.isfinite(num(r.lo)) and math.isfinite(num(r.hi)):
            rules.append(Rule(x(r.lo), yy, x(r.hi), yy, "", f"ci {r.css}", 0, 0, "start"))
        markers.append(Marker(x(r.estimate), yy, marker_path(x(r.estimate), yy, "dot"), r.css, r.title))
    raw = (x1 - x0) / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(k * mag for k in (1, 2, 5, 10) if k * mag >= raw)
    x_ticks, v = [], math.ceil(x0 / step) * step
    while v <= x1 + 1e-12:
        label = ("0" if abs(v) < 1e-12 else f"{v:+.2f}") if signed else f"{v:.2f}"
        x_ticks.append(Tick(x(v), label))
        v += step
    return Chart(title, _IW, height, left, top, right, bottom, (), tuple(markers), tuple(rules), tuple(x_ticks),
                 tuple(y_ticks), False, False)
