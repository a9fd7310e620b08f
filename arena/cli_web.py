"""The web commands `arena render` and `arena serve`: thin wiring from parsed arguments to `arena.web`.

`configure_render_parser` / `configure_serve_parser` add the arguments to a subparser; `render_command` /
`serve_command` take the parsed namespace and return an exit code.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone


def configure_render_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--out", required=True, help="directory to write the static site into")
    p.add_argument("--db", default=None, help="SQLAlchemy URL (default: ARENA_DATABASE_URL or db/arena.sqlite)")
    p.add_argument("--as-of", default=None,
                   help="mark and score as of this UTC time (ISO 8601, e.g. 2026-03-01T00:00); default: now")
    p.set_defaults(func=render_command)
    return p


def configure_serve_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--db", default=None, help="SQLAlchemy URL (default: ARENA_DATABASE_URL or db/arena.sqlite)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.set_defaults(func=serve_command)
    return p


def _as_of(text: str | None) -> datetime:
    if not text:
        return datetime.now(timezone.utc)
    t = datetime.fromisoformat(text)
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def render_command(args: argparse.Namespace) -> int:
    """`arena render --out DIR [--db URL] [--as-of T]`: write the static site."""
    from arena.store.engine import open_store
    from arena.web.render import render_site

    try:
        as_of = _as_of(getattr(args, "as_of", None))
    except ValueError:
        print(f"--as-of must be an ISO 8601 time, got {args.as_of!r}", file=sys.stderr)
        return 2
    engine = open_store(args.db)
    try:
        report = render_site(engine, args.out, as_of)
    finally:
        engine.dispose()
    print(report.summary())
    print(f"open {report.out_dir / 'index.html'}")
    return 0


def serve_command(args: argparse.Namespace) -> int:
    """`arena serve [--db URL] [--host H] [--port P]`: serve the site live from the database."""
    from arena.store.engine import open_store
    from arena.web.serve import serve

    engine = open_store(args.db)

    def ready(server) -> None:  # type: ignore[no-untyped-def]
        print(f"serving the arena at {server.url} (Ctrl-C to stop)", flush=True)

    try:
        serve(engine, args.host, args.port, on_ready=ready)
    except KeyboardInterrupt:
        pass
    finally:
        engine.dispose()
    return 0


__all__ = ["configure_render_parser", "configure_serve_parser", "render_command", "serve_command"]
