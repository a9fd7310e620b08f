"""Job: render the static leaderboard site after the jobs that change what it shows.

The operations page lists the job runs, this render among them — still running while the site is written. Once
the run is recorded as finished, that one page is written again, so the site never shows its own render as
running."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from arena.ops.operations import JobOutcome, run_once
from arena.jobs.runtime import Runtime, current

NAME = "render"


def run(after: str = "manual") -> JobOutcome:
    rt = current()
    now = rt.clock.now()

    def body() -> dict:
        if rt.site_dir is None:
            return {"rendered": False, "reason": "no site directory configured"}
        from arena.web.render import render_site

        report = render_site(rt.engine, rt.site_dir, now)
        return {"rendered": True, "pages": getattr(report, "pages", None), "dir": str(rt.site_dir)}

    # One render per triggering run: keyed by what triggered it and when.
    out = run_once(rt.engine, NAME, f"{after}@{now.isoformat(timespec='seconds')}", rt.clock, body, lease=rt.lease())
    if out.status == "ok" and rt.site_dir is not None:
        refresh_operations(rt, now)
    return out


def refresh_operations(rt: Runtime, now: datetime) -> None:
    """Write operations.html again now that this render's run is recorded as finished."""
    from arena.read.point_in_time import store_as_of
    from arena.web.one_page import render_path

    with store_as_of(rt.engine, now) as past:
        page = render_path(past, "operations.html", now)
    if page is not None:
        (Path(rt.site_dir) / "operations.html").write_text(page[1], encoding="utf-8")  # type: ignore[arg-type]
