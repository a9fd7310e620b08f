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
from arena.web.env import TEMPLATES, page_path, render_page, slug

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

# the vendored assets live beside the templates (templates/static/), read once at import
SITE_CSS = (TEMPLATES / "static" / "site.css").read_text(encoding="utf-8")
SORT_JS = (TEMPLATES / "static" / "sort.js").read_text(encoding="utf-8")

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
