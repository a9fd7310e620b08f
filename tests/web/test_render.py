"""The static site: every page is written, every link and asset resolves to a file, hostile text is escaped
everywhere, no template leftovers, nothing is fetched from a network; the CLI wiring renders too."""

from __future__ import annotations

import argparse
import re
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

from sqlalchemy import select, union
from sqlmodel import Session

from arena.cli_web import configure_render_parser
from arena.store.tables import AgentRow, CohortRow, FillRow, ForecastRow
from arena.web.env import page_path
from arena.web.one_page import render_path
from arena.web.render import render_site


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        for k, v in attrs:
            if k in ("href", "src") and v is not None:
                self.links.append(v)


def _links(html: str) -> list[str]:
    p = _Links()
    p.feed(html)
    return p.links


def test_render_site_writes_every_page_and_every_link_resolves(sim_arena, tmp_path):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    out = tmp_path / "site"
    report = render_site(engine, out, as_of)
    with Session(engine) as s:
        cohorts = list(s.scalars(select(CohortRow.name)))
        agents = list(s.scalars(select(AgentRow.id)))
        models = set(s.scalars(select(AgentRow.name)))
        years = {(n, y.year) for n, y in s.execute(select(AgentRow.name, CohortRow.period_start)
                                                   .join(CohortRow, CohortRow.id == AgentRow.cohort_id)).all()}
        markets = {r[0] for r in s.execute(union(select(FillRow.market_id), select(ForecastRow.market_id))).all()}
    expected = {"index.html", "markets.html", "methodology.html", "operations.html", "404.html"}
    expected |= {page_path("cohort", c) for c in cohorts} | {page_path("agent", a) for a in agents}
    expected |= {page_path("statistics", c) for c in cohorts}
    expected |= {page_path("market", m) for m in markets} | {page_path("model", m) for m in models}
    expected |= {page_path("model_year", k) for k in years}  # each model's cohorts, one page per year
    written = {str(p.relative_to(out)) for p in out.rglob("*.html")}
    assert written == expected
    assert report.total_pages == len(expected) - 1  # the 404 page is not counted as a page of the site
    assert report.pages == {"index": 1, "cohort": len(cohorts), "statistics": len(cohorts), "agent": len(agents),
                            "market": len(markets), "model": len(models), "model_year": len(years),
                            "markets": 1, "methodology": 1, "operations": 1}
    assert (out / "static" / "site.css").is_file() and (out / "static" / "sort.js").is_file()

    checked = 0
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        rel = str(page.relative_to(out))
        assert "{{" not in html and "{%" not in html and "Undefined" not in html, rel
        assert '<meta name="viewport"' in html
        # no hostile markup survives anywhere
        assert "<script>document.title" not in html and "<img" not in html and "<iframe" not in html, rel
        assert "<b>friends</b>" not in html and "<i>nope</i>" not in html and "<found>" not in html, rel
        assert not any(link.strip().lower().startswith("javascript:") for link in _links(html)), rel
        scripts = re.findall(r"<script\b[^>]*>", html)
        assert scripts == [f'<script src="{"../" * rel.count("/")}static/sort.js" defer>'], rel
        for link in _links(html):
            target, _ = urldefrag(link)
            assert not urlsplit(target).scheme and not target.startswith("/"), (rel, link)  # relative only
            if target:
                assert (page.parent / target).resolve().is_file(), (rel, link)
            checked += 1
    assert checked > 100

    market = (out / page_path("market", sim_arena.xss_market_id)).read_text(encoding="utf-8")
    assert "Will &lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt; &amp; &lt;b&gt;friends&lt;/b&gt; win?" \
        in market
    assert "<title>Will &lt;script&gt;" in market
    assert "&lt;iframe src=x&gt;&lt;/iframe&gt; description" in market
    assert "<polyline" in market and 'class="marker' in market  # the price chart, with the trades marked

    agent = (out / page_path("agent", sim_arena.xss_agent_id)).read_text(encoding="utf-8")
    assert "Bet &lt;b&gt;big&lt;/b&gt; &lt;img src=x onerror=&#34;document.title=&#39;pwned&#39;&#34;&gt; since " \
           "1 &lt; 2 &amp;&amp; 3 &gt; 2" in agent
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;{&#34;bets&#34;" in agent  # raw response
    assert "You are a forecaster. Market: &lt;script&gt;alert(1)&lt;/script&gt;" in agent  # prompt
    assert agent.count('<details class="call">') == 2
    assert "forecast for &#39;&lt;i&gt;nope&lt;/i&gt;&#39; ignored" in agent
    assert "<svg" in agent and "<polyline" in agent  # the equity curve

    ops = (out / "operations.html").read_text(encoding="utf-8")
    assert "not a number: &lt;NaN&gt;" in ops and "Traceback: &lt;boom&gt;" in ops

    method = (out / "methodology.html").read_text(encoding="utf-8")
    for needle in ("sizing-1", "scoring-1", "sim-1", "p-test", "crowd_proxy", "Very Poor", "Exceptional",
                   'id="ladders"', "ladder_violation_mean", "M → J; C → B → A"):
        assert needle in method

    # the live server's page for a path is the static page, byte for byte
    for path in ("index.html", page_path("agent", sim_arena.xss_agent_id), page_path("cohort", cohorts[0]),
                 page_path("market", sim_arena.xss_market_id), "operations.html"):
        live = render_path(engine, path, as_of)
        assert live is not None and live[1] == (out / path).read_text(encoding="utf-8"), path


def test_static_assets_are_vendored_and_offline(engine, tmp_path):
    render_site(engine, tmp_path, datetime(2026, 1, 4, tzinfo=timezone.utc))
    for name in ("site.css", "sort.js"):
        text = (tmp_path / "static" / name).read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text and "@import" not in text and "url(" not in text
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "No cohorts yet." in index
    assert not re.search(r"""(?:href|src)=["'](?:https?:)?//""", index)


def test_render_command_writes_the_site(db_url, engine, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    configure_render_parser(parser)
    args = parser.parse_args(["--out", str(tmp_path / "out"), "--db", db_url, "--as-of", "2026-02-01T00:00"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "rendered 4 pages" in out and (tmp_path / "out" / "index.html").is_file()  # index, markets, methodology, ops
    from arena.cli import main

    assert main(["render", "--out", str(tmp_path / "x"), "--db", db_url, "--as-of", "yesterday"]) == 2
    assert "'yesterday' is not a date or time" in capsys.readouterr().err
    assert not Path(tmp_path / "x").exists()


def test_parallel_render_writes_exactly_the_sequential_site(sim_arena, tmp_path):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    a = render_site(engine, tmp_path / "parallel", as_of, parallel=True)
    b = render_site(engine, tmp_path / "sequential", as_of, parallel=False)
    assert a.pages == b.pages and a.total_pages > 0
    files_a = {p.relative_to(tmp_path / "parallel"): p.read_bytes() for p in (tmp_path / "parallel").rglob("*") if p.is_file()}
    files_b = {p.relative_to(tmp_path / "sequential"): p.read_bytes() for p in (tmp_path / "sequential").rglob("*") if p.is_file()}
    assert files_a.keys() == files_b.keys() and files_a == files_b


def test_statistics_pages_show_the_services_numbers_and_are_linked(sim_arena, tmp_path):
    from arena.read.statistics import cohort_statistics
    from arena.web.env import number
    from arena.web.render import STATISTICS_DRAWS

    engine, as_of = sim_arena.engine, sim_arena.as_of
    out = tmp_path / "site"
    report = render_site(engine, out, as_of, statistics="all")
    stats = cohort_statistics(engine, as_of, n_boot=STATISTICS_DRAWS)
    assert report.pages["statistics"] == len(stats) > 0
    for name, st in stats.items():
        html = (out / page_path("statistics", name)).read_text()
        assert "Interim scores (provisional until every market resolves)" in html and "<script>alert" not in html
        cohort_html = (out / page_path("cohort", name)).read_text()
        assert page_path("statistics", name).split("/")[-1] in cohort_html
        for rec in st.summary().to_dict("records"):
            if rec.get("brier_ci_low") == rec.get("brier_ci_low"):  # not NaN
                assert number(rec["brier_ci_low"]) in html and number(rec["brier_ci_high"]) in html
    # "open" mode keeps a completed cohort's page and recomputes only what may change: nothing changed since the
    # last render, so only an open cohort's page that no longer holds what was written is computed again
    first = next(iter(stats))
    page = out / page_path("statistics", first)
    page.write_text("kept")
    again = render_site(engine, out, as_of, statistics="open")
    with Session(engine) as s:
        open_names = set(s.scalars(select(CohortRow.name).where(CohortRow.status == "open")))
    assert again.pages.get("statistics", 0) == (1 if first in open_names else 0)
    assert (page.read_text() == "kept") == (first not in open_names)
