"""The model page where users look: linked from the index's overall board; its pooled headline card is the overall
board's number; each cohort row is that cohort's headline row; the meta-analysis rows are `services.models`'
own numbers, and the forest plot draws one marker per cohort plus the pooled diamond; cost is the stored calls'."""

import html
import re

import pandas as pd
import pytest

from arena.scoring.headline import REF_MARKET
from arena.read.models import model_comparisons
from arena.read.standings import standings
from arena.web.env import money, number, page_path
from arena.web.one_page import render_path
from arena.web.render import render_site


@pytest.fixture
def site(sim_arena, tmp_path):
    out = tmp_path / "site"
    render_site(sim_arena.engine, out, sim_arena.as_of)
    return out


def test_the_index_links_every_model_to_its_page_and_the_page_agrees_with_the_boards(sim_arena, site):
    index = (site / "index.html").read_text(encoding="utf-8")
    boards = standings(sim_arena.engine, sim_arena.as_of)
    models = [m for m, k in zip(boards.overall["model"], boards.overall["kind"]) if k != "reference"]
    assert len(models) >= 4
    for model in models:
        href = page_path("model", model)
        assert f'href="{href}"' in index
        text = (site / href).read_text(encoding="utf-8")
        row = boards.overall.set_index("model").loc[model]
        card = re.search(r'id="model-forecast-brier">([^<]+)<', text).group(1)
        assert card == number(row["forecast_brier"]) != "—"
        # one row per cohort the model ran in, each showing that cohort's headline number
        table = text[text.index('id="model-cohorts"'):]
        table = table[: table.index("</table>")]
        seats = [(b.name, b.rows.set_index("agent").loc[model]) for b in boards.cohorts
                 if model in set(b.rows["agent"])]
        assert table.count("<tr>") - 1 == len(seats)
        for cohort, seat in seats:
            assert cohort in table and number(seat["forecast_brier"]) in table
    # references get no page
    assert not (site / page_path("model", REF_MARKET)).exists()


def test_meta_analysis_rows_and_forest_plot_are_the_services_numbers(engine, populate_arena, tmp_path):
    arena = populate_arena(engine, days=45, cohorts=4)  # four cohorts, all with resolved questions
    site = tmp_path / "site"
    render_site(engine, site, arena.as_of)
    comps = model_comparisons(engine, arena.as_of)
    model = "oracle-sharp"
    text = (site / page_path("model", model)).read_text(encoding="utf-8")
    meta = text[text.index('id="meta"'):]
    meta = meta[: meta.index("</table>")]
    by = {c.versus: c for c in comps[model]}
    assert REF_MARKET in by and len(by) >= 4
    # a reference some model copies on every question (`same_as` on the overall board) is listed once, as
    # "model = reference", on the row of that model
    twins = {r["same_as"]: r["model"] for r in standings(engine, arena.as_of).overall.to_dict("records")
             if r.get("same_as")}
    for versus, c in by.items():
        assert (versus if versus not in twins else twins[versus]) in meta
        assert number(c.estimate, 4, True) in meta
        lo, hi = c.pooled_interval
        # the pool: (cohort, market) observations, distinct markets as clusters (cohorts share markets)
        assert c.k == 4 and lo <= c.estimate <= hi and c.pooled.markets <= c.pooled.n
        # the verdict follows the pooled interval
        if hi < 0:
            assert c.verdict == "better in general"
        elif lo > 0:
            assert c.verdict == "worse in general"
        else:
            assert "general" not in c.verdict
        assert c.better_in + c.worse_in <= c.k and abs(float(c.meta.weights.sum()) - 1) < 1e-9
    # the forest plot vs the market: a marker per cohort and the pooled diamond, titled with their numbers
    market = by[REF_MARKET]
    svg = text[text.index(f"{model} − the market"):]
    svg = svg[: svg.index("</svg>")]
    assert svg.count('class="marker cohort"') == len(market.cohorts) == 4
    assert svg.count('class="marker pooled"') == 1
    assert f"pooled {market.estimate:+.4f}" in svg


