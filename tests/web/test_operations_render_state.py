"""The operations page is written by a render that is itself a job run, still "running" while it reads the job
table. That run (a render started at or after the page's time) is labelled as the render writing the page — not
as a job left running — while an older render still marked running (a stuck one) keeps its "running" status."""

from __future__ import annotations

import re
from datetime import timedelta

from arena.store.engine import session_scope
from arena.store.tables import JobRunRow
from arena.web.operations_page import operations_context
from arena.web.env import render_page


def test_the_render_writing_the_page_is_not_shown_as_running(sim_arena):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    with session_scope(engine) as s:
        s.add(JobRunRow(job="render", period_key="stuck", status="running", started_at=as_of - timedelta(days=1),
                        counts={}, runner="host:2"))
        s.add(JobRunRow(job="render", period_key="now", status="running", started_at=as_of, counts={},
                        runner="host:3"))
    text = render_page("operations.html", operations_context(engine, as_of), "operations.html")
    runs = text[text.index('id="job-runs"'):]
    runs = runs[: runs.index("</table>")]
    rows = {period: status for period, status in
            re.findall(r"<td>render</td><td>([^<]+)</td><td><span class=\"status [^\"]+\"[^>]*>([^<]+)</span>", runs)}
    assert rows == {"now": "writing this page", "stuck": "running"}
    # the summary counts the stuck run as running and the current one apart
    summary = text[text.index("<h2>Scheduled jobs</h2>"): text.index('id="job-runs"')]
    render_row = re.search(r"<tr><td>render</td>(.*?)</tr>", summary, flags=re.S)
    assert render_row is not None
    cells = re.findall(r'<td class="num">(.*?)</td>', render_row.group(1), flags=re.S)
    runs_n, ok, failed, running = cells[:4]
    assert runs_n == "2" and running.startswith("1 ") and "this one" in running
