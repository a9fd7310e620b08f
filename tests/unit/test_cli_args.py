"""The CLI's argument types: every --at / --as-of goes through parse_at; counts must be positive."""

from __future__ import annotations

import argparse
from datetime import date, datetime, timezone

import pytest

from arena.cli_args import non_negative_int, parse_at, parse_day, port, positive_int

UTC = timezone.utc


@pytest.mark.parametrize("text, expected", [
    ("2026-03-01", datetime(2026, 3, 1, tzinfo=UTC)),
    ("2026-03-01T12:30", datetime(2026, 3, 1, 12, 30, tzinfo=UTC)),
    ("2026-03-01 12:30:05", datetime(2026, 3, 1, 12, 30, 5, tzinfo=UTC)),
    ("2026-03-01T12:00Z", datetime(2026, 3, 1, 12, tzinfo=UTC)),
    ("2026-03-01T12:00+02:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),  # converted to UTC, not relabelled
    (" 2026-03-01 ", datetime(2026, 3, 1, tzinfo=UTC)),
])
def test_parse_at_gives_aware_utc_times(text, expected):
    got = parse_at(text)
    assert got == expected and got.tzinfo == UTC


@pytest.mark.parametrize("text", ["notadate", "", "2026-13-01", "2026-02-30", "yesterday", "20266-01-01",
                                  "1999-12-31", "2100-01-01"])
def test_parse_at_refuses_what_is_not_a_real_time(text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_at(text)


def test_counts_and_days():
    assert parse_day("2026-01-04") == date(2026, 1, 4)
    assert positive_int("3") == 3 and non_negative_int("0") == 0 and port("0") == 0 and port("65535") == 65535
    for f, bad in ((positive_int, "0"), (positive_int, "-1"), (positive_int, "1.5"), (non_negative_int, "-1"),
                   (port, "65536"), (port, "x"), (parse_day, "2026-01-04T00:00")):
        with pytest.raises(argparse.ArgumentTypeError):
            f(bad)
