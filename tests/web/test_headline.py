"""The headline boards on the site: the index (per model) and cohort pages show `services.standings`' rows —
interval, tier, rank with ties, reference rows marked, the bet-size columns in plain words — the provisional rule
read from the rendered pages is the one rule of `arena.scoring.provisional`, and /api/leaderboard.json (written by
render, served by serve) is what `arena leaderboard --format json` prints."""

from __future__ import annotations

import html
import json
import re
import threading
import urllib.request

from arena.cli import main as cli_main
from arena.clock import FixedClock
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, PROVISIONAL_RULE, is_provisional
from arena.read.shown_board import shown_board
from arena.read.standings import standings
from arena.web.env import page_path
from arena.web.render import API_PATH, render_site
from arena.web.serve import ArenaServer, serve

_ROW = re.compile(r'<tr class="kind-(\w+)( provisional)?(?: twin)?" data-kind="\w+">\s*<td class="num[^"]*"[^>]*>([^<]*)</td>\s*'
                  r'<td class="name[^"]*" data-sort="([^"]*)"')


def _headline_rows(page: str) -> list[tuple[str, str, bool, str]]:
    """(name, kind, provisional, rank label) of each row of the page's headline table."""
    table = page[page.index('id="headline"'):]
    table = table[:table.index("</table>")]
    return [(html.unescape(name), kind, bool(prov), html.unescape(label)) for kind, prov, label, name
            in _ROW.findall(table)]


def test_pages_show_the_standings_boards_and_the_one_provisional_rule(sim_arena, tmp_path):
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    boards = standings(sim_arena.engine, sim_arena.as_of)
    assert str(PROVISIONAL_MIN_RESOLVED) in PROVISIONAL_RULE

    # the boards as the site shows them: a reference's twin merged, ranks by the printed scores
    pages = {"index.html": shown_board(boards.overall, boards.rank_by)}
    pages.update({page_path("cohort", c.name): shown_board(c.rows, boards.rank_by) for c in boards.cohorts})
    for path, frame in pages.items():
        text = (out / path).read_text(encoding="utf-8")
        assert html.escape(PROVISIONAL_RULE, quote=False) in text, path  # the rule, stated on the page
        rows = _headline_rows(text)
        key = "model" if "model" in frame.columns else "agent"
        assert [r[0] for r in rows] == frame[key].tolist(), path  # the service's order, every row
        for (name, kind, prov, label), rec in zip(rows, frame.to_dict("records")):
            assert kind == rec["kind"]
            # the flag on the page is the scoring rule applied to the count the row rests on
            assert prov == bool(is_provisional(rec["n_forecasts"])), (path, name)
            assert label == (rec["rank_label"] or "—")
        kinds = {r[1] for r in rows}
        # the references are rows, or merged into the row of the seat that copies them ("a = b (reference)")
        assert ("reference" in kinds or '<span class="twin"' in text) and kinds <= {"llm", "baseline", "reference"}
        assert text.count('class="refmark"') >= sum(1 for r in rows if r[1] == "reference")
        assert "Bet-size Brier" in text and "Bet-size skill vs 50 %" in text and "seed 001" not in text.lower()
        assert "Forecast Brier [95 %]" in text
    # always-0.5 and its reference state the same 0.5 on the same questions: one row with it when the board says
    # they are twins (same_as), else two rows shown as a tie
    index_text = (out / "index.html").read_text(encoding="utf-8")
    labels = {name: label for name, _, _, label in _headline_rows(index_text)}
    if "always-0.5 (reference)" in labels:
        assert labels["always-0.5"] == labels["always-0.5 (reference)"] and labels["always-0.5"].endswith("=")
    else:
        assert '<span class="twin"' in index_text and "= reference</span>" in index_text
    # the interval is printed next to its point, and contains it
    text = (out / "index.html").read_text(encoding="utf-8")
    for point, lo, hi in re.findall(r'>(\d\.\d{3}) <span class="ci">\[(\d\.\d{3}), (\d\.\d{3})\]</span>', text):
        assert float(lo) <= float(point) <= float(hi)


