"""Skill vs luck where users look: every agent page with bets splits its P/L into the edge it claimed and what its
own beliefs call luck, the parts add up to the P/L the page (and the cohort board) shows, and
/api/decomposition.json — written by a render and served live — carries the same exact parts."""

import json
import re

from arena.read.standings import standings
from arena.web.env import money, page_path
from arena.web.api import DECOMPOSITION_PATH
from arena.web.one_page import render_path
from arena.web.render import render_site


def test_agent_pages_and_the_json_split_pnl_into_claimed_edge_and_luck(sim_arena, tmp_path):
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    written = (out / DECOMPOSITION_PATH).read_text(encoding="utf-8")
    data = json.loads(written)
    assert data["units"] == "micro-USD" and data["agents"]
    boards = standings(sim_arena.engine, sim_arena.as_of)
    board_pnl = {(b.name, r["agent"]): r["pnl"] for b in boards.cohorts for _, r in b.rows.iterrows()}
    bettors = 0
    for row in data["agents"]:
        assert row["pnl"] == (row["expected_pnl"] + row["belief_gap"] + row["move_without_belief"]
                              + row["resolution_residual"])
        assert row["luck"] == row["belief_gap"] + row["resolution_residual"]
        assert row["slippage_cost"] >= 0 and row["n_bets"] > 0
        # the same P/L as the cohort board's (from cash and marked positions), to the micro-dollar
        assert abs(row["pnl"] / 1e6 - board_pnl[(row["cohort"], row["agent"])]) < 1e-6
        bettors += 1
    assert bettors >= 3
    # some agent claimed an edge and some luck happened: the parts are not trivially zero
    assert any(r["expected_pnl"] != 0 for r in data["agents"])
    assert any(r["luck"] != 0 for r in data["agents"])

    # the agent pages show the split, and its total is the P/L card's figure
    shown = 0
    for page in sorted((out / "agents").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        if 'id="skill-luck"' not in text:
            assert "Skill vs luck" not in text
            continue
        total = re.search(r'id="sl-pnl">([^<]+)<', text).group(1)
        card = re.search(r'id="pnl">([^<]+)<', text).group(1)
        assert total == card
        shown += 1
    assert shown == bettors

    # each cohort page lists its bettors' splits, with the same P/L
    for cohort in {r["cohort"] for r in data["agents"]}:
        text = (out / page_path("cohort", cohort)).read_text(encoding="utf-8")
        section = text[text.index('id="skill-luck"'):]
        section = section[: section.index("</table>")]
        mine = [r for r in data["agents"] if r["cohort"] == cohort]
        assert section.count("<tr><td>") == len(mine)
        for r in mine:
            assert money(r["pnl"], signed=True) in section and r["agent"] in section

    # the live server answers the same document
    served = render_path(sim_arena.engine, DECOMPOSITION_PATH, sim_arena.as_of)
    assert served is not None and served[0].startswith("application/json") and served[1] == written


def test_the_split_of_one_agent_matches_its_json_row(sim_arena, tmp_path):
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    rows = json.loads((out / DECOMPOSITION_PATH).read_text(encoding="utf-8"))["agents"]
    row = max(rows, key=lambda r: abs(r["expected_pnl"]))
    from sqlalchemy import select

    from arena.store.tables import AgentRow, CohortRow

    with sim_arena.engine.connect() as conn:
        aid = conn.execute(select(AgentRow.id).join(CohortRow, CohortRow.id == AgentRow.cohort_id)
                           .where(AgentRow.name == row["agent"], CohortRow.name == row["cohort"])).scalar_one()
    text = (out / page_path("agent", aid)).read_text(encoding="utf-8")
    assert re.search(r'id="sl-expected">([^<]+)<', text).group(1) == money(row["expected_pnl"], signed=True)
    assert re.search(r'id="sl-luck">([^<]+)<', text).group(1) == money(row["luck"], signed=True)
