"""The leakage audit's three rules on hand-made sets: what each flags, what it must not, and only with the facts
recorded by the round's decision time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from arena.domain.leakage import (DUPLICATE_QUESTION, SIBLING_RESOLVED_YES, TEXT_OF_RESOLVED_MARKET, Asked, Leak,
                                   MarketText, ResolutionFact, find_leaks, normalise)

T = datetime(2026, 1, 11, 0, 5, tzinfo=timezone.utc)
DAY = timedelta(days=1)
YES_WINS, NO_WINS = 1_000_000, 0


def market(mid, question, group="", listed=T - 30 * DAY):
    return MarketText(mid, question, group, listed)


def won(mid, yes_ppm=YES_WINS, at=T - DAY, version=1, kind="winner"):
    return ResolutionFact(mid, version, at, kind, yes_ppm)


MARKETS = {m.market_id: m for m in [
    market("alice", "Will Alice win the 2026 club election?", "club"),
    market("bob", "Will Bob win the 2026 club election?", "club"),
    market("carol", "Will Carol win the 2026 club election?", "club"),
    market("snow", "Will it snow in Paris on 1 January 2026?"),
    market("snow-mf", "Will it snow in Paris on 1 January 2026? (Météo-France)"),
    market("rain", "Will it rain in Rome on 2 January 2026?"),
    market("rain-copy", "will it RAIN in Rome on 2 January 2026"),
    market("short", "Yes or no?"),
    market("short-2", "Yes or no? Asked again"),
]}


def ask(*mids, t=T, cohort="w1", rnd="2026-01-11"):
    return [Asked(cohort, rnd, mid, t, i) for i, mid in enumerate(mids)]


def test_normalised_text_ignores_case_spacing_and_punctuation():
    assert normalise("  Will  X   win? ") == normalise("will x WIN") == "will x win"
    assert normalise("Ｆｕｌｌ－ｗｉｄｔｈ") == "full width"  # NFKC
    assert normalise("") == ""


def test_a_member_whose_sibling_resolved_yes_is_flagged():
    leaks = find_leaks(ask("alice", "carol", "rain"), MARKETS, [won("bob")])
    assert leaks == [Leak("w1", "2026-01-11", "alice", SIBLING_RESOLVED_YES, "bob"),
                     Leak("w1", "2026-01-11", "carol", SIBLING_RESOLVED_YES, "bob")]
    assert leaks[0].to_json() == {"round": "2026-01-11", "market_id": "alice", "reason": "sibling_resolved_yes",
                                  "other_market_id": "bob"}


def test_a_sibling_that_resolved_no_or_after_the_round_gives_nothing_away():
    assert find_leaks(ask("alice"), MARKETS, [won("bob", NO_WINS)]) == []
    assert find_leaks(ask("alice"), MARKETS, [won("bob", at=T + timedelta(seconds=1))]) == []
    # recorded exactly at the decision time: known to the round
    assert [x.market_id for x in find_leaks(ask("alice"), MARKETS, [won("bob", at=T)])] == ["alice"]
    # a re-resolution recorded by T that un-resolved it: not resolved at T
    facts = [won("bob", at=T - 2 * DAY), won("bob", yes_ppm=None, at=T - DAY, version=2, kind="unresolved")]
    assert find_leaks(ask("alice"), MARKETS, facts) == []
    # a later round sees the re-resolution to YES
    facts.append(won("bob", at=T + DAY, version=3))
    assert [x.market_id for x in find_leaks(ask("alice", t=T + 2 * DAY), MARKETS, facts)] == ["alice"]


def test_a_question_found_in_a_resolved_listed_market_is_flagged():
    leaks = find_leaks(ask("snow", "rain"), MARKETS, [won("snow-mf", NO_WINS)])
    assert leaks == [Leak("w1", "2026-01-11", "snow", TEXT_OF_RESOLVED_MARKET, "snow-mf")]
    # a void says nothing; a market listed after the round, or resolved after it, neither
    assert find_leaks(ask("snow"), MARKETS, [won("snow-mf", None, kind="void")]) == []
    late = {**MARKETS, "snow-mf": market("snow-mf", MARKETS["snow-mf"].question, listed=T + DAY)}
    assert find_leaks(ask("snow"), late, [won("snow-mf", NO_WINS)]) == []
    assert find_leaks(ask("snow"), MARKETS, [won("snow-mf", NO_WINS, at=T + DAY)]) == []
    # the containing market's own text is not inside the shorter one
    assert find_leaks(ask("snow-mf"), MARKETS, [won("snow")]) == []
    # whole words only, and a question shorter than MIN_WORDS words is never matched
    assert find_leaks(ask("short"), MARKETS, [won("short-2")]) == []


def test_a_duplicate_in_one_round_is_flagged_after_its_first_copy():
    leaks = find_leaks(ask("rain", "snow", "rain-copy"), MARKETS, [])
    assert leaks == [Leak("w1", "2026-01-11", "rain-copy", DUPLICATE_QUESTION, "rain")]
    # in two different rounds (or cohorts) they are no duplicates
    two_rounds = ask("rain") + ask("rain-copy", rnd="2026-01-18", t=T + 7 * DAY) + ask("rain-copy", cohort="w2")
    assert find_leaks(two_rounds, MARKETS, []) == []


def test_one_flag_per_question_the_first_rule_that_holds():
    markets = {**MARKETS, "alice-2": market("alice-2", "will alice win the 2026 club election", "club")}
    leaks = find_leaks(ask("alice", "alice-2"), markets, [won("bob")])
    assert [(x.market_id, x.reason) for x in leaks] == [("alice", SIBLING_RESOLVED_YES),
                                                       ("alice-2", SIBLING_RESOLVED_YES)]


def test_a_clean_set_is_untouched():
    facts = [won("snow", NO_WINS, at=T + DAY), won("bob", NO_WINS)]
    assert find_leaks(ask("alice", "carol", "rain", "snow-mf", "short"), MARKETS, facts) == []
    assert find_leaks([], MARKETS, facts) == []
    assert find_leaks(ask("unknown-market"), MARKETS, facts) == []  # a market not read is not judged


def test_the_shipped_replay_lists_two_questions_on_both_venues(shared_dir):
    """Real data: the snapshot carries "Will England/France win the 2026 FIFA World Cup?" on Polymarket and on
    Manifold. Asked in one round, the second copy is a duplicate; asked after the other copy resolved, a leak."""
    import json

    records = [json.loads(x) for x in (shared_dir / "data" / "replay" / "replay_markets.jsonl").open(encoding="utf-8")]
    markets = {r["market_id"]: MarketText(r["market_id"], r["question"], "", T - 30 * DAY) for r in records}
    by_text: dict[str, list[str]] = {}
    for r in records:
        by_text.setdefault(normalise(r["question"]), []).append(r["market_id"])
    twins = sorted(ids for ids in by_text.values() if len(ids) > 1)
    assert [normalise(markets[ids[0]].question) for ids in twins] == [
        "will england win the 2026 fifa world cup", "will france win the 2026 fifa world cup"]
    first, second = twins[0]
    assert find_leaks(ask(first, second), markets, []) == [
        Leak("w1", "2026-01-11", second, DUPLICATE_QUESTION, first)]
    assert find_leaks(ask(second), markets, [won(first, NO_WINS)]) == [
        Leak("w1", "2026-01-11", second, TEXT_OF_RESOLVED_MARKET, first)]
    # every other question of the snapshot asked in one round: no flag
    others = [mid for ids in by_text.values() if len(ids) == 1 for mid in ids]
    assert find_leaks(ask(*others), markets, []) == []
