"""Rendering pages: the static site (`render_site`, every page from batched contexts) and one page by its
site path (`render_path`, what the live server and the naive benchmark use). Also owns the site's vendored
assets — a small stylesheet and a small table sort/filter script — so the site needs nothing from a network.
"""

from __future__ import annotations

import ctypes
import json
import os
import math
import re
import signal
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.services.point_in_time import backend, remember_backend, store_as_of
from arena.store.tables import AgentRow, CohortRow
from arena.services.standings import Boards, boards_json, standings as compute_boards
from arena.web import contexts as ctx
from arena.web.market_index import market_index_context
from arena.web.model_page import model_contexts
from arena.web.env import page_path, render_page, slug

TEMPLATE = {
    "index": "index.html",
    "cohort": "cohort.html",
    "agent": "agent.html",
    "market": "market.html",
    "methodology": "methodology.html",
    "operations": "operations.html",
    "statistics": "statistics.html",
    "model": "model.html",
    "markets": "markets.html",
}

STATISTICS_DRAWS = 1000
API_PATH = "api/leaderboard.json"
DECOMPOSITION_PATH = "api/decomposition.json"  # every agent's skill-vs-luck parts (exact micro-USD)

SITE_CSS = """\
/* arena site styles: no external fonts or assets; readable on a phone. */
:root { --fg: #1d2330; --muted: #5d6678; --bg: #fbfbfd; --card: #ffffff; --line: #dde1e8; --accent: #2457c5;
  --good: #1f7a3d; --bad: #b3261e; --warn: #9a6700; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); }
a { color: var(--accent); text-decoration: none; }
a:hover, a:focus { text-decoration: underline; }
header.top { background: #17203a; }
header.top nav { max-width: 1360px; margin: 0 auto; padding: .6rem 1rem; display: flex; flex-wrap: wrap;
  gap: .3rem 1.2rem; }
header.top a { color: #e8ecf7; }
header.top a.brand { font-weight: 700; letter-spacing: .04em; }
main { max-width: 1360px; margin: 0 auto; padding: 1rem; }
footer { max-width: 1360px; margin: 2rem auto 1rem; padding: 0 1rem; color: var(--muted); font-size: .85rem; }
h1 { font-size: 1.6rem; margin: .4rem 0 .3rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.6rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .4rem; }
.lead { color: var(--muted); margin-top: 0; }
.crumbs { color: var(--muted); font-size: .9rem; margin: 0; }
.muted, .note { color: var(--muted); font-size: .9rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f1f3f7; border: 1px solid var(--line);
  padding: .6rem; border-radius: 6px; max-height: 32rem; overflow: auto; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; border: 1px solid var(--line); border-radius: 6px;
  background: var(--card); }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { padding: .35rem .55rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: #f1f3f7; position: sticky; top: 0; font-size: .82rem; white-space: nowrap; }
table.board td { padding: .35rem .4rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { white-space: nowrap; font-weight: 600; }
td.date { white-space: nowrap; }
td.q { min-width: 14rem; }
td.text { min-width: 12rem; }
td.empty, p.empty { color: var(--muted); font-style: italic; }
tbody tr:hover { background: #f6f8fc; }
th.sort { cursor: pointer; user-select: none; }
th.sort::after { content: " \\2195"; color: #a0a7b5; font-size: .8em; }
th[aria-sort="ascending"]::after { content: " \\25B2"; color: var(--fg); }
th[aria-sort="descending"]::after { content: " \\25BC"; color: var(--fg); }
table.kv { width: auto; min-width: 50%; background: var(--card); border: 1px solid var(--line); }
table.kv th { font-weight: 600; background: none; position: static; }
input.filter { width: 100%; max-width: 22rem; padding: .4rem .6rem; margin: 0 0 .5rem; font: inherit;
  border: 1px solid var(--line); border-radius: 6px; }
.band { display: inline-block; padding: 0 .4rem; border-radius: 999px; font-size: .8rem; background: #eef0f4;
  white-space: nowrap; }
.band-perfect, .band-excellent, .band-exceptional { background: #dcf3e4; color: var(--good); }
.band-good { background: #e7f4ea; color: var(--good); }
.band-fair, .band-neutral { background: #f3f0dc; color: var(--warn); }
.band-poor, .band-very-poor { background: #fbe3e1; color: var(--bad); }
.flag { display: inline-block; padding: 0 .35rem; border-radius: 4px; font-size: .72rem; font-weight: 600;
  background: #fff1cc; color: var(--warn); text-transform: uppercase; letter-spacing: .03em; vertical-align: middle; }
.status { font-size: .8rem; padding: 0 .4rem; border-radius: 4px; background: #eef0f4; font-weight: 600; }
.status.status-completed, .status.status-executed, .status.status-ok, .status.status-resolved { background: #dcf3e4;
  color: var(--good); }
.status.status-failed, .status.status-rejected { background: #fbe3e1; color: var(--bad); }
.status.status-hold, .status.status-running, .status.status-claimed { background: #f3f0dc; color: var(--warn); }
.error { color: var(--bad); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: .6rem; margin: 1rem 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .75rem; }
.card .k { display: block; color: var(--muted); font-size: .8rem; }
.card .v { display: block; font-size: 1.15rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .sub { display: block; color: var(--muted); font-size: .8rem; }
.two { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 0 1.5rem; }
figure.chart { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .5rem; }
figure.chart svg { width: 100%; height: auto; display: block; }
svg .grid { stroke: #eceef3; }
svg .axis { stroke: #9aa2b1; }
svg .tick { fill: var(--muted); font-size: 12px; }
svg .line { fill: none; stroke-width: 2; stroke-linejoin: round; }
svg .rule { stroke-dasharray: 4 4; stroke: #8a93a6; }
svg .rule.event { stroke: #b26b00; }
svg .rule-label { font-size: 12px; fill: var(--muted); }
svg .marker { stroke: #fff; stroke-width: 1; }
svg .marker.yes { fill: #1f7a3d; }
svg .marker.no { fill: #c0392b; }
.mk-yes { color: #1f7a3d; } .mk-no { color: #c0392b; }
.s0 { stroke: #2457c5; } .s1 { stroke: #d1495b; } .s2 { stroke: #2a9d8f; } .s3 { stroke: #e9a23b; }
.s4 { stroke: #7b4fb0; } .s5 { stroke: #4d6b2f; } .s6 { stroke: #c2185b; } .s7 { stroke: #00838f; }
.s8 { stroke: #8d6e63; } .s9 { stroke: #546e7a; }
.legend { display: flex; flex-wrap: wrap; gap: .3rem 1rem; font-size: .85rem; margin-top: .3rem; }
.legend .key { border-left: 14px solid; border-left-color: currentColor; padding-left: .3rem; color: var(--fg); }
.legend .key.s0 { border-left-color: #2457c5; } .legend .key.s1 { border-left-color: #d1495b; }
.legend .key.s2 { border-left-color: #2a9d8f; } .legend .key.s3 { border-left-color: #e9a23b; }
.legend .key.s4 { border-left-color: #7b4fb0; } .legend .key.s5 { border-left-color: #4d6b2f; }
.legend .key.s6 { border-left-color: #c2185b; } .legend .key.s7 { border-left-color: #00838f; }
.legend .key.s8 { border-left-color: #8d6e63; } .legend .key.s9 { border-left-color: #546e7a; }
article.decision { background: var(--card); border: 1px solid var(--line); border-left: 4px solid #9aa2b1;
  border-radius: 8px; padding: .2rem .9rem .7rem; margin: .8rem 0; }
article.decision.status-executed { border-left-color: var(--good); }
article.decision.status-rejected, article.decision.status-failed { border-left-color: var(--bad); }
article.decision.status-hold { border-left-color: var(--warn); }
.meta { color: var(--muted); font-size: .85rem; margin: .2rem 0 .5rem; }
.reasoning { background: #f6f8fc; border-radius: 6px; padding: .5rem .7rem; margin: .4rem 0; }
tr.rejected td { background: #fdf1f0; }
ul.rejections { color: var(--bad); padding-left: 1.2rem; }
details { margin: .4rem 0; }
details > summary { cursor: pointer; color: var(--accent); }
td.links { min-width: 10rem; }
a.agent-link { white-space: nowrap; }
.question { font-size: 1.35rem; }
.refmark { display: inline-block; padding: 0 .35rem; border-radius: 4px; font-size: .72rem; font-weight: 600;
  background: #e6ecfa; color: var(--accent); text-transform: uppercase; letter-spacing: .03em; vertical-align: middle; }
tr.kind-reference td { background: #f4f6fb; font-style: italic; }
.ci { color: var(--muted); font-size: .85em; }
tr.groups th { font-weight: 600; color: var(--muted); text-align: center; border-left: 1px solid var(--line); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: .6rem 1rem; }
svg .rule.count { stroke: none; }
svg .rule-label.count { fill: var(--fg); font-size: 11px; }
svg .marker.bin { fill: #2457c5; }
/* nothing pushes a page sideways: long identifiers wrap, key-value tables scroll inside themselves */
code, .q { overflow-wrap: anywhere; }
table.kv { display: block; max-width: 100%; overflow-x: auto; }
/* on a narrow screen a board scrolls inside its box with the name column pinned, so the name and the headline
   score beside it stay in view */
table.board td.name, table.board th:nth-child(2) { position: sticky; left: 0; z-index: 1; background: var(--card); }
table.board thead th:nth-child(2) { z-index: 2; background: #f1f3f7; }
svg .rule.ci { stroke-dasharray: none; stroke: #2457c5; stroke-width: 2; }
svg .rule.ci.pooled { stroke: #111; stroke-width: 3; }
svg .rule.ci.model { stroke: #2457c5; }
svg .marker.cohort { fill: #2457c5; }
svg .marker.pooled { fill: #111; }
svg .rule.ci.reference { stroke: #8a93a6; }
svg .marker.model { fill: #2457c5; }
svg .marker.reference { fill: #8a93a6; }
table.heat td.cell { text-align: center; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.heat td.sig-better { background: #dcf3e4; } table.heat td.sig-worse { background: #fbe3e1; }
table.heat td.sig-better.strong { background: #a9dfbc; } table.heat td.sig-worse.strong { background: #f2b8b2; }
table.heat td.ns { background: #f3f4f7; color: var(--muted); } table.heat td.self { background: #fff; }
@media (max-width: 640px) {
  body { font-size: 14px; }
  main { padding: .6rem; }
  h1 { font-size: 1.3rem; }
  th, td { padding: .3rem .4rem; }
  td.q, td.text { min-width: 10rem; }
  svg .tick, svg .rule-label { font-size: 22px; }  /* user units: the 900-unit chart is shrunk ~2.4x */
  svg .line { stroke-width: 3; }
}
"""

