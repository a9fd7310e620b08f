"""Rendering pages: the static site (`render_site`, every page from batched contexts) and one page by its
site path (`render_path`, what the live server and the naive benchmark use).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.services.ablation import PairComparison, compare_pairs
from arena.services.point_in_time import backend, remember_backend, store_as_of
from arena.services.standings import boards_json, standings as compute_boards
from arena.services.statistics import DEFAULT_DRAWS, cohort_statistics
from arena.store.tables import CohortRow
from arena.web.agent_page import agent_contexts
from arena.web.api import (API_PATH, DECOMPOSITION_PATH, cohort_api_path, cohort_json, decomposition_json,
                           leaderboard_json, model_api_path, model_json)
from arena.web.assets import STATIC
from arena.web.boards import load_standings
from arena.web.cohort_page import cohort_contexts
from arena.web.env import page_path, render_page
from arena.web.fork import Forked, can_fork
from arena.web.index_page import index_context
from arena.web.market_index import market_index_context
from arena.web.market_page import market_contexts
from arena.web.methodology_page import methodology_context
from arena.web.model_page import model_contexts
from arena.web.operations_page import operations_context
from arena.web.paths import cohort_name, market_id_of, model_name
from arena.web.skill_luck import skill_luck
from arena.web.statistics_page import statistics_context


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


STATISTICS_DRAWS = DEFAULT_DRAWS  # the cohort pages' ablation rows use the same draws: one comparison serves both


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


def _render_pages(out: Path, kind: str, pages: list[tuple[object, object]]) -> dict[str, int]:
    for key, page in pages:
        path = page_path(kind, key)
        _write(out, path, render_page(TEMPLATE[kind], page, path))
    return {kind: len(pages)}


def _market_pages(url: str, out: Path, as_of: datetime, statistics: str, source: str,
                  ablations: Mapping[str, list[PairComparison]] | None = None) -> dict[str, int]:
    """Market, methodology, operations and statistics pages, from an engine of their own (a forked child);
    `source` names the database the facts came from (a copy as of T names its source's)."""
    from arena.store.engine import make_engine

    engine = make_engine(url)
    remember_backend(engine, source)
    try:
        return _market_pages_here(engine, out, as_of, statistics, ablations)
    finally:
        engine.dispose()


def statistics_pages(engine: Engine, out: Path, as_of: datetime, statistics: str = "open",
                     ablations: Mapping[str, list[PairComparison]] | None = None) -> dict[str, int]:
    """Each cohort's statistics page. "all" recomputes every cohort; "open" only open cohorts and cohorts whose
    page is missing (a completed cohort's facts no longer change, so its page stays valid); "none" skips.
    `ablations`: the ablation pairs already compared for the cohort pages (None: compared here)."""
    if statistics == "none":
        return {}
    with engine.connect() as conn:
        rows = conn.execute(select(CohortRow.name, CohortRow.status)).all()
    names = [n for n, status in rows
             if statistics == "all" or status == "open" or not (out / page_path("statistics", n)).exists()]
    if not names:
        return {"statistics": 0}
    stats = cohort_statistics(engine, as_of, names, n_boot=STATISTICS_DRAWS, ablations=ablations)
    pages = []
    for name, st in stats.items():
        page = statistics_context(as_of, st, STATISTICS_DRAWS)
        pages.append((name, replace(page, cohort_href=page_path("cohort", name))))
    return _render_pages(out, "statistics", pages)


RENDER_STAGES = 9  # calls of `on_stage` per render (for a progress bar; a test counts them)


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
    fork = parallel and can_fork(engine)
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
    # each ablation pair compared once, for both the cohort pages and the statistics pages (a forked child sees it)
    ablations = compare_pairs(engine, as_of, n_boot=STATISTICS_DRAWS, seed=0)
    if fork:  # before any thread exists in this process
        url = engine.url.render_as_string(hide_password=False)
        source = backend(engine)
        markets_child = Forked(lambda: _market_pages(url, out, as_of, statistics, source, ablations), engine)
    standings = load_standings(engine, as_of, None, with_overall=True)
    stage("standings")
    count(_render_pages(out, "index", [(None, index_context(engine, as_of, standings))]))
    luck = skill_luck(engine, as_of)  # "Skill vs luck" on cohort and agent pages, /api/decomposition.json
    cohorts = cohort_contexts(engine, as_of, None, standings, luck, ablations)
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
    agents = list(agent_contexts(engine, as_of, None, standings, luck).items())
    stage("agent contexts")
    if fork:
        half = len(agents) // 2
        agents_child = Forked(lambda: _render_pages(out, "agent", agents[half:]), engine)
        count(_render_pages(out, "agent", agents[:half]))
        count(agents_child.join())
    else:
        count(_render_pages(out, "agent", agents))
    stage("agent render")
    if markets_child is not None:
        count(markets_child.join())
        stage("waiting for market pages")
    else:
        count(_market_pages_here(engine, out, as_of, statistics, ablations))
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


def _market_pages_here(engine: Engine, out: Path, as_of: datetime, statistics: str,
                       ablations: Mapping[str, list[PairComparison]] | None = None) -> dict[str, int]:
    counts = _render_pages(out, "market", list(market_contexts(engine, as_of, None).items()))
    counts.update(_render_pages(out, "markets", [(None, market_index_context(engine, as_of))]))
    counts.update(_render_pages(out, "methodology", [(None, methodology_context(engine))]))
    counts.update(_render_pages(out, "operations", [(None, operations_context(engine, as_of))]))
    counts.update(statistics_pages(engine, out, as_of, statistics, ablations))
    return counts


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


def _api_page(engine: Engine, as_of: datetime, folder: str, key: str) -> Page | None:
    doc = boards_json(compute_boards(engine, as_of))
    if folder == "cohorts":
        name = cohort_name(engine, key)
        cpage = cohort_contexts(engine, as_of, [name]).get(name) if name is not None else None
        return None if cpage is None else ("application/json; charset=utf-8", cohort_json(cpage, doc))
    name = model_name(engine, key)
    mpage = model_contexts(engine, as_of, [name]).get(name) if name is not None else None
    return None if mpage is None else ("application/json; charset=utf-8", model_json(mpage, doc))


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
        "index.html": lambda: index_context(engine, as_of),
        "methodology.html": lambda: methodology_context(engine),
        "markets.html": lambda: market_index_context(engine, as_of),
        "operations.html": lambda: operations_context(engine, as_of),
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
        page = agent_contexts(engine, as_of, [int(key)]).get(int(key))
        kind = "agent"
    elif folder == "cohorts" and key.endswith("-statistics"):
        name = cohort_name(engine, key[: -len("-statistics")])
        if name is None:
            return None
        st = cohort_statistics(engine, as_of, [name], n_boot=STATISTICS_DRAWS).get(name)
        page = (replace(statistics_context(as_of, st, STATISTICS_DRAWS), cohort_href=page_path("cohort", name))
                if st is not None else None)
        kind = "statistics"
    elif folder == "models":
        name = model_name(engine, key)
        page = model_contexts(engine, as_of, [name]).get(name) if name is not None else None
        kind = "model"
    elif folder == "cohorts":
        name = cohort_name(engine, key)
        page = cohort_contexts(engine, as_of, [name]).get(name) if name is not None else None
        kind = "cohort"
    else:
        mid = market_id_of(engine, key)
        page = market_contexts(engine, as_of, [mid]).get(mid) if mid is not None else None
        kind = "market"
    if page is None:
        return None
    return html, render_page(TEMPLATE[kind], page, path)


__all__ = ["RENDER_STAGES", "STATISTICS_DRAWS", "RenderReport", "render_path", "render_site", "statistics_pages"]