def test_cost_is_the_stored_calls_and_the_live_server_serves_the_same_page(sim_arena, site):
    # the fixture stores two calls (1,234 + 1,500 micro-USD) on one decision of the first bettor
    pages = {p: p.read_text(encoding="utf-8") for p in (site / "models").glob("*.html")}
    costed = [t for t in pages.values() if re.search(r'id="model-cost">([^<]+)<', t).group(1) != "—"]
    assert len(costed) == 1 and money(2_734) in costed[0]
    path = next(iter(sorted(pages)))
    rel = f"models/{path.name}"
    served = render_path(sim_arena.engine, rel, sim_arena.as_of)
    assert served is not None and served[1] == pages[path]
    assert render_path(sim_arena.engine, "models/no_such_model.html", sim_arena.as_of) is None


def test_the_index_charts_each_models_headline_with_its_interval(sim_arena, site):
    from arena.read.shown_board import shown_board

    boards = standings(sim_arena.engine, sim_arena.as_of)
    scored = boards.overall[boards.overall["forecast_brier"].notna()]
    index = (site / "index.html").read_text(encoding="utf-8")
    svg = index[index.index("Forecast Brier per model with its 95 % interval"):]
    svg = svg[: svg.index("</svg>")]
    shown = shown_board(scored, boards.rank_by)  # a reference some seat copies is drawn once, as that seat
    models = shown[shown["kind"] != "reference"]
    assert svg.count('class="marker model"') == len(models) >= 4
    assert svg.count('class="marker reference"') == len(shown) - len(models)
    assert len(shown) - len(models) + scored["same_as"].notna().sum() == 2  # both references, shown or merged
    for _, r in shown.iterrows():  # every point is titled with the board's own numbers
        assert f"{r['model']}: {r['forecast_brier']:.3f} [{r['forecast_brier_lo']:.3f}, " in svg


def test_cohort_and_model_json_carry_the_pages_numbers_and_are_served_alike(sim_arena, site):
    import json

    boards = json.loads((site / "api" / "leaderboard.json").read_text(encoding="utf-8"))
    for cohort in boards["cohorts"]:
        path = page_path("cohort_api", cohort["name"])
        written = (site / path).read_text(encoding="utf-8")
        data = json.loads(written)
        assert data["rows"] == cohort["rows"] and data["status"] == cohort["status"]
        for r in data["skill_luck"]:
            assert r["pnl"] == r["expected_pnl"] + r["belief_gap"] + r["move_without_belief"] + r["resolution_residual"]
        assert f'href="../{path}"' in (site / page_path("cohort", cohort["name"])).read_text(encoding="utf-8")
        assert render_path(sim_arena.engine, path, sim_arena.as_of)[1] == written
    comps = model_comparisons(sim_arena.engine, sim_arena.as_of)
    for row in boards["overall"]:
        if row["kind"] == "reference":
            assert not (site / page_path("model_api", row["model"])).exists()
            continue
        path = page_path("model_api", row["model"])
        written = (site / path).read_text(encoding="utf-8")
        data = json.loads(written)
        assert data["overall"] == row
        assert [c["cohort"] for c in data["cohorts"]] == [c["name"] for c in boards["cohorts"]
                                                          if any(r["agent"] == row["model"] for r in c["rows"])]
        # the comparisons as the page lists them: a reference copied by a model is one row, "model = reference"
        listed = [c["versus"].split(" = ")[0] for c in data["comparisons"]]
        every = [c.versus for c in comps.get(row["model"], ())]
        twinned = {r["same_as"] for r in boards["overall"] if r["same_as"]}
        assert [v for v in every if v in listed] == listed and set(every) - set(listed) <= twinned
        assert render_path(sim_arena.engine, path, sim_arena.as_of)[1] == written
    assert render_path(sim_arena.engine, "api/models/nobody.json", sim_arena.as_of) is None


