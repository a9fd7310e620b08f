/* arena: click (or press Enter on) a header of a table.sortable to sort by that column; type in an
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
