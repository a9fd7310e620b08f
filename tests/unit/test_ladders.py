"""Ladders found from question texts (`arena.domain.ladders`): threshold ladders ("above $X") and date ladders
("by <date>"), ordered so P(YES) must not decrease along them; on hand-made questions and on real ones from
../shared (read at test time, skipped when absent)."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import pytest

from arena.domain.ladders import DATE, THRESHOLD, date_rung, deadline, detect_ladders, threshold_rung
from arena.domain.market import Market, MarketKind


def mk(mid: str, question: str, close: str | None = "2026-06-30", venue: str = "polymarket",
       kind: MarketKind = MarketKind.BINARY) -> Market:
    when = datetime.fromisoformat(close).replace(tzinfo=timezone.utc) if close else None
    return Market(id=mid, venue=venue, question=question, close_time=when, kind=kind,
                  outcomes=("YES", "NO") if kind is MarketKind.BINARY else ("a", "b"))


def test_threshold_words_set_the_direction():
    up = threshold_rung("Will BTC close above $100k on June 30?")
    assert up is not None and up.kind == THRESHOLD and up.value == 100_000 and not up.rising
    assert threshold_rung("Will BTC close above $110,000 on June 30?").key == up.key  # same template
    down = threshold_rung("Will Bitcoin dip to $55,000 in March?")
    assert down is not None and down.value == 55_000 and down.rising  # dipping to a higher level is likelier
    assert threshold_rung("Will Gold (GC) hit (LOW) $4,200 by end of June?").rising  # (LOW) beats "hit"
    assert not threshold_rung("Will Gold (GC) hit (HIGH) $5,500 by end of June?").rising
    assert not threshold_rung("Will Gold close at $3,200 or more at the end of 2025?").rising
    assert threshold_rung("MegaETH market cap (FDV) >$4B one day after launch?").value == 4e9
    assert threshold_rung("Will Greece be in the top 5 at Eurovision 2026?").rising  # top 5 implies top 10
    assert threshold_rung("Will BTC not close above $100k on June 30?").rising  # "not" reverses
    assert threshold_rung("Will NVIDIA (NVDA) close at $210–215 in 2025?") is None  # a bucket
    assert threshold_rung("Bitcoin $150K in 2025?") is None  # no direction word


def test_deadlines_from_the_text_and_the_close_time():
    close = date(2026, 6, 30)
    assert deadline("Starmer out by June 30, 2026?")[0] == date(2026, 6, 30)
    assert deadline("Starmer out by December 31?", date(2025, 12, 31))[0] == date(2025, 12, 31)
    # a venue may close a deadline market long before the deadline: the year is not moved back
    assert deadline("Will GPT-5 be released by December 31?", date(2025, 6, 30))[0] == date(2025, 12, 31)
    assert deadline("US-Iran nuclear deal before 2027?")[0] == date(2026, 12, 31)
    assert deadline("Russia x Ukraine ceasefire by end of 2026?")[0] == date(2026, 12, 31)
    assert deadline("Traffic returns to normal by end of May?", close)[0] == date(2026, 5, 31)
    assert deadline("Will it happen before April 1, 2026?")[0] == date(2026, 3, 31)
    assert deadline("Will it happen before June?", close)[0] == date(2026, 5, 31)
    assert deadline("Will Kim divorce before Jan 1, 2021?")[0] == date(2020, 12, 31)
    assert deadline("Will it happen by March 31?") is None  # no year and no close time
    assert deadline("Will Bitcoin reach $80,000 in March?", close) is None  # a window, not a deadline
    negated = date_rung("Will Anthropic not IPO by June 30, 2026?")
    assert negated is not None and negated.kind == DATE and not negated.rising


def test_detect_ladders_orders_members_so_p_must_not_decrease():
    markets = [
        mk("a", "Will BTC close above $100k on June 30?"), mk("b", "Will BTC close above $120k on June 30?"),
        mk("c", "Will BTC close above $110k on June 30?"),
        mk("d1", "Will X happen by March 31?", "2026-03-31"), mk("d2", "Will X happen by June 30?", "2026-06-30"),
        mk("d0", "Will X happen by September 30, 2026?", "2026-09-30"),
        mk("lone", "Will Y happen by March 31?", "2026-03-31"),
        mk("other-venue", "Will BTC close above $130k on June 30?", venue="manifold"),
        mk("mc", "Will BTC close above $140k on June 30?", kind=MarketKind.MULTI),
        mk("dup", "Will BTC close above $100k on June 30?"),  # same threshold as "a": the smaller id stays
    ]
    ladders = {lad.kind: lad for lad in detect_ladders(markets)}
    assert len(detect_ladders(markets)) == 2
    assert ladders[THRESHOLD].members == ("b", "c", "a")  # above $120k implies above $110k implies above $100k
    assert ladders[THRESHOLD].labels == ("$120k", "$110k", "$100k")
    assert ladders[DATE].members == ("d1", "d2", "d0")  # by March implies by June implies by September
    assert ladders[DATE].labels == ("2026-03-31", "2026-06-30", "2026-09-30")
    assert detect_ladders(reversed(markets)) == detect_ladders(markets)


def test_real_questions_from_the_replay_file(shared_dir):
    path = shared_dir / "data" / "replay" / "replay_markets.jsonl"
    if not path.is_file():
        pytest.skip("the replay file is absent")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    markets = [Market(id=f"{r['platform']}:{r['market_id']}", venue=r["platform"], question=r["question"],
                      close_time=datetime.fromisoformat(r["market_close_datetime"])
                      if r.get("market_close_datetime") else None) for r in records]
    question = {m.id: m.question for m in markets}
    found = {tuple(question[mid] for mid in lad.members) for lad in detect_ladders(markets)}
    assert ("Will Gold (GC) hit (HIGH) $6,000 by end of June?", "Will Gold (GC) hit (HIGH) $5,700 by end of June?",
            "Will Gold (GC) hit (HIGH) $5,500 by end of June?") in found
    assert ("Will Bitcoin dip to $55,000 in March?", "Will Bitcoin dip to $60,000 in March?") in found
    assert ("Will Russia capture Kostyantynivka by March 31?", "Will Russia capture Kostyantynivka by June 30?",
            "Will Russia capture Kostyantynivka by September 30?") in found
    assert ("Israel x Iran ceasefire broken by December 31?", "Israel x Iran ceasefire broken by March 31, 2026?",
            "Israel x Iran ceasefire broken by June 30, 2026?") in found  # a year-less deadline dated by the close
    assert ("Solana all time high before 2026?", "Solana all time high by June 30, 2026?") in found
    # every ladder has two or more members, each market at most once per ladder
    assert all(len(set(q)) == len(q) >= 2 for q in found)


def test_real_polymarket_event_of_deadlines(shared_dir):
    path = shared_dir / "data" / "api-samples" / "polymarket" / "gamma_events_list_active.json"
    if not path.is_file():
        pytest.skip("the Polymarket events sample is absent")
    event = next(e for e in json.loads(path.read_text(encoding="utf-8")) if e.get("title") == "GPT-5 released by…?")
    markets = [Market(id=f"polymarket:{m['id']}", venue="polymarket", question=m["question"],
                      close_time=datetime.fromisoformat(m["endDate"].replace("Z", "+00:00")))
               for m in event["markets"]]
    (ladder,) = detect_ladders(markets)
    by_id = {m.id: m.question for m in markets}
    assert [by_id[mid] for mid in ladder.members] == ["Will GPT-5 be released by March 31?",
                                                     "Will GPT-5 be released by May 31?",
                                                     "Will GPT-5 be released by December 31?"]