def test_market_index_and_each_cohorts_markets(sim_arena, site):
    from sqlalchemy import distinct, func, select

    from arena.store.tables import AgentRow, CohortRow, FillRow, ForecastRow

    index = (site / "markets.html").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (site / "markets").glob("*.html"))
    rows = index[index.index('id="markets"'):]
    rows = rows[: rows.index("</table>")]
    assert rows.count("<tr><td") == len(pages) > 10  # every market page is listed, and nothing else
    assert all(f'href="markets/{p}"' in rows for p in pages)
    assert 'href="markets.html"' in (site / "index.html").read_text(encoding="utf-8")  # in the navigation
    assert "<script>" not in rows  # the hostile question of the fixture is escaped here too
    with sim_arena.engine.connect() as conn:
        cohorts = conn.execute(select(CohortRow.id, CohortRow.name)).all()
        for cid, name in cohorts:
            asked = set(conn.scalars(select(distinct(ForecastRow.market_id)).join(AgentRow)
                                     .where(AgentRow.cohort_id == cid, ForecastRow.source == "forecast_set")))
            bets = conn.scalar(select(func.count()).select_from(FillRow)
                               .where(FillRow.cohort_id == cid, FillRow.kind == "buy"))
            text = (site / page_path("cohort", name)).read_text(encoding="utf-8")
            table = text[text.index('id="cohort-markets"'):]
            table = table[: table.index("</table>")]
            cells = re.findall(r"<td[^>]*>(yes|no)</td><td[^>]* class=\"num\">(\d+)</td>", table)
            assert sum(1 for flag, _ in cells if flag == "yes") == len(asked) > 0
            assert sum(int(n) for _, n in cells) == bets  # every buy of the cohort, once
            # the forecast set comes first
            flags = [flag for flag, _ in cells]
            assert flags == sorted(flags, key=lambda f: f != "yes")


def test_the_index_plots_the_cost_skill_frontier_for_models_with_a_reported_cost(sim_arena, site):
    import json

    from arena.web.env import usd

    index = (site / "index.html").read_text(encoding="utf-8")
    svg = index[index.index("Cost–skill frontier: USD per resolved forecast"):]
    svg = svg[: svg.index("</svg>")]
    # the fixture records two priced calls (1,234 + 1,500 micro-USD) for one model: one point, at its cost per
    # resolved forecast and its Brier − market as the overall board has them
    assert svg.count('class="marker model') == 1
    (title,) = re.findall(r"<title>([^<:]+): \$([0-9.]+)(?: \[[^\]]+\])? per resolved forecast, Brier − market ([-+0-9.]+)",
                          svg)
    row = standings(sim_arena.engine, sim_arena.as_of).overall.set_index("model").loc[title[0]]
    assert "$" + title[1] == usd(2_734 / 1e6 / row["n_forecasts"])
    assert float(title[2]) == round(float(row["brier_minus_market"]), 3)
    doc = json.loads((site / "api" / "frontier.json").read_text(encoding="utf-8"))
    (priced,) = [r for r in doc["models"] if r["cost_usd"] is not None]
    assert priced["model"] == title[0] and priced["on_frontier"] and priced["p_dominated"] == 0.0
    assert priced["n_calls"] == 2 and priced["n_resolved"] == row["n_forecasts"]
    model = json.loads((site / page_path("model_api", title[0])).read_text(encoding="utf-8"))
    assert model["frontier"] == priced
    page = (site / page_path("model", title[0])).read_text(encoding="utf-8")
    assert 'id="p-dominated">0%<' in page


def test_no_table_heads_two_columns_alike_and_no_shorthand_jargon(site):
    shorthand = ("BSS .25", "BSS mkt", "Brier K<", "Brier S<")
    checked = 0
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for head in re.findall(r"<thead>(.*?)</thead>", text, flags=re.S):
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", head, flags=re.S):
                labels = [re.sub(r"<[^>]+>|\s+", " ", c).strip()
                          for c in re.findall(r"<th[^>]*>(.*?)</th>", row, flags=re.S)]
                labels = [x.rstrip(" ↕").strip() for x in labels if x.strip()]
                assert len(labels) == len(set(labels)), (page.name, labels)
                checked += 1
        assert not any(s in text for s in shorthand), page.name
        # the page's own words — headings, column heads, card labels, flags — use no source-document or
        # abbreviated names (agents' own text, such as a rationale, may say what it likes)
        chrome = re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>|<thead>(.*?)</thead>|<span class=\"(?:k|flag)\"[^>]*>(.*?)</span>",
                            text, flags=re.S)
        words = " ".join(" ".join(parts) for parts in chrome).lower()
        for jargon in ("seed 00", "seed-00", "prov.", "bss", "s001"):
            assert jargon not in words, (page.name, jargon)
    assert checked > 100


