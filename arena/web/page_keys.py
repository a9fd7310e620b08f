"""Page keys: for each page of the site, a hash naming everything it is built from, so a scheduled render can
leave a page alone when its key did not move (`web.site_manifest` remembers the keys a site was written with).

Keys are computed on a store holding nothing recorded after the render's time (`render_site` renders a
point-in-time copy otherwise), so a page is a function of the facts alone, and the facts are named by their
versions (`read.fact_versions`: the database raises a cohort's or a market's version with every write that can
change what it shows).

- A cohort's key covers its page, its agents' pages, its statistics page and its JSON: the cohort's version, the
  name of its frame-cache entry (`cache.frame_cache`: unique to this database) and the versions of the markets its
  facts name (traded, forecast or asked).
- A market's key covers its page: the market's version and the versions of the cohorts whose facts name it
  (its page shows their agents' fills and forecasts, and the difficulty of the question in the rounds that asked
  it). The site's markets are the markets the cohorts traded or forecast.
- A model's year page (`model_year_key`) is keyed by the keys of its cohorts that year and by the list of its
  years (its navigation); the market list (`market_list_key`) by every site market's key.
- Every key is made by `arena.cache.code.key`, over the code digest: a new release re-renders everything.

- The model pages and their JSON (`model_pages_key`) are keyed by every cohort's key: a model is compared with
  every other over every cohort, and its page shows the overall board.

The other pages that gather every cohort (the index, the JSON of the whole board) have no key: they are built on
every render, and written only when their bytes changed. A store whose triggers keep no
versions (a point-in-time copy) gets keys no site was written with: every page is built.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine

from arena.cache.code import key
from arena.cache.frame_cache import cohort_frames
from arena.read.cohorts import cohort_lineups
from arena.read.fact_versions import versions_kept, versions_of


@dataclass(frozen=True)
class PageKeys:
    cohorts: dict[str, str]  # cohort name → the key of its pages
    agents: dict[str, list[int]]  # cohort name → its agents' ids (whose pages its key covers)
    markets: dict[str, str]  # market id → the key of its page
    ids: dict[str, int]  # cohort name → id

    def by_id(self) -> dict[int, str]:
        """cohort id → the key of its pages."""
        return {self.ids[n]: k for n, k in self.cohorts.items()}


def page_keys(engine: Engine, as_of: datetime) -> PageKeys:
    """Every cohort's and every site market's page key, on a store holding nothing recorded after `as_of`
    (module docstring)."""
    # (the standings' cohorts in the standings' order: one reading of their frames serves both)
    names, agents = cohort_lineups(engine, as_of)
    ids = list(names)
    # the markets each cohort's facts name, from its frame-cache entry (kept with the cohort's version)
    frames = cohort_frames(engine, [(cid, names[cid]) for cid in ids], as_of) if ids else None
    sets = {cid: frames.touched[names[cid]] for cid in ids} if frames is not None else {}
    reads = {cid: frames.markets[names[cid]] for cid in ids} if frames is not None else {}
    site = {m for cid in ids for m in sets[cid]}  # the markets given a page: traded or forecast
    touching: dict[str, list[int]] = {m: [] for m in sorted(site)}  # site market → the cohorts whose facts name it
    for cid in ids:
        for m in reads[cid]:
            if m in touching:
                touching[m].append(cid)
    read = sorted({m for c in ids for m in reads[c]})
    version: dict[int, object]
    markets: dict[str, object]
    if versions_kept(engine) and frames is not None and set(frames.keys) == set(names.values()):
        cohort_v, market_v = versions_of(engine, ids, read)
        # beside its version, a cohort is named by its frame-cache entry, whose nonce is this database's own:
        # a process serving several databases never takes one's keys for another's (`web.skill_luck` and
        # `read.agent_standings` keep slices under these keys)
        version = {cid: [v, frames.keys[names[cid]]] for cid, v in cohort_v.items()}
        markets = dict(market_v)
    else:  # no versions: keys no site was written with
        version = {cid: secrets.token_hex(16) for cid in ids}
        markets = {m: secrets.token_hex(16) for m in read}
    cohorts = {names[cid]: key("cohort", cid, version[cid], [(m, markets[m]) for m in reads[cid]]) for cid in ids}
    return PageKeys(cohorts, agents,
                    {m: key("market", m, markets[m], [(cid, version[cid]) for cid in by]) for m, by in touching.items()},
                    {n: c for c, n in names.items()})


def market_list_key(keys: PageKeys) -> str:
    """The key of the market list: every site market's key (its row, and the trades and forecasts on it, which
    give its cohorts, bets and bettors)."""
    return key("market list", sorted(keys.markets.items()))


def model_year_key(name: str, year: int, cohort_keys: list[str], years: list[int]) -> str:
    """The key of a model's year page: its cohorts' keys (each covering that cohort's boards, standings, skill vs
    luck and equity) and the years its navigation lists."""
    return key("model year", name, year, cohort_keys, years)


def model_pages_key(keys: PageKeys) -> str:
    """The key of every model page and its JSON: every cohort's key (its facts and its markets' versions, which
    cover the comparisons, breakdowns, projections, costs and frontier computed from them, and the boards)."""
    return key("model pages", sorted(keys.cohorts.items()))


__all__ = ["PageKeys", "market_list_key", "model_pages_key", "model_year_key", "page_keys"]
