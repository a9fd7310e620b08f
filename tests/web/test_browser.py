"""A real headless browser (Debian's Chromium) on the rendered site, served from a local http server: the
leaderboard rows show the database's numbers, the link to an agent page works, hostile text renders as text and
runs nothing (a script in a market question would set document.title), the sort script really sorts and filters
(also from file://). Driven over the DevTools protocol (`Browser`), every kind of page is laid out at 1,400 px and
in a true 390 px phone viewport: no page scrolls sideways, the boards keep their name and headline score in view
and show every column on request, the model page's figures are the database's, and screenshots of every page at
both widths are saved ($ARENA_TEST_ARTIFACTS/browser when set, else the test's tmp_path/screenshots).
Skips cleanly when Chromium is absent."""

from __future__ import annotations

import base64
import fcntl
import functools
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from sqlalchemy import func, select
from sqlmodel import Session

from arena.domain.valuation import value_position
from arena.money import Money
from arena.read.models import model_comparisons
from arena.read.score import overall_leaderboard
from arena.read.shown_board import shown_board, shown_name, twin_of
from arena.web.model_page import _merged
from arena.read.standings import standings
from arena.store import repo
from arena.store.tables import AgentRow, CohortRow, DecisionRow, ModelCallRow
from arena.web.env import money, number, page_path
from arena.web.assets import STATIC
from arena.web.render import render_site

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--disable-extensions", "--mute-audio"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="Chromium is not installed at /usr/bin/chromium (apt-get install chromium)")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # type: ignore[no-untyped-def]  # noqa: A002
        pass


@pytest.fixture
def site(sim_arena, tmp_path) -> Iterator[tuple[object, Path, str]]:  # type: ignore[no-untyped-def]
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield sim_arena, out, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _chromium(tmp_path: Path, url: str, *args: str) -> str:
    profile = tmp_path / "chromium-profile"
    done = subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args, url],
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dom(tmp_path: Path, url: str) -> str:
    """The DOM after the page loaded and its scripts ran, serialized."""
    return _chromium(tmp_path, url, "--dump-dom")


def screenshot(tmp_path: Path, url: str, name: str, size: str) -> Path:
    target = tmp_path / name
    _chromium(tmp_path, url, f"--screenshot={target}", f"--window-size={size}")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 10_000
    return target