def test_board_heads_carry_a_definition_on_hover_and_the_methodology_defines_the_headline_board(site):
    """Every column head of the boards has a tooltip (its definition), and every head of the headline board is
    defined, by name, in the methodology's column-by-column list."""
    method = (site / "methodology.html").read_text(encoding="utf-8")
    dl = method[method.index('<dl class="columns">'):]
    defined = {html.unescape(re.sub(r"<[^>]+>", "", t)).strip()
               for t in re.findall(r"<dt>(.*?)</dt>", dl[: dl.index("</dl>")], flags=re.S)}
    names = {re.sub(r" \[95 %\]", "", n.strip()) for t in defined for n in t.split(",")}
    cohort = next(p for p in sorted((site / "cohorts").glob("*.html")) if not p.name.endswith("-statistics.html"))
    heads_seen = 0
    for page, ids in (("index.html", ("headline", "overall", "cohorts")), (str(cohort.relative_to(site)),
                                                                          ("headline", "board"))):
        text = (site / page).read_text(encoding="utf-8")
        for table_id in ids:
            table = text[text.index(f'id="{table_id}"'):]
            head = table[: table.index("</thead>")].split("<tr>")[-1]
            for attrs, label in re.findall(r"<th([^>]*)>(.*?)</th>", head, flags=re.S):
                label = html.unescape(re.sub(r"<[^>]+>", "", label)).strip()
                heads_seen += 1
                if 'class="name' in attrs:
                    continue  # the row's name: agent, model or cohort
                assert re.search(r'title="[^"]{8,}"', attrs), (page, table_id, label)
                if table_id == "headline":
                    assert re.sub(r" \[95 %\]| \(bets\)", "", label) in names, (label, sorted(names))
    assert heads_seen > 40


