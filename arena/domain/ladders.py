"""Ladders: binary markets that ask one question at several thresholds ("above $100k" / "above $110k") or several
deadlines ("by March 31" / "by June 30"), found from their question texts and put in the order their YES
probabilities must follow (pure: no I/O, no clock; dates come from the texts and the markets' close times).

A **threshold ladder** is a set of binary markets of one venue whose questions are the same text but for one
number that follows a direction word: "above", "over", "more than", "at least", "reach", "hit", ">" (up), or
"below", "under", "less than", "dip to", "fall to", "<" (down); "hit (HIGH) $X" / "hit (LOW) $X" and "$X or more"
/ "$X or less" count too. Up: YES at a higher threshold implies YES at every lower one, so P(> a) ≥ P(> b) for
a < b. Down: the reverse. A number followed by a dash and another number is a bucket ("$210–215"), not a
threshold, and is left out.

A **date ladder** is a set whose questions are the same text but for a deadline "by <date>" or "before <date>":
"by March 31", "by June 30, 2026", "by end of June", "by the end of 2026", "before 2027" (= by December 31,
2026), "before April 1" (= by March 31). YES by an earlier deadline implies YES by a later one, so
P(by d1) ≤ P(by d2) for d1 < d2. A deadline without a year takes the first year that puts it no earlier than
a month before the market's close time (a market without a close time and a year-less deadline is left out).
"in March" is a window, not a deadline, and is not matched.

A question with "not" outside the matched phrase ("Will X not IPO by June 30?") reverses the order. Each ladder
keeps one market per threshold or deadline (the smallest id) and needs at least two. A market can be in one
threshold ladder and one date ladder at once ("above $100 by March" is both).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from arena.domain.market import Market, MarketKind

THRESHOLD = "threshold"
DATE = "date"
LADDER_KINDS = (THRESHOLD, DATE)


@dataclass(frozen=True)
class Ladder:
    """One ladder: `members` (market ids) in the order their P(YES) must not decrease — each member's YES implies
    the YES of every later one — with `labels` (the threshold or deadline each member states) in the same
    order. `key`: "<kind>:<venue>:<the question with the varying part replaced>"."""

    kind: str
    key: str
    members: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Rung:
    """What one question says: the ladder it would join (`key`), the value that orders it (a threshold as a
    number, a deadline as a date's ordinal), the label as written, and `rising` — True when YES gets more
    likely as the value grows (a deadline; a "below" threshold), False when less likely ("above")."""

    kind: str
    key: str
    value: float
    label: str
    rising: bool


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9,
          "t": 1e12, "tn": 1e12, "trillion": 1e12}
_NUMBER = (r"(?P<num>\$?\s?(?P<digits>\d[\d,]*(?:\.\d+)?)"
           r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn|tn|[kmbt])\b|(?P<pct>%))?)")
_UP = r"above|over|more than|greater than|higher than|at least|exceeds?|surpass(?:es)?|reach(?:es)?|hits?|>=?|≥"
_DOWN = (r"below|under|less than|fewer than|lower than|dips? (?:to|below|under)|falls? (?:to|below|under)|"
         r"drops? (?:to|below|under)|the top|<=?|≤")
_BEFORE_NUMBER = re.compile(rf"(?<![\w$])(?:(?P<down>{_DOWN})|(?P<up>{_UP}))\s*(?:\((?P<hl>high|low)\)\s*)?{_NUMBER}",
                            re.IGNORECASE)
_AFTER_NUMBER = re.compile(rf"(?<![\w$.,]){_NUMBER}\s+or\s+(?:(?P<up>more|higher|above|greater)|"
                           r"(?P<down>less|lower|below|fewer))\b", re.IGNORECASE)
_BUCKET = re.compile(r"^\s?[-–—]\s?\$?\d")
_NOT = re.compile(r"\bnot\b", re.IGNORECASE)

_DEADLINES = [  # (pattern, how to read it); tried in order, the first match wins
    (re.compile(rf"\b(?P<rel>by|before)\s+(?:the\s+)?end\s+of\s+{_MONTH}(?:,?\s+(?P<year>\d{{4}}))?\b",
                re.IGNORECASE), "month_end"),
    (re.compile(r"\b(?P<rel>by|before)\s+(?:the\s+)?end\s+of\s+(?P<year>\d{4})\b", re.IGNORECASE), "year_end"),
    (re.compile(rf"\b(?P<rel>by|before)\s+{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b"
                r"(?:,?\s+(?P<year>\d{4})\b)?", re.IGNORECASE), "day"),
    (re.compile(rf"\b(?P<rel>by|before)\s+{_MONTH}(?:\s+(?P<year>\d{{4}}))?\b(?!\s*\d)", re.IGNORECASE), "month"),
    (re.compile(r"\b(?P<rel>by|before)\s+(?P<year>\d{4})\b(?![-–,.\d])", re.IGNORECASE), "year"),
]


def _normal(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(" ?.")


def _amount(m: re.Match[str]) -> float:
    value = float(m.group("digits").replace(",", ""))
    scale = m.group("scale")
    return value * _SCALE[scale.lower()] if scale else value


def threshold_rung(question: str, venue: str = "") -> Rung | None:
    """The threshold the question states, or None (no direction word before or after a number, or a bucket)."""
    for pattern in (_BEFORE_NUMBER, _AFTER_NUMBER):
        for m in pattern.finditer(question):
            if _BUCKET.match(question[m.end("num"):]):
                continue
            hl = (m.groupdict().get("hl") or "").lower()
            down = hl == "low" if hl else m.group("down") is not None
            template = question[:m.start("num")] + "{X}" + question[m.end("num"):]
            rising = down != bool(_NOT.search(template))
            return Rung(THRESHOLD, f"{THRESHOLD}:{venue}:{_normal(template)}", _amount(m), m.group("num").strip(),
                        rising)
    return None


def _year_near(month: int, day: int, close: date | None) -> int | None:
    """The year of the first month/day on or after a month before `close` (None without a close date): a venue
    closes a deadline market at its deadline or a little after, and sometimes long before it, rarely long after."""
    if close is None:
        return None
    start = close - timedelta(days=31)
    for y in (start.year, start.year + 1):
        if date(y, month, min(day, calendar.monthrange(y, month)[1])) >= start:
            return y
    return start.year + 1


def deadline(question: str, close: date | None = None) -> tuple[date, tuple[int, int]] | None:
    """The last day YES may happen by, as the question states it ("by"/"before" a date), and the span of the
    matched phrase; None when it states none or (without a year or a close date) one that cannot be dated."""
    for pattern, form in _DEADLINES:
        m = pattern.search(question)
        if m is None:
            continue
        before = m.group("rel").lower() == "before"
        year = int(m.group("year")) if m.groupdict().get("year") else None
        if form in ("year_end", "year"):
            assert year is not None
            day = date(year, 1, 1) - timedelta(days=1) if (before and form == "year") else date(year, 12, 31)
            return day, m.span()
        month = _MONTHS[m.group("month").lower()]
        first = int(m.group("day")) if form == "day" else 1
        if not 1 <= first <= 31:
            return None
        # the day that dates a year-less deadline: the month's last for "by (end of) June", else the one named
        named = 31 if form == "month_end" or (form == "month" and not before) else first
        year = year if year is not None else _year_near(month, named, close)
        if year is None:
            return None
        last = calendar.monthrange(year, month)[1]
        if form == "day":
            if first > last:
                return None
            day = date(year, month, first) - timedelta(days=1 if before else 0)
        elif form == "month" and before:  # "before June" = by the end of May
            day = date(year, month, 1) - timedelta(days=1)
        else:  # "by June", "by end of June"
            day = date(year, month, last)
        return day, m.span()
    return None


def date_rung(question: str, venue: str = "", close: date | None = None) -> Rung | None:
    """The deadline the question states as a rung of a date ladder, or None."""
    found = deadline(question, close)
    if found is None:
        return None
    day, (start, end) = found
    template = question[:start] + "{D}" + question[end:]
    rising = not _NOT.search(template)
    return Rung(DATE, f"{DATE}:{venue}:{_normal(template)}", float(day.toordinal()), day.isoformat(), rising)


def detect_ladders(markets: Iterable[Market]) -> tuple[Ladder, ...]:
    """Every threshold and date ladder among the binary `markets` (see the module docstring), by key."""
    rungs: dict[str, list[tuple[float, str, str, bool]]] = {}
    for m in sorted(markets, key=lambda m: m.id):
        if m.kind is not MarketKind.BINARY:
            continue
        close = m.close_time.date() if m.close_time is not None else None
        for rung in (threshold_rung(m.question, m.venue), date_rung(m.question, m.venue, close)):
            if rung is not None:
                rungs.setdefault(rung.key, []).append((rung.value, m.id, rung.label, rung.rising))
    out = []
    for key in sorted(rungs):
        seen: dict[float, tuple[str, str, bool]] = {}
        for value, mid, label, rising in rungs[key]:
            seen.setdefault(value, (mid, label, rising))  # one market per value: the smallest id
        if len(seen) < 2:
            continue
        rising = next(iter(seen.values()))[2]
        order = sorted(seen, reverse=not rising)
        out.append(Ladder(key.split(":", 1)[0], key, tuple(seen[v][0] for v in order),
                          tuple(seen[v][1] for v in order)))
    return tuple(out)


def ladder_ranks(ladders: Iterable[Ladder]) -> list[tuple[str, str, str, int]]:
    """(ladder key, kind, market id, rank) for every member: P(YES) must not decrease with the rank."""
    return [(lad.key, lad.kind, mid, i) for lad in ladders for i, mid in enumerate(lad.members)]


__all__ = ["DATE", "LADDER_KINDS", "THRESHOLD", "Ladder", "Rung", "date_rung", "deadline", "detect_ladders",
           "ladder_ranks", "threshold_rung"]