class _Table(HTMLParser):
    """Rows (cell texts) and hrefs of the table with a given id."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id, self.depth = table_id, 0
        self.in_body = False
        self.rows: list[list[str]] = []
        self.hrefs: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        a = dict(attrs)
        if tag == "table" and (self.depth or a.get("id") == self.table_id):
            self.depth += 1
        if not self.depth:
            return
        if tag == "tbody":
            self.in_body = True
        elif tag == "tr" and self.in_body:
            self.rows.append([])
            self.hrefs.append([])
        elif tag in ("td", "th") and self.in_body:
            self.cell = []
        elif tag == "a" and self.in_body and a.get("href"):
            self.hrefs[-1].append(str(a["href"]))

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if not self.depth:
            return
        if tag == "table":
            self.depth -= 1
        elif tag == "tbody":
            self.in_body = False
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self.cell is not None:
            self.cell.append(data)


def table(html: str, table_id: str) -> tuple[list[list[str]], list[list[str]]]:
    p = _Table(table_id)
    p.feed(html)
    return p.rows, p.hrefs


def _title(html: str) -> str:
    m = re.search(r"<title>(.*?)</title>", html, re.S)
    assert m is not None
    return m.group(1)


def _dollars(text: str) -> float:
    return float(text.replace("$", "").replace(",", "").replace("+", ""))


def test_browser_shows_the_database_and_escapes_hostile_text(site, tmp_path):
    arena, out, base = site
    engine, as_of = arena.engine, arena.as_of

    # 1. the overall leaderboard, row by row, against the scoring service
    index = dom(tmp_path, base + "index.html")
    assert _title(index) == "Leaderboard · arena"
    assert re.search(r'<th class="([^"]* )?sort"', index), "sort.js ran (it marks sortable headers)"
    rows, hrefs = table(index, "overall")
    board = overall_leaderboard(engine, as_of).to_dict("records")
    assert len(rows) == len(board) >= 7
    for row, rec in zip(rows, board):
        rank, model, cohorts, resolved, brier, band, ret, pnl, agents = row
        assert model.split(" ")[0] == rec["agent"]
        assert int(cohorts) == rec["cohorts"] == 2
        assert int(resolved) == int(rec["n_resolved"] if rec["n_resolved"] == rec["n_resolved"] else 0)
        assert brier == ("—" if rec["brier"] != rec["brier"] else f"{rec['brier']:.3f}")
        assert ret == f"{rec['mean_return_pct']:+.1f}%"
        assert abs(_dollars(pnl) - rec["total_pnl"]) < 0.006
        assert agents.count("cohort-") == 2

    # 1b. the headline board, as the browser shows it, against the standings service: order, ties, references
    head, _ = table(index, "headline")
    boards = standings(engine, as_of)
    overall = shown_board(boards.overall, boards.rank_by).to_dict("records")  # as shown: twins merged, printed ties
    # every model of the money board is on it, and the references too (a reference a seat equals on every
    # question is shown merged with that seat: "market-follower = market")
    assert len(head) == len(overall) and {r["agent"] for r in board} <= {r["model"] for r in overall}
    for row, rec in zip(head, overall):
        assert row[0] == (rec["rank_label"] or "—")
        assert row[1].startswith(rec["model"])
        assert ("reference" in row[1]) == (rec["kind"] == "reference" or bool(twin_of(rec.get("same_as"))))  # twins too
        assert row[2].split(" ")[0] == ("—" if rec["forecast_brier"] != rec["forecast_brier"]
                                        else f"{rec['forecast_brier']:.3f}")

    # 2. follow the first model's link to its agent page in the first cohort
    link = hrefs[0][0]
    assert re.fullmatch(r"agents/\d+\.html", link)
    agent_id = int(link.split("/")[1].split(".")[0])
    agent_dom = dom(tmp_path, urljoin(base + "index.html", link))
    with Session(engine) as s:
        agent = s.get(AgentRow, agent_id)
        assert agent is not None
        cohort = s.get(CohortRow, agent.cohort_id)
        assert cohort is not None and agent.name == board[0]["agent"]
        ledger = repo.ledger_for(s, agent, cohort)
        quotes = repo.latest_quotes(s, as_of, {p.market_id for p in ledger.open_positions()})
        value = sum(value_position(p, quotes[p.market_id].price(p.outcome) if p.market_id in quotes else None)
                    .value.micros for p in ledger.open_positions())
        pnl = (ledger.cash + Money(value)).micros - cohort.starting_cash_micros
        names = {c.name for c in s.scalars(select(CohortRow))}
    assert re.search(rf"<h1>{re.escape(agent.name)}\b", agent_dom)
    assert re.search(r'id="pnl">([^<]*)<', agent_dom).group(1) == money(pnl, signed=True)  # type: ignore[union-attr]
    assert re.search(r'id="total-value">([^<]*)<', agent_dom).group(1) == \
        money(cohort.starting_cash_micros + pnl)  # type: ignore[union-attr]
    assert cohort.name in names and "<svg" in agent_dom and "<polyline" in agent_dom

    # 3. a market question with a script renders as text; the script never runs
    market_dom = dom(tmp_path, base + page_path("market", arena.xss_market_id))
    assert "pwned" not in _title(market_dom).split("&lt;")[0]
    assert _title(market_dom).startswith("Will &lt;script&gt;document.title='pwned'&lt;/script&gt;")
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt; &amp; &lt;b&gt;friends&lt;/b&gt; win?" in market_dom
    assert "<script>document.title" not in market_dom and "<iframe" not in market_dom

    # 4. reasoning with an <img onerror> and a raw model response with a <script>: text, inert
    hostile = dom(tmp_path, base + page_path("agent", arena.xss_agent_id))
    assert not _title(hostile).startswith("pwned") and _title(hostile).endswith("· arena")
    assert "<img" not in hostile and "<script>document.title" not in hostile
    assert "&lt;img src=x onerror=\"document.title='pwned'\"&gt;" in hostile
    assert hostile.count('<details class="call">') == 2

    # 5. how it looks, on a desktop and on a phone
    shots = [screenshot(tmp_path, base + "index.html", "index-desktop.png", "1280,900"),
             screenshot(tmp_path, base + page_path("agent", arena.xss_agent_id), "agent-phone.png", "390,844")]
    assert all(p.is_file() for p in shots)


SORT_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>sort</title></head><body>
<input data-filter="t" id="f">
<table class="sortable" id="t"><thead><tr><th>name</th><th>score</th></tr></thead><tbody>
<tr><td>b</td><td>+$0.30</td></tr><tr><td>a</td><td>—</td></tr>
<tr><td>c</td><td>-$1,001.50</td></tr><tr><td>d</td><td data-sort="10">ten</td></tr>
</tbody></table>
<script src="static/sort.js"></script>
<script>
document.addEventListener("DOMContentLoaded", function () {
  var th = document.querySelectorAll("#t th")[1], out = [];
  function names() { return Array.prototype.map.call(document.querySelectorAll("#t tbody tr"),
                                                     function (r) { return r.cells[0].textContent; }).join(""); }
  th.click(); out.push(names()); th.click(); out.push(names());
  var f = document.getElementById("f"); f.value = "c"; f.dispatchEvent(new Event("input"));
  out.push(Array.prototype.filter.call(document.querySelectorAll("#t tbody tr"),
                                       function (r) { return !r.hidden; }).length);
  document.body.setAttribute("data-result", out.join("|"));
});
</script></body></html>"""