def test_comparisons_recompute_only_the_changed_cohorts_rows_and_equal_a_fresh_computation(sim_arena, monkeypatch):
    """The model pages' comparisons keep each cohort's pair rows in the process and the memo table (`read.models`),
    under the key naming that cohort's forecast rows: after one cohort's facts change (a replicate's forecast
    recorded) only its rows are computed again; after a question resolves, the rows of the cohorts that asked it
    are, and they move; a fresh process computes none. Each time every comparison equals one read back from the
    memo table and one computed with nothing kept."""
    from datetime import timedelta

    from sqlalchemy import select, update
    from sqlmodel import Session

    from arena.cache import housekeeping
    from arena.read import models
    from arena.store.engine import session_scope
    from arena.store.frames import forecast_set_frame
    from arena.cache.memo import forget_all
    from arena.store.tables import AgentRow, CohortRow, ForecastRow, ResolutionRow

    engine, as_of = sim_arena.engine, sim_arena.as_of
    computed: list[set[str]] = []
    real = models._pair_rows
    monkeypatch.setattr(models, "_pair_rows", lambda scored: computed.append(set(scored["cohort"])) or real(scored))

    def again_and_fresh():  # type: ignore[no-untyped-def]
        computed.clear()
        kept = model_comparisons(engine, as_of)
        assert all(len(c) == 1 for c in computed)  # each cohort's rows computed alone
        seen = [set().union(*computed)]
        forget_all()  # a fresh process: every cohort's rows come from the memo table
        computed.clear()
        stored = model_comparisons(engine, as_of)
        assert computed == []
        forget_all()
        housekeeping.clear(engine)  # nothing kept anywhere: every row computed from the facts
        fresh = model_comparisons(engine, as_of)
        for other in (stored, fresh):
            assert kept.keys() == other.keys()
            for model, comps in kept.items():
                assert [c.versus for c in comps] == [c.versus for c in other[model]]
                for got, want in zip(comps, other[model]):
                    pd.testing.assert_frame_equal(got.cohorts, want.cohorts, check_exact=True)
                    assert (got.meta.k, got.verdict) == (want.meta.k, want.verdict)
                    assert got.meta.estimate == want.meta.estimate or got.meta.k == 0
        return kept, seen

    forget_all()
    before = model_comparisons(engine, as_of)
    with Session(engine) as s:
        cohort, one = s.execute(select(CohortRow.name, ForecastRow).join(AgentRow, AgentRow.id == ForecastRow.agent_id)
                                .join(CohortRow, CohortRow.id == AgentRow.cohort_id)
                                .order_by(CohortRow.id.desc(), ForecastRow.id)).first()
        frame = forecast_set_frame(s, list(s.scalars(select(CohortRow.id))), as_of)
    with session_scope(engine) as s:  # a second replicate: the forecast set (first replicates) is unchanged
        s.add(ForecastRow(decision_id=one.decision_id, agent_id=one.agent_id, market_id=one.market_id,
                          source=one.source, probability=0.5, as_of=one.as_of, replicate=2))
    _, seen = again_and_fresh()
    assert seen == [set()]
    with session_scope(engine) as s:  # the stated probability itself moves (a hand edit)
        s.execute(update(ForecastRow).where(ForecastRow.id == one.id)
                  .values(probability=0.99 if one.probability < 0.5 else 0.01))
    _, seen = again_and_fresh()
    assert seen == [{cohort}]

    unresolved = frame[frame["outcome_yes"].isna()]
    mid = unresolved["market_id"].value_counts().index[0]
    asked = set(unresolved.loc[unresolved["market_id"] == mid, "cohort"])
    model_comparisons(engine, as_of)  # the process keeps every cohort's rows again
    with session_scope(engine) as s:
        s.add(ResolutionRow(market_id=mid, version=99, kind="winner", payouts={"YES": 1_000_000, "NO": 0},
                            resolved_at=as_of - timedelta(minutes=5), recorded_at=as_of - timedelta(minutes=5),
                            source="test"))
    after, seen = again_and_fresh()
    assert seen == [asked]

    def shared(comps) -> dict[tuple[str, str], int]:  # type: ignore[no-untyped-def]
        return {(m, c.versus): int(c.cohorts.loc[c.cohorts["cohort"].isin(asked), "n"].sum())
                for m, cs in comps.items() for c in cs}

    old, new = shared(before), shared(after)
    assert any(n > old.get(k, 0) for k, n in new.items())  # the resolution reached those cohorts' rows