SORT_JS = r"""/* arena: click (or press Enter on) a header of a table.sortable to sort by that column; type in an
   input[data-filter] to show only the rows of that table containing the text. No dependencies.
   Cells sort by their data-sort attribute when present, else by their text: a column whose every cell reads
   as a number ("+$1,234.56", "12.5%") sorts numerically, any other as text (dates are written to sort as
   text); unknown values ("—" or "") always sort last. */
(function () {
  "use strict";
  function value(row, i) {
    var cell = row.cells[i];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-sort");
    v = v === null ? cell.textContent.trim() : v;
    return v === "\u2014" ? "" : v;
  }
  function number(v) {  /* "+$1,234.56", "-12.5%", "0.50" → a number; NaN when the text is not one */
    var s = v.replace(/[$,%+\s]/g, "").replace(/^\u2212/, "-");
    return s === "" ? NaN : Number(s);
  }
  function sortBy(table, i, th) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var rows = Array.prototype.slice.call(body.rows);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var numeric = rows.every(function (r) { var v = value(r, i); return v === "" || !isNaN(number(v)); });
    rows.sort(function (a, b) {
      var x = value(a, i), y = value(b, i);
      if (x === y) { return 0; }
      if (x === "") { return 1; }
      if (y === "") { return -1; }
      var d = numeric ? number(x) - number(y) : x.localeCompare(y);
      return ascending ? d : -d;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
      var head = table.tHead;
      if (!head || !head.rows.length) { return; }
      Array.prototype.forEach.call(head.rows[head.rows.length - 1].cells, function (th, i) {
        th.tabIndex = 0;
        th.classList.add("sort");
        th.addEventListener("click", function () { sortBy(table, i, th); });
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, i, th); }
        });
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter]"), function (input) {
      var table = document.getElementById(input.getAttribute("data-filter"));
      if (!table || !table.tBodies[0]) { return; }
      input.addEventListener("input", function () {
        var q = input.value.trim().toLowerCase();
        Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
          r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0;
        });
      });
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
}());
"""