def test_browser_sorts_and_filters_tables(tmp_path):
    page = tmp_path / "page"
    (page / "static").mkdir(parents=True)
    (page / "static" / "sort.js").write_text(STATIC["sort.js"][1], encoding="utf-8")
    (page / "sorttest.html").write_text(SORT_PAGE, encoding="utf-8")
    result = re.search(r'data-result="([^"]*)"', dom(tmp_path, (page / "sorttest.html").as_uri()))
    # ascending by number with the unknown last, then descending (unknown still last), then the filter
    assert result is not None and result.group(1) == "cbda|dbca|1"


class Browser:
    """Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: the browser reads commands
    on fd 3 and writes answers on fd 4, each a JSON message ending in NUL). Unlike --window-size, whose narrowest
    window is 500 px, device-metrics emulation gives a true 390 px phone viewport; scripts can then measure the
    laid-out page. No network and no dependency beyond the standard library."""

    def __init__(self, profile: Path) -> None:
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # Chromium's ends, moved above fd 10 so they cannot be 3 or 4 themselves; bash (dash takes no fd above 9)
        # puts them on the protocol's fds 3 and 4 and becomes Chromium (no preexec_fn: safe beside server threads)
        r, w = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
        for fd in (to_r, from_w):
            os.close(fd)
        move = f'exec "$0" "$@" 3<&{r} 4>&{w} {r}<&- {w}>&-'
        self.proc = subprocess.Popen(["/bin/bash", "-c", move, str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}",
                                      "--remote-debugging-pipe", "about:blank"], pass_fds=(r, w),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (r, w):
            os.close(fd)
        self._w, self._r = os.fdopen(to_w, "wb", buffering=0), os.fdopen(from_r, "rb", buffering=0)
        self._buf, self._n, self._events = b"", 0, []  # type: ignore[var-annotated]
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable")

    def _message(self) -> dict:
        while b"\0" not in self._buf:
            chunk = self._r.read(1 << 16)
            assert chunk, "Chromium closed the DevTools pipe"
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._n += 1
        msg = {"id": self._n, "method": method, "params": params or {}, **({"sessionId": session} if session else {})}
        self._w.write(json.dumps(msg).encode("utf-8") + b"\0")
        while True:
            m = self._message()
            if m.get("id") == self._n:
                assert "error" not in m, (method, m["error"])
                return m["result"]
            self._events.append(m)

    def send(self, method: str, params: dict | None = None) -> dict:
        return self._send(method, params, self._session)

    def open(self, url: str, width: int, height: int = 900) -> None:
        """Load `url` in a `width` px viewport (a phone's, with touch-style mobile layout, below 800) and wait
        for its load event (the page's deferred scripts have run)."""
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800})
        self._events.clear()
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            assert time.monotonic() < deadline, f"{url} did not load"
            self._events.append(self._message())

    def js(self, expression: str) -> Any:
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in r, r["exceptionDetails"]
        return r["result"].get("value")

    def screenshot(self, target: Path, height: int = 2400) -> Path:
        """The page from its top, as wide as the viewport and up to `height` px tall."""
        w = self.js("window.innerWidth")
        h = min(height, self.js("document.documentElement.scrollHeight"))
        shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}})
        target.write_bytes(base64.b64decode(shot["data"]))
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 5_000
        return target

    def close(self) -> None:
        try:
            self._send("Browser.close")
        except (AssertionError, OSError):
            pass
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._w.close()
        self._r.close()


