"""The site's vendored assets — a small stylesheet and a small table sort/filter script — so the site needs nothing
from a network; `STATIC` maps each file name under static/ to its content type and text.
"""

from __future__ import annotations


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