STATIC = {"site.css": ("text/css; charset=utf-8", SITE_CSS), "sort.js": ("text/javascript; charset=utf-8", SORT_JS)}


@dataclass
class RenderReport:
    """What `render_site` wrote: pages per kind, the output directory, the as-of time and how long it took."""

    out_dir: Path
    as_of: datetime
    pages: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage: contexts and rendering

    @property
    def total_pages(self) -> int:
        return sum(self.pages.values())

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in self.pages.items())
        return f"rendered {self.total_pages} pages ({kinds}) into {self.out_dir} in {self.seconds:.2f} s"


def _write(out: Path, path: str, text: str) -> None:
    target = out / path
    target.write_text(text, encoding="utf-8")


_children: set[int] = set()  # pids of the render children alive now (ended by `end_children`)
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """In a forked child: have Linux kill it when the thread that forked it dies (PR_SET_PDEATHSIG), so a
    stopped or killed scheduler never leaves a renderer behind holding database sessions."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: `end_children` at shutdown is the remaining guard
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class _Forked:
    """Work done in a forked child process (copy-on-write: it sees everything built so far, nothing is
    pickled); `join` returns the page counts it reports, or raises if it failed. The child dies with its
    parent, and leaves the parent's pooled database connections alone (`engine`: never used or closed there)."""

    def __init__(self, work: Callable[[], dict[str, int]], engine: Engine | None = None) -> None:
        self.read_fd, write_fd = os.pipe()
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:  # the child: do the work, report, and leave without running the parent's cleanup
            _die_with_parent(parent)
            if engine is not None:
                engine.dispose(close=False)  # the parent's connections stay the parent's
            os.close(self.read_fd)
            code = 0
            try:
                payload = json.dumps(work()).encode()
            except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
                payload, code = json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode(), 1
            with os.fdopen(write_fd, "wb") as fh:
                fh.write(payload)
            os._exit(code)
        _children.add(self.pid)
        os.close(write_fd)

    def join(self) -> dict[str, int]:
        try:
            with os.fdopen(self.read_fd, "rb") as fh:
                data = json.loads(fh.read() or b"{}")
            _, status = os.waitpid(self.pid, 0)
        finally:
            _children.discard(self.pid)
        if status != 0 or "error" in data:
            raise RuntimeError(f"a render process failed: {data.get('error', status)}")
        return data