@pytest.fixture
def browser(tmp_path) -> Iterator[Browser]:  # type: ignore[no-untyped-def]
    b = Browser(tmp_path / "devtools-profile")
    yield b
    b.close()


@pytest.fixture
def artifacts(tmp_path) -> Path:  # type: ignore[no-untyped-def]
    """Where screenshots go: $ARENA_TEST_ARTIFACTS/browser when that variable is set (CI keeps the folder), else
    the test's own tmp_path/screenshots."""
    root = os.environ.get("ARENA_TEST_ARTIFACTS")
    out = Path(root) / "browser" if root else tmp_path / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out


# In the page: every board and statistics table, with the boxes of its header cells and first row's cells (hidden
# cells have no box), the box it scrolls in (its edges, and whether its content is wider than it), its column
# choices (the radio buttons before it), and the page's width against the window's.
MEASURE = """(() => {
  const box = (c) => { const r = c.getBoundingClientRect(); const shown = c.getClientRects().length > 0;
    return {text: c.textContent.replace(/\\s+/g, " ").trim(), cls: c.className, shown: shown,
            left: r.left, right: r.right}; };
  const tables = Array.from(document.querySelectorAll("table.board, table.pin-first")).map((t) => {
    const head = t.tHead ? t.tHead.rows[t.tHead.rows.length - 1] : null;
    const body = t.tBodies[0] && t.tBodies[0].rows.length ? t.tBodies[0].rows[0] : null;
    const s = t.closest(".scroll"); const r = s.getBoundingClientRect();
    return {id: t.id, cls: t.className, head: head ? Array.from(head.cells).map(box) : [],
            row: body ? Array.from(body.cells).map(box) : [],
            box: {left: r.left, right: r.right, wider: s.scrollWidth > s.clientWidth + 1},
            choices: Array.from(document.querySelectorAll('input[name="cols-' + t.id + '"]')).map((i) => i.id)};
  });
  return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, tables: tables};
})()"""


def choose(browser: Browser, choice: str) -> None:
    """Click the label of a column choice (a radio button's id), as a reader would."""
    assert browser.js(f"(() => {{ const l = document.querySelector('label[for={json.dumps(choice)}]'); "
                      f"l.click(); return document.getElementById({json.dumps(choice)}).checked; }})()")


