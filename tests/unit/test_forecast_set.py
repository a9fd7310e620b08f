"""The forecast-set rule: the top K binary markets by 24 h volume, plus complete exclusive groups when the universe
holds some (the best group, the best pair, never more than half of K), deterministic."""

from __future__ import annotations

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
