"""The live server: `serve` on port 0 in a thread, pages fetched over loopback are the static pages, unknown
paths are 404, responses carry a strict content-security policy, and the server stops cleanly."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request

import pytest

from arena.clock import FixedClock
from arena.web.env import page_path
from arena.web.render import render_site
from arena.web.serve import ArenaServer, serve


@pytest.fixture
def live(populate_arena, engine):  # type: ignore[no-untyped-def]
    arena = populate_arena(engine, days=9, cohorts=1, decision_weeks=1, markets_per_week=6)
    ready = threading.Event()
    box: list[ArenaServer] = []

    def on_ready(server: ArenaServer) -> None:
        box.append(server)
        ready.set()

    thread = threading.Thread(target=serve, args=(engine, "127.0.0.1", 0, FixedClock(arena.as_of), on_ready, True),
                              daemon=True)
    thread.start()
    assert ready.wait(10), "the server did not start"
    yield arena, box[0]
    box[0].shutdown()
    thread.join(10)
    assert not thread.is_alive()


def _get(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_serve_answers_pages_over_loopback(live, tmp_path):
    arena, server = live
    host, port = server.server_address[:2]
    assert host == "127.0.0.1" and port > 0
    site = tmp_path / "site"
    render_site(arena.engine, site, arena.as_of)

    status, headers, body = _get(server.url)
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert body.decode() == (site / "index.html").read_text(encoding="utf-8")
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"

    for path in ("index.html", "methodology.html", "operations.html", page_path("agent", arena.xss_agent_id),
                 page_path("market", arena.xss_market_id), "cohorts/cohort-2026-01-04.html"):
        status, _, body = _get(server.url + path)
        assert status == 200, path
        assert body.decode() == (site / path).read_text(encoding="utf-8"), path
    status, headers, body = _get(server.url + "static/sort.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert body.decode() == (site / "static" / "sort.js").read_text(encoding="utf-8")

    status, headers, body = _get(server.url + "agents/1.html", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000


UNKNOWN = ["nope.html", "agents/999999.html", "agents/abc.html", "agents/1.html/x", "cohorts/cohort-1999-01-01.html",
           "markets/sim_3a99999.html", "markets/zz_zz.html", "static/other.js", "../../etc/passwd",
           "%2e%2e/README.md", "templates/base.html", "index.html/..", "db/arena.sqlite",
           "%3Cscript%3Ealert(1)%3C/script%3E.html"]


def test_serve_answers_404_for_unknown_paths(live):
    _, server = live
    for path in UNKNOWN:
        status, headers, body = _get(server.url + path)
        assert status == 404, path
        assert b"Not found" in body and headers["Content-Type"].startswith("text/html"), path
        # styled like every page: the stylesheet link climbs back to the root from the asked path's depth
        depth = min(path.lstrip("/").count("/"), 8)
        assert f'href="{"../" * depth}static/site.css"'.encode() in body, path
        assert b"<script" not in body.split(b"</head>")[1], path  # the asked path is escaped, never markup


def test_serve_answers_the_boards_of_some_questions_and_400_on_a_bad_query(live):
    """/api/leaderboard.json?from=…&until=…&category=… is `arena leaderboard --from … --format json` (the
    site's filter); a bad day, a window ending before it starts, an unknown category or parameter is a 400 with
    its reason."""
    import json

    from arena.read.standings import boards_json, standings
    from arena.domain.question_filter import QuestionFilter

    from datetime import date

    from arena.read.breakdown import known_categories

    arena, server = live
    two = known_categories(arena.engine)[:2]
    assert len(two) == 2
    status, _, body = _get(server.url + f"api/leaderboard.json?from=2026-01-05&category={two[1]}&category={two[0]}")
    assert status == 200, body
    doc = json.loads(body)
    assert doc["filter"] == {"from": "2026-01-05", "until": None, "categories": two}
    expected = boards_json(standings(arena.engine, arena.as_of, questions=QuestionFilter(date(2026, 1, 5), None,
                                                                                         tuple(two))))
    assert doc == json.loads(json.dumps(expected))
    status, _, body = _get(server.url + "api/leaderboard.json")
    assert status == 200 and json.loads(body)["filter"] is None
    for query, words in (("from=2026-13-01", b"is not a date"), ("from=2026-02-01&until=2026-01-01", b"is after"),
                         ("category=astrology", b"unknown category"), ("colour=red", b"unknown parameter")):
        status, headers, body = _get(server.url + "api/leaderboard.json?" + query)
        assert status == 400 and words in body and headers["Content-Type"].startswith("text/plain"), query
        assert body.count(b"\n") == 1
