"""What the caches hold and how to empty them (`arena cache stats|clear`): the memo tables in the store
(`memo`, by kind: frames, board, cohort part, overall part, model pairs) and a rendered site's page manifest (`.arena-site.json`). Every entry is a memo,
never a fact: clearing costs the next read or render its time, and changes no number."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine

from arena.cache.code import code_digest
from arena.store.tables import MemoRow, table_of

KINDS = ("frames", "board", "cohort part", "overall part", "model pairs")  # what the memo table holds (`cache`)
SITE_MANIFEST = ".arena-site.json"  # written in a rendered site's folder by `web.site_manifest`


@dataclass(frozen=True)
class CacheStats:
    """One cache: its name, how many entries it holds and their payload bytes (None where not measured)."""

    name: str
    entries: int
    payload_bytes: int | None
    cohorts: int | None = None

    def line(self) -> str:
        size = "" if self.payload_bytes is None else f", {self.payload_bytes / 1e6:,.2f} MB"
        of = "" if self.cohorts is None else f" over {self.cohorts} cohort{'s' * (self.cohorts != 1)}"
        return f"{self.name}: {self.entries} entr{'y' if self.entries == 1 else 'ies'}{of}{size}"


def stats(engine: Engine, site: Path | None = None) -> list[CacheStats]:
    """The memo table's entries and sizes by kind and, given a site folder, its page manifest's."""
    t = table_of(MemoRow)
    with engine.connect() as conn:
        found = {kind: (n, size, cohorts) for kind, n, size, cohorts in conn.execute(
            select(t.c.kind, func.count(), func.coalesce(func.sum(func.length(t.c.payload)), 0),
                   func.count(func.distinct(t.c.cohort))).group_by(t.c.kind))}
    out = [CacheStats(f"memo {kind}", *(int(v) for v in found.get(kind, (0, 0, 0))))
           for kind in (*KINDS, *sorted(set(found) - set(KINDS)))]
    if site is not None:
        manifest = site / SITE_MANIFEST
        if manifest.is_file():
            import orjson

            try:
                pages = len(orjson.loads(manifest.read_bytes()).get("pages", {}))
            except (orjson.JSONDecodeError, AttributeError):
                pages = 0
            out.append(CacheStats(f"{site}/{SITE_MANIFEST}", pages, manifest.stat().st_size))
        else:
            out.append(CacheStats(f"{site}/{SITE_MANIFEST}", 0, None))
    return out


def clear(engine: Engine, site: Path | None = None) -> list[CacheStats]:
    """Empty the memo table (one transaction) and remove the site's page manifest (its next render then rewrites
    every page whose bytes changed). Returns what was there before."""
    before = stats(engine, site)
    with engine.begin() as conn:
        conn.execute(delete(table_of(MemoRow)))
    if site is not None:
        (site / SITE_MANIFEST).unlink(missing_ok=True)
    return before


__all__ = ["CacheStats", "KINDS", "SITE_MANIFEST", "clear", "code_digest", "stats"]
