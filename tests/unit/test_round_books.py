"""RoundBooks: a round's book source fetches each token once, even when many agents ask at the same moment,
and remembers a failed fetch as unavailable (the pricer then falls back and says why)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.domain.book import OrderBook
from arena.money import Price
from arena.usecases.pricing import BookUnavailable, RoundBooks

BOOK = OrderBook.of([(Price.of("0.40"), 10)], [(Price.of("0.50"), 10)])


def test_concurrent_agents_share_one_fetch_per_token():
    calls: list[str] = []
    release = threading.Event()

    def fetch(token: str) -> OrderBook | None:
        calls.append(token)
        release.wait(5)  # every other agent asks while this fetch is in flight
        return BOOK if token == "yes" else None

    books = RoundBooks(fetch)
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(books, "yes" if i % 2 else "other") for i in range(16)]
        threading.Timer(0.2, release.set).start()
        results = [f.result() for f in futures]
    assert sorted(calls) == ["other", "yes"] and books.fetches == 2
    assert results.count(BOOK) == 8 and results.count(None) == 8


def test_a_failed_fetch_is_unavailable_for_the_round_and_not_retried():
    calls = []

    def fetch(token: str) -> OrderBook | None:
        calls.append(token)
        raise ConnectionError("clob down")

    books = RoundBooks(fetch)
    for _ in range(3):
        with pytest.raises(BookUnavailable, match="clob down"):
            books("t")
    assert calls == ["t"]