def test_a_model_page_shows_its_latest_cohorts_and_year_pages_hold_every_cohort(sim_arena, tmp_path, monkeypatch):
    """The model page no longer grows with the arena's age: it shows its latest RECENT_COHORTS cohorts (here 1 of
    2), its forest plots draw those and pool them all, and one page per year lists every cohort. A render with
    nothing changed keeps every year page; one cohort changed rebuilds that cohort's year pages only."""
    from datetime import timedelta

    from sqlalchemy import select

    from arena.store.engine import session_scope
    from arena.store.tables import AgentRow, CohortRow, DecisionRow, RejectionRow
    from arena.web import model_page

    engine, as_of = sim_arena.engine, sim_arena.as_of
    with session_scope(engine) as s:  # the first cohort started the year before: two year pages per model
        first = s.scalars(select(CohortRow).order_by(CohortRow.period_start)).first()
        first.period_start = first.period_start.replace(year=first.period_start.year - 1)
        s.add(first)
        old, old_year = first.name, first.period_start.year
    monkeypatch.setattr(model_page, "RECENT_COHORTS", 1)
    out = tmp_path / "site"
    report = render_site(engine, out, as_of)
    boards = standings(engine, as_of)
    model = "oracle-sharp"
    seats = [b.name for b in boards.cohorts if model in set(b.rows["agent"])]
    assert len(seats) == 2 and old in seats
    latest = next(n for n in seats if n != old)
    text = (out / page_path("model", model)).read_text(encoding="utf-8")
    table = text[text.index('id="model-cohorts"'):]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") - 1 == 1 and latest in table and old not in table
    assert "Its latest 1 of 2 cohorts" in text and "One model across 2 cohorts" in text
    years = sorted({old_year, old_year + 1})
    for y in years:
        assert f'href="../{page_path("model_year", (model, y))}"' in text
    listed = []
    for y in years:
        page = (out / page_path("model_year", (model, y))).read_text(encoding="utf-8")
        body = page[page.index('id="model-cohorts"'):]
        body = body[: body.index("</table>")]
        listed += [n for n in seats if n in body]
        assert f"{model} in {y}" in page and "<strong>" + str(y) + "</strong>" in page
    assert sorted(listed) == sorted(seats)  # every cohort on exactly one year page
    n_year_pages = report.pages["model_year"]
    assert n_year_pages == 2 * len(boards.overall[boards.overall["kind"] != "reference"])

    again = render_site(engine, out, as_of)
    assert again.pages.get("model_year", 0) == 0 and again.kept["model_year"] == n_year_pages
    with session_scope(engine) as s:  # a rejection in the latest cohort: only its year's pages move
        did = s.scalars(select(DecisionRow.id).join(AgentRow, AgentRow.id == DecisionRow.agent_id)
                        .join(CohortRow, CohortRow.id == AgentRow.cohort_id).where(CohortRow.name == latest)).first()
        s.add(RejectionRow(decision_id=did, action_index=0, reason="over_limit", message="too big",
                           at=as_of - timedelta(minutes=3)))
    changed = render_site(engine, out, as_of)
    assert changed.pages["model_year"] == n_year_pages // 2 and changed.kept["model_year"] == n_year_pages // 2


def test_the_forest_plot_draws_the_latest_cohorts_and_pools_them_all():
    from arena.scoring.meta import dersimonian_laird
    from arena.read.models import ModelComparison
    from arena.web.model_page import forest_chart

    rows = pd.DataFrame({"cohort": ["w1", "w2", "w3"], "n": [5, 6, 7], "difference": [-0.05, 0.01, -0.02],
                         "se": [0.02, 0.03, 0.01]})
    rows["ci_low"], rows["ci_high"] = rows["difference"] - 0.04, rows["difference"] + 0.04
    meta = dersimonian_laird(rows["difference"], rows["se"])
    rows["weight"] = meta.weights
    comparison = ModelComparison("market (reference)", meta, rows)
    every = forest_chart("all", comparison)
    latest = forest_chart("latest", comparison, 2)
    assert [m.title.split(":")[0] for m in every.markers if m.css == "cohort"] == ["w1", "w2", "w3"]
    assert [m.title.split(":")[0] for m in latest.markers if m.css == "cohort"] == ["w2", "w3"]
    (pooled,) = [m.title for m in latest.markers if m.css == "pooled"]
    assert pooled.startswith(f"pooled {meta.estimate:+.4f}") and "3 cohorts" in pooled  # the pool is over all three
    assert forest_chart("none shown", comparison, 0).markers[-1].css == "pooled"


def test_the_index_links_each_models_latest_agents_and_the_rest_through_its_page(sim_arena, monkeypatch):
    """The index no longer lists every agent of every model (20,000 links at 1,000 cohorts): the latest
    AGENT_LINKS cohorts' agents, and "N earlier" linking the model page, in the headline and overall tables."""
    from arena.web import index_page

    monkeypatch.setattr(index_page, "AGENT_LINKS", 1)
    page = index_page.index_context(sim_arena.engine, sim_arena.as_of)
    served = render_path(sim_arena.engine, "index.html", sim_arena.as_of)
    assert served is not None
    text = served[1]
    rows = [r for r in page.overall if r.cohorts == 2]
    assert rows and all(len(r.agents) == 1 for r in rows)
    latest = max(a.cohort for r in rows for a in r.agents)
    assert all(r.agents[0].cohort == latest for r in rows)  # the latest cohort's agent is the one linked
    for r in rows:
        assert page.more[r.model] == 1 and len(page.links[r.model]) == 1
        assert text.count(f'<a href="{r.href}">1 earlier</a>') == 2  # headline and overall tables
    monkeypatch.setattr(index_page, "AGENT_LINKS", 5)
    assert "earlier</a>" not in render_path(sim_arena.engine, "index.html", sim_arena.as_of)[1]


