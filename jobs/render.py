"""Job: render the static leaderboard site after the jobs that change what it shows."""

from __future__ import annotations

from arena.services.operations import JobOutcome, run_once
from arena.jobs.runtime import current

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
    return run_once(rt.engine, NAME, f"{after}@{now.isoformat(timespec='seconds')}", rt.clock, body, lease=rt.lease())