def test_api_leaderboard_json_is_the_cli_json(sim_arena, tmp_path, capsys):
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    written = (out / API_PATH).read_text(encoding="utf-8")
    url = sim_arena.engine.url.render_as_string(hide_password=False)
    assert cli_main(["leaderboard", "--db", url, "--as-of", sim_arena.as_of.isoformat(), "--format", "json"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(written) == json.loads(printed)
    assert written == printed
    data = json.loads(written)
    assert data["cohorts"] and data["overall"] and data["as_of"].startswith(sim_arena.as_of.date().isoformat())


def test_serve_answers_api_leaderboard_json(sim_arena, tmp_path):
    box: list[ArenaServer] = []
    ready = threading.Event()

    def on_ready(server: ArenaServer) -> None:
        box.append(server)
        ready.set()

    thread = threading.Thread(target=serve, args=(sim_arena.engine, "127.0.0.1", 0, FixedClock(sim_arena.as_of),
                                                  on_ready, True), daemon=True)
    thread.start()
    assert ready.wait(10)
    server = box[0]
    try:
        with urllib.request.urlopen(server.url + API_PATH, timeout=30) as resp:
            assert resp.headers["Content-Type"].startswith("application/json")
            served = resp.read().decode("utf-8")
    finally:
        server.shutdown()
        thread.join(10)
    render_site(sim_arena.engine, tmp_path / "site", sim_arena.as_of)
    assert served == (tmp_path / "site" / API_PATH).read_text(encoding="utf-8")


def test_methodology_explains_the_headline_and_both_seed_001_pathologies_with_numbers(sim_arena):
    from arena.scoring.brier import brier_band, brier_score
    from arena.web.methodology_page import methodology_context
    from arena.web.env import render_page

    page = methodology_context(sim_arena.engine)
    rows = [dict(e.rows) for e in page.examples]
    # three $500 YES bets at a $2,500 max bet, all lost: f_YES = 0.2, Brier 0.04, "Excellent"
    assert rows[0]["implied confidence c = bet / max bet"] == "0.20"
    assert rows[0]["implied-confidence Brier, mean of (0.2 − 0)²"] == \
        f"{brier_score([0.2] * 3, [0.0] * 3):.3f} — {brier_band(0.04)}" == "0.040 — Excellent"
    assert rows[0]["P/L"] == "-$1,500.00"
    assert rows[0]["contradicting bets (YES bought above the stated P(YES))"] == "100%"
    # maximal bets at 0.9995 that resolve YES: Brier 0 "Perfect" while the bet earns +0.05 % of its stake
    assert rows[1]["implied-confidence Brier (1 − 1)²"] == "0.000 — Perfect"
    assert "+0.05 % of the stake" in rows[1]["P/L of the bet"]
    # the guard: unguarded BSS vs market explodes, the shown value is "—", the difference stays bounded
    assert float(rows[2]["1 − BS / BS_market, unguarded"].replace(",", "")) < -1000
    assert rows[2]["skill vs market as shown"] == "—"
    text = render_page("methodology.html", page, "methodology.html")
    for needle in ("forecast Brier on the shared forecast set", "paired-bootstrap", "Tier", "1=", "Kelly-implied Brier",
                   "Coherence gap", "Contradicting bets", "Brier − market", html.escape(PROVISIONAL_RULE, quote=False),
                   "0.040 — Excellent", "0.000 — Perfect", "always-0.5", "Point in time"):
        assert needle in text, needle


def test_methodology_works_a_missing_forecast_through_as_half(sim_arena):
    from arena.web.methodology_page import methodology_context
    from arena.web.env import render_page

    page = methodology_context(sim_arena.engine)
    assert page.imputation is not None
    rows = dict(page.imputation.rows)
    # prices 0.04, 0.30, 0.70, 0.97 resolving NO, NO, YES, YES; the selective seat leaves 0.30 and 0.70 out
    assert rows["follower: Brier over its 4 answers"] == f"{(0.04**2 + 0.3**2 + 0.3**2 + 0.03**2) / 4:.4f}"
    assert rows["selective, over its 2 answers alone (not how it is scored)"] == f"{(0.04**2 + 0.03**2) / 2:.4f}"
    assert rows["selective, the 2 left out scored as 0.5: answered"] == "2/4"
    scored = rows["selective, as scored: mean of (0.04 − 0)², (0.5 − 0)², (0.5 − 1)², (0.97 − 1)²"]
    assert scored == f"{(0.04**2 + 0.25 + 0.25 + 0.03**2) / 4:.4f}" == "0.1256"
    text = render_page("methodology.html", page, "methodology.html")
    for needle in ('id="missing"', "A missing forecast is scored as a stated 0.5", "0.1256", "Answered",
                   "added to a cohort after a round was not asked"):
        assert needle in text, needle


def test_boards_show_how_many_questions_each_row_answered(sim_arena, tmp_path):
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    boards = standings(sim_arena.engine, sim_arena.as_of)
    board = boards.cohorts[0]
    text = (out / page_path("cohort", board.name)).read_text(encoding="utf-8")
    table = text[text.index('id="headline"'):]
    table = table[:table.index("</table>")]
    assert ">Answered</th>" in table
    for rec in board.rows.to_dict("records"):
        assert rec["n_asked"] >= rec["n_answered"] >= 0
        if rec["n_asked"]:
            assert f'>{rec["n_answered"]}/{rec["n_asked"]}</td>' in table, rec["agent"]


def test_agent_page_shows_its_row_of_the_headline_board(sim_arena, tmp_path):
    from arena.web.agent_page import agent_contexts

    page = agent_contexts(sim_arena.engine, sim_arena.as_of, [sim_arena.xss_agent_id])[sim_arena.xss_agent_id]
    boards = standings(sim_arena.engine, sim_arena.as_of, cohort_names=[page.cohort.name])
    rec = shown_board(boards.cohorts[0].rows, boards.rank_by).set_index("agent").loc[page.agent.name]
    assert page.headline is not None and page.headline.rank_label == rec["rank_label"]
    assert page.headline.forecast_brier == rec["forecast_brier"] or rec["forecast_brier"] != rec["forecast_brier"]
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    text = (out / page_path("agent", sim_arena.xss_agent_id)).read_text(encoding="utf-8")
    shown = re.search(r'id="forecast-brier">([^<]*)<', text).group(1)  # type: ignore[union-attr]
    assert shown == ("—" if rec["forecast_brier"] != rec["forecast_brier"] else f"{rec['forecast_brier']:.3f}")
    assert f"rank {rec['rank_label']}," in text