def _kinds(out: Path) -> dict[str, str]:
    """One page of every kind the site has, by kind."""
    first = lambda folder, pattern="*.html": next(  # noqa: E731
        str(p.relative_to(out)) for p in sorted((out / folder).glob(pattern)) if not p.name.endswith("-statistics.html"))
    return {"index": "index.html", "cohort": first("cohorts"), "agent": first("agents"), "market": first("markets"),
            "markets": "markets.html", "model": first("models"),
            "statistics": next(str(p.relative_to(out)) for p in sorted((out / "cohorts").glob("*-statistics.html"))),
            "methodology": "methodology.html", "operations": "operations.html", "404": "404.html"}


def _inside(cell: dict, left: float, right: float) -> bool:
    return (cell["shown"] and cell["left"] >= left - 0.5 and cell["right"] <= right + 0.5
            and cell["right"] > cell["left"])


def _classes(cell: dict) -> list[str]:
    return cell["cls"].split()


@pytest.mark.slow
def test_boards_lead_with_columns_that_fit_and_no_page_scrolls_sideways(site, browser, artifacts):
    """Every kind of page at 1,400 px and on a 390 px phone: the page is never wider than the window. At 1,400 px
    every board shows the columns it leads with (rank, name, headline with its interval, tier, Brier − market,
    coverage, P/L, return) inside its box without scrolling sideways, the on-demand columns hidden; each group of
    them, chosen, fits too; the statistics heat tables fit. On the phone each board keeps its name and headline
    score in view, hides the rest, and shows every column when "All" is chosen — the table then scrolls in its own
    box, never the page. Screenshots of every page at both widths are saved."""
    arena, out, base = site
    kinds = _kinds(out)
    assert len(kinds) == 10
    boards_seen = set()
    for kind, rel in kinds.items():
        for width in (1400, 390):
            browser.open(base + rel, width)
            m = browser.js(MEASURE)
            assert m["inner"] == width
            assert m["scroll"] <= m["inner"], f"{kind} ({rel}) at {width} px is {m['scroll']} px wide"
            browser.screenshot(artifacts / f"{kind}-{width}.png")
            for t in m["tables"]:
                if not t["row"] or len(t["row"]) == 1:  # an empty table's one "nothing yet" cell
                    continue
                if "board" not in t["cls"].split():
                    if width == 390:  # a statistics table: its first column is pinned and in view
                        assert _inside(t["row"][0], 0, width), (kind, t["id"], t["row"][0])
                    elif "heat" in t["cls"].split():
                        assert not t["box"]["wider"], (kind, t["id"], "the heat table scrolls at 1,400 px")
                    continue
                names = [c for c in t["head"] if "name" in _classes(c)]
                assert len(names) == 1, (kind, t["id"])
                # the board's headline score: its priority-1 column that is neither the rank nor the name
                scores = [c for c in t["head"] if "p1" in _classes(c) and c["text"].rstrip(" ↕") != "#"
                          and "name" not in _classes(c)]
                assert scores and len(t["choices"]) >= 2, (kind, t["id"])
                lead = [c for c in t["head"] + t["row"] if {"p1", "p2"} & set(_classes(c))]
                later = [c for c in t["head"] if "p3" in _classes(c)]
                if width == 1400:
                    for c in lead:  # every leading column in view, inside the table's box, no sideways scroll
                        assert _inside(c, t["box"]["left"], t["box"]["right"]), (kind, t["id"], c)
                    assert not t["box"]["wider"], (kind, t["id"])
                    assert not any(c["shown"] for c in later), (kind, t["id"])
                    if t["id"] == "headline":
                        shown = [c["text"].rstrip(" ↕") for c in t["head"] if c["shown"]]
                        assert shown[:5] == ["#", names[0]["text"].rstrip(" ↕"), "Forecast Brier [95 %]", "Tier",
                                             "Brier − market [95 %]"], shown
                        assert shown[6:] == ["P/L", "Return"] and shown[5] in ("Questions", "Answered"), shown
                    for choice in t["choices"][1:-1]:  # each group of on-demand columns, chosen, fits beside them
                        choose(browser, choice)
                        again = next(x for x in browser.js(MEASURE)["tables"] if x["id"] == t["id"])
                        group = choice.rsplit("-", 1)[1]
                        extra = [c for c in again["head"] if group in _classes(c)]
                        assert extra and all(_inside(c, again["box"]["left"], again["box"]["right"])
                                             for c in extra), (kind, t["id"], choice)
                        assert not again["box"]["wider"], (kind, t["id"], choice)
                    if t["choices"][1:-1]:
                        choose(browser, t["choices"][0])
                else:
                    for c in names + scores + [c for c in t["row"] if "p1" in _classes(c)]:
                        assert _inside(c, 0, width), (kind, t["id"], c)
                    assert not any(c["shown"] for c in t["head"] if {"p2", "p3"} & set(_classes(c))), (kind, t["id"])
                    boards_seen.add((kind, t["id"]))
                    if t["id"] == "headline":
                        assert scores[0]["text"].startswith("Forecast Brier"), scores
            if width == 390 and any(t["choices"] for t in m["tables"]):
                for t in m["tables"]:
                    if t["choices"]:
                        choose(browser, t["choices"][-1])  # "All"
                again = browser.js(MEASURE)
                assert again["scroll"] <= again["inner"], f"{kind} with every column shown"
                for t in again["tables"]:
                    if t["choices"] and len(t["row"]) > 1:
                        assert all(c["shown"] for c in t["head"]), (kind, t["id"])
                        name = next(c for c in t["row"] if "name" in _classes(c))
                        assert _inside(name, 0, width), (kind, t["id"])  # pinned while the rest scrolls
                browser.screenshot(artifacts / f"{kind}-{width}-all-columns.png")
    # the boards the issue names: the cohort board, the overall board on the index, the model's cohorts
    assert {("index", "headline"), ("index", "overall"), ("cohort", "headline"), ("cohort", "board"),
            ("model", "model-cohorts")} <= boards_seen
    assert len(list(artifacts.glob("*.png"))) >= 20


