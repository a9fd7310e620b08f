"""Inline SVG charts, fully laid out in Python (the template only draws them): the `Chart` and its parts, the
plot frame that maps time and value into it, and the charts over time (equity, prices) plus the cost–skill frontier.
Pure layout: no database, no metric.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from arena.money import MICRO
from arena.web.env import money, usd as _usd
from arena.web.values import num


CHART_MAX_POINTS = 400  # longer series are thinned (first, last and evenly spaced points kept)


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str
    anchor: str = "middle"  # SVG text-anchor: the end ticks hug the plot so they are never clipped


@dataclass(frozen=True)
class Series:
    label: str
    points: str  # SVG polyline points "x,y x,y …", already in the chart's coordinates
    css: str


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    path: str  # SVG path data of the marker shape, centred on (x, y)
    css: str
    title: str


@dataclass(frozen=True)
class Rule:
    """A straight reference line across (horizontal: y) or down (vertical: x) the plot, with a label."""

    x1: float
    y1: float
    x2: float
    y2: float
    label: str
    css: str
    label_x: float
    label_y: float
    anchor: str  # SVG text-anchor of the label


@dataclass(frozen=True)
class Chart:
    """An inline SVG chart, fully laid out: the template only draws what is here."""

    title: str
    width: int
    height: int
    left: float
    top: float
    right: float
    bottom: float
    series: tuple[Series, ...]
    markers: tuple[Marker, ...]
    rules: tuple[Rule, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    empty: bool
    legend: bool
    css: str = "wide"  # "wide": a 900-unit chart, shrunk on a phone (its text set larger there); "square": small
    x_title: str = ""  # axis titles, drawn under the x ticks and along the y axis when given
    y_title: str = ""

    @property
    def y_label_x(self) -> float:
        return self.left - 6

    @property
    def x_title_y(self) -> float:
        return self.bottom + 36

    @property
    def y_title_at(self) -> tuple[float, float]:
        """Where the rotated y-axis title is centred: near the chart's left edge, halfway down the plot."""
        return 12.0, round((self.top + self.bottom) / 2, 1)

    @property
    def x_label_y(self) -> float:
        return self.bottom + 18


_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=timezone.utc)


def epoch(t: datetime) -> float:
    """Seconds since the epoch of a stored time (a naive one is UTC, as SQLite returns it): the difference from the
    epoch, which is what `timestamp()` computes for an aware time — without first making a naive one aware (a
    render converts every chart point, so the extra object per point adds up)."""
    return (t - (_EPOCH if t.tzinfo is None else _EPOCH_UTC)).total_seconds()


_W, _H = 900, 300


_PAD_L, _PAD_R, _PAD_T, _PAD_B = 76.0, 12.0, 14.0, 30.0

# A wide chart's text on a phone: the stylesheet sets ticks and labels to PHONE_FONT user units there (the chart is
# shrunk about 2.4×); a character of it takes at most CHAR_EM of that, so a margin of `label_room` holds a label.
PHONE_FONT, CHAR_EM = 22.0, 0.62


def label_room(labels: Iterable[str], font: float = PHONE_FONT) -> float:
    """User units a column of right-aligned labels needs at `font` (plus the gap to the axis)."""
    return round(max((len(x) for x in labels), default=0) * CHAR_EM * font + 10, 1)


def _nice_step(span: float, target: int = 4) -> float:
    raw = span / max(target, 1)
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= CHART_MAX_POINTS:
        return points
    step = (len(points) - 1) / (CHART_MAX_POINTS - 1)
    return [points[round(i * step)] for i in range(CHART_MAX_POINTS)]


