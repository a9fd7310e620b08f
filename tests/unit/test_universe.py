"""The universe rules read only what `universe.Listed` names, so a sync's light stand-in for a market it did not
re-parse is chosen exactly as the market would be (domain.universe)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from arena.domain.market import Market, MarketStatus
from arena.domain.universe import UniverseRules, excluded, select
from arena.usecases.sync import _Listed

NOW = datetime(2026, 1, 4, tzinfo=timezone.utc)


Light = _Listed  # the light tuple a sync hands `select` for an unchanged market


def markets() -> list[Market]:
    out = []
    for i in range(40):
        out.append(Market(id=f"v:{i:02d}", venue="v", question=["Rain?", "Is THIS MARKET fair?", "Snow?"][i % 3],
                          close_time=None if i % 11 == 0 else NOW + timedelta(days=i * 3 - 20),
                          category=["Weather", "Sports", ""][i % 3 > 1 and 2 or i % 2],
                          status=MarketStatus.OPEN, volume=float(i % 7), volume_24h=[None, 5.0, 1.5][i % 3],
                          liquidity=float(40 - i)))
    return out


def light(m: Market) -> Light:
    return Light(m.id, m.question, m.close_time, m.category, m.volume, m.volume_24h, m.liquidity)


def test_a_light_stand_in_is_chosen_as_its_market_is():
    for rules in (UniverseRules(), UniverseRules(top_n=5, rank_by="liquidity", horizon_days=30),
                  UniverseRules(rank_by="volume", exclude_keywords=(), exclude_categories=("sports",)),
                  UniverseRules(top_n=0)):
        chosen = [m.id for m in select(markets(), NOW, rules)]
        assert [m.id for m in select([light(m) for m in markets()], NOW, rules)] == chosen
        assert [excluded(m, rules) for m in markets()] == [excluded(light(m), rules) for m in markets()]


def test_exclusions_name_the_keyword_or_category():
    m = markets()[1]
    assert excluded(m, UniverseRules()) == "keyword 'this market'"
    assert excluded(m, UniverseRules(exclude_keywords=(), exclude_categories=("SPORTS",))) == "category 'Sports'"
    assert excluded(m, UniverseRules(exclude_keywords=())) == ""


def test_without_volume_the_top_n_is_a_fixed_shuffle_not_the_lowest_ids():
    # a venue that reports no volume (the replay file): every rank ties
    ms = [Market(id=f"replay:{i:03d}", venue="replay", question="Rain?", close_time=NOW + timedelta(days=5))
          for i in range(200)]
    rules = UniverseRules(top_n=20, exclude_keywords=())
    chosen = [m.id for m in select(ms, NOW, rules)]
    assert len(chosen) == 20 and chosen != [m.id for m in ms[:20]]
    ids = sorted(int(c.split(":")[1]) for c in chosen)
    assert ids[-1] >= 100  # drawn from the whole range, not its lowest corner
    assert [m.id for m in select(list(reversed(ms)), NOW, rules)] == chosen  # the same on every sync, any order
    # a reported volume still ranks first
    traded = [*ms, Market(id="replay:999", venue="replay", question="Rain?", close_time=NOW + timedelta(days=5),
                          volume_24h=1.0)]
    assert select(traded, NOW, rules)[0].id == "replay:999"
