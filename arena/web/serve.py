"""The live site: the same pages as the static renderer, rendered from the database on each request by a
stdlib `ThreadingHTTPServer` (no framework). Binds 127.0.0.1 unless told otherwise; read-only; GET and HEAD
only; no page ever shows an environment variable or the database URL. `/api/leaderboard.json?from=D&until=D&
category=C` answers the boards of those questions (`arena leaderboard --from/--until/--category`); a bad query is
400 with its reason.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

from sqlalchemy.engine import Engine

from arena.clock import Clock, SystemClock
from arena.web.api import API_PATH
from arena.web.one_page import filtered_leaderboard, not_found_page, render_path

log = logging.getLogger(__name__)

# The pages carry no inline script or style, so a strict policy costs nothing and stops injected markup cold.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

class ArenaServer(ThreadingHTTPServer):
    """A threading HTTP server that knows the database and the clock its pages are rendered with."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], engine: Engine, clock: Clock, quiet: bool = False) -> None:
        super().__init__(address, PageHandler)
        self.engine = engine
        self.clock = clock
        self.quiet = quiet

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


class PageHandler(BaseHTTPRequestHandler):
    server: ArenaServer

    def version_string(self) -> str:
        return "arena"  # no Python or library versions in the headers

    def _respond(self, with_body: bool) -> None:
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        try:
            page = None
            if parts.query and path.lstrip("/") == API_PATH:  # the boards of some questions (`filtered_leaderboard`)
                try:
                    text = filtered_leaderboard(self.server.engine, self.server.clock.now(), parts.query)
                except ValueError as exc:
                    self._send(HTTPStatus.BAD_REQUEST, "text/plain; charset=utf-8", f"{exc}\n".encode(), with_body)
                    return
                page = None if text is None else ("application/json; charset=utf-8", text)
            page = page or render_path(self.server.engine, path, self.server.clock.now())
        except Exception:  # the one boundary of a request: log it, answer 500, keep serving
            log.exception("rendering %s failed", path)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", b"internal error\n", with_body)
            return
        if page is None:
            self._send(HTTPStatus.NOT_FOUND, "text/html; charset=utf-8", not_found_page(path), with_body)
            return
        content_type, text = page
        self._send(HTTPStatus.OK, content_type, text.encode("utf-8"), with_body)

    def _send(self, status: HTTPStatus, content_type: str, body: bytes, with_body: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 — the name http.server dispatches to
        self._respond(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._respond(False)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 — the base class's signature
        if not self.server.quiet:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")


def make_server(engine: Engine, host: str = "127.0.0.1", port: int = 8000, clock: Clock | None = None,
                quiet: bool = False) -> ArenaServer:
    """A bound, not yet running server (port 0 picks a free port; see `server.url`)."""
    return ArenaServer((host, port), engine, clock or SystemClock(), quiet)


def serve(engine: Engine, host: str = "127.0.0.1", port: int = 8000, clock: Clock | None = None,
          on_ready: Callable[[ArenaServer], None] | None = None, quiet: bool = False) -> None:
    """Serve the site from `engine` until interrupted (or until `server.shutdown()` from `on_ready`'s caller).
    Pages are rendered per request as of `clock.now()` (the system clock by default)."""
    server = make_server(engine, host, port, clock, quiet)
    try:
        if on_ready is not None:
            on_ready(server)
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


__all__ = ["ArenaServer", "make_server", "serve"]
