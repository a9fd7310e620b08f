"""Simulated stores built once per test process on SQLite and copied into each test's fresh database."""

from __future__ import annotations

import sqlite3
import tempfile
import uuid
from pathlib import Path

from arena.store.engine import make_engine, migrate

_TEMPLATES: dict[str, tuple[Path, object]] = {}


def from_template(engine, key: str, build, rebind=lambda result, engine: result):  # type: ignore[no-untyped-def]
    """`build(engine)`'s result, on the test's own database. On SQLite the store is built once per test process
    for each `key` and copied (sqlite3's backup) into each test's fresh file, so tests that share a simulated
    arena do not each simulate it again; `rebind(result, engine)` points the result at the test's engine.
    On PostgreSQL every test builds its own."""
    if engine.dialect.name != "sqlite" or not engine.url.database:
        return build(engine)
    if key not in _TEMPLATES:
        path = Path(tempfile.mkdtemp(prefix="arena-template-")) / f"{uuid.uuid4().hex}.sqlite"
        template = make_engine(f"sqlite:///{path}")
        migrate(template)
        result = build(template)
        template.dispose()
        _TEMPLATES[key] = (path, result)
    path, result = _TEMPLATES[key]
    engine.dispose()
    src, dst = sqlite3.connect(path), sqlite3.connect(engine.url.database)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return rebind(result, engine)
