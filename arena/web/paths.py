"""From a site path's slug back to what it names: `unslug` inverts `env.slug`, and the lookups find the cohort,
model or market whose (possibly hashed, overlong) slug it is.
"""

from __future__ import annotations

import re

from datetime import datetime

from sqlalchemy.engine import Engine

from arena.read.agent_activity import agent_names
from arena.read.cohorts import cohort_names
from arena.read.touched_markets import touched_market_ids
from arena.web.env import slug


_HEX = re.compile(r"[0-9a-f]{2}")


def unslug(s: str) -> str | None:
    """The id `env.slug` spelled as `s`, or None when `s` is not a slug (or is a hashed, overlong one)."""
    out = bytearray()
    i = 0
    while i < len(s):
        ch = s[i]
        if ch != "_":
            if not re.fullmatch(r"[A-Za-z0-9-]", ch):
                return None
            out += ch.encode()
            i += 1
            continue
        lead = s[i + 1:i + 3]
        if not _HEX.fullmatch(lead):
            return None
        b = int(lead, 16)
        n = 1 if b < 0x80 else 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 0
        chunk = s[i + 1:i + 1 + 2 * n]
        if n == 0 or len(chunk) != 2 * n or not all(_HEX.fullmatch(chunk[k:k + 2]) for k in range(0, 2 * n, 2)):
            return None
        out += bytes.fromhex(chunk)
        i += 1 + 2 * n
    try:
        key = out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return key if slug(key) == s else None


def cohort_name(engine: Engine, as_of: datetime, s: str) -> str | None:
    name = unslug(s)
    if name is not None:
        return name
    # an overlong (hashed) slug: find the cohort whose slug it is
    return next((n for n in cohort_names(engine, as_of) if slug(n) == s), None)


def model_name(engine: Engine, as_of: datetime, s: str) -> str | None:
    name = unslug(s)
    if name is not None:
        return name
    return next((n for n in agent_names(engine, as_of) if slug(n) == s), None)  # an overlong (hashed) slug


def market_id_of(engine: Engine, as_of: datetime, s: str) -> str | None:
    mid = unslug(s)
    if mid is not None:
        return mid
    return next((m for m in touched_market_ids(engine, as_of) if slug(m) == s), None)
