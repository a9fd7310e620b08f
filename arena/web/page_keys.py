"""Page keys: for each page of the site, a hash naming everything it is built from, so a scheduled render can
leave a page alone when its key did not move (`web.site_manifest` remembers the keys a site was written with).

- A cohort's key covers its page, its agents' pages, its statistics page and its JSON: the cohort's frames
  (`store.fingerprints.cohort_marks`), what its pages show beside them (`store.page_marks.cohort_page_marks`)
  and the rows, resolutions and prices of every market it touched.
- A market's key covers its page: its row, resolutions and prices (`store.page_marks.market_marks`), and every
  agent's fills and forecasts on it — named by the frames and agent rows of each cohort that touched it (a new
  fill or forecast of a cohort re-renders the pages of the markets that cohort touched, whose bytes mostly stay
  the same and are not written). The site's markets are the markets the cohorts touched.
- Both include `code_digest`: the arena's code, its templates and the versions of the libraries that shape a
  page, so a new release re-renders everything.

- A model's year page (`model_year_key`) is keyed by the keys of its cohorts that year and by the list of its
  years (its navigation).

- The market list (`market_list_key`) is keyed by every site market's key.

The other pages that gather every cohort (the index, the model pages, the JSON of the whole board) have no key:
they are built on every render, and written only when their bytes changed.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import orjson
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.cache.code import code_digest as package_digest
from arena.store import fingerprints
from arena.store.fingerprints import Marks, cohort_marks, without_snapshots
from arena.store.memo import Recent
from arena.store.page_marks import cohort_markets, cohort_page_marks, market_marks
from arena.store.tables import AgentRow, CohortRow

_MARKET_SETS: Recent[list[str]] = Recent(200_000)  # (cohort id, its marks) → its markets: facts unchanged, same set


def code_digest() -> str:
    """The package-wide code digest (`arena.cache.code`) with the page keys' format."""
    return f"page keys 1 {package_digest()}"


@dataclass(frozen=True)
class PageKeys:
    cohorts: dict[str, str]  # cohort name → the key of its pages
    agents: dict[str, list[int]]  # cohort name → its agents' ids (whose pages its key covers)
    markets: dict[str, str]  # market id → the key of its page
    ids: dict[str, int]  # cohort name → id

    def by_id(self) -> dict[int, str]:
        """cohort id → the key of its pages."""
        return {self.ids[n]: k for n, k in self.cohorts.items()}


def _hash(*parts: object) -> str:
    return hashlib.sha256(orjson.dumps([code_digest(), *parts])).hexdigest()


def _page_marks(engine: Engine, ids: list[int], as_of: datetime) -> dict[int, Marks]:
    with Session(engine) as s:
        return cohort_page_marks(s, ids, as_of)


def page_keys(engine: Engine, as_of: datetime) -> PageKeys:
    """Every cohort's and every site market's page key as of `as_of` (module docstring). The page marks are read
    on a second connection while this one reads the frames' marks: the database aggregates both at once (the
    driver lets go of the interpreter while a statement runs), on two cores about 40 % sooner; `cohort_marks` reads
    the forecasts' on a third."""
    with Session(engine) as s, ThreadPoolExecutor(1) as pool:
        conn = s.connection()
        names = dict(conn.execute(select(CohortRow.id, CohortRow.name)).all())
        ids = sorted(names)
        beside = pool.submit(_page_marks, engine, ids, as_of) if fingerprints.shared_by_threads(engine) else None
        agents: dict[str, list[int]] = defaultdict(list)
        for aid, cid in conn.execute(select(AgentRow.id, AgentRow.cohort_id).order_by(AgentRow.id)):
            agents[names[cid]].append(int(aid))
        frames = cohort_marks(s, ids, as_of, beside=engine)
        tags = {cid: f"{cid}:{without_snapshots(frames.get(cid))}" for cid in ids}  # (a daily mark moves no set)
        sets = _MARKET_SETS.get_many(tags.values())
        missing = [cid for cid in ids if tags[cid] not in sets]
        if missing:
            found = cohort_markets(s, missing)
            _MARKET_SETS.put_many({tags[cid]: found[cid] for cid in missing})
            sets.update({tags[cid]: found[cid] for cid in missing})
        touching: dict[str, list[int]] = defaultdict(list)  # market → the cohorts that touched it
        for cid in ids:
            for m in sets[tags[cid]]:
                touching[m].append(cid)
        markets = market_marks(s, sorted(touching), as_of)
        pages = beside.result() if beside is not None else cohort_page_marks(s, ids, as_of)
    cohorts = {names[cid]: _hash("cohort", cid, frames.get(cid), pages.get(cid), [(m, markets[m]) for m in sets[tags[cid]]])
               for cid in ids}
    # a market's page shows every agent's fills and forecasts on it, with their agents' and cohorts' names: the
    # frames (fills, decisions, forecasts) and the cohort and agent rows (the page marks' first field) of the
    # cohorts that touched it (not their daily marks, which no market page shows)
    activity = {cid: (without_snapshots(frames.get(cid)), pages[cid][0] if cid in pages else None) for cid in ids}
    return PageKeys(cohorts, dict(agents),
                    {m: _hash("market", m, markets[m], [(cid, activity[cid]) for cid in by]) for m, by in touching.items()},
                    {n: c for c, n in names.items()})


def market_list_key(keys: PageKeys) -> str:
    """The key of the market list: every site market's key (its row, and the trades and forecasts on it, which
    give its cohorts, bets and bettors)."""
    return _hash("market list", sorted(keys.markets.items()))


def model_year_key(name: str, year: int, cohort_keys: list[str], years: list[int]) -> str:
    """The key of a model's year page: its cohorts' keys (each covering that cohort's boards, standings, skill vs
    luck and equity) and the years its navigation lists."""
    return _hash("model year", name, year, cohort_keys, years)


__all__ = ["PageKeys", "code_digest", "market_list_key", "model_year_key", "page_keys"]