def test_model_and_cohort_json_carry_skill_by_horizon_and_category(sim_arena, site):
    import json

    from arena.read.statistics import cohort_statistics
    from arena.scoring.breakdown import HORIZON_BUCKETS, breakdown_records

    boards = json.loads((site / "api" / "leaderboard.json").read_text(encoding="utf-8"))
    stats = cohort_statistics(sim_arena.engine, sim_arena.as_of, n_boot=20)
    for cohort in boards["cohorts"]:  # per seat: the statistics page's tables, row for row
        data = json.loads((site / page_path("cohort_api", cohort["name"])).read_text(encoding="utf-8"))
        st = stats[cohort["name"]]
        assert data["skill_by_horizon"] == breakdown_records(st.by_horizon.reset_index(drop=True))
        assert data["skill_by_category"] == breakdown_records(st.by_category.reset_index(drop=True))
    checked = 0
    for row in boards["overall"]:
        if row["kind"] == "reference":
            continue
        data = json.loads((site / page_path("model_api", row["model"])).read_text(encoding="utf-8"))
        hz, cat = data["skill_by_horizon"], data["skill_by_category"]
        assert [r["group"] for r in hz] == [b for b in HORIZON_BUCKETS if b in {r["group"] for r in hz}]
        # every resolved question with a price is in one bucket and one category: the same total
        assert sum(r["n_forecasts"] for r in hz) == sum(r["n_forecasts"] for r in cat) <= row["n_forecasts"]
        if row["n_forecasts"]:
            checked += 1
            # pooled over categories, weighted by their (cohort, market) observations: the board's Brier − market
            pooled = sum(r["brier_minus_market"] * r["n_markets"] for r in cat) / sum(r["n_markets"] for r in cat)
            assert pooled == pytest.approx(row["brier_minus_market"], abs=1e-12)
        page = (site / page_path("model", row["model"])).read_text(encoding="utf-8")
        table = page[page.index('id="by-category"'):]
        table = table[: table.index("</table>")]
        assert table.count("<tr><td") == max(len(cat), 1)
    assert checked >= 3


def test_a_hostile_model_name_on_the_frontier_is_text(sim_arena):
    """The frontier's chart and table on the index and the model page print a model's name as text."""
    from sqlalchemy import update
    from sqlmodel import Session, select

    from arena.store.tables import AgentRow, DecisionRow, ModelCallRow
    from arena.web.env import render_page
    from arena.web.index_page import index_context
    from arena.web.model_page import model_contexts

    hostile = "<b>evil</b> & co"
    with Session(sim_arena.engine) as s:
        priced = s.exec(select(AgentRow.name).join(DecisionRow, DecisionRow.agent_id == AgentRow.id)
                        .join(ModelCallRow, ModelCallRow.decision_id == DecisionRow.id)).first()
        s.exec(update(AgentRow).where(AgentRow.name == priced).values(name=hostile))
        s.commit()
    page = index_context(sim_arena.engine, sim_arena.as_of)
    assert [r["model"] for r in page.frontier] == [hostile]
    for text in (render_page("index.html", page, "index.html"),
                 render_page("model.html", model_contexts(sim_arena.engine, sim_arena.as_of, [hostile])[hostile],
                             page_path("model", hostile))):
        section = text[text.index('id="frontier"'):]
        assert "&lt;b&gt;evil&lt;/b&gt; &amp; co" in section and "<b>evil" not in section
