"""Decision value and risk on the site: the headline boards carry them in a column group hidden until chosen,
each model page shows the overall board's numbers, and the methodology works each through an example."""

import re

from sqlalchemy import select
from sqlmodel import Session

from arena.read.standings import standings
from arena.store.tables import AgentRow, CohortRow
from arena.web.env import fraction_percent, number, page_path, signed_money
from arena.web.render import render_site


def test_boards_model_pages_and_methodology_show_decision_value_and_risk(sim_arena, tmp_path):
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    boards = standings(sim_arena.engine, sim_arena.as_of)
    index = (out / "index.html").read_text(encoding="utf-8")
    table = index[index.index('id="headline"'):]
    table = table[: table.index("</table>")]
    for head in ("Decision value [95 %]", "P/L at the bid", "Sharpe (daily)", "Max drawdown"):
        assert re.search(rf'<th class="p3 g6"[^>]*>{re.escape(head)}</th>', table), head  # on demand only
    assert 'id="cols-headline-g6"' in index and "Decision value, risk" in index
    overall = boards.overall.set_index("model")
    models = [m for m, k in zip(boards.overall["model"], boards.overall["kind"]) if k != "reference"]
    shown = 0
    for model in models:
        row = overall.loc[model]
        text = (out / page_path("model", model)).read_text(encoding="utf-8")
        card = re.search(r'id="model-decision-value">([^<]+)<', text).group(1)
        assert card == fraction_percent(row["decision_value"], 2)
        risk = re.search(r'id="model-risk">([^<]+)<', text).group(1)
        assert risk == f'{number(row["sharpe"], 2, True)} · {fraction_percent(row["max_drawdown"], 1)}'
        bid = row["pnl_at_bid"]
        if bid == bid:
            assert signed_money(int(round(bid * 1e6))) in text
            shown += 1
        assert f'>{fraction_percent(row["decision_value"], 2)}' in table  # its cell on the index board
    assert shown >= 3
    # an agent page shows its row of its cohort's board
    board = boards.cohorts[0].rows.set_index("agent")
    agent = next(a for a, k in zip(board.index, board["kind"]) if k != "reference")
    with Session(sim_arena.engine) as s:
        agent_id = s.scalars(select(AgentRow.id).join(CohortRow, CohortRow.id == AgentRow.cohort_id).where(
            AgentRow.name == agent, CohortRow.name == boards.cohorts[0].name)).one()
    page = (out / page_path("agent", agent_id)).read_text(encoding="utf-8")
    card = re.search(r'id="decision-value">([^<]+)<', page).group(1)
    assert card == fraction_percent(board.at[agent, "decision_value"], 2)
    method = (out / "methodology.html").read_text(encoding="utf-8")
    for title in ("Decision value of three questions", "Sharpe ratio and drawdown of a daily equity path",
                  "P/L at the bid beside P/L at the mid"):
        assert title in method
    assert "−0.83 %" in method and "+0.315" in method and "10.0 %" in method  # the examples' hand numbers