def _text(browser: Browser, selector: str) -> str:
    return str(browser.js(f"document.querySelector({json.dumps(selector)}).textContent.trim()"))


def test_the_model_page_in_the_browser_shows_the_databases_figures(site, browser):
    """Read from the laid-out model page (at phone width), compared with the standings and model services and
    the stored model calls: the pooled headline card, Brier − market, the bet-size Brier, calls and cost, each
    cohort's row, and the meta-analysis against every other forecaster."""
    arena, out, base = site
    engine, as_of = arena.engine, arena.as_of
    boards = standings(engine, as_of)
    with Session(engine) as s:
        calls = s.execute(select(AgentRow.name, func.count(), func.sum(ModelCallRow.cost_micros))
                          .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                          .join(AgentRow, AgentRow.id == DecisionRow.agent_id).group_by(AgentRow.name)).all()
    by_calls = {name: (int(n), cost) for name, n, cost in calls}
    costed = [name for name, (_, cost) in by_calls.items() if cost]
    assert costed, "the fixture stores priced model calls"
    overall = boards.overall.set_index("model")
    comps = model_comparisons(engine, as_of)
    for model in costed + [m for m in overall.index if m not in costed and overall.loc[m, "kind"] != "reference"][:1]:
        browser.open(base + page_path("model", model), 390)
        row = overall.loc[model]
        assert _text(browser, "h1") == model
        assert _text(browser, "#model-forecast-brier") == number(row["forecast_brier"]) != "—"
        assert _text(browser, "#model-brier-minus-market") == number(row["brier_minus_market"], 3, True)
        assert _text(browser, "#model-implied-brier") == number(row["implied_brier"])
        n, cost = by_calls.get(model, (0, None))
        assert _text(browser, "#model-calls") == f"{n:,}"
        assert _text(browser, "#model-cost") == (money(int(cost)) if cost is not None else "—")
        cells = browser.js("""Array.from(document.querySelectorAll("#model-cohorts tbody tr")).map(
            (r) => Array.from(r.cells).map((c) => c.textContent.replace(/\\s+/g, " ").trim()))""")
        seats = [(b.name, shown_board(b.rows, boards.rank_by).set_index("agent").loc[model])  # as shown: ties
                 for b in boards.cohorts if model in set(b.rows["agent"])]
        assert [c[0] for c in cells] == [name for name, _ in seats]
        for c, (_, seat) in zip(cells, seats):
            assert c[2] == (seat["rank_label"] or "—")
            assert c[3].split(" ")[0] == number(seat["forecast_brier"])
        meta = browser.js("""Array.from(document.querySelectorAll("#meta tbody tr")).map(
            (r) => Array.from(r.cells).map((c) => c.textContent.trim()))""")
        # as the page shows them: a reference's twin once ("market-follower = market"), not against itself
        same = boards.overall["same_as"] if "same_as" in boards.overall else [None] * len(boards.overall)
        twin = {m: twin_of(v) for m, v in zip(boards.overall["model"], same) if twin_of(v)}
        shown = _merged(comps.get(model, ()), model, {ref: m for m, ref in twin.items()}, twin)
        expect = {shown_name(c.versus, twin.get(c.versus)): c for c in shown}
        assert {r[0] for r in meta} == set(expect)
        for r in meta:
            assert r[1].split(" ")[0] == number(expect[r[0]].estimate, 4, True)
            assert r[2] == expect[r[0]].verdict


