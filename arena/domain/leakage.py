"""The leakage audit: which forecast-set questions of a cohort's round had their answer given away at the round's
own decision time (pure: no I/O, no clock — every time is given). Imports nothing from the store or the venues.

A question (a market asked in a round) is *leaked* when, at the round's decision time T, one of three rules holds —
checked in this order, the first that holds names the flag:

1. ``sibling_resolved_yes``: the market belongs to an exclusive group (``Market.group_id``: a Polymarket
   neg-risk event, a simulated group, a replay ``group_id``) and another member of that group had
   resolved YES by T. Exactly one member of an exclusive group wins, so every other member's answer is NO.
   Example: "Will Alice win?" and "Will Bob win?" share a group; Bob's market resolved YES on Monday; Alice's
   question asked on Tuesday is flagged, ``other_market_id`` = Bob's market.
2. ``text_of_resolved_market``: the question's normalised text (below), of at least ``MIN_WORDS`` words,
   appears — as whole words — in the question of another market that was listed by T and had resolved (YES, NO
   or a probability; a void says nothing) by T. Example: Manifold's "Will it snow in Paris on 1 Jan 2026?"
   resolved; Polymarket's "Will it snow in Paris on 1 Jan 2026" asked after it is flagged.
3. ``duplicate_question``: an earlier member of the same round's set (by its place in the set) has the same
   normalised text. The first stays; every later copy is flagged with ``other_market_id`` = the first. Two
   copies of one question would count its outcome twice.

"Resolved by T" reads the resolutions as the arena recorded them: the latest version of a market's resolution
recorded at or before T (a re-resolution recorded after T does not count; one recorded by T that un-resolved it
does). So a round's flags depend only on facts recorded by its decision time and are fixed once it is decided.

Normalised text: Unicode NFKC, case-folded, every run of characters that are not letters or digits made one
space, trimmed ("Will  X win?" and "will x win" are the same).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

SIBLING_RESOLVED_YES = "sibling_resolved_yes"
TEXT_OF_RESOLVED_MARKET = "text_of_resolved_market"
DUPLICATE_QUESTION = "duplicate_question"
REASONS = (SIBLING_RESOLVED_YES, TEXT_OF_RESOLVED_MARKET, DUPLICATE_QUESTION)
MIN_WORDS = 4  # a shorter question ("Yes or no?") would be found in too many unrelated texts
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise(text: str) -> str:
    """The text as the audit compares it: NFKC, case-folded, non-alphanumeric runs made one space, trimmed."""
    return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text or "").casefold()).strip()


@dataclass(frozen=True)
class Asked:
    """One question of a stored forecast set: ``market_id`` asked in ``round`` of ``cohort`` at ``as_of`` (the
    round's decision time), at ``position`` in the set."""

    cohort: object
    round: str
    market_id: str
    as_of: datetime
    position: int = 0


@dataclass(frozen=True)
class MarketText:
    """What the audit reads of a market: its question, exclusive group ("" = none) and when it was listed."""

    market_id: str
    question: str
    group_id: str = ""
    listed_at: datetime | None = None


@dataclass(frozen=True)
class ResolutionFact:
    """One recorded resolution version: ``kind`` as stored ("winner", "probabilistic", "void", "unresolved"),
    ``yes_ppm`` what a YES share pays in ppm (None when it pays nothing defined), recorded at ``recorded_at``."""

    market_id: str
    version: int
    recorded_at: datetime
    kind: str
    yes_ppm: int | None = None

    @property
    def resolved(self) -> bool:
        return self.kind in ("winner", "probabilistic")

    @property
    def resolved_yes(self) -> bool:
        return self.kind == "winner" and self.yes_ppm == 1_000_000


@dataclass(frozen=True)
class Leak:
    """A flagged question: ``market_id`` of ``round`` (of ``cohort``), why (one of ``REASONS``) and the market
    that gave it away (the resolved sibling, the resolved market holding its text, or the first copy)."""

    cohort: object
    round: str
    market_id: str
    reason: str
    other_market_id: str

    def to_json(self) -> dict[str, str]:
        return {"round": self.round, "market_id": self.market_id, "reason": self.reason,
                "other_market_id": self.other_market_id}


class _Resolutions:
    """Each market's resolution versions, to ask which one stood at a time."""

    def __init__(self, facts: Iterable[ResolutionFact]) -> None:
        self._by: dict[str, list[ResolutionFact]] = {}
        for f in facts:
            self._by.setdefault(f.market_id, []).append(f)
        for versions in self._by.values():
            versions.sort(key=lambda f: (f.recorded_at, f.version))

    def at(self, market_id: str, t: datetime) -> ResolutionFact | None:
        """The latest version (the highest number) of those recorded at or before ``t`` (None: none yet)."""
        latest = None
        for f in self._by.get(market_id, ()):
            if f.recorded_at > t:
                break
            if latest is None or f.version > latest.version:
                latest = f
        return latest

    def ever_resolved(self) -> list[str]:
        return [m for m, fs in self._by.items() if any(f.resolved for f in fs)]


def find_leaks(asked: Sequence[Asked], markets: Mapping[str, MarketText],
               resolutions: Iterable[ResolutionFact]) -> list[Leak]:
    """Every flagged question of ``asked`` (module docstring), one flag per question, in the order of ``asked``
    sorted by cohort, round and position. ``markets`` must hold the asked markets, their groups' other members
    and the markets whose resolutions may give a question away; a market it lacks is not judged."""
    res = _Resolutions(resolutions)
    members: dict[str, list[str]] = {}
    for m in markets.values():
        if m.group_id:
            members.setdefault(m.group_id, []).append(m.market_id)
    texts = {mid: normalise(m.question) for mid, m in markets.items()}
    # rule 2's candidates: markets that resolved at some time, found by their words (each question looks only at
    # the markets holding its rarest word)
    resolved = [mid for mid in res.ever_resolved() if mid in markets]
    index: dict[str, set[str]] = {}
    for mid in resolved:
        for word in set(texts[mid].split()):
            index.setdefault(word, set()).add(mid)
    out: list[Leak] = []
    rounds: dict[tuple[object, str], list[Asked]] = {}
    for a in asked:
        rounds.setdefault((a.cohort, a.round), []).append(a)
    for key in sorted(rounds, key=lambda k: (str(k[0]), k[1])):
        first_of: dict[str, str] = {}
        for a in sorted(rounds[key], key=lambda a: (a.position, a.market_id)):
            m = markets.get(a.market_id)
            if m is None:
                continue
            other = _sibling_yes(a, m, members, res) or ""
            reason = SIBLING_RESOLVED_YES if other else ""
            if not reason:
                other = _resolved_text(a, texts[a.market_id], markets, texts, index, res) or ""
                reason = TEXT_OF_RESOLVED_MARKET if other else ""
            text = texts[a.market_id]
            if not reason and text and text in first_of:
                reason, other = DUPLICATE_QUESTION, first_of[text]
            if text:
                first_of.setdefault(text, a.market_id)
            if reason:
                out.append(Leak(a.cohort, a.round, a.market_id, reason, other))
    return out


def _sibling_yes(a: Asked, m: MarketText, members: Mapping[str, list[str]], res: _Resolutions) -> str | None:
    if not m.group_id:
        return None
    for sib in sorted(members.get(m.group_id, ())):
        if sib == m.market_id:
            continue
        fact = res.at(sib, a.as_of)
        if fact is not None and fact.resolved_yes:
            return sib
    return None


def _resolved_text(a: Asked, text: str, markets: Mapping[str, MarketText], texts: Mapping[str, str],
                   index: Mapping[str, set[str]], res: _Resolutions) -> str | None:
    words = text.split()
    if len(words) < MIN_WORDS:
        return None
    postings = [index.get(w, set()) for w in set(words)]
    candidates = min(postings, key=len)
    needle = f" {text} "
    for other in sorted(candidates):
        if other == a.market_id or needle not in f" {texts[other]} ":
            continue
        listed = markets[other].listed_at
        if listed is not None and listed > a.as_of:
            continue
        fact = res.at(other, a.as_of)
        if fact is not None and fact.resolved:
            return other
    return None


__all__ = [
    "DUPLICATE_QUESTION",
    "MIN_WORDS",
    "REASONS",
    "SIBLING_RESOLVED_YES",
    "TEXT_OF_RESOLVED_MARKET",
    "Asked",
    "Leak",
    "MarketText",
    "ResolutionFact",
    "find_leaks",
    "normalise",
]
