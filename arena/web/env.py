"""The site's Jinja environment: the repo's `templates/` with autoescape and StrictUndefined, the formatting
filters (money, percent, probability, price, shares, dates) and `url_for`, which builds links relative to the
page being rendered so the static site works from any directory and from file://.

Filters only format a value the context already holds; none computes a metric. Imports no store or service.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from decimal import Decimal
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context
from jinja2.runtime import Context

TEMPLATES = Path(str(files("arena._templates")))  # package data: the repo's templates/, installed as arena._templates
DASH = "—"  # what an unknown number shows: never 0, which would read as a score
MICRO = 1_000_000

_UNSAFE = re.compile(r"[^A-Za-z0-9-]")
_MAX_SLUG = 120


def _escaped(m: re.Match[str]) -> str:
    return "_" + m.group().encode("utf-8").hex()


@lru_cache(maxsize=1 << 17)  # a render spells every page's path: tens of thousands of ids, each spelled once
def slug(key: str) -> str:
    """A file-name-safe, injective spelling of an id: letters, digits and '-' stay, every other character
    becomes '_' + its UTF-8 bytes in hex ("sim:1" → "sim_3a1"). Overlong results keep a readable prefix and
    end in a hash of the whole id, so two ids never share a file."""
    s = _UNSAFE.sub(_escaped, str(key))
    if len(s) > _MAX_SLUG:
        import hashlib

        s = s[:80] + "_h" + hashlib.blake2b(str(key).encode("utf-8"), digest_size=12).hexdigest()
    return s or "_"


def page_path(endpoint: str, key: object = None) -> str:
    """The site-relative path of a page ("agents/3.html") — the same in the static site and the live server."""
    if endpoint == "index":
        return "index.html"
    if endpoint in ("methodology", "operations", "markets"):
        return f"{endpoint}.html"
    if endpoint == "cohort":
        return f"cohorts/{slug(str(key))}.html"
    if endpoint == "statistics":
        return f"cohorts/{slug(str(key))}-statistics.html"
    if endpoint == "agent":
        return f"agents/{int(key)}.html"  # type: ignore[call-overload]
    if endpoint == "market":
        return f"markets/{slug(str(key))}.html"
    if endpoint == "model":
        return f"models/{slug(str(key))}.html"
    if endpoint == "model_year":  # key: (model name, year)
        name, year = key  # type: ignore[misc]
        return f"models/{slug(str(name))}/{int(year)}.html"
    if endpoint == "cohort_api":
        return f"api/cohorts/{slug(str(key))}.json"
    if endpoint == "model_api":
        return f"api/models/{slug(str(key))}.json"
    if endpoint == "static":
        name = str(key)
        if not re.fullmatch(r"[a-z0-9_.-]+", name) or ".." in name:
            raise ValueError(f"bad static file name {name!r}")
        return f"static/{name}"
    raise ValueError(f"unknown page kind {endpoint!r}")


def root_for(path: str) -> str:
    """The relative prefix from a page back to the site root: "" for "index.html", "../" for "agents/3.html"."""
    return "../" * path.count("/")


@pass_context
def url_for(context: Context, endpoint: str, key: object = None) -> str:
    """A link to another page, relative to the page being rendered (its `root` prefix)."""
    return str(context["root"]) + page_path(endpoint, key)


# --- formatting filters ------------------------------------------------------------------------------------

def _missing(value: Any) -> bool:
    """None or NaN (float, numpy or pandas): a number nobody knows yet."""
    if value is None:
        return True
    if isinstance(value, (int, Decimal, str, datetime)):
        return False
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def _rounded(micros: int, places: int = 2) -> tuple[bool, int]:
    """(negative, |value| in units of 10^-places), rounded half-even from micro-units — integers only."""
    unit = 10 ** (6 - places)
    q, r = divmod(abs(micros), unit)
    if 2 * r > unit or (2 * r == unit and q % 2 == 1):
        q += 1
    return micros < 0 and q > 0, q


def money(micros: Any, signed: bool = False, places: int = 2) -> str:
    """Integer micro-USD → "$1,234.56" (rounded half-even to `places` decimals, cents by default; "-$1,234.56"
    when negative; "+$…" when `signed` and positive). None → "—"."""
    if micros is None:
        return DASH
    if isinstance(micros, float):
        raise TypeError("money takes integer micro-USD, not a float")
    neg, q = _rounded(int(micros), places)
    sign = "-" if neg else ("+" if signed and q > 0 else "")
    scale = 10 ** places
    return f"{sign}${q // scale:,}.{q % scale:0{places}d}"


def usd(value: Any) -> str:
    """A float USD ratio (a cost per resolved forecast, not a money fact) → "$1.23" from a dollar up, two
    significant digits below ("$0.0016", "$0.000051"); NaN or None → "—"."""
    if _missing(value):
        return DASH
    v = float(value)
    if abs(v) >= 1 or v == 0:
        return f"${v:,.2f}"
    return f"${v:.{max(2, 1 - math.floor(math.log10(abs(v))))}f}"  # two significant digits: $0.0016, $0.000051


def signed_money(micros: Any) -> str:
    return money(micros, signed=True)


def number(value: Any, digits: int = 3, signed: bool = False) -> str:
    """A float with `digits` decimals ("+0.12" when signed); NaN or None → "—"."""
    if _missing(value):
        return DASH
    return f"{float(value):{'+' if signed else ''},.{digits}f}"


def integer(value: Any) -> str:
    if _missing(value):
        return DASH
    return f"{int(value):,d}"


def percent(value: Any, digits: int = 1, signed: bool = True) -> str:
    """A value already in percent (a return) → "+12.3%"; NaN → "—"."""
    if _missing(value):
        return DASH
    return f"{float(value):{'+' if signed else ''}.{digits}f}%"


def fraction_percent(value: Any, digits: int = 0) -> str:
    """A fraction in [0, 1] (a win rate) → "56%"; NaN → "—"."""
    if _missing(value):
        return DASH
    return f"{100.0 * float(value):.{digits}f}%"


def probability(value: Any, digits: int = 3) -> str:
    """A probability in [0, 1] → "0.123"; NaN → "—"."""
    return number(value, digits)


def price(ppm: Any) -> str:
    """An integer price in ppm → its exact decimal, at least two places ("0.772", "0.50", "0.123456")."""
    if ppm is None:
        return DASH
    v = int(ppm)
    whole, frac = divmod(abs(v), MICRO)
    digits = f"{frac:06d}".rstrip("0").ljust(2, "0")
    return f"{'-' if v < 0 else ''}{whole}.{digits}"


def shares(micro_shares: Any) -> str:
    """Micro-shares → "1,250.00" (two decimals, half-even)."""
    if micro_shares is None:
        return DASH
    neg, q = _rounded(int(micro_shares))
    return f"{'-' if neg else ''}{q // 100:,}.{q % 100:02d}"


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


@lru_cache(maxsize=65_536)
def dt(value: Any) -> str:
    """A datetime → "2026-01-04 00:05 UTC"; None → "—". (Cached: a site repeats the same instants a lot.)"""
    if value is None:
        return DASH
    return _utc(value).strftime("%Y-%m-%d %H:%M UTC")


def date(value: Any) -> str:
    if value is None:
        return DASH
    return _utc(value).strftime("%Y-%m-%d")


FILTERS = {
    "money": money,
    "signed_money": signed_money,
    "usd": usd,
    "number": number,
    "integer": integer,
    "percent": percent,
    "fraction_percent": fraction_percent,
    "probability": probability,
    "price": price,
    "shares": shares,
    "dt": dt,
    "date": date,
    "slug": slug,
}


@lru_cache(maxsize=None)
def environment(templates: Path = TEMPLATES) -> Environment:
    """The one Environment of the site (templates compiled once per process)."""
    env = Environment(
        loader=FileSystemLoader(str(templates)),
        autoescape=True,  # every template here is HTML; untrusted text is escaped wherever it is printed
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update(FILTERS)
    env.globals["url_for"] = url_for
    env.globals["DASH"] = DASH
    return env


def render_page(template: str, page: object, path: str) -> str:
    """Render `template` for the page at site path `path` with its typed context `page`."""
    return environment().get_template(template).render(page=page, root=root_for(path), path=path)


__all__ = ["DASH", "FILTERS", "TEMPLATES", "environment", "page_path", "render_page", "root_for", "slug",
           "url_for"]