def end_children() -> int:
    """Terminate every render child still running (at scheduler shutdown); returns how many were asked."""
    pids = list(_children)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            _children.discard(pid)
    return len(pids)


def _can_fork(engine: Engine) -> bool:
    """Forking pays on a machine with more than one core, where fork exists, and only for a database a
    second process can open (not an in-memory SQLite)."""
    if not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
        return False
    url = engine.url
    return not (url.get_backend_name() == "sqlite" and (not url.database or url.database == ":memory:"))


def _render_pages(out: Path, kind: str, pages: list[tuple[object, object]]) -> dict[str, int]:
    for key, page in pages:
        path = page_path(kind, key)
        _write(out, path, render_page(TEMPLATE[kind], page, path))
    return {kind: len(pages)}


def _market_pages(url: str, out: Path, as_of: datetime, statistics: str, source: str) -> dict[str, int]:
    """Market, methodology, operations and statistics pages, from an engine of their own (a forked child);
    `source` names the database the facts came from (a copy as of T names its source's)."""
    from arena.store.engine import make_engine

    engine = make_engine(url)
    remember_backend(engine, source)
    try:
        return _market_pages_here(engine, out, as_of, statistics)
    finally:
        engine.dispose()


def statistics_pages(engine: Engine, out: Path, as_of: datetime, statistics: str = "open") -> dict[str, int]:
    """Each cohort's statistics page. "all" recomputes every cohort; "open" only open cohorts and cohorts whose
    page is missing (a completed cohort's facts no longer change, so its page stays valid); "none" skips."""
    if statistics == "none":
        return {}
    from arena.services.statistics import cohort_statistics

    with engine.connect() as conn:
        rows = conn.execute(select(CohortRow.name, CohortRow.status)).all()
    names = [n for n, status in rows
             if statistics == "all" or status == "open" or not (out / page_path("statistics", n)).exists()]
    if not names:
        return {"statistics": 0}
    stats = cohort_statistics(engine, as_of, names, n_boot=STATISTICS_DRAWS)
    pages = []
    for name, st in stats.items():
        page = ctx.statistics_context(as_of, st, STATISTICS_DRAWS)
        pages.append((name, replace(page, cohort_href=page_path("cohort", name))))
    return _render_pages(out, "statistics", pages)


