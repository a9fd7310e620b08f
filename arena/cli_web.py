"""The web commands `arena render` and `arena serve`: thin wiring from parsed arguments to `arena.web`.

`configure_render_parser` / `configure_serve_parser` add the arguments to a subparser; `render_command` /
`serve_command` take the parsed namespace and return an exit code.
"""

from __future__ import annotations

import argparse
import errno
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from arena.cli_args import DB_HELP, parse_at, path_arg, port
from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.web.serve import ArenaServer


def configure_render_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--out", required=True, type=path_arg, help="directory to write the static site into")
    p.add_argument("--db", default=None, help=DB_HELP)
    p.add_argument("--as-of", "--at", dest="as_of", default=None, type=parse_at,
                   help="mark and score as of this UTC time (ISO 8601, e.g. 2026-03-01T00:00); default: now")
    p.add_argument("--full", action="store_true",
                   help="build every page again (default: only the pages whose inputs changed since the last "
                        "render into --out; a page is written only when its bytes changed)")
    p.set_defaults(func=render_command)
    return p


def configure_serve_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--db", default=None, help=DB_HELP)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=port, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--as-of", default=None, type=parse_at,
                   help="serve the site as it stood at this UTC time (ISO 8601): only facts recorded by then; "
                        "default: live, as of each request")
    p.set_defaults(func=serve_command)
    return p


def render_command(args: argparse.Namespace) -> int:
    """`arena render --out DIR [--db URL] [--as-of T] [--full]`: write the static site."""
    from arena.progress import Progress
    from arena.store.engine import open_existing_store
    from arena.web.render import RENDER_STAGES, render_site

    as_of: datetime = getattr(args, "as_of", None) or datetime.now(timezone.utc)  # parsed by cli_args.parse_at
    engine = open_existing_store(args.db)
    print(f"arena render: writing the site as of {as_of:%Y-%m-%d %H:%M} UTC into {args.out} …", flush=True)
    try:
        with Progress(RENDER_STAGES, "arena render", unit="stage", every=1) as bar:
            report = render_site(engine, args.out, as_of, on_stage=lambda name: bar.update(1, name),
                                 full=bool(getattr(args, "full", False)))
    finally:
        engine.dispose()
    print(report.summary())
    print(f"open {report.out_dir / 'index.html'}")
    return 0


def serve_command(args: argparse.Namespace) -> int:
    """`arena serve [--db URL] [--host H] [--port P] [--as-of T]`: serve the site live from the database, or as
    it stood at T (the store as of T is read once, at start)."""
    from arena.clock import FixedClock
    from arena.read.point_in_time import store_as_of
    from arena.store.engine import open_existing_store
    from arena.web.serve import serve

    as_of = getattr(args, "as_of", None)  # parsed by cli_args.parse_at
    engine = open_existing_store(args.db)

    def ready(server: ArenaServer) -> None:
        when = f" as of {as_of:%Y-%m-%d %H:%M} UTC" if as_of is not None else ""
        print(f"serving the arena{when} at {server.url} (Ctrl-C to stop)", flush=True)

    try:
        if as_of is None:
            serve(engine, args.host, args.port, on_ready=ready)
        else:
            with store_as_of(engine, as_of) as past:
                serve(past, args.host, args.port, clock=FixedClock(as_of), on_ready=ready)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ArenaError(f"port {args.port} on {args.host} is already in use",
                             fix="pass --port N (0 picks a free one) or stop the program holding it") from None
        if exc.errno == errno.EACCES:
            raise ArenaError(f"not allowed to listen on port {args.port}",
                             fix="ports below 1024 need privileges; pass --port 8000 or above") from None
        raise ArenaError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                         fix="check --host (an address of this machine, e.g. 127.0.0.1) and --port") from None
    finally:
        engine.dispose()
    return 0


__all__ = ["configure_render_parser", "configure_serve_parser", "render_command", "serve_command"]
