"""Rendering the static site (`render_site`): every page from batched contexts, written only where its inputs
changed. One page by its site path, for the live server, is `web.one_page.render_path`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.read.ablation import PairComparison, compare_pairs
from arena.read.cohorts import cohort_statuses
from arena.read.point_in_time import backend, remember_backend, store_as_of
from arena.read.standings import boards_json, standings as compute_boards
from arena.read.statistics import DEFAULT_DRAWS, cohort_statistics
from arena.cache.memo import one_reading
from arena.web.agent_page import agent_contexts
from arena.read.frontier import frontier_records, kept_frontier
from arena.web.api import (API_PATH, DECOMPOSITION_PATH, FRONTIER_PATH, frontier_json, cohort_api_path, cohort_json, decomposition_json,
                           leaderboard_json, model_api_path, model_json)
from arena.web.assets import STATIC
from arena.web.boards import Standings, load_standings
from arena.web.cohort_page import cohort_contexts
from arena.web.env import page_path, render_page
from arena.web.fork import Forked, can_fork
from arena.web.index_page import index_context
from arena.web.market_index import market_index_context
from arena.web.market_page import market_contexts
from arena.web.methodology_page import methodology_context
from arena.web.model_page import Seats, model_contexts, model_seats, model_year_contexts, year_links
from arena.web.operations_page import operations_context
from arena.web.page_keys import PageKeys, market_list_key, model_pages_key, model_year_key, page_keys
from arena.web.site_manifest import SiteManifest
from arena.web.skill_luck import SkillLuck, skill_luck
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
    "model_year": "model_year.html",
    "markets": "markets.html",
}


STATISTICS_DRAWS = DEFAULT_DRAWS  # the cohort pages' ablation rows use the same draws: one comparison serves both


@dataclass
class RenderReport:
    """What `render_site` did: pages built per kind, pages kept as they were (their inputs' keys unchanged), how
    many of the built ones were written (their bytes changed), the output directory, the as-of time and how long
    it took."""

    out_dir: Path
    as_of: datetime
    pages: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage: contexts and rendering
    kept: dict[str, int] = field(default_factory=dict)  # pages per kind left alone: their page key did not move
    written: int = 0  # files written (built pages whose bytes changed, and assets)
    unchanged: int = 0  # files built but left alone: the same bytes were there

    @property
    def total_pages(self) -> int:
        return sum(self.pages.values())

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in self.pages.items())
        kept = sum(self.kept.values())
        tail = (f"; {kept} pages kept, their inputs unchanged ({', '.join(f'{n} {k}' for k, n in self.kept.items() if n)})"
                if kept else "")
        return (f"rendered {self.total_pages} pages ({kinds}) into {self.out_dir} in {self.seconds:.2f} s: "
                f"{self.written} files written, {self.unchanged} unchanged{tail}")


def _render_pages(site: SiteManifest, kind: str, pages: list[tuple[object, object]],
                  key: Callable[[object], str] = lambda _: "") -> dict[str, int]:
    for k, page in pages:
        path = page_path(kind, k)
        site.write(path, render_page(TEMPLATE[kind], page, path), key(k))
    return {kind: len(pages)}


def _model_years(engine: Engine, site: SiteManifest, as_of: datetime, keys: PageKeys, standings: Standings,
                 luck: Mapping[tuple[str, str], SkillLuck], seats: Seats, report: RenderReport) -> dict[str, int]:
    """The models' year pages whose key moved (`page_keys.model_year_key`): after one cohort changed, that
    cohort's year for each model in it."""
    wanted: dict[tuple[str, int], str] = {}
    for name, items in seats.items():
        years = [y.year for y in year_links(name, items)]
        for year in years:
            cohorts = [keys.cohorts.get(info.name, "") for info, _ in items if info.period_start.year == year]
            wanted[(name, year)] = model_year_key(name, year, cohorts, years)
    stale = [k for k, key in wanted.items() if not site.fresh(page_path("model_year", k), key)]
    report.kept["model_year"] = len(wanted) - len(stale)
    for name in {n for n, _ in stale}:
        _real_dir(site.out, str(Path(page_path("model_year", (name, 0))).parent))
    pages = model_year_contexts(engine, as_of, stale, standings, luck, seats) if stale else {}
    return _render_pages(site, "model_year", list(pages.items()), lambda k: wanted[k])  # type: ignore[index]


def _in_child(site: SiteManifest, work: Callable[[SiteManifest], dict[str, int]]) -> dict[str, Any]:
    """`work` in a forked child, on a manifest of its own whose changes go back to the parent."""
    own = SiteManifest(site.out, dict(site.pages))
    return {**work(own), **own.report()}


def _market_pages(url: str, site: SiteManifest, as_of: datetime, plan: Plan, source: str,
                  ablations: Mapping[str, list[PairComparison]] | None = None) -> dict[str, int]:
    """Market, market-list, methodology, operations and statistics pages, from an engine of their own (a forked
    child); `source` names the database the facts came from (a copy as of T names its source's)."""
    from arena.store.engine import make_engine

    engine = make_engine(url)
    remember_backend(engine, source)
    try:
        return _market_pages_here(engine, site, as_of, plan, ablations)
    finally:
        engine.dispose()


def _statistics_wanted(engine: Engine, as_of: datetime, out: Path, statistics: str, keys: PageKeys | None = None,
                       site: SiteManifest | None = None) -> list[str]:
    """The cohorts whose statistics page a render computes. "all": every cohort; "open": open cohorts and cohorts
    whose page is missing (a completed cohort's facts no longer change), and — with page keys — a completed
    cohort whose key moved, but no cohort whose page was written from its current key; "none": none."""
    if statistics == "none":
        return []
    rows = cohort_statuses(engine, as_of)
    if statistics == "all":
        return [n for n, _ in rows]
    out_names = []
    for name, status in rows:
        path = page_path("statistics", name)
        if keys is not None and site is not None:
            key = keys.cohorts.get(name, "")
            if site.fresh(path, key):
                continue
            moved = path in site.pages and site.pages[path][0] != key
            if status == "open" or moved or not (out / path).exists():
                out_names.append(name)
        elif status == "open" or not (out / path).exists():
            out_names.append(name)
    return out_names


def statistics_pages(engine: Engine, out: Path | SiteManifest, as_of: datetime, statistics: str | list[str] = "open",
                     ablations: Mapping[str, list[PairComparison]] | None = None,
                     keys: PageKeys | None = None) -> dict[str, int]:
    """Each cohort's statistics page. "all" recomputes every cohort; "open" only open cohorts and cohorts whose
    page is missing (a completed cohort's facts no longer change, so its page stays valid); "none" skips; a list
    names the cohorts. `ablations`: the ablation pairs already compared for the cohort pages (None: compared
    here)."""
    site = out if isinstance(out, SiteManifest) else SiteManifest(Path(out))
    names = statistics if isinstance(statistics, list) else _statistics_wanted(engine, as_of, site.out, statistics)
    if statistics == "none":
        return {}
    if not names:
        return {"statistics": 0}
    stats = cohort_statistics(engine, as_of, names, n_boot=STATISTICS_DRAWS, ablations=ablations)
    pages = []
    for name, st in stats.items():
        page = statistics_context(as_of, st, STATISTICS_DRAWS)
        pages.append((name, replace(page, cohort_href=page_path("cohort", name))))
    return _render_pages(site, "statistics", pages, (lambda k: keys.cohorts.get(str(k), "")) if keys else (lambda _: ""))


RENDER_STAGES = 10  # calls of `on_stage` per render (for a progress bar; a test counts them)


def render_site(engine: Engine, out_dir: str | Path, as_of: datetime, *, parallel: bool = True,
                statistics: str = "open", on_stage: Callable[[str], None] | None = None,
                full: bool = False) -> RenderReport:
    """Write the static site for `as_of` into `out_dir` (created if needed; nothing else there is touched). One
    batched context build per page kind, then one template render per page.

    Only what changed is rebuilt: every cohort and market page has a key naming its inputs (`web.page_keys`), and
    a page whose key is the one it was last written with (`web.site_manifest`) is left as it is — its facts are
    the same as of `as_of` as they were when it was written. The market list is keyed by every market's key and the
    model pages by every cohort's; the other pages that gather everything (index, JSON of the boards) are built
    every time; any built page is written only when its bytes changed. `full` builds every page again.

    The pages show exactly the facts recorded up to `as_of`: when the store holds later ones, the site is
    rendered from the store as it stood then (`services.point_in_time`).

    With `parallel` (and where it pays, see `_can_fork`) the market pages are built and rendered by a forked
    process while this one builds the leaderboards, and half of the agent pages are rendered by a second one:
    the two cores of a small server both work. The pages are the same either way."""
    started = time.perf_counter()
    with _long_lived_left_alone(), store_as_of(engine, as_of) as past, one_reading():
        report = _render_site(past, out_dir, utc(as_of), parallel, statistics, on_stage, full)
    report.seconds = time.perf_counter() - started
    return report


@contextmanager
def _long_lived_left_alone() -> Iterator[None]:
    """During the block, the garbage collector leaves alone the objects that existed before it (`gc.freeze`). A
    long-running process (the scheduler) keeps its memos — gigabytes of frames, boards and rows at 1,000 cohorts —
    and a full collection that walks them all can fall in the middle of a render at random, a sizeable share of
    it; frozen, they are walked only once the render is over. A forked child then also copies fewer pages. Nested
    or concurrent renders leave the freeze to the outermost."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True)
class Plan:
    """What a render rebuilds: the cohorts whose pages are stale (None: all), their agents, the stale market pages
    (None: all), the statistics pages wanted, and the keys to record."""

    keys: PageKeys
    cohorts: list[str] | None
    agents: list[int] | None
    markets: list[str] | None
    statistics: list[str] | None  # None: no statistics pages ("none")
    kept: dict[str, int]
    market_list: str = ""  # the market list's key when it is stale (its key moved); "" when it is kept


def _plan(engine: Engine, site: SiteManifest, as_of: datetime, statistics: str) -> Plan:
    keys = page_keys(engine, as_of)
    stale = [name for name, key in keys.cohorts.items()
             if not (site.fresh(page_path("cohort", name), key) and site.fresh(cohort_api_path(name), key)
                     and all(site.fresh(page_path("agent", a), key) for a in keys.agents.get(name, ())))]
    markets = [m for m, key in keys.markets.items() if not site.fresh(page_path("market", m), key)]
    list_key = market_list_key(keys)
    listed = not site.fresh(page_path("markets"), list_key)
    all_cohorts, all_markets = len(stale) == len(keys.cohorts), len(markets) == len(keys.markets)
    kept_agents = sum(len(a) for n, a in keys.agents.items()) - sum(len(keys.agents.get(n, ())) for n in stale)
    return Plan(keys, None if all_cohorts else stale,
                None if all_cohorts else [a for n in stale for a in keys.agents.get(n, ())],
                None if all_markets else markets,
                None if statistics == "none" else _statistics_wanted(engine, as_of, site.out, statistics, keys, site),
                {"cohort": len(keys.cohorts) - len(stale), "agent": kept_agents,
                 "market": len(keys.markets) - len(markets), "markets": 0 if listed else 1}, list_key if listed else "")


def _real_dir(out: Path, sub: str) -> None:
    """Make `out/sub` a real directory: a symlink planted at any of its levels is removed (the link, never what
    it points to), so the site's pages are written inside `out` and nowhere else."""
    out.mkdir(parents=True, exist_ok=True)
    here = out
    for part in Path(sub).parts:
        here = here / part
        if here.is_symlink():
            here.unlink()
        here.mkdir(exist_ok=True)


def _render_site(engine: Engine, out_dir: str | Path, as_of: datetime, parallel: bool,
                 statistics: str, on_stage: Callable[[str], None] | None = None, full: bool = False) -> RenderReport:
    started = time.perf_counter()
    as_of = utc(as_of)
    out = Path(out_dir)
    for sub in ("cohorts", "agents", "markets", "models", "static", "api/cohorts", "api/models"):
        _real_dir(out, sub)
    report = RenderReport(out, as_of)
    fork = parallel and can_fork(engine)
    clock = [time.perf_counter()]

    def stage(name: str) -> None:
        now = time.perf_counter()
        report.stages[name] = report.stages.get(name, 0.0) + now - clock[0]
        clock[0] = now
        if on_stage is not None:
            on_stage(name)

    def count(counts: dict[str, Any]) -> None:
        for kind, n in site.merge(counts).items():
            report.pages[kind] = report.pages.get(kind, 0) + n

    site = SiteManifest(out) if full else SiteManifest.load(out)
    plan = _plan(engine, site, as_of, statistics)
    keys = plan.keys
    report.kept = plan.kept
    stage("page keys")
    cohort_key = lambda name: keys.cohorts.get(str(name), "")  # noqa: E731
    agent_cohort = {a: n for n, ids in keys.agents.items() for a in ids}
    agent_key = lambda aid: keys.cohorts.get(agent_cohort.get(int(aid), ""), "")  # noqa: E731

    markets_child = None
    # each ablation pair compared once, for both the cohort pages and the statistics pages (a forked child sees it)
    wanted = None if plan.cohorts is None else sorted(set(plan.cohorts) | set(plan.statistics or ()))
    ablations = compare_pairs(engine, as_of, wanted, n_boot=STATISTICS_DRAWS, seed=0)
    if fork:  # before any thread exists in this process
        url = engine.url.render_as_string(hide_password=False)
        source = backend(engine)
        markets_child = Forked(lambda: _in_child(site, lambda own: _market_pages(url, own, as_of, plan, source,
                                                                                 ablations)), engine)
    standings = load_standings(engine, as_of, None, with_overall=True, keys=keys.by_id())
    stage("standings")
    models_key = model_pages_key(keys)  # every cohort's key: the model pages' and the frontier's
    frontier = frontier_records(kept_frontier(engine, as_of, models_key))  # the index's chart and the model pages
    count(_render_pages(site, "index", [(None, index_context(engine, as_of, standings, len(keys.markets),
                                                             frontier))]))
    luck = skill_luck(engine, as_of, keys=keys.cohorts)  # "Skill vs luck" on cohort, agent and model pages and the API
    cohorts = cohort_contexts(engine, as_of, plan.cohorts, standings, luck, ablations) if plan.cohorts != [] else {}
    stage("index and cohort contexts")
    count(_render_pages(site, "cohort", list(cohorts.items()), cohort_key))
    stage("cohort render")
    seats = model_seats(engine, standings)
    kept = bool(seats) and all(site.fresh(page_path("model", n), models_key)  # no cohort's key moved
                               and site.fresh(model_api_path(n), models_key) for n in seats)
    report.kept["model"] = len(seats) if kept else 0
    models = {} if kept else model_contexts(engine, as_of, None, standings, luck, seats, frontier)
    count(_render_pages(site, "model", list(models.items()), lambda _: models_key))
    count(_model_years(engine, site, as_of, keys, standings, luck, seats, report))
    stage("model pages")
    doc = boards_json(standings.boards if standings.boards is not None else compute_boards(engine, as_of))
    for name, cpage in cohorts.items():
        site.write(cohort_api_path(name), cohort_json(cpage, doc), cohort_key(name))
    for name, mpage in models.items():
        site.write(model_api_path(name), model_json(mpage, doc), models_key)
    stage("cohort and model JSON")
    agents = list(agent_contexts(engine, as_of, plan.agents, standings, luck).items()) if plan.agents != [] else []
    stage("agent contexts")
    if fork and len(agents) > 1:
        half = len(agents) // 2
        agents_child = Forked(lambda: _in_child(site, lambda own: _render_pages(own, "agent", agents[half:],
                                                                                agent_key)), engine)
        count(_render_pages(site, "agent", agents[:half], agent_key))
        count(agents_child.join())
    else:
        count(_render_pages(site, "agent", agents, agent_key))
    stage("agent render")
    if markets_child is not None:
        count(markets_child.join())
        stage("waiting for market pages")
    else:
        count(_market_pages_here(engine, site, as_of, plan, ablations))
        stage("market, methodology and operations pages")
    for name, (_, text) in STATIC.items():
        site.write(page_path("static", name), text)
    site.write("404.html", not_found_page("404.html").decode("utf-8"))  # for static hosts that serve one
    site.write(API_PATH, leaderboard_json(doc))
    site.write(DECOMPOSITION_PATH, decomposition_json(engine, as_of, luck))
    site.write(FRONTIER_PATH, frontier_json(as_of, frontier))
    site.save()
    stage("api")
    report.written, report.unchanged = site.written, site.unchanged
    order = ("index", "cohort", "model", "model_year", "agent", "market", "markets", "methodology", "operations",
             "statistics")
    report.pages = {k: report.pages[k] for k in order if k in report.pages}
    report.seconds = time.perf_counter() - started
    return report


def _market_pages_here(engine: Engine, site: SiteManifest, as_of: datetime, plan: Plan,
                       ablations: Mapping[str, list[PairComparison]] | None = None) -> dict[str, int]:
    keys = plan.keys
    pages = list(market_contexts(engine, as_of, plan.markets).items()) if plan.markets != [] else []
    counts = _render_pages(site, "market", pages, lambda m: keys.markets.get(str(m), ""))
    if plan.market_list:
        counts.update(_render_pages(site, "markets", [(None, market_index_context(engine, as_of, sorted(keys.markets)))],
                                    lambda _: plan.market_list))
    counts.update(_render_pages(site, "methodology", [(None, methodology_context(engine))]))
    counts.update(_render_pages(site, "operations", [(None, operations_context(engine, as_of))]))
    if plan.statistics is not None:
        counts.update(statistics_pages(engine, site, as_of, plan.statistics, ablations, keys))
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


__all__ = ["RENDER_STAGES", "STATISTICS_DRAWS", "TEMPLATE", "RenderReport", "not_found_page", "render_site", "statistics_pages"]