RENDER_STAGES = 6  # calls of `on_stage` per render (for a progress bar)


def render_site(engine: Engine, out_dir: str | Path, as_of: datetime, *, parallel: bool = True,
                statistics: str = "open", on_stage: Callable[[str], None] | None = None) -> RenderReport:
    """Write the whole static site for `as_of` into `out_dir` (created if needed; files are overwritten, and
    nothing else there is touched). One batched context build per page kind, then one template render per page.

    The pages show exactly the facts recorded up to `as_of`: when the store holds later ones, the site is
    rendered from the store as it stood then (`services.point_in_time`).

    With `parallel` (and where it pays, see `_can_fork`) the market pages are built and rendered by a forked
    process while this one builds the leaderboards, and half of the agent pages are rendered by a second one:
    the two cores of a small server both work. The pages are the same either way."""
    started = time.perf_counter()
    with store_as_of(engine, as_of) as past:
        report = _render_site(past, out_dir, utc(as_of), parallel, statistics, on_stage)
    report.seconds = time.perf_counter() - started
    return report


def _render_site(engine: Engine, out_dir: str | Path, as_of: datetime, parallel: bool,
                 statistics: str, on_stage: Callable[[str], None] | None = None) -> RenderReport:
    started = time.perf_counter()
    as_of = utc(as_of)
    out = Path(out_dir)
    for sub in ("cohorts", "agents", "markets", "models", "static"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    report = RenderReport(out, as_of)
    fork = parallel and _can_fork(engine)
    clock = [time.perf_counter()]

    def stage(name: str) -> None:
        now = time.perf_counter()
        report.stages[name] = report.stages.get(name, 0.0) + now - clock[0]
        clock[0] = now
        if on_stage is not None:
            on_stage(name)

    def count(counts: dict[str, int]) -> None:
        for kind, n in counts.items():
            report.pages[kind] = report.pages.get(kind, 0) + n

    markets_child = None
    if fork:  # before any thread exists in this process
        url = engine.url.render_as_string(hide_password=False)
        source = backend(engine)
        markets_child = _Forked(lambda: _market_pages(url, out, as_of, statistics, source), engine)
    standings = ctx.load_standings(engine, as_of, None, with_overall=True)
    stage("standings")
    count(_render_pages(out, "index", [(None, ctx.index_context(engine, as_of, standings))]))
    luck = ctx.skill_luck(engine, as_of)  # "Skill vs luck" on cohort and agent pages, /api/decomposition.json
    cohorts = ctx.cohort_contexts(engine, as_of, None, standings, luck)
    stage("index and cohort contexts")
    count(_render_pages(out, "cohort", list(cohorts.items())))
    stage("cohort render")
    models = model_contexts(engine, as_of, None, standings, luck)
    count(_render_pages(out, "model", list(models.items())))
    stage("model pages")
    doc = boards_json(standings.boards if standings.boards is not None else compute_boards(engine, as_of))
    for sub in ("cohorts", "models"):
        (out / "api" / sub).mkdir(parents=True, exist_ok=True)
    for name, cpage in cohorts.items():
        _write(out, cohort_api_path(name), cohort_json(cpage, doc))
    for name, mpage in models.items():
        _write(out, model_api_path(name), model_json(mpage, doc))
    stage("cohort and model JSON")
    agents = list(ctx.agent_contexts(engine, as_of, None, standings, luck).items())
    stage("agent contexts")
    if fork:
        half = len(agents) // 2
        agents_child = _Forked(lambda: _render_pages(out, "agent", agents[half:]), engine)
        count(_render_pages(out, "agent", agents[:half]))
        count(agents_child.join())
    else:
        count(_render_pages(out, "agent", agents))
    stage("agent render")
    if markets_child is not None:
        count(markets_child.join())
        stage("waiting for market pages")
    else:
        count(_market_pages_here(engine, out, as_of, statistics))
        stage("market, methodology and operations pages")
    for name, (_, text) in STATIC.items():
        _write(out, page_path("static", name), text)
    _write(out, "404.html", not_found_page("404.html").decode("utf-8"))  # for static hosts that serve one
    (out / "api").mkdir(exist_ok=True)
    _write(out, API_PATH, leaderboard_json(standings.boards if standings.boards is not None
                                           else compute_boards(engine, as_of)))
    _write(out, DECOMPOSITION_PATH, decomposition_json(engine, as_of, luck))
    stage("api")
    report.pages = {k: report.pages[k] for k in ("index", "cohort", "model", "agent", "market", "markets",
                                                 "methodology", "operations", "statistics") if k in report.pages}
    report.seconds = time.perf_counter() - started
    return report


def _market_pages_here(engine: Engine, out: Path, as_of: datetime, statistics: str) -> dict[str, int]:
    counts = _render_pages(out, "market", list(ctx.market_contexts(engine, as_of, None).items()))
    counts.update(_render_pages(out, "markets", [(None, market_index_context(engine, as_of))]))
    counts.update(_render_pages(out, "methodology", [(None, ctx.methodology_context(engine))]))
    counts.update(_render_pages(out, "operations", [(None, ctx.operations_context(engine, as_of))]))
    counts.update(statistics_pages(engine, out, as_of, statistics))
    return counts


def leaderboard_json(boards: Boards) -> str:
    """/api/leaderboard.json: the boards exactly as `arena leaderboard --format json` prints them."""
    return json.dumps(boards_json(boards), indent=2) + "\n"


@dataclass(frozen=True)
class NotFound:
    path: str  # as asked for (escaped by the template)


def not_found_page(path: str) -> bytes:
    """The styled 404 page, its links relative to the path asked for (so they resolve from any depth)."""
    rel = path.lstrip("/")
    safe = rel if len(rel) <= 300 else rel[:300] + "…"
    # links climb as many folders as the asked path has (at most a few: deeper paths are no page anyway)
    depth_path = "/".join(["x"] * min(rel.count("/"), 8) + ["404.html"])
    return render_page("404.html", NotFound(safe), depth_path).encode("utf-8")


def cohort_api_path(name: str) -> str:
    return page_path("cohort_api", name)


def model_api_path(name: str) -> str:
    return page_path("model_api", name)


def _plain(value: Any) -> Any:
    """JSON-safe: NaN and infinities as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def cohort_json(page: ctx.CohortPage, doc: Mapping[str, Any]) -> str:
    """/api/cohorts/<slug>.json: the cohort's headline board as /api/leaderboard.json has it, each agent's skill vs
    luck (micro-USD) and its ablation pairs — the cohort page's numbers."""
    name = page.cohort.name
    board = next((c for c in doc["cohorts"] if c["name"] == name), {"status": page.cohort.status, "rows": []})
    return json.dumps(_plain({
        "as_of": doc["as_of"], "rank_by": doc["rank_by"], "cohort": name, "status": board["status"],
        "rows": board["rows"],
        "skill_luck": [{"agent": agent, **{f: getattr(d, f) for f in ctx.SKILL_LUCK_FIELDS}, "luck": d.luck}
                       for agent, _, d in page.skill_luck],
        "ablations": [asdict(a) for a in page.ablations],
    }), indent=2) + "\n"


def model_json(page: Any, doc: Mapping[str, Any]) -> str:
    """/api/models/<slug>.json: the model's overall row and its row of each cohort's board (as
    /api/leaderboard.json has them), and its meta-analyses against every other forecaster — the model page's
    numbers."""
    name = page.name
    return json.dumps(_plain({
        "as_of": doc["as_of"], "rank_by": doc["rank_by"], "model": name,
        "overall": next((r for r in doc["overall"] if r["model"] == name), None),
        "cohorts": [{"cohort": c["name"], "status": c["status"], "row": r}
                    for c in doc["cohorts"] for r in c["rows"] if r["agent"] == name],
        "comparisons": [asdict(c) for c in page.comparisons],
        "cost": {**asdict(page.cost), "per_resolved_forecast_micros": page.cost.per_resolved_forecast_micros},
    }), indent=2) + "\n"


def decomposition_json(engine: Engine, as_of: datetime,
                       luck: Mapping[tuple[str, str], ctx.SkillLuck] | None = None) -> str:
    """/api/decomposition.json: per agent of every cohort, its P/L split into the edge it claimed and what its own
    beliefs call luck (the agent pages' "Skill vs luck"), in exact integer micro-USD."""
    rows = [{"cohort": cohort, "agent": agent, **{f: getattr(d, f) for f in ctx.SKILL_LUCK_FIELDS}, "luck": d.luck}
            for (cohort, agent), d in sorted((luck if luck is not None else ctx.skill_luck(engine, as_of)).items())]
    return json.dumps({
        "as_of": utc(as_of).isoformat(), "units": "micro-USD",
        "identity": "pnl = expected_pnl + belief_gap + move_without_belief + resolution_residual; "
                    "luck = belief_gap + resolution_residual; slippage_cost is inside the parts",
        "agents": rows,
    }, indent=2) + "\n"


# --- one page by its path ----------------------------------------------------------------------------------------

_HEX = re.compile(r"[0-9a-f]{2}")


def unslug(s: str) -> str | None:
    """The id `env.slug` spelled as `s`, or None when `s` is not a slug (or is a hashed, overlong one)."""
    out = bytearray()
    i = 0
    while i < len(s):
        ch = s[i]
        if ch != "_":
            if not re.fullmatch(r"[A-Za-z0-9-]", ch):
                return None
            out += ch.encode()
            i += 1
            continue
        lead = s[i + 1:i + 3]
        if not _HEX.fullmatch(lead):
            return None
        b = int(lead, 16)
        n = 1 if b < 0x80 else 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 0
        chunk = s[i + 1:i + 1 + 2 * n]
        if n == 0 or len(chunk) != 2 * n or not all(_HEX.fullmatch(chunk[k:k + 2]) for k in range(0, 2 * n, 2)):
            return None
        out += bytes.fromhex(chunk)
        i += 1 + 2 * n
    try:
        key = out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return key if slug(key) == s else None


def _cohort_name(engine: Engine, s: str) -> str | None:
    name = unslug(s)
    if name is not None:
        return name
    with engine.connect() as conn:  # an overlong (hashed) slug: find the cohort whose slug it is
        return next((n for n in conn.scalars(select(CohortRow.name)) if slug(n) == s), None)


def _api_page(engine: Engine, as_of: datetime, folder: str, key: str) -> Page | None:
    doc = boards_json(compute_boards(engine, as_of))
    if folder == "cohorts":
        name = _cohort_name(engine, key)
        cpage = ctx.cohort_contexts(engine, as_of, [name]).get(name) if name is not None else None
        return None if cpage is None else ("application/json; charset=utf-8", cohort_json(cpage, doc))
    name = _model_name(engine, key)
    mpage = model_contexts(engine, as_of, [name]).get(name) if name is not None else None
    return None if mpage is None else ("application/json; charset=utf-8", model_json(mpage, doc))


def _model_name(engine: Engine, s: str) -> str | None:
    name = unslug(s)
    if name is not None:
        return name
    with engine.connect() as conn:  # an overlong (hashed) slug
        return next((n for n in conn.scalars(select(AgentRow.name).distinct()) if slug(n) == s), None)


def _market_id(engine: Engine, s: str) -> str | None:
    mid = unslug(s)
    if mid is not None:
        return mid
    with engine.connect() as conn:
        return next((m for m in ctx.site_market_ids(conn) if slug(m) == s), None)


Page = tuple[str, str]  # content type, body


def render_path(engine: Engine, path: str, as_of: datetime) -> Page | None:
    """The page at site path `path` ("index.html", "agents/3.html", "static/site.css"), rendered from the
    database for `as_of`; None when there is no such page. Builds only that page's context. `engine` is taken to
    hold only facts recorded by `as_of` (the live server at "now"; `arena serve --as-of T` first makes the store
    as of T with `services.point_in_time.store_as_of`)."""
    as_of = utc(as_of)
    path = path.lstrip("/") or "index.html"
    html = "text/html; charset=utf-8"
    if path == API_PATH:
        return "application/json; charset=utf-8", leaderboard_json(compute_boards(engine, as_of))
    if path == DECOMPOSITION_PATH:
        return "application/json; charset=utf-8", decomposition_json(engine, as_of)
    api = re.fullmatch(r"api/(cohorts|models)/([^/]+)\.json", path)
    if api is not None:
        return _api_page(engine, as_of, *api.groups())
    if path.startswith("static/"):
        asset = STATIC.get(path[len("static/"):])
        return asset if asset is not None else None
    builders: dict[str, Callable[[], object | None]] = {
        "index.html": lambda: ctx.index_context(engine, as_of),
        "methodology.html": lambda: ctx.methodology_context(engine),
        "markets.html": lambda: market_index_context(engine, as_of),
        "operations.html": lambda: ctx.operations_context(engine, as_of),
    }
    if path in builders:
        kind = path[: -len(".html")]
        return html, render_page(TEMPLATE[kind], builders[path](), path)
    m = re.fullmatch(r"(cohorts|agents|markets|models)/([^/]+)\.html", path)
    if m is None:
        return None
    folder, key = m.groups()
    page: object | None
    if folder == "agents":
        if not re.fullmatch(r"[0-9]{1,18}", key):
            return None
        page = ctx.agent_contexts(engine, as_of, [int(key)]).get(int(key))
        kind = "agent"
    elif folder == "cohorts" and key.endswith("-statistics"):
        name = _cohort_name(engine, key[: -len("-statistics")])
        if name is None:
            return None
        from arena.services.statistics import cohort_statistics

        st = cohort_statistics(engine, as_of, [name], n_boot=STATISTICS_DRAWS).get(name)
        page = (replace(ctx.statistics_context(as_of, st, STATISTICS_DRAWS), cohort_href=page_path("cohort", name))
                if st is not None else None)
        kind = "statistics"
    elif folder == "models":
        name = _model_name(engine, key)
        page = model_contexts(engine, as_of, [name]).get(name) if name is not None else None
        kind = "model"
    elif folder == "cohorts":
        name = _cohort_name(engine, key)
        page = ctx.cohort_contexts(engine, as_of, [name]).get(name) if name is not None else None
        kind = "cohort"
    else:
        mid = _market_id(engine, key)
        page = ctx.market_contexts(engine, as_of, [mid]).get(mid) if mid is not None else None
        kind = "market"
    if page is None:
        return None
    return html, render_page(TEMPLATE[kind], page, path)


__all__ = ["STATIC", "RenderReport", "render_path", "render_site", "unslug"]
