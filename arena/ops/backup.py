"""Backup: an online copy of the SQLite database (sqlite3's backup API, safe while the arena writes), keeping
the newest N copies. PostgreSQL is backed up with pg_dump when it is installed.

Copies go where they are asked (`--backup-dir`), else beside the database: `backups/` next to a SQLite file,
`./backups` (the working directory) for a server database — never into the arena's own checkout."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from datetime import datetime
from pathlib import Path

from sqlalchemy.engine import Engine, make_url


def default_backup_dir(engine: Engine) -> Path:
    """`backups/` beside a SQLite database file; `backups/` in the data directory for any other database."""
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return Path(url.database).resolve().parent / "backups"
    from arena.store.engine import data_dir

    return data_dir() / "backups"


def backup(engine: Engine, now: datetime, directory: Path | None = None, keep: int = 7) -> dict[str, object]:
    """Write `arena-<UTC timestamp>.sqlite` (or `.sql` for PostgreSQL) into `directory` (default
    `default_backup_dir`), prune to `keep`."""
    url = make_url(engine.url.render_as_string(hide_password=False))
    if url.get_backend_name() == "sqlite" and (not url.database or url.database == ":memory:"):
        return {"status": "skipped", "reason": "in-memory database"}
    directory = Path(directory or default_backup_dir(engine))
    directory.mkdir(parents=True, exist_ok=True)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            return {"status": "skipped", "reason": "in-memory database"}
        target = directory / f"arena-{stamp}.sqlite"
        src = sqlite3.connect(url.database)
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
            src.close()
        pattern = "arena-*.sqlite"
    elif url.get_backend_name() == "postgresql":
        if shutil.which("pg_dump") is None:
            return {"status": "skipped", "reason": "pg_dump is not installed"}
        target = directory / f"arena-{stamp}.sql"
        plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
        with open(target, "wb") as fh:
            subprocess.run(["pg_dump", "--no-owner", plain], stdout=fh, check=True, timeout=3600)
        pattern = "arena-*.sql"
    else:
        return {"status": "skipped", "reason": f"no backup method for {url.get_backend_name()}"}
    copies = sorted(directory.glob(pattern))
    for old in copies[:-keep] if keep > 0 else []:
        old.unlink()
    return {"status": "ok", "file": str(target), "bytes": target.stat().st_size, "kept": min(len(copies), keep)}
