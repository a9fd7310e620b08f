"""The dated corpus of the `corpus_search` tool: only documents dated strictly before the decision time are
returned (planted documents one second before, at and one second after it), ranked by FTS5's bm25 with statistics
from the visible documents alone, a bad corpus refused whole with its line number (one line, exit 2, nothing
written), the path frozen with the lineup, and a seat that searches in a real decision round with every result
stored with its model call (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlmodel import Session, select
from standin import hold_responder, json_reply, tool_responder

from arena.agents.corpus import Corpus, CorpusError, fts_query, parse_date
from arena.agents.llm import LLMAgent
from arena.agents.tools import ToolBox
from arena.config import AgentConfig, parse_config
from arena.domain.market import YES, Market, Quote
from arena.errors import ConfigError
from arena.money import Price
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, DecisionRow, ModelCallRow
from arena.usecases import ingest
from arena.usecases.lifecycle import UnbuildableAgent, build_agent, decision_round, start_current_cohort

SUNDAY = datetime(2026, 3, 1, tzinfo=timezone.utc)
DECIDE_AT = SUNDAY + timedelta(minutes=5)
SECOND = timedelta(seconds=1)


def iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def planted(at: datetime) -> list[dict[str, str]]:
    """Documents around the decision time `at`, all about the same question: one a second before (the only
    one of the three that may be returned), one at it, one a second after; a date-only document of the
    decision's own day (counts as its end: never returned that day) and one of the day before (returned)."""
    return [
        {"date": iso(at - SECOND), "title": "Ballot count: candidate A leads", "text": "A leads the ballot count.",
         "url": "https://news.example/before"},
        {"date": iso(at), "title": "Ballot count: candidate A wins", "text": "A wins the ballot count.",
         "url": "https://news.example/at"},
        {"date": iso(at + SECOND), "title": "Ballot count final: candidate A declared winner",
         "text": "Final ballot count: A declared winner.", "url": "https://news.example/after"},
        {"date": f"{at:%Y-%m-%d}", "title": "Ballot count recap of the day", "text": "The ballot count recap.",
         "url": "https://news.example/same-day"},
        {"date": f"{at - timedelta(days=1):%Y-%m-%d}", "title": "Ballot count begins",
         "text": "Counting of every ballot begins.", "url": "https://news.example/day-before"},
        {"date": "2025-06-01T09:00:00+02:00", "title": "Weather in June", "text": "Sunny days ahead.",
         "url": "https://news.example/weather"},
    ]