class _Frame:
    """Maps (epoch seconds, value) into the plot box of a chart."""

    def __init__(self, t0: float, t1: float, y0: float, y1: float, left: float = _PAD_L) -> None:
        if t1 <= t0:
            t0, t1 = t0 - 43_200, t1 + 43_200  # one instant: half a day either side
        if y1 <= y0:
            pad = abs(y0) * 0.05 or 1.0
            y0, y1 = y0 - pad, y1 + pad
        self.t0, self.t1, self.y0, self.y1 = t0, t1, y0, y1
        self.left, self.right = left, _W - _PAD_R
        self.top, self.bottom = _PAD_T, _H - _PAD_B

    def x(self, t: float) -> float:
        return self.left + (t - self.t0) / (self.t1 - self.t0) * (self.right - self.left)

    def y(self, v: float) -> float:
        return self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.bottom - self.top)

    def points(self, pts: Iterable[tuple[float, float]]) -> str:
        ax = (self.right - self.left) / (self.t1 - self.t0)
        bx = self.left - self.t0 * ax
        ay = -(self.bottom - self.top) / (self.y1 - self.y0)
        by = self.bottom - self.y0 * ay
        return " ".join([f"{ax * t + bx:.1f},{ay * v + by:.1f}" for t, v in pts])

    def x_ticks(self) -> tuple[Tick, ...]:
        span = self.t1 - self.t0
        n = 5
        fmt = "%Y-%m-%d" if span > 300 * 86_400 else "%b %d"
        out = []
        for i in range(n):
            t = self.t0 + span * i / (n - 1)
            anchor = "start" if i == 0 else "end" if i == n - 1 else "middle"
            out.append(Tick(round(self.x(t), 1), datetime.fromtimestamp(t, tz=timezone.utc).strftime(fmt), anchor))
        return tuple(out)

    def y_ticks(self, label: Callable[[float], str]) -> tuple[Tick, ...]:
        step = _nice_step(self.y1 - self.y0)
        v = math.ceil(self.y0 / step) * step
        out = []
        while v <= self.y1 + step * 1e-9:
            out.append(Tick(round(self.y(v), 1), label(v)))
            v += step
        return tuple(out)


def _empty_chart(title: str) -> Chart:
    return Chart(title, _W, _H, _PAD_L, _PAD_T, _W - _PAD_R, _H - _PAD_B, (), (), (), (), (), True, False)


def _dollars_label(v: float) -> str:
    a = abs(v)
    sign = "-" if v < 0 else ""
    if a >= 1_000_000:
        return f"{sign}${a / 1_000_000:.3g}M"
    if a >= 10_000:
        return f"{sign}${a / 1_000:.3g}k"
    return f"{sign}${a:,.0f}"


LOG_SCALE_RATIO = 3.0  # an equity chart whose highest value is this many times its lowest is drawn on a log scale


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Round values between two log10 values: finer steps in a short range, each decade's 1 in a long one."""
    steps = (1, 1.5, 2, 3, 4, 5, 7) if hi - lo <= 1.2 else (1, 2, 5) if hi - lo <= 2.5 else (1,)
    out = []
    for e in range(math.floor(lo), math.ceil(hi) + 1):
        for m in steps:
            v = math.log10(m) + e
            if lo <= v <= hi:
                out.append(v)
    return out


def equity_chart(title: str, curves: Sequence[tuple[str, Sequence[tuple[datetime, int]]]],
                 reference_micros: int | None) -> Chart:
    """Total value (micro-USD) over time, one line per curve, with a dashed line at the starting cash. When one
    curve dominates (highest value over lowest at least LOG_SCALE_RATIO, all positive) the y axis is logarithmic,
    so the others are not flattened against the start line; the title then says so."""
    pts = [[(epoch(t), v / MICRO) for t, v in curve] for _, curve in curves]
    allpts = [p for c in pts for p in c]
    if not allpts:
        return _empty_chart(title)
    ys = [v for _, v in allpts] + ([reference_micros / MICRO] if reference_micros is not None else [])
    log = min(ys) > 0 and max(ys) >= LOG_SCALE_RATIO * min(ys)
    f = math.log10 if log else (lambda v: v)
    if log:
        title = f"{title} (log scale)"
        pts = [[(t, f(v)) for t, v in c] for c in pts]
        ys = [f(v) for v in ys]
    frame = _Frame(min(t for t, _ in allpts), max(t for t, _ in allpts), min(ys), max(ys))
    lo, hi = frame.y0, frame.y1
    pad = (hi - lo) * 0.05
    frame = _Frame(frame.t0, frame.t1, lo - pad, hi + pad)
    y_ticks = (tuple(Tick(round(frame.y(v), 1), _dollars_label(10 ** v)) for v in _log_ticks(frame.y0, frame.y1))
               if log else frame.y_ticks(_dollars_label))
    left = max(_PAD_L, label_room(t.label for t in y_ticks))  # "$9,500" whole on a phone, its "$" not clipped
    frame = _Frame(frame.t0, frame.t1, frame.y0, frame.y1, left)
    series = tuple(Series(label, frame.points(_thin(p)), f"s{i % 10}")
                   for i, ((label, _), p) in enumerate(zip(curves, pts)) if p)
    rules: tuple[Rule, ...] = ()
    if reference_micros is not None:
        y = round(frame.y(f(reference_micros / MICRO)), 1)
        rules = (Rule(frame.left, y, frame.right, y, f"start {money(reference_micros)}", "ref", frame.right - 4,
                      y - 4, "end"),)
    return Chart(title, _W, _H, frame.left, frame.top, frame.right, frame.bottom, series, (), rules,
                 frame.x_ticks(), y_ticks, False, len(series) > 1)


