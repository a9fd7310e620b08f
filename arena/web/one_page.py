"""One page by its site path (`render_path`): what the live server and the naive benchmark use. Builds only that
page's context, from the database as it stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.read.standings import boards_json, standings as compute_boards
from arena.read.statistics import cohort_statistics
from arena.web.agent_page import agent_contexts
from arena.web.api import (API_PATH, DECOMPOSITION_PATH, FRONTIER_PATH, cohort_json, decomposition_json,
                           frontier_json, leaderboard_json,
                           model_json)
from arena.web.assets import STATIC
from arena.web.cohort_page import cohort_contexts
from arena.web.env import page_path, render_page
from arena.web.index_page import index_context
from arena.web.market_index import market_index_context
from arena.web.market_page import market_contexts
from arena.web.methodology_page import methodology_context
from arena.web.model_page import model_contexts, model_year_contexts
from arena.web.operations_page import operations_context
from arena.web.paths import cohort_name, market_id_of, model_name
from arena.web.render import STATISTICS_DRAWS, TEMPLATE, not_found_page
from arena.web.statistics_page import statistics_context


def _api_page(engine: Engine, as_of: datetime, folder: str, key: str) -> Page | None:
    doc = boards_json(compute_boards(engine, as_of))
    if folder == "cohorts":
        name = cohort_name(engine, as_of, key)
        cpage = cohort_contexts(engine, as_of, [name]).get(name) if name is not None else None
        return None if cpage is None else ("application/json; charset=utf-8", cohort_json(cpage, doc))
    name = model_name(engine, as_of, key)
    mpage = model_contexts(engine, as_of, [name]).get(name) if name is not None else None
    return None if mpage is None else ("application/json; charset=utf-8", model_json(mpage, doc))


Page = tuple[str, str]  # content type, body


def filtered_leaderboard(engine: Engine, as_of: datetime, query: str) -> str | None:
    """/api/leaderboard.json?from=D&until=D&category=C (category repeatable): the boards limited to those questions,
    as `arena leaderboard --from D --until D --category C --format json` prints them; None when the query names no
    filter. ValueError (a one-line reason) on a bad day, a window ending before it starts or an unknown category."""
    from urllib.parse import parse_qs

    from arena.read.breakdown import known_categories
    from arena.domain.question_filter import question_filter

    words = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(words) - {"from", "until", "category"})
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0]!r}: use from, until and category")
    questions = question_filter(words.get("from", [None])[-1], words.get("until", [None])[-1], words.get("category"))
    if questions is None:
        return None
    known = known_categories(engine)
    wrong = [c for c in questions.categories if c not in known]
    if wrong:
        raise ValueError(f"unknown category {wrong[0]!r}: choose from {', '.join(known)}")
    return leaderboard_json(compute_boards(engine, as_of, questions=questions))


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
    if path == FRONTIER_PATH:
        from arena.read.frontier import frontier_records, model_frontier

        return "application/json; charset=utf-8", frontier_json(as_of, frontier_records(model_frontier(engine, as_of)))
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
    year = re.fullmatch(r"models/([^/]+)/([0-9]{4})\.html", path)
    if year is not None:
        name = model_name(engine, as_of, year.group(1))
        pages = model_year_contexts(engine, as_of, [(name, int(year.group(2)))]) if name is not None else {}
        return None if not pages else (html, render_page(TEMPLATE["model_year"], next(iter(pages.values())), path))
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
        name = cohort_name(engine, as_of, key[: -len("-statistics")])
        if name is None:
            return None
        st = cohort_statistics(engine, as_of, [name], n_boot=STATISTICS_DRAWS).get(name)
        page = (replace(statistics_context(as_of, st, STATISTICS_DRAWS), cohort_href=page_path("cohort", name))
                if st is not None else None)
        kind = "statistics"
    elif folder == "models":
        name = model_name(engine, as_of, key)
        page = model_contexts(engine, as_of, [name]).get(name) if name is not None else None
        kind = "model"
    elif folder == "cohorts":
        name = cohort_name(engine, as_of, key)
        page = cohort_contexts(engine, as_of, [name]).get(name) if name is not None else None
        kind = "cohort"
    else:
        mid = market_id_of(engine, as_of, key)
        page = market_contexts(engine, as_of, [mid]).get(mid) if mid is not None else None
        kind = "market"
    if page is None:
        return None
    return html, render_page(TEMPLATE[kind], page, path)


__all__ = ["Page", "not_found_page", "render_path"]