def write_corpus(path: Path, docs: list[dict[str, str]] | list[str]) -> Path:
    path.write_text("\n".join(d if isinstance(d, str) else json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    return path


def urls(results: list[dict[str, str]]) -> list[str]:
    return [r["url"] for r in results]


def test_only_documents_dated_strictly_before_the_decision_are_returned(tmp_path):
    corpus = Corpus.load(write_corpus(tmp_path / "c.jsonl", planted(DECIDE_AT)))
    found = urls(corpus.search("ballot count candidate", DECIDE_AT, 10))
    assert set(found) == {"https://news.example/before", "https://news.example/day-before"}
    # one second later the document dated at the old decision time is visible, the one after it is not yet
    later = urls(corpus.search("ballot count", DECIDE_AT + SECOND, 10))
    assert "https://news.example/at" in later and "https://news.example/after" not in later
    # the date-only document of the day is visible from the next midnight on
    assert "https://news.example/same-day" not in urls(corpus.search("recap", SUNDAY + timedelta(hours=23), 10))
    assert urls(corpus.search("recap", SUNDAY + timedelta(days=1), 10)) == ["https://news.example/same-day"]
    # an offset is converted to UTC: 09:00+02:00 is 07:00Z
    weather = datetime(2025, 6, 1, 7, tzinfo=timezone.utc)
    assert corpus.search("weather", weather, 5) == []
    assert urls(corpus.search("weather", weather + SECOND, 5)) == ["https://news.example/weather"]


def test_dates_are_utc_and_a_date_alone_counts_as_the_end_of_its_day():
    assert parse_date("2025-03-01") == datetime(2025, 3, 1, 23, 59, 59, 999999, tzinfo=timezone.utc)
    assert parse_date("2025-03-01T12:00:00") == datetime(2025, 3, 1, 12, tzinfo=timezone.utc)
    assert parse_date("2025-03-01 12:00:00Z") == datetime(2025, 3, 1, 12, tzinfo=timezone.utc)
    assert parse_date("2025-03-01T12:00:00-05:00") == datetime(2025, 3, 1, 17, tzinfo=timezone.utc)
    for bad in ("", "yesterday", "2025-13-01", "2025-02-30T10:00", None, 20250301):
        with pytest.raises((ValueError, TypeError)):
            parse_date(bad)


def test_bm25_puts_the_relevant_document_first(tmp_path):
    t = datetime(2025, 1, 1, tzinfo=timezone.utc)
    docs = [
        {"date": iso(t), "title": "Central bank holds rates", "text": "The central bank kept its rate unchanged; "
         "inflation was discussed at length.", "url": "u:rates"},
        {"date": iso(t + SECOND), "title": "Football results", "text": "The home team won the cup final.",
         "url": "u:football"},
        {"date": iso(t + 2 * SECOND), "title": "Inflation report", "text": "Inflation fell to 2.1 percent in "
         "December; the central bank is expected to cut rates in March.", "url": "u:inflation"},
        {"date": iso(t + 3 * SECOND), "title": "Markets", "text": "Stocks rose; the word inflation appears "
         "once in a long text about many other things such as weather, sport, travel and food.", "url": "u:noise"},
    ]
    corpus = Corpus.load(write_corpus(tmp_path / "c.jsonl", docs))
    found = corpus.search("will the central bank cut rates in March after inflation fell?", t + timedelta(days=1), 3)
    assert urls(found)[0] == "u:inflation"
    assert "cut rates in March" in found[0]["excerpt"] and found[0]["date"] == iso(t + 2 * SECOND)
    assert "u:football" not in urls(found)  # it matches no word of the query
    assert urls(corpus.search("football cup", t + timedelta(days=1), 5)) == ["u:football"]


def test_later_documents_cannot_shift_the_ranking(tmp_path):
    """bm25's statistics come from the visible documents only: planting many later documents with one query
    word (which would make it common, so worthless, in a whole-corpus index and flip the order of the two
    earlier matches) changes nothing before them."""
    t = datetime(2025, 1, 1, tzinfo=timezone.utc)
    past = [{"date": iso(t), "title": "One", "text": "alpha beta beta beta", "url": "u:1"},
            {"date": iso(t + SECOND), "title": "Two", "text": "alpha alpha alpha gamma", "url": "u:2"}]
    past += [{"date": iso(t + (i + 2) * SECOND), "title": "Other", "text": f"delta epsilon {i}", "url": f"u:o{i}"}
             for i in range(6)]
    future = [{"date": iso(t + timedelta(days=2, seconds=i)), "title": "Later", "text": "beta news",
               "url": f"u:f{i}"} for i in range(40)]
    clean = Corpus.load(write_corpus(tmp_path / "clean.jsonl", past))
    full = Corpus.load(write_corpus(tmp_path / "full.jsonl", past + future))
    at = t + timedelta(days=1)
    query = "alpha beta"
    assert urls(clean.search(query, at, 5)) == ["u:1", "u:2"]  # beta is the rarer word before the decision
    assert full.search(query, at, 5) == clean.search(query, at, 5)
    # and the index moved forward then back answers as a fresh one
    assert full.search(query, at + timedelta(days=5), 5) != clean.search(query, at, 5)
    assert full.search(query, at, 5) == clean.search(query, at, 5)


@pytest.mark.parametrize("line, problem", [
    ('{"title": "t", "text": "x", "url": "u"}', 'line 2: has no "date"'),
    ('{"date": "last Tuesday", "title": "t", "text": "x", "url": "u"}', "line 2: \"date\" 'last Tuesday' is not"),
    ('{"date": "2025-02-30", "title": "t", "text": "x", "url": "u"}', "line 2: \"date\" '2025-02-30' is not"),
    ("not json at all", "line 2: not a JSON object"),
    ('["2025-01-01", "t"]', "line 2: not a JSON object"),
    ('{"date": "2025-01-01", "title": 5, "text": "x", "url": "u"}', 'line 2: "title" must be a string'),
])
def test_a_bad_line_refuses_the_whole_corpus_with_its_line_number(tmp_path, line, problem):
    good = json.dumps({"date": "2025-01-01", "title": "fine", "text": "fine", "url": "u"})
    path = write_corpus(tmp_path / "c.jsonl", [good, line, good])
    with pytest.raises(CorpusError, match=problem) as err:
        Corpus.load(path)
    assert str(path) in err.value.message and err.value.exit_code == 2 and err.value.fix
    with pytest.raises(CorpusError, match="no such file"):
        Corpus.load(tmp_path / "missing.jsonl")


def config_text(base_url: str, corpus: str, tools: str = '"corpus_search"') -> str:
    return f"""
baselines = false
[cohort]
forecast_set_size = 2
[[agents]]
name = "reader"
model = "vendor/reader"
base_url = "{base_url}"
api_key_env = "ARENA_TEST_KEY"
tools = [{tools}]
corpus = "{corpus}"
max_tool_rounds = 2
"""


def test_the_corpus_is_required_with_the_tool_read_from_the_config_folder_and_frozen(tmp_path):
    from arena.config import load_config

    with pytest.raises(ConfigError, match="agents\\[0\\] \\(reader\\) corpus: is required"):
        parse_config(config_text("http://127.0.0.1:9/v1", ""))
    with pytest.raises(ConfigError, match="corpus: applies only when tools include 'corpus_search'"):
        parse_config(config_text("http://127.0.0.1:9/v1", "c.jsonl", tools='"order_book"'))
    (tmp_path / "cfg").mkdir()
    write_corpus(tmp_path / "cfg" / "c.jsonl", planted(DECIDE_AT))
    (tmp_path / "cfg" / "arena.toml").write_text(config_text("http://127.0.0.1:9/v1", "c.jsonl"))
    entry = load_config(tmp_path / "cfg" / "arena.toml").agent("reader")
    assert entry.corpus == str(tmp_path / "cfg" / "c.jsonl") and entry.track == "agent"
    frozen = entry.to_json()
    assert frozen["corpus"] == entry.corpus and AgentConfig(name="reader", **frozen) == entry
    agent = build_agent(AgentRow(cohort_id=1, name="reader", kind="llm", model_id="vendor/reader", config=frozen),
                        {"ARENA_TEST_KEY": "k"})
    assert isinstance(agent, LLMAgent) and agent.toolbox is not None and len(agent.toolbox.corpus) == 6
    # a frozen seat whose corpus file went bad since fails alone, with the line named
    write_corpus(tmp_path / "cfg" / "c.jsonl", [json.dumps({"title": "undated"})])
    broken = build_agent(AgentRow(cohort_id=1, name="reader", kind="llm", model_id="vendor/reader", config=frozen),
                         {"ARENA_TEST_KEY": "k"})
    assert isinstance(broken, UnbuildableAgent) and 'line 1: has no "date"' in broken.why


def test_the_tool_bounds_its_query_and_results_and_caps_their_size(tmp_path, view):
    t = view.as_of - timedelta(days=1)
    docs = [{"date": iso(t + timedelta(seconds=i)), "title": f"Report {i} on the election",
             "text": "election " + "word " * 300, "url": f"u:{i}"} for i in range(30)]
    box = ToolBox(("corpus_search",), corpus=Corpus.load(write_corpus(tmp_path / "c.jsonl", docs)),
                  result_chars=2000)
    record = box.run(view, "c1", "corpus_search", json.dumps({"query": "election", "max_results": 500}))
    assert record.truncated and len(record.result) <= 2000 and "cut" in record.result
    wide = ToolBox(("corpus_search",), corpus=box.corpus, result_chars=200_000)
    result = json.loads(wide.run(view, "c2", "corpus_search", json.dumps({"query": "election", "max_results": 500}))
                        .result)
    assert len(result["results"]) == 10 and result["before"] == view.as_of.isoformat()
    assert result["corpus"] == box.corpus.sha256[:16]  # type: ignore[union-attr]
    long_query = json.loads(wide.run(view, "c3", "corpus_search", json.dumps({"query": "election " * 200})).result)
    assert len(long_query["query"]) == 500 and len(long_query["results"]) == 5
    # FTS5's own syntax in a model's query is searched as words, never interpreted (nor an error)
    syntax = wide.run(view, "c4", "corpus_search", json.dumps({"query": 'election" OR NEAR(title: *) AND -"'}))
    assert not syntax.error and json.loads(syntax.result)["results"]
    assert fts_query('a "b" NEAR(c)') == '"a" OR "b" OR "near" OR "c"'
    assert "non-empty string `query`" in wide.run(view, "c5", "corpus_search", json.dumps({"query": " "})).error
    bare = ToolBox(("corpus_search", "order_book"))
    assert bare.offered(view) == ("order_book",) and wide.offered(view) == ("corpus_search",)
    assert "no corpus" in bare.run(view, "c6", "corpus_search", '{"query": "x"}').error


def seed(engine) -> None:  # type: ignore[no-untyped-def]
    close = SUNDAY + timedelta(days=20)
    markets = [Market(id=f"sim:{k}", venue="sim", question=f"Will candidate {k.upper()} win the ballot count?",
                      close_time=close, volume_24h=900.0 - i) for i, k in enumerate("abc")]
    t0 = SUNDAY - timedelta(days=1)
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, markets, [Quote(m.id, {YES: Price.of("0.40")}, t0, t0, source="t")
                                                    for m in markets])


def test_a_seat_searches_the_corpus_in_a_real_round_and_the_results_are_stored(engine, standin, tmp_path):
    seed(engine)
    corpus = write_corpus(tmp_path / "news.jsonl", planted(DECIDE_AT))

    def answer(request, results):  # type: ignore[no-untyped-def]
        from standin import forecast_ids

        found = results[-1]["content"]["results"]
        return json_reply({"actions": [], "forecasts": {mid: 0.6 for mid in forecast_ids(request)},
                           "reasoning": f"{len(found)} documents, first: {found[0]['title']}"})

    asked = tool_responder("corpus_search", lambda req: {"query": "ballot count candidate A", "max_results": 10},
                           answer)
    standin.default = lambda req: asked(req) if req.model == "vendor/reader" else hold_responder(0.5)(req)
    cfg = parse_config(config_text(standin.base_url, str(corpus)))
    name, _ = start_current_cohort(engine, SUNDAY, cfg)
    out = decision_round(engine, DECIDE_AT, cfg, {"ARENA_TEST_KEY": "sk-test-corpus-0123"})
    assert {o.agent: o.status for o in out[name]} == {"reader": "hold"}
    first = standin.requests_for("vendor/reader")[0]
    assert first.tools == ["corpus_search"]
    with Session(engine) as s:
        reader = s.scalars(select(AgentRow).where(AgentRow.name == "reader")).one()
        calls = s.scalars(select(ModelCallRow).join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                          .where(DecisionRow.agent_id == reader.id).order_by(ModelCallRow.attempt)).all()
    (record,) = calls[0].tool_calls
    assert record["name"] == "corpus_search" and not record["error"]
    stored = json.loads(record["result"])
    assert urls(stored["results"])[0] == "https://news.example/before"  # the best match that may be seen
    assert set(urls(stored["results"])) == {"https://news.example/before", "https://news.example/day-before"}
    assert stored["before"] == DECIDE_AT.isoformat()
    for r in stored["results"]:
        assert parse_date(r["date"]) < DECIDE_AT
    for future in ("https://news.example/at", "https://news.example/after", "https://news.example/same-day"):
        assert future not in record["result"]
    assert "declared winner" not in record["result"] and "A wins" not in record["result"]


def test_a_bad_corpus_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, monkeypatch):
    from arena.cli import main

    monkeypatch.setenv("ARENA_TEST_KEY", "k")

    corpus = write_corpus(tmp_path / "news.jsonl", [json.dumps(d) for d in planted(DECIDE_AT)]
                          + ['{"date": "soon", "title": "t", "text": "x", "url": "u"}'])
    cfg = tmp_path / "arena.toml"
    cfg.write_text(config_text("http://127.0.0.1:9/v1", corpus.name))  # relative: read from the config's folder
    db = tmp_path / "arena.sqlite"
    for argv in (["round", "--at", "2026-03-01T00:05"], ["cohort", "start", "--at", "2026-03-01"],
                 ["jobs", "run", "decision_round", "--at", "2026-03-01T00:05"],
                 ["replay", "run", str(tmp_path / "replay.jsonl"), "--from", "2025-11-02", "--until", "2025-11-03"],
                 ["demo", "--llm", "--cohorts", "1"]):
        assert main([*argv, "--config", str(cfg), "--db", f"sqlite:///{db}"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("arena: corpus ") and "line 7" in err[0] and " — " in err[0]
    assert not db.exists()


def test_the_methodology_pages_example_is_what_the_code_does():
    """Each row of the methodology page's table (documents around a decision at 2025-12-31 00:05 UTC)."""
    import re

    page = (Path(__file__).resolve().parents[2] / "templates" / "methodology.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr><td><code>([^<]+)</code></td><td>[^<]+</td><td>(yes|no)", page)
    assert len(rows) == 6
    decision = datetime(2025, 12, 31, 0, 5, tzinfo=timezone.utc)
    assert {date: parse_date(date) < decision for date, _ in rows} == {date: said == "yes" for date, said in rows}


def test_replay_run_searches_as_of_the_simulated_clock(standin, tmp_path, db_url, capsys, monkeypatch):
    """`arena replay run` with a corpus seat: each search is bounded by the simulated decision time (stored on
    the decision), never the wall clock — documents dated during and after the replayed window, planted with the
    query's words, are never returned; one dated before it is."""
    from arena.cli import main
    from arena.store.engine import make_engine
    from arena.venues.replay import write_replay

    start = datetime(2025, 11, 2, tzinfo=timezone.utc)
    write_replay([{
        "platform": "manifold", "market_id": f"m{i}", "question": f"Will candidate {i} win the ballot count?",
        "url": "", "background": "", "resolution_criteria": "", "market_info_resolution_criteria": None,
        "market_open_datetime": (start - timedelta(days=30)).isoformat(),
        "market_close_datetime": (start + timedelta(days=30)).isoformat(),
        "resolution": i % 2, "first_resolved_observation_date": (start + timedelta(days=40)).date(),
        "history": [((start - timedelta(days=d)).date(), 0.3 + i / 10) for d in range(5, 0, -1)],
    } for i in range(3)], tmp_path / "replay.jsonl")
    docs = [{"date": "2025-10-30", "title": "Ballot count preview", "text": "The ballot count starts soon.",
             "url": "u:before"}]
    docs += [{"date": iso(start + timedelta(minutes=m)), "title": "Ballot count result", "text": f"ballot {m}",
              "url": f"u:during-{m}"} for m in (4, 5, 6, 60 * 24)]
    docs += [{"date": "2026-06-01", "title": "Ballot count retrospective", "text": "ballot count", "url": "u:later"}]
    write_corpus(tmp_path / "news.jsonl", docs)
    cfg = tmp_path / "arena.toml"
    cfg.write_text(config_text(standin.base_url, "news.jsonl").replace("forecast_set_size = 2",
                                                                      "forecast_set_size = 2\ndecision_weeks = 1"))
    standin.default = tool_responder("corpus_search", lambda req: {"query": "ballot count", "max_results": 10},
                                     lambda req, results: hold_responder(0.5)(req))
    monkeypatch.setenv("ARENA_TEST_KEY", "sk-replay-corpus")
    argv = ["replay", "run", str(tmp_path / "replay.jsonl"), "--from", "2025-11-02", "--until", "2025-11-03",
            "--config", str(cfg), "--db", db_url]
    assert main(argv) == 0, capsys.readouterr().err
    eng = make_engine(db_url)
    with Session(eng) as s:
        rows = s.execute(select(DecisionRow.as_of, ModelCallRow.tool_calls)
                         .join(ModelCallRow, ModelCallRow.decision_id == DecisionRow.id)).all()
    eng.dispose()
    records = [(as_of, r) for as_of, calls in rows for r in (calls or [])]
    assert records, "the seat searched the corpus"
    for as_of, record in records:
        decided = as_of if as_of.tzinfo else as_of.replace(tzinfo=timezone.utc)
        assert start <= decided < start + timedelta(days=1)
        found = json.loads(record["result"])["results"]
        assert "u:before" in urls(found) and not {"u:later", "u:during-1440"} & set(urls(found))
        assert all(parse_date(r["date"]) < decided for r in found)
        assert json.loads(record["result"])["before"] == decided.isoformat()


def test_the_seats_of_every_cohort_deciding_in_one_round_share_one_read_of_the_corpus(engine, standin, tmp_path,
                                                                                       monkeypatch):
    seed(engine)
    corpus = write_corpus(tmp_path / "news.jsonl", planted(DECIDE_AT + timedelta(weeks=1)))
    reads: list[str] = []
    load = Corpus.load.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Corpus, "load", classmethod(lambda cls, path: reads.append(str(path)) or load(cls, path)))
    standin.default = tool_responder("corpus_search", lambda req: {"query": "ballot count"},
                                     lambda req, results: hold_responder(0.5)(req))
    cfg = parse_config(config_text(standin.base_url, str(corpus)).replace("forecast_set_size = 2",
                                                                         "forecast_set_size = 2\ndecision_weeks = 2"))
    first, _ = start_current_cohort(engine, SUNDAY, cfg)
    second, _ = start_current_cohort(engine, SUNDAY + timedelta(weeks=1), cfg)
    out = decision_round(engine, DECIDE_AT + timedelta(weeks=1), cfg, {"ARENA_TEST_KEY": "k"})
    assert {name: [o.status for o in outs] for name, outs in out.items()} == {first: ["hold"], second: ["hold"]}
    assert reads == [str(corpus)]  # two seats, one read
    with Session(engine) as s:
        results = [json.loads(t["result"]) for c in s.scalars(select(ModelCallRow)) for t in (c.tool_calls or [])]
    assert len(results) == 2 and results[0] == results[1]
    assert set(urls(results[0]["results"])) == {"https://news.example/before", "https://news.example/day-before"}
