"""`frames.copy_frame` (PostgreSQL: rows through COPY … TO STDOUT as CSV, parsed by pandas' C reader) gives the
very frame `rows_frame(raw_rows(...))` gives — values, dtypes, order — whatever the text holds (commas, quotes,
newlines, 'NA', empty strings), with NULL numbers and times; and the read-model frames built on it equal the
ones built from the driver's rows. On SQLite these tests skip: the frames take the executed statement there."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import (BigInteger, Column, DateTime, Float, Integer, MetaData, Table, Text, insert, select,
                        text)
from sqlmodel import Session

from arena.store.engine import make_engine
from arena.store.frames import copy_frame, raw_rows, rows_frame, timestamp_literal


@pytest.fixture
def pg(engine):  # type: ignore[no-untyped-def]
    if engine.dialect.name != "postgresql":
        pytest.skip("copy_frame reads PostgreSQL's COPY output (set ARENA_TEST_DATABASE_URL)")
    return engine


def _table() -> Table:
    return Table("copy_probe", MetaData(), Column("k", Integer, primary_key=True), Column("s", Text, nullable=False),
                 Column("i", BigInteger), Column("f", Float(53)), Column("t", DateTime(timezone=True)))


COLUMNS, KINDS = ["k", "s", "i", "f", "t"], ["int", "str", "int", "float", "time"]
texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12) | st.sampled_from(
    ["", "NA", "null", "NaN", "N/A", " lead", "trail ", 'a "quoted", b', "line\nbreak", "cr\r\nlf", "\\N", "1e3", "007"])
moments = st.datetimes(min_value=datetime(1960, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc))
rows = st.lists(st.tuples(texts, st.none() | st.integers(-2 ** 53, 2 ** 53),
                          st.none() | st.floats(allow_nan=False, width=64), st.none() | moments), max_size=25)


def _both(engine, q) -> tuple[pd.DataFrame, pd.DataFrame]:  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        return rows_frame(raw_rows(s, q), COLUMNS), copy_frame(s, q, COLUMNS, KINDS)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rows)
def test_copy_frame_equals_the_drivers_rows(pg, data) -> None:  # type: ignore[no-untyped-def]
    t = _table()
    with pg.begin() as c:
        t.drop(c, checkfirst=True)
        t.create(c)
        if data:
            c.execute(insert(t), [dict(k=n, s=s, i=i, f=f, t=at) for n, (s, i, f, at) in enumerate(data)])
    by_driver, by_copy = _both(pg, select(t).order_by(t.c.k.desc()))
    pd.testing.assert_frame_equal(by_copy, by_driver)
    if data:  # the strings came back as written (not NaN, not trimmed), the times to the microsecond
        assert by_copy["s"].tolist() == [s for s, *_ in reversed(data)]
        got = [None if pd.isna(v) else v.to_pydatetime() for v in by_copy["t"]]
        assert got == [at for *_, at in reversed(data)]


def test_copy_frame_keeps_a_time_bound_and_the_connection_time_zone(pg) -> None:  # type: ignore[no-untyped-def]
    t = _table()
    t0 = datetime(2026, 11, 1, 10, 0, 0, 123456, tzinfo=timezone.utc)
    with pg.begin() as c:
        t.create(c)
        c.execute(insert(t), [dict(k=n, s=f"r{n}", i=n, f=n / 3, t=t0 + timedelta(hours=n)) for n in range(5)])
    q = select(t).where(t.c.t <= timestamp_literal(t0 + timedelta(hours=2))).order_by(t.c.k)
    by_driver, by_copy = _both(pg, q)
    pd.testing.assert_frame_equal(by_copy, by_driver)
    assert by_copy["k"].tolist() == [0, 1, 2] and by_copy["i"].dtype == "int64"
    # a session in another time zone: the driver's datetimes, and so the copy's, carry it
    url = pg.url.update_query_dict({"options": pg.url.query.get("options", "") + " -c TimeZone=Asia/Kolkata"})
    other = make_engine(url.render_as_string(hide_password=False))
    try:
        by_driver, by_copy = _both(other, q)
        pd.testing.assert_frame_equal(by_copy, by_driver)
        assert "Kolkata" in str(by_copy["t"].dtype) and by_copy["t"].iat[0].hour == 15
    finally:
        other.dispose()


def test_copy_frame_of_no_rows_and_bad_kinds(pg) -> None:  # type: ignore[no-untyped-def]
    t = _table()
    with pg.begin() as c:
        t.create(c)
    by_driver, by_copy = _both(pg, select(t))
    pd.testing.assert_frame_equal(by_copy, by_driver)
    with Session(pg) as s, pytest.raises(ValueError, match="one kind"):
        copy_frame(s, select(t), COLUMNS, ["int", "str", "int", "float", "date"])


def test_jit_is_off_unless_the_url_sets_it(pg) -> None:  # type: ignore[no-untyped-def]
    with pg.connect() as c:  # (the test URL carries its own options — a search path — and jit=off is added)
        assert c.execute(text("SHOW jit")).scalar() == "off"
    url = pg.url.update_query_dict({"options": pg.url.query.get("options", "") + " -c jit=on"})
    other = make_engine(url.render_as_string(hide_password=False))
    try:
        with other.connect() as c:
            assert c.execute(text("SHOW jit")).scalar() == "on"
    finally:
        other.dispose()
