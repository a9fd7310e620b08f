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


def test_the_render_job_leaves_an_operations_page_showing_itself_finished(sim_arena, tmp_path):
    from arena.clock import FixedClock
    from arena.jobs import runtime
    from arena.jobs.scheduler import run_now

    engine, as_of = sim_arena.engine, sim_arena.as_of
    runtime.configure(runtime.Runtime(engine, FixedClock(as_of), site_dir=tmp_path / "site"))
    out = run_now("render")
    assert out.status == "ok" and (tmp_path / "site" / "index.html").exists()
    text = (tmp_path / "site" / "operations.html").read_text()
    runs = text[text.index('id="job-runs"'):]
    runs = runs[: runs.index("</table>")]
    assert "writing this page" not in runs
    assert re.search(r"<td>render</td><td>manual@[^<]+</td><td><span class=\"status status-ok\"[^>]*>ok</span>", runs)


def test_the_render_reports_as_many_stages_as_its_progress_bar_expects(sim_arena, tmp_path):
    from arena.web.render import RENDER_STAGES, render_site

    for parallel in (False, True):
        stages: list[str] = []
        render_site(sim_arena.engine, tmp_path / f"site{parallel}", sim_arena.as_of, parallel=parallel,
                    on_stage=stages.append)
        assert len(stages) == RENDER_STAGES, stages
