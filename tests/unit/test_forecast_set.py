"""The forecast-set rules: volume-v1, the top K binary markets by 24 h volume, plus complete exclusive groups when the
universe holds some (the best group, the best pair, never more than half of K), deterministic; and band-v1, which
new cohorts are frozen with: in band, within the horizon, capped per event, filled from the nearest."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from arena.domain.forecast_set import (BAND_SELECTION, LEGACY_SELECTION, ForecastSetRules, band_set, choose,
                                      round_seed)
from arena.domain.market import Market, MarketKind
from arena.usecases.decide import exclusive_groups, forecast_set


def m(mid: str, volume: float, group: str = "", kind: MarketKind = MarketKind.BINARY) -> Market:
    return Market(id=mid, venue="t", question=mid, kind=kind, volume_24h=volume, group_id=group,
                  outcomes=("YES", "NO") if kind is MarketKind.BINARY else ("a", "b"))


def universe(*markets: Market) -> dict[str, Market]:
    return {x.id: x for x in markets}


SINGLES = [m(f"s{i:02d}", 100.0 - i) for i in range(20)]


def test_without_groups_it_is_the_top_k_by_volume_ties_by_id():
    u = universe(*SINGLES, m("tie-b", 50.0), m("tie-a", 50.0), m("mc", 1e9, kind=MarketKind.MULTI))
    assert forecast_set(u, 5) == ("s00", "s01", "s02", "s03", "s04")
    assert forecast_set(u, 60)[-3:] == ("s19", "tie-a", "tie-b")
    assert "mc" not in forecast_set(u, 60)  # binary markets only
    assert forecast_set(u, 5) == forecast_set(dict(reversed(list(u.items()))), 5)  # order of the mapping is moot


def test_complete_groups_come_first_best_group_then_best_pair():
    big = [m(f"big-{j}", 1.0, "g:big") for j in range(3)]  # most traded group: 3 × 1.0
    pair = [m(f"pair-{j}", 0.5, "g:pair") for j in range(2)]  # the only two-member group
    other = [m(f"oth-{j}", 0.9, "g:other") for j in range(3)]  # 2.7: second by volume, but the pair goes first
    u = universe(*SINGLES, *big, *pair, *other)
    fs = forecast_set(u, 10)
    assert fs[:5] == ("big-0", "big-1", "big-2", "pair-0", "pair-1")
    assert fs[5:] == ("s00", "s01", "s02", "s03", "s04")  # the other half by volume
    assert len(fs) == 10 and len(set(fs)) == 10
    # a third group slot is filled by volume again, while it fits in half of K
    assert forecast_set(u, 20, groups=3)[:8] == (*(x.id for x in big), "pair-0", "pair-1", *(x.id for x in other))


def test_groups_never_take_more_than_half_of_k_and_big_groups_are_skipped():
    huge = [m(f"huge-{j}", 10.0, "g:huge") for j in range(6)]  # more members than GROUP_MAX_MEMBERS
    four = [m(f"four-{j}", 2.0, "g:four") for j in range(4)]
    pair = [m(f"pair-{j}", 0.1, "g:pair") for j in range(2)]
    lone = m("lone", 0.0, "g:lone")  # a group of one member is no group
    u = universe(*SINGLES, *huge, *four, *pair, lone)
    assert set(exclusive_groups(u)) == {"g:four", "g:pair"}
    assert forecast_set(u, 6)[:2] == ("pair-0", "pair-1")  # four members do not fit in 3 slots; the pair does
    assert forecast_set(u, 3) == ("s00", "s01", "s02")  # no group fits in 1 slot: volume only
    assert forecast_set(u, 27)[6:] == tuple(x.id for x in SINGLES) + ("huge-0",)  # a partial group only by volume
    assert forecast_set(u, 12)[:6] == ("four-0", "four-1", "four-2", "four-3", "pair-0", "pair-1")
    ungrouped = universe(*(m(x.id, x.volume_24h or 0.0) for x in u.values()))
    assert forecast_set(u, 12, groups=0) == forecast_set(ungrouped, 12)  # groups=0: the plain top K


# -- band-v1: the rule new cohorts are frozen with (issue 26 item 5) -------------------------------------------------

AT = datetime(2026, 1, 4, tzinfo=timezone.utc)


def bm(mid: str, volume: float | None = None, group: str = "", days: int = 10) -> Market:
    return Market(id=mid, venue="t", question=mid, volume_24h=volume, group_id=group,
                  close_time=AT + timedelta(days=days))


def ids(questions) -> list[str]:  # type: ignore[no-untyped-def]
    return [q.market_id for q in questions]


def test_band_rule_takes_in_band_markets_most_traded_first_within_the_horizon():
    u = universe(bm("a", 5.0), bm("b", 50.0), bm("sure", 1e6), bm("late", 1e5, days=90), bm("c", 20.0))
    prices = {"a": 400_000, "b": 50_000, "sure": 990_000, "late": 500_000, "c": 950_000}
    qs = band_set(u, prices, AT, 3, ForecastSetRules(horizon_days=60), "s")
    # both ends of [0.05, 0.95] are in band; "sure" (0.99) is not needed; "late" closes after the horizon
    assert ids(qs) == ["b", "c", "a"] and all(q.in_band and not q.filled for q in qs)


def test_too_few_in_band_are_filled_from_the_nearest_and_flagged():
    u = universe(bm("in", 1.0), bm("near", 1.0), bm("far", 1e9), bm("none", 1e9))
    prices = {"in": 500_000, "near": 970_000, "far": 1_000, "none": None}
    qs = band_set(u, prices, AT, 4, ForecastSetRules(), "s")
    assert ids(qs) == ["in", "near", "far", "none"]  # by distance to the band; no price last
    assert [(q.in_band, q.filled) for q in qs] == [(True, False), (False, True), (False, True), (False, True)]


def test_at_most_the_cap_of_one_events_members_besides_complete_groups():
    # an event of six members is too big to be a complete group: at most max_per_event of it
    event = [bm(f"e{i}", 100.0 - i, group="E") for i in range(6)]
    u = universe(*event, bm("x", 1.0), bm("y", 0.5))
    prices = {x: 500_000 for x in u}
    qs = band_set(u, prices, AT, 5, ForecastSetRules(max_per_event=2), "s")
    assert ids(qs) == ["e0", "e1", "x", "y"]  # the set stays short rather than break the cap
    assert ids(band_set(u, prices, AT, 5, ForecastSetRules(max_per_event=0), "s")) == ["x", "y"]


def test_without_volume_a_seeded_shuffle_orders_the_set_not_the_id():
    u = universe(*(bm(f"m{i:02d}") for i in range(40)))
    prices = {x: 500_000 for x in u}
    rules = ForecastSetRules()
    one = ids(band_set(u, prices, AT, 10, rules, round_seed("cohort-a", "w1")))
    assert one == ids(band_set(dict(reversed(list(u.items()))), prices, AT, 10, rules, round_seed("cohort-a", "w1")))
    assert one != sorted(one) and one != [f"m{i:02d}" for i in range(10)]
    assert one != ids(band_set(u, prices, AT, 10, rules, round_seed("cohort-a", "w2")))  # each round draws afresh


def test_choose_keeps_a_cohorts_frozen_rule():
    u = universe(bm("sure", 1e6), bm("mid", 1.0))
    prices = {"sure": 990_000, "mid": 500_000}
    assert ids(choose(u, prices, AT, 1, ForecastSetRules(), "s")) == ["mid"]
    old = choose(u, prices, AT, 1, ForecastSetRules(selection=LEGACY_SELECTION, horizon_days=None), "s")
    assert ids(old) == ["sure"] and not old[0].in_band  # volume-v1: the most traded, flagged out of band


# -- band-v2: band-v1 plus whole threshold and date ladders (issue 31 item 5) ----------------------------------------


def lm(mid: str, question: str, volume: float | None = None, days: int = 10) -> Market:
    return Market(id=mid, venue="t", question=question, volume_24h=volume, close_time=AT + timedelta(days=days))


def test_band_v2_takes_ladders_whole_after_the_groups_band_v1_does_not():
    rungs = [lm(f"r{x}", f"Will BTC close above ${x}k on March 1?") for x in (100, 110, 120)]
    dates = [lm(f"d{d}", f"Will X happen by January {d}, 2026?", days=d - 4) for d in (10, 20, 30)]
    singles = [bm(f"s{i:02d}", 100.0 - i) for i in range(12)]
    pair = [bm(f"p{j}", 1.0, group="G") for j in range(2)]
    u = universe(*rungs, *dates, *singles, *pair)
    prices = {x: 500_000 for x in u}
    prices["d10"] = 20_000  # out of band: the date ladder has fewer members in band, so the threshold one goes first
    qs = ids(band_set(u, prices, AT, 12, ForecastSetRules(), "s"))
    assert qs[:2] == ["p0", "p1"]  # the complete group first
    assert qs[2:5] == ["r120", "r110", "r100"]  # then a whole ladder, in ladder order (highest threshold first)
    assert qs[5:] == [f"s{i:02d}" for i in range(7)]  # groups and ladders take at most half of K
    roomy = ids(band_set(u, prices, AT, 20, ForecastSetRules(), "s"))
    assert roomy[2:8] == ["r120", "r110", "r100", "d10", "d20", "d30"]  # two ladders fit in 10 slots
    assert ids(band_set(u, prices, AT, 20, ForecastSetRules(ladders=1), "s"))[2:5] == ["r120", "r110", "r100"]
    assert ids(band_set(u, prices, AT, 20, ForecastSetRules(ladders=1), "s"))[5:8] != ["d10", "d20", "d30"]
    with pytest.raises(ValueError, match="ladders"):
        ForecastSetRules(ladders=-1)
    # band-v1 (cohorts frozen before ladders) and band-v2 without ladders in the universe: the same set
    v1 = ids(band_set(u, prices, AT, 12, ForecastSetRules(selection=BAND_SELECTION), "s"))
    assert v1[:2] == ["p0", "p1"] and set(v1[2:]) <= {x.id for x in singles + rungs + dates}
    assert v1[2:5] != ["r120", "r110", "r100"]
    plain = universe(*singles, *pair)
    assert (ids(band_set(plain, prices, AT, 12, ForecastSetRules(), "s"))
            == ids(band_set(plain, prices, AT, 12, ForecastSetRules(selection=BAND_SELECTION), "s")))


def test_a_long_ladder_keeps_its_members_nearest_the_band_and_skips_closed_ones():
    rungs = [lm(f"r{x}", f"Will ETH close above ${x} on March 1?") for x in range(1000, 1800, 100)]  # 8 rungs
    late = lm("late", "Will ETH close above $1,900 on March 1?", days=90)  # past the horizon: not eligible
    u = universe(*rungs, late, *(bm(f"s{i:02d}", 1.0) for i in range(20)))
    prices = {x: 500_000 for x in u}
    prices.update({"r1000": 990_000, "r1100": 980_000, "r1700": 10_000})  # far outside the band
    qs = ids(band_set(u, prices, AT, 20, ForecastSetRules(), "s"))
    assert qs[:5] == ["r1600", "r1500", "r1400", "r1300", "r1200"]  # at most 5 (max_members), in band first
    assert "late" not in qs