@pytest.fixture
def weeks_site(engine, populate_arena, tmp_path) -> Iterator[tuple[object, Path, str]]:  # type: ignore[no-untyped-def]
    """Four cohorts over 45 days (every one with resolved questions: meta-analyses, forest plots and reliability
    diagrams have something to draw), rendered and served."""
    arena = populate_arena(engine, days=45, cohorts=4)
    out = tmp_path / "site"
    render_site(engine, out, arena.as_of)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield arena, out, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


# On a laid-out phone page: whether an element is drawn inside the window, each chart text's box against its chart's
# box, its height on screen, and which texts' boxes overlap (tick labels, axis titles, count labels).
PHONE = """(() => {
  const w = window.innerWidth;
  const rect = (e) => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
    bottom: r.bottom, shown: e.getClientRects().length > 0 && r.width > 0}; };
  const inView = (e) => { const r = rect(e); return r.shown && r.left >= -0.5 && r.right <= w + 0.5; };
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const charts = Array.from(document.querySelectorAll("figure.chart svg")).map((svg) => {
    const s = rect(svg);
    const texts = Array.from(svg.querySelectorAll("text")).map((t) => ({text: t.textContent,
      cls: t.getAttribute("class"), r: rect(t)}));
    const out = texts.filter((t) => t.r.left < s.left - 0.5 || t.r.right > s.right + 0.5 || t.r.top < s.top - 0.5
                                    || t.r.bottom > s.bottom + 0.5).map((t) => t.text);
    const labels = texts.filter((t) => t.cls === "tick" || t.cls === "axis-title");
    const overlaps = [];
    labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
      if (hit(a.r, b.r)) { overlaps.push([a.text, b.text]); } }));
    return {label: svg.getAttribute("aria-label"), figure: svg.closest("figure").className, outside: out,
            overlaps: overlaps, ticks: labels.filter((t) => t.cls === "tick").map((t) => t.text),
            titles: labels.filter((t) => t.cls === "axis-title").map((t) => t.text),
            tick_height: Math.max(0, ...labels.filter((t) => t.cls === "tick").map((t) => t.r.bottom - t.r.top))};
  });
  const cells = (sel) => Array.from(document.querySelectorAll(sel)).map((c) => ({text: c.textContent.trim(),
    in_view: inView(c)}));
  return {scroll: document.documentElement.scrollWidth, inner: w, charts: charts,
          verdicts: cells("#meta tbody td.verdict"), verdict_head: cells("#meta thead th:nth-child(3)"),
          first_rows: Array.from(document.querySelectorAll("table.stack tbody tr:first-child")).map(
            (r) => Array.from(r.cells).map((c) => ({text: c.textContent.trim(), in_view: inView(c)}))),
          versions: Array.from(document.querySelectorAll("#versions code")).map((c) => ({text: c.textContent,
            lines: c.getClientRects().length}))};
})()"""


