"""`arena demo` puts the cost–skill frontier in the demo: its stand-in LLM seats ask a local stand-in model through
the real LLM path, their calls are stored with a cost, and the frontier, the terminal table and the site's index
chart show them — offline, with no API key."""

from __future__ import annotations

import math
from datetime import datetime, timezone

from sqlalchemy import select
from sqlmodel import Session

from arena.agents.standin_models import STANDIN_MODELS
from arena.cli import main
from arena.read.frontier import model_frontier
from arena.store.engine import make_engine
from arena.store.tables import AgentRow, DecisionRow, ModelCallRow

SMALL = ["demo", "--seed", "5", "--cohorts", "1", "--decision-weeks", "2", "--markets-per-week", "10",
         "--forecast-k", "8"]
AS_OF = datetime(2026, 6, 1, tzinfo=timezone.utc)
NAMES = sorted(m.name for m in STANDIN_MODELS)


def test_the_demo_s_stand_in_seats_fill_the_cost_skill_frontier(db_url, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")  # a narrow terminal: the table cuts its numbers, never a model's name
    for env in ("OPENROUTER_API_KEY", "ARENA_STANDIN_KEY"):
        monkeypatch.delenv(env, raising=False)  # no key anywhere: the stand-in needs none
    assert main([*SMALL, "--db", db_url]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the summary is wrapped to the width
    assert "× 10 scripted agents + 3 stand-in LLM seats" in flat and "a local stand-in model, not a real LLM" in flat
    assert "== cost–skill frontier" in out
    section = " ".join(out.split("== cost–skill frontier", 1)[1].split())  # the table may wrap to the width
    assert all(name in section for name in NAMES), section
    engine = make_engine(db_url)
    try:
        with Session(engine) as s:
            calls = s.execute(select(AgentRow.name, AgentRow.kind, ModelCallRow.status, ModelCallRow.cost_micros,
                                     ModelCallRow.prompt_tokens, ModelCallRow.served_model)
                              .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                              .join(AgentRow, AgentRow.id == DecisionRow.agent_id)).all()
        assert sorted({c.name for c in calls}) == NAMES  # only the stand-ins call a model
        assert len(calls) >= 2 * len(NAMES)  # a call per seat and round at least
        assert all(c.kind == "llm" and c.status == "done" and c.cost_micros and c.cost_micros > 0
                   and c.prompt_tokens and c.served_model.startswith("standin/") for c in calls)
        frontier = model_frontier(engine, AS_OF)
        assert sorted(frontier["model"]) == NAMES
        assert all(math.isfinite(v) and v > 0 for v in frontier["cost_usd"])
        assert all(0.0 <= v <= 1.0 for v in frontier["p_dominated"])
        assert frontier["on_frontier"].any()
        by = frontier.set_index("model")["cost_usd"]
        assert by["standin-cheap"] < by["standin-mid"] < by["standin-dear"]  # priced per token as configured
    finally:
        engine.dispose()
    import json

    from arena.web.api import FRONTIER_PATH
    from arena.web.one_page import render_path

    engine = make_engine(db_url)
    try:
        _, html = render_path(engine, "index.html", AS_OF)  # the site's index page, as `arena render` writes it
        _, api = render_path(engine, FRONTIER_PATH, AS_OF)
    finally:
        engine.dispose()
    frontier_html = html.split('<section id="frontier">', 1)[1].split("</section>", 1)[0]
    assert "<svg" in frontier_html and all(f">{name}<" in frontier_html for name in NAMES)
    rows = json.loads(api)["models"]
    assert sorted(r["model"] for r in rows) == NAMES and all(r["cost_usd"] > 0 for r in rows)
