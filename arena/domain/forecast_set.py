"""The forecast set: which markets every seat of a cohort's round is asked to forecast, and why each (pure: no I/O,
no clock — the decision time and the prices are given).

Three selection rules exist; a cohort keeps the one frozen into its rules when it started (`CohortRules`):

**band-v2** (new cohorts) is band-v1 with ladders: after the complete groups (step 2), up to `ladders` threshold
or date ladders (`domain.ladders`: "above $100" / "above $110", "by March" / "by June") are taken whole while
groups and ladders together fill at most half of K — the ladder with the most members in band first, then the
most traded, then the seeded shuffle; a ladder's eligible members not already taken, at least two, at most
`max_members` of them (those in band first, then nearest the band, kept in ladder order). A universe without
ladders gets exactly band-v1's set.

**band-v1** (cohorts frozen before ladders) chooses the set for information. A question whose price is near 0 or 1
separates no two forecasters (every sensible seat says about the price, and the Brier differences are tiny), so:

1. **eligible**: binary markets open at the decision time that close within the horizon (`horizon_days` after
   it; a market without a close time is outside any horizon);
2. **complete groups first** (the consistency checks need them): up to `groups` exclusive groups of 2 to
   `max_members` members, every member eligible, taken whole while together they fill at most half of K — the
   group with the most members in band first (then the most traded, then the seeded shuffle), then the best
   two-member group (seed 003's negation pairs need P and not-P), then the others in that order;
3. **in band**: the eligible markets whose YES price at the decision time lies in the band [lo, hi] (both ends
   included), most traded first where the venue reports a 24 h volume, the rest — and equal volumes — in a
   seeded deterministic shuffle (SHA-256 of the seed and the market id; the seed names the cohort and the
   round, so each round draws afresh but every run draws the same); at most `max_per_event` members of one
   event (`group_id`) besides the complete groups;
4. **filled**: when fewer than K markets are in band, the rest is taken from the eligible markets nearest to the
   band (distance of the price to the band; no price: last), in the same order for equal distances and under
   the same per-event cap, each flagged `filled`.

The set is the group members (group by group, ids in order), then (band-v2) the ladders' members (ladder by ladder,
in ladder order), then the in-band markets in rank order, then the filled ones. It may be shorter than K when the
universe holds fewer eligible markets.

**volume-v1** (cohorts frozen before the band rule): complete groups first by 24 h volume (ties by group id),
then the top markets by 24 h volume, ties by id; no band, no horizon, no cap. `in_band` is still computed with
the band, for the headroom.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from arena.domain.ladders import detect_ladders
from arena.domain.market import Market, MarketKind

BAND_SELECTION = "band-v1"
LADDER_SELECTION = "band-v2"  # band-v1 plus whole threshold and date ladders
LEGACY_SELECTION = "volume-v1"
SELECTIONS = (LEGACY_SELECTION, BAND_SELECTION, LADDER_SELECTION)
FORECAST_SET_VERSION = LADDER_SELECTION  # what a new cohort is frozen with
DEFAULT_BAND = (Decimal("0.05"), Decimal("0.95"))
DEFAULT_MAX_PER_EVENT = 2
DEFAULT_HORIZON_DAYS = 60
FORECAST_GROUPS = 2  # at most this many complete exclusive groups in a forecast set
GROUP_MAX_MEMBERS = 5  # a group is taken whole only when it has 2..this many tradable members
FORECAST_LADDERS = 2  # band-v2: at most this many threshold or date ladders in a forecast set
PPM = 1_000_000


@dataclass(frozen=True)
class ForecastSetRules:
    """How a cohort's forecast sets are chosen. `band`: (lo, hi) of YES probability, 0 < lo < hi < 1;
    `max_per_event` ≥ 0 markets of one event besides the complete groups; `horizon_days`: only markets closing
    within this many days of the decision time (None: no horizon); `ladders`: at most this many ladders taken
    whole (band-v2 only)."""

    selection: str = FORECAST_SET_VERSION
    band: tuple[Decimal, Decimal] = DEFAULT_BAND
    max_per_event: int = DEFAULT_MAX_PER_EVENT
    horizon_days: int | None = DEFAULT_HORIZON_DAYS
    groups: int = FORECAST_GROUPS
    max_members: int = GROUP_MAX_MEMBERS
    ladders: int = FORECAST_LADDERS

    def __post_init__(self) -> None:
        if self.selection not in SELECTIONS:
            raise ValueError(f"forecast selection must be one of {', '.join(SELECTIONS)}, got {self.selection!r}")
        band_problem(self.band)
        if self.ladders < 0:
            raise ValueError(f"the forecast set's ladders must not be negative, got {self.ladders}")
        if self.max_per_event < 0:
            raise ValueError(f"forecast_max_per_event must not be negative, got {self.max_per_event}")
        if self.horizon_days is not None and self.horizon_days < 0:
            raise ValueError("the forecast horizon must not be negative")

    @property
    def band_ppm(self) -> tuple[int, int]:
        lo, hi = self.band
        return int(lo * PPM), int(hi * PPM)


def band_problem(band: Sequence[object]) -> None:
    """Raise ValueError unless `band` is two numbers lo < hi, both strictly inside (0, 1)."""
    if len(band) != 2:
        raise ValueError(f"the forecast band takes two numbers [lo, hi], got {list(band)!r}")
    lo, hi = (Decimal(str(x)) for x in band)
    if not (Decimal(0) < lo < Decimal(1) and Decimal(0) < hi < Decimal(1)):
        raise ValueError(f"the forecast band must lie inside (0, 1), got [{lo}, {hi}]")
    if not lo < hi:
        raise ValueError(f"the forecast band is inverted or empty: lo {lo} must be below hi {hi}")


@dataclass(frozen=True)
class Question:
    """One market of a round's forecast set: the YES price shown at decision time (ppm; None if it had none),
    whether that price lay in the band, and whether it was taken from outside the band to fill the set."""

    market_id: str
    price_ppm: int | None
    in_band: bool
    filled: bool = False


def in_band(price_ppm: int | None, band_ppm: tuple[int, int]) -> bool:
    """The price lies in the band, both ends included (no price: not in band)."""
    return price_ppm is not None and band_ppm[0] <= price_ppm <= band_ppm[1]


def band_distance(price_ppm: int | None, band_ppm: tuple[int, int]) -> int:
    """How far the price lies outside the band, in ppm (0 inside; no price: farther than any price)."""
    if price_ppm is None:
        return 2 * PPM
    lo, hi = band_ppm
    return max(lo - price_ppm, price_ppm - hi, 0)


def shuffle_key(seed: str, key: str) -> bytes:
    """A market's (or group's) place in the seeded deterministic shuffle."""
    return hashlib.sha256(f"{seed}\x00{key}".encode()).digest()


def exclusive_groups(markets: Mapping[str, Market], max_members: int = GROUP_MAX_MEMBERS
                     ) -> dict[str, tuple[str, ...]]:
    """The multi-outcome groups among `markets` that can go into a forecast set whole: binary markets sharing
    a non-empty `group_id` (a Polymarket neg-risk event, a simulated or replayed exclusive group), with 2 to
    `max_members` members present; group id → member ids in id order. "Complete" means every member the
    tradable universe holds: a venue member outside the universe cannot be seen here."""
    members: dict[str, list[str]] = {}
    for m in markets.values():
        if m.group_id and m.kind is MarketKind.BINARY:
            members.setdefault(m.group_id, []).append(m.id)
    return {g: tuple(sorted(ids)) for g, ids in members.items() if 2 <= len(ids) <= max_members}


def _take_groups(candidates: Mapping[str, tuple[str, ...]], ranked: Sequence[str], k: int, groups: int) -> list[str]:
    """Members of the groups taken whole: the first ranked group, the best pair, then the ranked order, each only
    while all the groups fit in half of K, at most `groups` of them."""
    fitting = [g for g in ranked if len(candidates[g]) <= k // 2]
    pairs = [g for g in fitting if len(candidates[g]) == 2]
    order = fitting[:1] + pairs[:1] + fitting[1:]  # the best group, the best pair, then the rest in order
    chosen: list[str] = []
    taken: list[str] = []
    for g in order:
        if len(taken) >= groups:
            break
        if g in taken or len(chosen) + len(candidates[g]) > k // 2:
            continue  # a smaller group further down may still fit
        chosen.extend(candidates[g])
        taken.append(g)
    return chosen


def volume_set(markets: Mapping[str, Market], k: int, groups: int = FORECAST_GROUPS,
               max_members: int = GROUP_MAX_MEMBERS) -> tuple[str, ...]:
    """The volume-v1 rule (see the module docstring): complete groups first — the most traded group (total 24 h
    volume, ties by group id), then the most traded pair — then the top binary markets by 24 h volume, ties by
    id. Without groups this is exactly the top K by 24 h volume."""
    binary = [m for m in markets.values() if m.kind is MarketKind.BINARY]
    binary.sort(key=lambda m: (-(m.volume_24h or 0.0), m.id))
    chosen: list[str] = []
    if groups > 0:
        candidates = exclusive_groups(markets, max_members)
        volume = {g: sum(markets[mid].volume_24h or 0.0 for mid in ids) for g, ids in candidates.items()}
        chosen = _take_groups(candidates, sorted(candidates, key=lambda g: (-volume[g], g)), k, groups)
    picked = set(chosen)
    chosen.extend(m.id for m in binary if m.id not in picked)
    return tuple(chosen[:k])


def _rank(m: Market, seed: str) -> tuple[int, float, bytes]:
    """Most traded first where the venue reports a 24 h volume; the rest (and equal volumes) by the shuffle."""
    v = m.volume_24h
    return (0, -v, shuffle_key(seed, m.id)) if v is not None else (1, 0.0, shuffle_key(seed, m.id))


def _take_ladders(eligible: Mapping[str, Market], price: Mapping[str, int | None], inside: Mapping[str, bool],
                  taken: set[str], room: int, rules: ForecastSetRules, seed: str) -> list[str]:
    """band-v2's ladders (see the module docstring): member ids, ladder by ladder, in ladder order, at most
    `room` of them."""
    band = rules.band_ppm
    candidates = []
    for lad in detect_ladders(eligible.values()):
        members = [mid for mid in lad.members if mid not in taken]
        if len(members) < 2:
            continue
        if len(members) > rules.max_members:
            keep = set(sorted(members, key=lambda mid: (band_distance(price[mid], band), lad.members.index(mid)))
                       [:rules.max_members])
            members = [mid for mid in members if mid in keep]
        candidates.append((lad.key, members))
    volume = {key: sum(eligible[mid].volume_24h or 0.0 for mid in ids) for key, ids in candidates}
    candidates.sort(key=lambda c: (-sum(inside[mid] for mid in c[1]), -volume[c[0]], shuffle_key(seed, c[0])))
    chosen: list[str] = []
    ladders = 0
    for _, members in candidates:
        if ladders >= rules.ladders:
            break
        if any(mid in taken for mid in members) or len(chosen) + len(members) > room:
            continue  # a member already in an earlier ladder (threshold and date at once), or too many
        chosen.extend(members)
        taken.update(members)
        ladders += 1
    return chosen


def band_set(markets: Mapping[str, Market], prices: Mapping[str, int | None], as_of: datetime, k: int,
             rules: ForecastSetRules, seed: str) -> tuple[Question, ...]:
    """The band-v1 and band-v2 rules (see the module docstring). `prices`: market id → YES price in ppm at `as_of`
    (absent or None: no price); `seed` names the cohort and the round."""
    if k <= 0:
        return ()
    band = rules.band_ppm
    limit = as_of + timedelta(days=rules.horizon_days) if rules.horizon_days is not None else None
    binary = {mid: m for mid, m in markets.items() if m.kind is MarketKind.BINARY and m.is_open_at(as_of)}

    def within(m: Market) -> bool:
        return limit is None or (m.close_time is not None and m.close_time <= limit)

    eligible = {mid: m for mid, m in binary.items() if within(m)}
    price = {mid: prices.get(mid) for mid in eligible}
    inside = {mid: in_band(p, band) for mid, p in price.items()}

    chosen: list[str] = []
    if rules.groups > 0:
        candidates = {g: ids for g, ids in exclusive_groups(binary, rules.max_members).items()
                      if all(mid in eligible for mid in ids)}
        volume = {g: sum(binary[mid].volume_24h or 0.0 for mid in ids) for g, ids in candidates.items()}
        ranked = sorted(candidates, key=lambda g: (-sum(inside[mid] for mid in candidates[g]), -volume[g],
                                                   shuffle_key(seed, g)))
        chosen = _take_groups(candidates, ranked, k, rules.groups)
    if rules.selection == LADDER_SELECTION and rules.ladders > 0:
        chosen.extend(_take_ladders(eligible, price, inside, set(chosen), k // 2 - len(chosen), rules, seed))
    grouped = set(chosen)
    questions = [Question(mid, price[mid], inside[mid]) for mid in chosen]
    per_event: dict[str, int] = {}

    def take(candidates: list[Market], filled: bool) -> None:
        for m in candidates:
            if len(questions) >= k:
                return
            if m.group_id:
                if per_event.get(m.group_id, 0) >= rules.max_per_event:
                    continue
                per_event[m.group_id] = per_event.get(m.group_id, 0) + 1
            questions.append(Question(m.id, price[m.id], inside[m.id], filled))

    rest = [m for mid, m in eligible.items() if mid not in grouped]
    take(sorted((m for m in rest if inside[m.id]), key=lambda m: _rank(m, seed)), False)
    outside = [m for m in rest if not inside[m.id]]
    take(sorted(outside, key=lambda m: (band_distance(price[m.id], band), _rank(m, seed))), True)
    return tuple(questions)


def choose(markets: Mapping[str, Market], prices: Mapping[str, int | None], as_of: datetime, k: int,
           rules: ForecastSetRules, seed: str) -> tuple[Question, ...]:
    """The round's forecast set under `rules` (see the module docstring), each question with its price and flags."""
    if rules.selection == LEGACY_SELECTION:
        band = rules.band_ppm
        return tuple(Question(mid, prices.get(mid), in_band(prices.get(mid), band))
                     for mid in volume_set(markets, k, rules.groups, rules.max_members))
    return band_set(markets, prices, as_of, k, rules, seed)


def round_seed(cohort: str, round_key: str) -> str:
    """The shuffle's seed for one round of one cohort."""
    return f"{cohort}|{round_key}"


__all__ = ["BAND_SELECTION", "DEFAULT_BAND", "DEFAULT_HORIZON_DAYS", "DEFAULT_MAX_PER_EVENT", "FORECAST_GROUPS",
           "FORECAST_LADDERS", "FORECAST_SET_VERSION", "ForecastSetRules", "GROUP_MAX_MEMBERS", "LADDER_SELECTION",
           "LEGACY_SELECTION", "Question",
           "SELECTIONS", "band_distance", "band_problem", "band_set", "choose", "exclusive_groups", "in_band",
           "round_seed", "shuffle_key", "volume_set"]
