"""A scheduled render rebuilds only the pages whose inputs changed (`web.page_keys`, `web.site_manifest`), and
the site it leaves is byte for byte the site a full render writes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.read import frontier
from arena.read.fact_versions import cohort_markets, cohort_versions
from arena.store.engine import session_scope
from arena.cache.memo import forget_all
from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, ForecastRow, MarketRow, PortfolioSnapshotRow,
                                PriceSnapshotRow, RejectionRow)
from arena.web.api import cohort_api_path
from arena.web.env import page_path
from arena.web.render import render_site
from arena.web.site_manifest import NAME


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != NAME}


def _market_cohorts(engine) -> tuple[str, set[str]]:  # type: ignore[no-untyped-def]
    """A traded market touched (traded or forecast) by the fewest cohorts, and those cohorts."""
    with engine.connect() as conn:
        traded = conn.execute(select(FillRow.market_id, CohortRow.name)
                              .join(CohortRow, CohortRow.id == FillRow.cohort_id)).all()
        asked = conn.execute(select(ForecastRow.market_id, CohortRow.name)
                             .join(AgentRow, AgentRow.id == ForecastRow.agent_id)
                             .join(CohortRow, CohortRow.id == AgentRow.cohort_id)).all()
    cohorts: dict[str, set[str]] = {}
    for mid, name in [*traded, *asked]:
        cohorts.setdefault(mid, set()).add(name)
    mid = min(sorted({m for m, _ in traded}), key=lambda m: len(cohorts[m]))
    return mid, cohorts[mid]


def _agent_of(engine, cohort: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return conn.execute(select(AgentRow.id, AgentRow.cohort_id).join(CohortRow, CohortRow.id == AgentRow.cohort_id)
                            .where(CohortRow.name == cohort).order_by(AgentRow.id)).first()  # type: ignore[return-value]


def _price(engine, mid: str, at) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        last = s.scalars(select(PriceSnapshotRow).where(PriceSnapshotRow.market_id == mid)
                         .order_by(PriceSnapshotRow.id.desc())).first()  # type: ignore[union-attr]
        assert last is not None
        s.add(PriceSnapshotRow(market_id=mid, outcome=last.outcome, price_ppm=max(1, last.price_ppm - 7_000),
                               observed_at=at, fetched_at=at, source="test"))


def _question(engine, mid: str) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        m = s.get(MarketRow, mid)
        m.question = m.question + " (edited by the venue)"
        s.add(m)


def _portfolio(engine, cohort: str, at) -> None:  # type: ignore[no-untyped-def]
    aid, cid = _agent_of(engine, cohort)
    with session_scope(engine) as s:
        s.add(PortfolioSnapshotRow(cohort_id=cid, agent_id=aid, as_of=at, cash_micros=1, positions_value_micros=2,
                                   total_value_micros=3))


def _rejection(engine, cohort: str, at) -> None:  # type: ignore[no-untyped-def]
    aid, _ = _agent_of(engine, cohort)
    with session_scope(engine) as s:
        did = s.scalars(select(DecisionRow.id).where(DecisionRow.agent_id == aid)).first()
        s.add(RejectionRow(decision_id=did, action_index=0, reason="over_limit", message="bet over the limit", at=at))


def _decision_text(engine, cohort: str, at) -> None:  # type: ignore[no-untyped-def]
    """A decision's reasoning rewritten in place (as a running decision's row is): no row added anywhere."""
    aid, _ = _agent_of(engine, cohort)
    with session_scope(engine) as s:
        d = s.scalars(select(DecisionRow).where(DecisionRow.agent_id == aid).order_by(DecisionRow.id)).first()
        d.reasoning = (d.reasoning or "") + " and one more thought"
        s.add(d)


CHANGES = {"price": _price, "question": _question}
COHORT_CHANGES = {"portfolio": _portfolio, "rejection": _rejection, "reasoning": _decision_text}


@pytest.mark.parametrize("change", [*CHANGES, *COHORT_CHANGES])
def test_a_scheduled_render_rebuilds_only_what_changed_and_equals_a_full_render(sim_arena, tmp_path, change,
                                                                                monkeypatch):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    site = tmp_path / "site"
    first = render_site(engine, site, as_of, statistics="none")
    assert sum(first.kept.values()) == 0 and first.written > 0
    real_frontier = frontier.model_frontier
    monkeypatch.setattr(frontier, "model_frontier", lambda *a, **k: pytest.fail("computed the frontier again"))
    again = render_site(engine, site, as_of, statistics="none")  # nothing changed: every keyed page is kept
    frontiers: list[int] = []
    monkeypatch.setattr(frontier, "model_frontier",
                        lambda *a, **k: frontiers.append(1) or real_frontier(*a, **k))  # type: ignore[func-returns-value]
    assert again.pages.get("cohort", 0) == again.pages.get("agent", 0) == again.pages.get("market", 0) == 0
    assert again.written == 0 and again.kept["cohort"] == first.pages["cohort"]
    assert again.pages.get("model", 0) == 0 and again.kept["model"] == first.pages["model"] > 0  # every cohort's key

    mid, touching = _market_cohorts(engine)
    cohort = sorted(touching)[0]
    at = as_of - timedelta(minutes=30)
    versions = _versions(engine)
    if change in CHANGES:
        CHANGES[change](engine, mid) if change == "question" else CHANGES[change](engine, mid, at)
    else:
        COHORT_CHANGES[change](engine, cohort, at)
    before = {p: (site / p).stat().st_mtime_ns for p in _files(site)}
    moved = {c for c, v in _versions(engine).items() if v != versions[c]}  # the cohorts whose version moved
    step = render_site(engine, site, as_of, statistics="none")
    assert frontiers == [1]  # a cohort's key moved: the frontier is computed again, once
    forget_all()  # the reference is computed from the facts alone, not from slices kept in memory
    full = render_site(engine, tmp_path / "full", as_of, statistics="none", full=True)
    assert _files(site) == _files(tmp_path / "full")
    rebuilt = touching if change in CHANGES else {cohort}  # the cohorts that touched the market, or the one changed
    assert step.pages["cohort"] == len(rebuilt) < full.pages["cohort"], step.pages
    assert step.pages["agent"] == sum(len(_agent_ids(engine, c)) for c in rebuilt)
    # a market page is keyed by its market's version and those of the cohorts that touched it
    markets = {m for m, by in _touched(engine).items() if by & moved} | ({mid} if change in CHANGES else set())
    assert markets and step.pages.get("market", 0) == len(markets) < full.pages["market"]
    assert step.pages.get("markets", 0) == 1 and step.kept.get("markets", 0) == 0  # keyed by every market's key
    assert step.kept["cohort"] == full.pages["cohort"] - len(rebuilt)
    assert step.pages["model"] == full.pages["model"] and step.kept.get("model", 0) == 0  # a cohort's key moved
    changed = {p for p, t in before.items() if (site / p).stat().st_mtime_ns != t}
    mine = ({page_path("cohort", c) for c in rebuilt} | {cohort_api_path(c) for c in rebuilt}
            | {page_path("agent", a) for c in rebuilt for a in _agent_ids(engine, c)} | {page_path("market", mid)})
    local = {p for p in changed if p.startswith(("cohorts/", "agents/", "markets/", "api/cohorts/"))}
    assert local and local <= mine, (local, mine)  # files written: only pages of what changed


def _versions(engine) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """cohort name → its version."""
    with engine.connect() as conn:
        names = dict(conn.execute(select(CohortRow.id, CohortRow.name)).tuples().all())
        return {names[c]: v for c, v in cohort_versions(conn, names).items()}


def _touched(engine) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    """market → the names of the cohorts whose fills or forecasts name it."""
    with engine.connect() as conn:
        names = dict(conn.execute(select(CohortRow.id, CohortRow.name)).tuples().all())
        out: dict[str, set[str]] = {}
        for cid, ms in cohort_markets(conn, list(names))[1].items():
            for m in ms:
                out.setdefault(m, set()).add(names[cid])
        return out


def _agent_ids(engine, cohort: str) -> list[int]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return [a for (a,) in conn.execute(select(AgentRow.id).join(CohortRow, CohortRow.id == AgentRow.cohort_id)
                                           .where(CohortRow.name == cohort))]


def test_a_page_edited_or_deleted_on_disk_is_written_again(sim_arena, tmp_path):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    site = tmp_path / "site"
    render_site(engine, site, as_of, statistics="none")
    with engine.connect() as conn:
        name = conn.execute(select(CohortRow.name).order_by(CohortRow.id)).scalars().first()
    page = site / page_path("cohort", name)
    good = page.read_bytes()
    page.write_text("tampered")
    (site / "index.html").unlink()
    render_site(engine, site, as_of, statistics="none")
    assert page.read_bytes() == good and (site / "index.html").exists()


def test_an_unreadable_manifest_means_a_full_render(sim_arena, tmp_path):
    engine, as_of = sim_arena.engine, sim_arena.as_of
    site = tmp_path / "site"
    first = render_site(engine, site, as_of, statistics="none")
    (site / NAME).write_text("{not json")
    again = render_site(engine, site, as_of, statistics="none")
    assert sum(again.kept.values()) == 0 and again.pages["cohort"] == first.pages["cohort"]
    assert again.written == 0  # every page rebuilt, and every byte the same: nothing written


def test_a_new_forecast_rebuilds_its_cohort_and_the_markets_that_cohort_touched(sim_arena, tmp_path):
    """A market's key names the agents' fills and forecasts on it through the marks of the cohorts that touched
    it: one new stated forecast rebuilds that cohort's pages and the pages of the markets it touched (the
    market's page among them, now showing one forecast more), and no other cohort's."""
    from arena.store.tables import ForecastRow

    engine, as_of = sim_arena.engine, sim_arena.as_of
    site = tmp_path / "site"
    render_site(engine, site, as_of, statistics="none")
    mid, touching = _market_cohorts(engine)
    cohort = sorted(touching)[0]
    aid, _ = _agent_of(engine, cohort)
    with session_scope(engine) as s:
        taken = set(s.scalars(select(ForecastRow.decision_id).where(ForecastRow.market_id == mid,
                                                                      ForecastRow.source == "bet")))
        did = next(d for d in s.scalars(select(DecisionRow.id).where(DecisionRow.agent_id == aid)
                                        .order_by(DecisionRow.id)) if d not in taken)
        s.add(ForecastRow(decision_id=did, agent_id=aid, market_id=mid, source="bet", probability=0.42,
                          market_price_ppm=400_000, as_of=as_of - timedelta(hours=1), replicate=1))
    market_page = site / page_path("market", mid)
    before = market_page.read_bytes()
    step = render_site(engine, site, as_of, statistics="none")
    forget_all()
    full = render_site(engine, tmp_path / "full", as_of, statistics="none", full=True)
    assert _files(site) == _files(tmp_path / "full")
    assert step.pages["cohort"] == 1 and step.kept["cohort"] == full.pages["cohort"] - 1
    assert 1 <= step.pages["market"] < full.pages["market"] and step.pages["markets"] == 1
    assert market_page.read_bytes() != before  # the market's page shows the new forecast


def test_page_keys_name_the_facts_in_any_process_and_a_copy_without_versions_gets_keys_of_its_own(sim_arena,
                                                                                                     tmp_path):
    """Keys come from the versions the database keeps: a fresh process computes the same; a point-in-time copy,
    whose tables keep no versions, gets keys no site was written with."""
    from arena.read.point_in_time import copy_as_of
    from arena.store.engine import make_engine
    from arena.web import page_keys

    engine, as_of = sim_arena.engine, sim_arena.as_of
    warm = page_keys.page_keys(engine, as_of)
    forget_all()
    assert page_keys.page_keys(engine, as_of) == warm and len(warm.cohorts) > 1 and len(warm.markets) > 10
    past = make_engine(f"sqlite:///{tmp_path / 'copy.sqlite'}")
    copy_as_of(engine, as_of, past)
    copied = page_keys.page_keys(past, as_of)
    assert set(copied.markets) == set(warm.markets) and set(copied.cohorts) == set(warm.cohorts)
    assert not set(copied.cohorts.values()) & set(warm.cohorts.values())
    assert not set(copied.markets.values()) & set(warm.markets.values())


def test_read_once_answers_from_the_first_reading_within_one_reading_only():
    from arena.cache.memo import one_reading, read_once

    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    assert read_once("k", compute) == 1 and read_once("k", compute) == 2  # outside: every time
    with one_reading():
        assert read_once("k", compute) == 3 and read_once("k", compute) == 3 and read_once("j", compute) == 4
    with one_reading():
        assert read_once("k", compute) == 5  # a new reading reads again


def test_a_render_freezes_the_objects_it_found_and_lets_them_go_after(sim_arena, tmp_path):
    """The garbage collector leaves the process's long-lived objects alone while a render runs (`gc.freeze`),
    and a render started inside another's freeze leaves it to the outer one."""
    import gc

    seen: list[int] = []
    assert gc.get_freeze_count() == 0
    render_site(sim_arena.engine, tmp_path / "a", sim_arena.as_of, statistics="none",
                on_stage=lambda _: seen.append(gc.get_freeze_count()))
    assert seen and min(seen) > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        outer = gc.get_freeze_count()
        render_site(sim_arena.engine, tmp_path / "b", sim_arena.as_of, statistics="none")
        assert gc.get_freeze_count() > outer // 2  # still frozen (less what was freed): the outer freeze stays
    finally:
        gc.unfreeze()
