"""The simulated universe: deterministic, no look-ahead, resolutions drawn from the truth, prices that learn."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from arena.domain.market import NO, YES, MarketStatus, ResolutionKind
from arena.errors import ConfigError, NotFound
from arena.venues.simulated import SimulatedUniverse

START = datetime(2026, 1, 5, 12, tzinfo=timezone.utc)
DAY = timedelta(days=1)


@pytest.fixture(scope="module")
def small() -> SimulatedUniverse:
    return SimulatedUniverse.generate(11, START, weeks=4, markets_per_week=10)


@pytest.fixture(scope="module")
def big() -> SimulatedUniverse:
    # Skewed truths (mean 2/7) so "YES rate ≈ mean truth" cannot pass by a fair coin.
    return SimulatedUniverse.generate(5, START, weeks=30, markets_per_week=60, truth_beta=(2.0, 5.0),
                                      void_rate=0.10, probabilistic_rate=0.03)


def _fingerprint(u: SimulatedUniverse) -> list[tuple]:
    return [(s.market, s.truth, s.opened_at, s.closes_at, s.resolves_at, s.resolution, s.ticks, s.half_spread_ticks)
            for s in u.specs()]


# -- determinism ---------------------------------------------------------------------------------------------------


def test_same_seed_same_universe(small: SimulatedUniverse) -> None:
    again = SimulatedUniverse.generate(11, START, weeks=4, markets_per_week=10)
    assert _fingerprint(again) == _fingerprint(small)


def test_different_seed_different_universe(small: SimulatedUniverse) -> None:
    other = SimulatedUniverse.generate(12, START, weeks=4, markets_per_week=10)
    assert [s.truth for s in other.specs()] != [s.truth for s in small.specs()]
    assert [s.ticks for s in other.specs()] != [s.ticks for s in small.specs()]


def test_a_longer_run_contains_the_shorter_one_unchanged(small: SimulatedUniverse) -> None:
    longer = SimulatedUniverse.generate(11, START, weeks=7, markets_per_week=10)
    assert _fingerprint(longer)[: len(small)] == _fingerprint(small)
    t = START + 20 * DAY
    for m in small.markets_open_at(t):
        assert longer.quote_at(m.id, t) == small.quote_at(m.id, t)


def test_ids_questions_categories_and_horizons(small: SimulatedUniverse) -> None:
    specs = small.specs()
    assert [s.id for s in specs] == [f"sim:{n}" for n in range(1, 41)]
    for s in specs:
        assert s.market.question == f"Will event {s.id[4:]} happen by {s.closes_at.date().isoformat()}?"
        assert s.market.category
        assert s.market.close_time == s.closes_at
        assert 7 * DAY <= s.closes_at - s.opened_at <= 42 * DAY
        assert s.resolves_at >= s.closes_at
        assert 0 < s.truth < 1
    week_opens = sorted({s.opened_at for s in specs})
    assert week_opens == [START + w * timedelta(weeks=1) for w in range(4)]
    assert small.end > START + timedelta(weeks=4)  # some markets resolve after the run's last week


def test_unknown_option_or_bad_seed_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        SimulatedUniverse.generate(1, START, 1, 1, void_rat=0.1)
    with pytest.raises(ConfigError):
        SimulatedUniverse.generate(-1, START, 1, 1)
    with pytest.raises(ConfigError):
        SimulatedUniverse.generate(1, START, 1, 1, void_rate=1.5)


# -- no look-ahead -------------------------------------------------------------------------------------------------


def _probe_times(u: SimulatedUniverse) -> list[datetime]:
    # Every 7 hours over the whole life of the universe: lands on, just after and between daily points.
    t, out = START, []
    while t <= u.end + 2 * DAY:
        out.append(t)
        t += timedelta(hours=7)
    return out


def test_quote_at_is_the_last_point_at_or_before_t(small: SimulatedUniverse) -> None:
    for s in small.specs()[:12]:
        for t in _probe_times(small):
            if t < s.opened_at:
                with pytest.raises(NotFound):
                    small.quote_at(s.id, t)
                continue
            q = small.quote_at(s.id, t)
            assert q.observed_at <= t
            # the latest such point: the next daily point (if any) lies after t
            if q.observed_at < s.closes_at:
                assert q.observed_at + DAY > t
            else:
                assert t >= s.closes_at
            k = round((q.observed_at - s.opened_at) / DAY)
            assert q.yes_price().ppm == s.ticks[k] * 1000
            assert q.fetched_at is not None and q.fetched_at <= t


def test_quotes_do_not_depend_on_the_order_of_questions() -> None:
    forward = SimulatedUniverse.generate(3, START, 3, 8)
    backward = SimulatedUniverse.generate(3, START, 3, 8)
    times = _probe_times(forward)
    ids = forward.market_ids()
    later_first = {(i, t): backward.quote_at(i, t) for t in reversed(times) for i in ids
                   if t >= backward.opened_at(i)}
    for t in times:
        for i in ids:
            if t >= forward.opened_at(i):
                assert forward.quote_at(i, t) == later_first[(i, t)]


def test_quotes_until_holds_only_points_up_to_t(small: SimulatedUniverse) -> None:
    s = small.specs()[0]
    t = s.opened_at + 3 * DAY + timedelta(hours=5)
    history = small.quotes_until(s.id, t)
    assert [q.observed_at for q in history] == [s.opened_at + k * DAY for k in range(4)]
    assert history[-1] == small.quote_at(s.id, t)
    assert small.quotes_until(s.id, s.opened_at - DAY) == []


def test_resolution_only_once_resolved(small: SimulatedUniverse) -> None:
    for s in small.specs():
        assert small.resolution_at(s.id, s.resolves_at - timedelta(seconds=1)) is None
        r = small.resolution_at(s.id, s.resolves_at)
        assert r is not None and r.market_id == s.id and r.resolved_at == s.resolves_at


def test_statuses_over_the_life_of_a_market() -> None:
    u = SimulatedUniverse.generate(4, START, 1, 5, resolution_delay=timedelta(hours=6))
    s = u.specs()[0]
    with pytest.raises(NotFound):
        u.market_at(s.id, s.opened_at - timedelta(seconds=1))
    assert u.market_at(s.id, s.opened_at).status is MarketStatus.OPEN
    assert u.market_at(s.id, s.closes_at - timedelta(seconds=1)).is_open_at(s.closes_at - timedelta(seconds=1))
    assert u.market_at(s.id, s.closes_at).status is MarketStatus.CLOSED
    assert u.market_at(s.id, s.closes_at + timedelta(hours=6)).status is MarketStatus.RESOLVED
    assert u.market(s.id).status is MarketStatus.OPEN
    with pytest.raises(NotFound):
        u.market("sim:999")


def test_markets_open_at(small: SimulatedUniverse) -> None:
    for t in _probe_times(small)[::5]:
        open_now = small.markets_open_at(t)
        expected = [s.id for s in small.specs() if s.opened_at <= t < s.closes_at]
        assert [m.id for m in open_now] == expected
        assert all(m.status is MarketStatus.OPEN and m.is_open_at(t) for m in open_now)


def test_naive_times_are_read_as_utc(small: SimulatedUniverse) -> None:
    t = START + 3 * DAY
    assert small.quote_at("sim:1", t.replace(tzinfo=None)) == small.quote_at("sim:1", t)


# -- the generative model ------------------------------------------------------------------------------------------


def test_resolutions_are_drawn_from_the_truth(big: SimulatedUniverse) -> None:
    won = [(s.truth, s.resolution.yes_outcome()) for s in big.specs() if s.resolution.kind is ResolutionKind.WINNER]
    truth = np.array([w[0] for w in won])
    outcome = np.array([w[1] for w in won])
    n = len(won)
    assert n > 1400
    se = math.sqrt(truth.mean() * (1 - truth.mean()) / n)
    assert abs(outcome.mean() - truth.mean()) < 4 * se  # mean truth ≈ 0.29: a fair coin would fail by ~17 SE
    # Brier of the truth ≈ E[p(1 − p)]; a coin independent of p gives ≈ 0.33, thresholding p at 0.5 ≈ 0.06.
    assert abs(np.mean((outcome - truth) ** 2) - np.mean(truth * (1 - truth))) < 0.02
    assert outcome[truth < 0.15].mean() < 0.2
    assert outcome[truth > 0.5].mean() > 0.5


def test_void_and_probabilistic_shares(big: SimulatedUniverse) -> None:
    kinds = [s.resolution.kind for s in big.specs()]
    n = len(kinds)
    void_share = kinds.count(ResolutionKind.VOID) / n
    assert abs(void_share - 0.10) < 4 * math.sqrt(0.1 * 0.9 / n)
    prob = [s for s in big.specs() if s.resolution.kind is ResolutionKind.PROBABILISTIC]
    assert 0.01 < len(prob) / n < 0.06
    for s in prob:
        assert s.resolution.payout(YES).ppm == round(s.truth * 100) * 10_000
    none_voided = SimulatedUniverse.generate(5, START, 3, 20, void_rate=0.0, probabilistic_rate=0.0)
    assert {s.resolution.kind for s in none_voided.specs()} == {ResolutionKind.WINNER}


def test_prices_move_toward_the_outcome(big: SimulatedUniverse) -> None:
    won = [s for s in big.specs() if s.resolution.kind is ResolutionKind.WINNER]
    outcome = np.array([s.resolution.yes_outcome() for s in won])
    at_open = np.array([s.ticks[0] / 1000 for s in won])
    last_open = np.array([s.ticks[-2] / 1000 for s in won])  # the last point before close
    at_close = np.array([s.ticks[-1] / 1000 for s in won])
    assert np.mean(np.abs(last_open - outcome)) < 0.6 * np.mean(np.abs(at_open - outcome))
    assert np.mean(np.abs(at_close - outcome)) < 0.02
    # and the opening price is noisy around the truth, not around the outcome
    truth = np.array([s.truth for s in won])
    assert np.mean(np.abs(at_open - truth)) < np.mean(np.abs(at_open - outcome))


def test_truth_at_starts_at_the_truth_and_ends_at_the_outcome(small: SimulatedUniverse) -> None:
    for s in small.specs():
        assert small.truth_at(s.id, s.opened_at) == pytest.approx(s.truth)
        end = small.truth_at(s.id, s.closes_at)
        if s.resolution.kind is ResolutionKind.WINNER:
            assert end == s.resolution.yes_outcome()
        assert all(0.0 <= p <= 1.0 for p in s.informed)


def test_open_prices_are_quantized_clipped_and_inside_the_spread(small: SimulatedUniverse) -> None:
    for s in small.specs():
        t = s.opened_at
        while t < s.closes_at:
            q = small.quote_at(s.id, t)
            p = q.yes_price()
            assert 10_000 <= p.ppm <= 990_000
            assert p.ppm % 1000 == 0
            assert q.bid is not None and q.ask is not None
            assert q.bid < p < q.ask
            assert q.price(NO).ppm == 1_000_000 - p.ppm
            t += DAY


def test_exclusive_groups_sum_to_one_have_one_winner_and_noisy_prices():
    plain = SimulatedUniverse.generate(3, START, weeks=3, markets_per_week=5)
    u = SimulatedUniverse.generate(3, START, weeks=3, markets_per_week=5, groups_per_week=4)
    # adding groups leaves every single market unchanged
    assert all(u.spec(s.id).ticks == s.ticks and u.spec(s.id).resolution == s.resolution for s in plain.specs())
    groups: dict[str, list] = {}
    for s in u.specs():
        if s.market.group_id:
            groups.setdefault(s.market.group_id, []).append(s)
    assert len(groups) == 12 and len(u) == 15 + sum(len(g) for g in groups.values())
    sums_off = 0
    for gid, members in groups.items():
        assert 2 <= len(members) <= 4
        assert math.isclose(sum(s.truth for s in members), 1.0, abs_tol=1e-9)
        assert sum(s.resolution.payouts[YES].ppm for s in members) == 1_000_000  # exactly one YES
        assert all(s.resolution.kind is ResolutionKind.WINNER for s in members)
        assert len({(s.opened_at, s.closes_at) for s in members}) == 1
        for k in range(len(members[0].informed)):
            assert math.isclose(sum(s.informed[k] for s in members), 1.0, abs_tol=1e-9)
        winner = next(s for s in members if s.resolution.payouts[YES].ppm)
        assert winner.informed[-1] == 1.0 and winner.ticks[-1] == 990
        sums_off += sum(sum(s.ticks[k] for s in members) != 1000 for k in range(len(members[0].ticks)))
    assert sums_off > 0  # the venue's prices of a group need not sum to 1
    # deterministic
    again = SimulatedUniverse.generate(3, START, weeks=3, markets_per_week=5, groups_per_week=4)
    assert [(s.id, s.ticks) for s in again.specs()] == [(s.id, s.ticks) for s in u.specs()]
    with pytest.raises(ConfigError, match="groups_per_week"):
        SimulatedUniverse.generate(3, START, weeks=1, markets_per_week=1, groups_per_week=-1)


def test_group_winners_follow_the_truths():
    """Over many groups the favourite wins about as often as its truth says (calibrated draws)."""
    u = SimulatedUniverse.generate(9, START, weeks=50, markets_per_week=0, groups_per_week=20)
    truths, wins = [], []
    for s in u.specs():
        truths.append(s.truth)
        wins.append(s.resolution.payouts[YES].ppm / 1e6)
    truths, wins = np.array(truths), np.array(wins)
    for lo, hi in ((0.0, 0.2), (0.2, 0.5), (0.5, 1.0)):
        sel = (truths >= lo) & (truths < hi)
        assert abs(wins[sel].mean() - truths[sel].mean()) < 0.06, (lo, hi)


def test_ladders_are_nested_detected_and_leave_the_rest_unchanged():
    from arena.domain.ladders import DATE, THRESHOLD, detect_ladders

    plain = SimulatedUniverse.generate(3, START, weeks=3, markets_per_week=5, groups_per_week=1)
    u = SimulatedUniverse.generate(3, START, weeks=3, markets_per_week=5, groups_per_week=1, ladders_per_week=2)
    # adding ladders leaves every single market and group unchanged
    assert all(u.spec(s.id).ticks == s.ticks and u.spec(s.id).resolution == s.resolution for s in plain.specs())
    ladders = detect_ladders(u.all_markets())
    assert sorted(lad.kind for lad in ladders) == [DATE] * 6 + [THRESHOLD] * 6  # 3 weeks × 2, of each kind
    assert len(u) == len(plain) + 12 * 3
    broken_prices = 0
    for lad in ladders:
        specs = [u.spec(mid) for mid in lad.members]
        assert len(specs) == 3 and all(s.resolution.kind is ResolutionKind.WINNER for s in specs)
        yes = [s.resolution.payouts[YES].ppm // 1_000_000 for s in specs]
        assert yes == sorted(yes)  # a member YES implies every later member YES: the outcomes are nested
        truths = [s.truth for s in specs]
        assert truths == sorted(truths) and len(set(truths)) == 3
        for k in range(min(len(s.informed) for s in specs) - 1):  # the informed probabilities are ordered too
            assert all(a.informed[k] <= b.informed[k] + 1e-12 for a, b in zip(specs, specs[1:]))
        last = min(len(s.ticks) for s in specs)
        broken_prices += sum(any(a.ticks[k] > b.ticks[k] for a, b in zip(specs, specs[1:])) for k in range(last))
    assert broken_prices > 0  # the venue's noisy prices may break the order: the market row has something to show
    assert all(s.market.group_id == "" for s in u.specs() if s.id.startswith(("sim:t", "sim:d")))
    with pytest.raises(ConfigError, match="ladders_per_week"):
        SimulatedUniverse.generate(3, START, weeks=1, markets_per_week=1, ladders_per_week=-1)
    with pytest.raises(ConfigError, match="ladder_size"):
        SimulatedUniverse.generate(3, START, weeks=1, markets_per_week=1, ladder_size=1)