def marker_path(x: float, y: float, shape: str) -> str:
    r = 7.0
    if shape == "up":
        return f"M{x:.1f},{y - r:.1f}L{x + r:.1f},{y + r * 0.8:.1f}L{x - r:.1f},{y + r * 0.8:.1f}Z"
    if shape == "down":
        return f"M{x:.1f},{y + r:.1f}L{x + r:.1f},{y - r * 0.8:.1f}L{x - r:.1f},{y - r * 0.8:.1f}Z"
    return f"M{x - r:.1f},{y:.1f}L{x:.1f},{y - r:.1f}L{x + r:.1f},{y:.1f}L{x:.1f},{y + r:.1f}Z"


def price_chart(title: str, series: Sequence[tuple[str, Sequence[tuple[datetime, int]]]],
                trades: Sequence[tuple[datetime, int, str, str, str]],
                events: Sequence[tuple[datetime, str]]) -> Chart:
    """Prices (ppm, on a fixed 0..1 axis) over time, one line per outcome; trades as markers
    (at, price ppm on the plotted line, shape up/down, title, side css); events (a resolution) as vertical
    lines."""
    pts = [[(epoch(t), p / MICRO) for t, p in s] for _, s in series]
    times = [t for s in pts for t, _ in s] + [epoch(t) for t, *_ in trades]
    times += [epoch(t) for t, _ in events]
    if not times:
        return _empty_chart(title)
    frame = _Frame(min(times), max(times), 0.0, 1.0)
    lines = tuple(Series(label, frame.points(_thin(p)), f"s{i % 10}")
                  for i, ((label, _), p) in enumerate(zip(series, pts)) if p)
    markers = []
    for at, ppm, shape, tip, side in trades:
        x, y = round(frame.x(epoch(at)), 1), round(frame.y(ppm / MICRO), 1)
        markers.append(Marker(x, y, marker_path(x, y, shape), f"{'buy' if shape == 'up' else 'sell'} {side}", tip))
    rules = []
    for at, label in events:
        x = round(frame.x(epoch(at)), 1)
        rules.append(Rule(x, frame.top, x, frame.bottom, label, "event", x - 3, frame.top + 10, "end"))
    return Chart(title, _W, _H, frame.left, frame.top, frame.right, frame.bottom, lines, tuple(markers),
                 tuple(rules), frame.x_ticks(), frame.y_ticks(lambda v: f"{v:.2f}"), False, len(lines) > 1)