@pytest.mark.slow
def test_phone_pages_show_the_verdict_and_whole_chart_labels(weeks_site, browser, artifacts):
    """At 500 px, on pages with something to draw: the model page's meta-analysis shows its verdict column in view
    for every comparison; every chart's text (forest-plot labels such as "cohort-2026-01-04" and "market
    (reference)", the equity axis's "$" amounts, the reliability diagrams' ticks, counts and axis titles) lies
    whole inside its chart, no two labels overlap, and a reliability diagram's text stays near its desktop size;
    agent position, fill and market-list tables show each cell of a row in view; version strings are unbroken."""
    arena, out, base = weeks_site
    width = 500
    boards = standings(arena.engine, arena.as_of)
    cohorts = {b.name for b in boards.cohorts}
    pages = {"model": page_path("model", "oracle-sharp"), "agent": page_path("agent", arena.xss_agent_id),
             "markets": "markets.html", "methodology": "methodology.html",
             "statistics": next(str(p.relative_to(out)) for p in sorted((out / "cohorts").glob("*-statistics.html"))),
             "cohort": page_path("cohort", sorted(cohorts)[0])}
    seen: dict[str, dict] = {}
    for kind, rel in pages.items():
        browser.open(base + rel, width)
        m = browser.js(PHONE)
        browser.screenshot(artifacts / f"phone-{kind}-{width}.png", 6000)
        assert m["scroll"] <= m["inner"] == width, (kind, m["scroll"])
        for c in m["charts"]:
            assert not c["outside"], (kind, c["label"], c["outside"])  # nothing clipped at the chart's edge
            assert not c["overlaps"], (kind, c["label"], c["overlaps"])
        for row in m["first_rows"]:
            assert row and all(c["in_view"] for c in row), (kind, row)
        seen[kind] = m
    model = seen["model"]
    assert [(c["text"], c["in_view"]) for c in model["verdict_head"]] == [("Verdict", True)]
    verdicts = {c.verdict for c in model_comparisons(arena.engine, arena.as_of)["oracle-sharp"]}
    assert model["verdicts"] and all(c["in_view"] for c in model["verdicts"])
    assert {c["text"] for c in model["verdicts"]} <= verdicts
    forests = [c for c in model["charts"] if "forecast Brier per cohort" in (c["label"] or "")]
    assert len(forests) == 2
    for f in forests:  # every label whole: the cohorts' names and the pool's, none cut
        labels = [t for t in f["ticks"] if not re.fullmatch(r"[+-]?\d+(\.\d+)?", t)]
        assert set(labels) <= cohorts | {"pooled (markets as clusters)"}, labels
        assert "pooled (markets as clusters)" in labels and sum(t in cohorts for t in labels) == 4, labels
    equity = [c for c in model["charts"] + seen["agent"]["charts"] if "value" in (c["label"] or "").lower()]
    assert equity
    for c in equity:
        money_ticks = [t for t in c["ticks"] if re.search(r"\d", t) and not re.match(r"[A-Z][a-z]{2} \d", t)]
        assert money_ticks and all(t.startswith(("$", "-$")) for t in money_ticks), c["ticks"]
    reliability = [c for c in seen["statistics"]["charts"] if "square" in c["figure"]]
    assert reliability
    for c in reliability:
        assert c["titles"] == ["mean stated P(YES)", "observed YES frequency"], c["titles"]
        assert 8 <= c["tick_height"] <= 20, c  # about 12 px: never the ~3x of a wide chart's phone text
    versions = seen["methodology"]["versions"]
    assert versions and all(v["lines"] == 1 for v in versions), versions
