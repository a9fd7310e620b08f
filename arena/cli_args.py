"""Command-line argument types and the one-line usage error: every flag value is checked when it is parsed.

Owns the `type=` functions of the CLI's flags (`parse_at` for every `--at` / `--as-of`, counts that must be
positive) and `ArenaArgumentParser`, whose usage errors are ONE line on stderr naming the problem and the fix.
It must not import the store, the services or anything slow: `arena --help` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date, datetime, timezone
from typing import Any, NoReturn

DB_HELP = ("SQLAlchemy URL of the database, e.g. sqlite:///arena.sqlite or postgresql://user@host/db (default: "
           "ARENA_DATABASE_URL, else arena.sqlite in the data directory: ARENA_DATA_DIR, else ./db)")

# Far enough to hold any real arena run; rejects typos like 20266-01-01 that would mean nothing.
EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2100, 1, 1, tzinfo=timezone.utc)


def parse_at(text: str) -> datetime:
    """An ISO 8601 date or time as an aware UTC datetime (naive times are UTC; a date is its 00:00 UTC).

    The `type=` of every `--at` / `--as-of` flag; raises ArgumentTypeError (a one-line usage error) otherwise.
    """
    value = text.strip()
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date or time — write ISO 8601 in UTC, e.g. 2026-03-01 or 2026-03-01T12:00"
        ) from None
    t = t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)
    if not EARLIEST <= t < LATEST:
        raise argparse.ArgumentTypeError(
            f"{text!r} is outside {EARLIEST:%Y}-{LATEST:%Y} — check the year")
    return t


def path_arg(text: str) -> str:
    """A file or directory the command writes: not empty (an empty path means the current directory, which
    is never where a site, an export or a backup should land by accident)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty, so it would write into the current directory — name the "
                                         "directory or file, e.g. --out site")
    return text


def parse_day(text: str) -> date:
    """An ISO 8601 date (YYYY-MM-DD), e.g. a cohort's Sunday."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date — write YYYY-MM-DD, e.g. 2026-01-04") from None


def _integer(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    """A count that must be at least 1 (cohorts, weeks, markets)."""
    n = _integer(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def non_negative_int(text: str) -> int:
    """A count that may be 0 (days after the last decision, bootstrap draws)."""
    n = _integer(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


def count(low: int, high: int) -> Any:
    """The `type=` of a count from `low` to `high`: a bound on work a typo could make endless."""

    def parse(text: str) -> int:
        n = _integer(text)
        if n < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {n}" if low == 1
                                             else f"must be {low} or more, got {n}")
        if n > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,}, got {n:,}")
        return n

    parse.__name__ = f"count {low}..{high}"
    return parse


def positive_float(text: str) -> float:
    """A positive number, e.g. seconds between polls."""
    try:
        x = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < x < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text.strip()}")
    return x


def port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    n = _integer(text)
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port from 0 to 65535, got {n}")
    return n


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless the text already names it or there is none to show
    (None: the help says what happens instead; False: a plain switch, off unless given)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text.lower() or action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            return text
        return super()._get_help_string(action)


class ArenaArgumentParser(argparse.ArgumentParser):
    """argparse with one-line usage errors: ``arena: <problem> — see `arena <command> --help` ``, exit 2, and
    help that shows every option's default (`HelpFormatter`; subcommands inherit both)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        problem = " ".join(message.split())
        self.exit(2, f"arena: {problem} — see `{self.prog} --help`\n")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise SystemExit(status)


__all__ = ["DB_HELP", "ArenaArgumentParser", "HelpFormatter", "non_negative_int", "parse_at", "parse_day", "port", "positive_float", "positive_int"]