def frontier_chart(rows: Sequence[Mapping[str, Any]], highlight: str | None = None) -> Chart | None:
    """The cost–skill frontier (`scoring.frontier` rows): per model with a reported cost, a marker at (USD per
    resolved forecast, Brier − market) with both 95 % intervals as bars, the Pareto frontier of the point estimates
    as a line, a rule at 0 (the market), and the model's name beside it; `highlight`: the model drawn apart (its
    own page). None when no model has a cost."""
    pts = [r for r in rows if math.isfinite(num(r.get("cost_usd"))) and math.isfinite(num(r.get("brier_minus_market")))]
    if not pts:
        return None

    def finite(*keys: str) -> list[float]:
        return [num(r.get(k)) for r in pts for k in keys if math.isfinite(num(r.get(k)))]

    x1 = max(finite("cost_usd", "cost_usd_hi")) * 1.1 or 1.0
    ys = finite("brier_minus_market", "brier_minus_market_lo", "brier_minus_market_hi") + [0.0]
    pad = max(0.01, (max(ys) - min(ys)) * 0.08)
    y0, y1 = min(ys) - pad, max(ys) + pad
    y_labels = [f"{y0 + (y1 - y0) * k / 4:+.3f}" for k in range(5)]
    # the y labels whole on a phone, with the rotated axis title left of them
    left, right, top, bottom = (max(_PAD_L, label_room(y_labels) + 2 * PHONE_FONT), _W - _PAD_R - 140, _PAD_T + 6,
                                _H - _PAD_B - 16)

    def x(v: float) -> float:
        return round(left + v / x1 * (right - left), 1)

    def y(v: float) -> float:
        return round(bottom - (v - y0) / (y1 - y0) * (bottom - top), 1)

    def iv(lo: Any, hi: Any, fmt: Callable[[float], str]) -> str:
        return f" [{fmt(num(lo))}, {fmt(num(hi))}]" if math.isfinite(num(lo)) and math.isfinite(num(hi)) else ""

    rules = [Rule(left, y(0.0), right, y(0.0), "0 = the market", "", right - 4, y(0.0) - 5, "end")]
    markers, labels = [], []
    for r in pts:
        name, c, s = str(r["model"]), num(r["cost_usd"]), num(r["brier_minus_market"])
        css = "model" + (" frontier" if r.get("on_frontier") else "") + (" this" if name == highlight else "")
        for lo, hi, horizontal in ((r.get("cost_usd_lo"), r.get("cost_usd_hi"), True),
                                   (r.get("brier_minus_market_lo"), r.get("brier_minus_market_hi"), False)):
            if math.isfinite(num(lo)) and math.isfinite(num(hi)):
                rules.append(Rule(x(num(lo)), y(s), x(num(hi)), y(s), "", "ci model", 0.0, 0.0, "start") if horizontal
                             else Rule(x(c), y(num(lo)), x(c), y(num(hi)), "", "ci model", 0.0, 0.0, "start"))
        p = num(r.get("p_dominated"))
        title = (f"{name}: {_usd(c)}{iv(r.get('cost_usd_lo'), r.get('cost_usd_hi'), _usd)} per resolved forecast, "
                 f"Brier − market {s:+.3f}{iv(r.get('brier_minus_market_lo'), r.get('brier_minus_market_hi'), lambda v: f'{v:+.3f}')}"
                 + (f", P(dominated) {p:.0%}" if math.isfinite(p) else "")
                 + (", on the frontier" if r.get("on_frontier") else ""))
        markers.append(Marker(x(c), y(s), marker_path(x(c), y(s), "diamond" if r.get("on_frontier") else "dot"),
                              css, title))
        labels.append(Rule(x(c), y(s), x(c), y(s), name, "count", x(c) + 9, y(s) - 6, "start"))
    front = sorted(((num(r["cost_usd"]), num(r["brier_minus_market"])) for r in pts if r.get("on_frontier")))
    series = (Series("the frontier: no other model is both cheaper and better",
                     " ".join(f"{x(c)},{y(s)}" for c, s in front), "frontier"),) if len(front) > 1 else ()
    x_ticks = tuple(Tick(x(x1 * k / 4), _usd(x1 * k / 4), "start" if k == 0 else "middle") for k in range(5))
    y_ticks = tuple(Tick(y(y0 + (y1 - y0) * k / 4), y_labels[k]) for k in range(5))
    return Chart("Cost–skill frontier: USD per resolved forecast against Brier − market (lower is better on both)",
                 _W, _H, left, top, right, bottom, series, tuple(markers), tuple(rules + labels), x_ticks, y_ticks,
                 False, False, x_title="USD per resolved forecast", y_title="Brier − market")
