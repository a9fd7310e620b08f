"""Benchmark: what the fact-version triggers (migration 0018) cost a venue sync.

Run: ``.venv/bin/python benchmarks/bench_fact_versions.py [--n 10000] [--repeat 5] [--db postgresql://…]``

`bench_parse.py`'s sync series (first sync into an empty store, a second an hour later with 1 % of prices
changed; the real `sync_polymarket`, unchanged payloads skipped) on stores at revision 0017 (no triggers) and
at head (the triggers), alternated in one process so both see the same machine load. Each store is fresh (a
new SQLite file, or a PostgreSQL schema dropped afterwards). The fastest of the repeats is shown for each step,
with the median beside it, and second / first (goal ≤ 20 %).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_parse import FETCHED_AT, open_listing, pages_of, reprice, timed_sync  # noqa: E402

BEFORE = "0017"  # the revision before the triggers


def fresh_store(db: str | None, where: Path, revision: str):  # type: ignore[no-untyped-def]
    """An empty store at `revision`, and what drops it."""
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from arena.store.engine import make_engine, migrate, normalize_url

    if db is None:
        engine = make_engine(f"sqlite:///{where / uuid.uuid4().hex}.sqlite")
        migrate(engine, revision)
        return engine, engine.dispose
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = make_engine(db)
    with admin.begin() as c:
        c.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(normalize_url(db)).update_query_dict({"options": f"-csearch_path={schema}"})
    engine = make_engine(url.render_as_string(hide_password=False))
    migrate(engine, revision)

    def drop() -> None:
        engine.dispose()
        with admin.begin() as c:
            c.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

    return engine, drop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="markets (default 10,000)")
    parser.add_argument("--repeat", type=int, default=5, help="series per revision (default 5)")
    parser.add_argument("--db", default=None, help="a PostgreSQL URL (default: SQLite files in a temp directory)")
    args = parser.parse_args(argv)
    from datetime import timedelta

    from arena.store.engine import head_revision

    rows, origin = open_listing(args.n)
    hour = FETCHED_AT + timedelta(hours=1)
    first_pages, second_pages = pages_of(rows), pages_of(reprice(rows, hour))
    revisions = {f"before ({BEFORE}, no triggers)": BEFORE, f"after ({head_revision()}, triggers)": "head"}
    times: dict[str, dict[str, list[float]]] = {k: {"first": [], "second": []} for k in revisions}
    print(f"{len(rows):,} markets ({origin}); {'PostgreSQL' if args.db else 'SQLite'}; {args.repeat} series each, "
          "alternated")
    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.repeat):
            for label, revision in revisions.items():
                engine, drop = fresh_store(args.db, Path(d), revision)
                try:
                    times[label]["first"].append(timed_sync(engine, first_pages, FETCHED_AT, True)["total"])
                    times[label]["second"].append(timed_sync(engine, second_pages, hour, True)["total"])
                finally:
                    drop()
    for label, t in times.items():
        first, second = min(t["first"]), min(t["second"])
        ratios = [s / f for f, s in zip(t["first"], t["second"])]
        print(f"  {label:28s} first {first:6.3f} s (median {statistics.median(t['first']):6.3f})  "
              f"second {second:6.3f} s (median {statistics.median(t['second']):6.3f})  "
              f"second/first {second / first:6.1%} (median of the series {statistics.median(ratios):6.1%})  "
              "[goal <= 20 %]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
