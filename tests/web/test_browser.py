"""A real headless browser (Debian's Chromium) on the rendered site, served from a local http server: the
leaderboard rows show the database's numbers, the link to an agent page works, hostile text renders as text and
runs nothing (a script in a market question would set document.title), the sort script really sorts and filters,
and screenshots are taken at desktop and phone widths. The sort script is also
driven from file://. Skips cleanly when Chromium is absent."""

from __future__ import annotations

import functools
import re
import subprocess
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin

import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.domain.valuation import value_position
from arena.money import Money
from arena.services.score import overall_leaderboard
from arena.services.standings import standings
from arena.store import repo
from arena.store.tables import AgentRow, CohortRow
from arena.web.env import money, page_path
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
    assert 'class="sort"' in index, "sort.js ran (it marks sortable headers)"
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
    overall = standings(engine, as_of).overall.to_dict("records")
    assert len(head) == len(overall) > len(board)  # the reference rows are on it too
    for row, rec in zip(head, overall):
        assert row[0] == (rec["rank_label"] or "—")
        assert row[1].startswith(rec["model"])
        assert ("reference" in row[1]) == (rec["kind"] == "reference")
        assert row[4].split(" ")[0] == ("—" if rec["forecast_brier"] != rec["forecast_brier"]
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


PROBE = ('<script>window.addEventListener("load", () => { document.body.setAttribute("data-fit", '
         'document.documentElement.scrollWidth + "/" + window.innerWidth); });</script>')


def test_no_page_scrolls_sideways_on_a_desktop_or_a_narrow_window(site, tmp_path):
    """At 1,400 px and at 500 px (headless Chromium's narrowest window) the page is never wider than the window:
    wide tables scroll inside their own box. Each kind of page is measured after its scripts ran."""
    arena, out, _ = site
    kinds = ["index.html", "markets.html", "methodology.html", "operations.html"]
    for folder in ("cohorts", "agents", "models", "markets"):
        kinds += [str(p.relative_to(out)) for p in sorted((out / folder).glob("*.html"))[:1]]
    kinds.append(next(str(p.relative_to(out)) for p in sorted((out / "cohorts").glob("*-statistics.html"))))
    assert len(kinds) == 9
    for rel in kinds:
        page = out / rel
        probe = page.with_name("_fit_" + page.name)
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
        for width in (1400, 500):
            html = _chromium(tmp_path, probe.as_uri(), f"--window-size={width},900", "--dump-dom")
            fit = re.search(r'data-fit="(\d+)/(\d+)"', html)
            assert fit is not None, rel
            assert int(fit.group(1)) <= int(fit.group(2)), f"{rel} at {width} px: {fit.group(0)}"
        probe.unlink()
