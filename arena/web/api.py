"""The site's JSON API documents: /api/leaderboard.json, /api/decomposition.json and one per cohort and per model,
made from the same contexts and boards as the pages (NaN written as null, money in exact micro-USD). Written by
orjson (`dumps`): UTF-8, two-space indent — the whole board of a thousand cohorts is 30 MB, which the standard
library's encoder took seconds to write on every render.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from dataclasses import asdict
from datetime import datetime

import orjson
from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.read.standings import Boards, boards_json
from arena.web.cohort_page import CohortPage
from arena.web.env import page_path
from arena.web.skill_luck import SKILL_LUCK_FIELDS, SkillLuck, skill_luck


API_PATH = "api/leaderboard.json"


DECOMPOSITION_PATH = "api/decomposition.json"  # every agent's skill-vs-luck parts (exact micro-USD)
FRONTIER_PATH = "api/frontier.json"  # the cost–skill frontier: every model with a stored call


def dumps(doc: Any) -> str:
    """A JSON document as the API writes it: two-space indent, UTF-8 text, NaN and infinities as null, a final
    newline."""
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode("utf-8") + "\n"


def leaderboard_json(boards: Boards | Mapping[str, Any]) -> str:
    """/api/leaderboard.json: the boards exactly as `arena leaderboard --format json` prints them (`boards`: the
    boards, or their `boards_json` already made)."""
    return dumps(boards_json(boards) if isinstance(boards, Boards) else boards)


def cohort_api_path(name: str) -> str:
    return page_path("cohort_api", name)


def model_api_path(name: str) -> str:
    return page_path("model_api", name)


def cohort_json(page: CohortPage, doc: Mapping[str, Any]) -> str:
    """/api/cohorts/<slug>.json: the cohort's headline board, its forecast sets' headroom and its leaked questions
    as /api/leaderboard.json has them, each agent's skill vs luck (micro-USD) and its ablation pairs — the cohort
    page's numbers —, and each seat's Brier − market by horizon bucket and by category (the statistics page's
    tables)."""
    name = page.cohort.name
    board = next((c for c in doc["cohorts"] if c["name"] == name), {"status": page.cohort.status, "rows": []})
    return dumps({
        "as_of": doc["as_of"], "rank_by": doc["rank_by"], "cohort": name, "status": board["status"],
        "rows": board["rows"], "headroom": board.get("headroom"), "leaks": board.get("leaks", []),
        "skill_luck": [{"agent": agent, **{f: getattr(d, f) for f in SKILL_LUCK_FIELDS}, "luck": d.luck}
                       for agent, _, d in page.skill_luck],
        "ablations": [asdict(a) for a in page.ablations],
        "skill_by_horizon": list(page.skill_by_horizon),
        "skill_by_category": list(page.skill_by_category),
    })


def model_json(page: Any, doc: Mapping[str, Any]) -> str:
    """/api/models/<slug>.json: the model's overall row and its row of each cohort's board (as
    /api/leaderboard.json has them), its meta-analyses against every other forecaster and its projection (how
    many markets and more weeks a Brier difference against the market needs), its Brier − market by horizon and
    by category, and its row of the cost–skill frontier (null without a reported cost) — the model page's
    numbers."""
    name = page.name
    return dumps({
        "as_of": doc["as_of"], "rank_by": doc["rank_by"], "model": name,
        "overall": next((r for r in doc["overall"] if r["model"] == name), None),
        "cohorts": [{"cohort": c["name"], "status": c["status"], "row": r}
                    for c in doc["cohorts"] for r in c["rows"] if r["agent"] == name],
        "comparisons": [asdict(c) for c in page.comparisons],
        "cost": {**asdict(page.cost), "per_resolved_forecast_micros": page.cost.per_resolved_forecast_micros},
        "projection": asdict(page.projection) if getattr(page, "projection", None) is not None else None,
        "skill_by_horizon": list(page.skill_by_horizon),
        "skill_by_category": list(page.skill_by_category),
        "frontier": page.frontier,
    })


def frontier_json(as_of: datetime, rows: list[dict[str, Any]]) -> str:
    """/api/frontier.json: the cost–skill frontier (`scoring.frontier`), one row per model with a stored call and a
    resolved forecast — cost_usd (USD per resolved forecast) and Brier − market with their 95 % intervals,
    on_frontier and p_dominated (null where no call reported a cost)."""
    from arena.scoring.frontier import FRONTIER_RULE

    return dumps({"as_of": utc(as_of).isoformat(), "rule": FRONTIER_RULE, "models": rows})


def decomposition_json(engine: Engine, as_of: datetime,
                       luck: Mapping[tuple[str, str], SkillLuck] | None = None) -> str:
    """/api/decomposition.json: per agent of every cohort, its P/L split into the edge it claimed and what its own
    beliefs call luck (the agent pages' "Skill vs luck"), in exact integer micro-USD."""
    rows = [{"cohort": cohort, "agent": agent, **{f: getattr(d, f) for f in SKILL_LUCK_FIELDS}, "luck": d.luck}
            for (cohort, agent), d in sorted((luck if luck is not None else skill_luck(engine, as_of)).items())]
    return dumps({
        "as_of": utc(as_of).isoformat(), "units": "micro-USD",
        "identity": "pnl = expected_pnl + belief_gap + move_without_belief + resolution_residual; "
                    "luck = belief_gap + resolution_residual; slippage_cost is inside the parts",
        "agents": rows,
    })
