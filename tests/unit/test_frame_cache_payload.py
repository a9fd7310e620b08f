"""The frame cache's stored payload (`cache.frame_cache.encode`/`decode`): every kind of column comes back with
the same values, the same dtype and the same array type — strings stored by Arrow and by Python, missing values,
times with and without a zone (NaT included), numbers, booleans, anything else — and the entry's nonce heads the
payload, so a process can tell which stored entry it holds without decoding it."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cache import frame_cache
from arena.cache.frame_cache import HEAD, MAGIC, _Entry, decode, encode


def _columns(frame: pd.DataFrame):
    return {str(c): (frame[c].to_numpy() if frame[c].dtype.kind in "fiub" else frame[c].array) for c in frame.columns}


def _same_columns(a, b) -> None:
    assert list(a) == list(b)
    for name in a:
        x, y = a[name], b[name]
        assert type(x) is type(y), name
        assert str(x.dtype) == str(y.dtype), name
        pd.testing.assert_series_equal(pd.Series(x), pd.Series(y), check_exact=True, obj=name)


AS_OF = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
HORIZON = datetime(2026, 2, 28, 9, 30, 0, 123456, tzinfo=timezone.utc)


def _entry(frames) -> _Entry:
    return _Entry(AS_OF, HORIZON, ["m:1", "m:2"], [3, 0], ["m:2"], frames)


def test_every_kind_of_column_round_trips_exactly():
    times = pd.Series(pd.to_datetime(["2026-01-01 10:00:00.123456", None, "2026-02-03 00:00:00.000001"]))
    frame = pd.DataFrame({
        "arrow": pd.Series(["a", None, "ü ¬ \"quoted\""], dtype="str"),
        "arrow_na": pd.Series(["x", None, "x"], dtype="string[pyarrow]"),
        "python": pd.Series(["p", "q", None], dtype="string[python]"),
        "at": times.astype("datetime64[us]"),
        "at_utc": times.dt.tz_localize("UTC").astype("datetime64[us, UTC]"),
        "at_ns": times,
        "p": [0.1 + 0.2, float("nan"), 1e-300],
        "n": np.array([1, -2, 2**62], dtype=np.int64),
        "small": np.array([1, 2, 3], dtype=np.int32),
        "void": [True, False, True],
        "other": pd.Series([1, "two", None], dtype=object),
    })
    cols = _columns(frame)
    entry = _entry({"bets": cols, "forecasts": _columns(frame.iloc[:0])})
    payload = encode(entry)
    assert isinstance(payload, bytes) and payload[:HEAD] == MAGIC + entry.nonce.encode()
    back = decode(payload)
    assert (back.as_of, back.horizon, back.markets, back.versions, back.touched) == (
        AS_OF, HORIZON, ["m:1", "m:2"], [3, 0], ["m:2"])
    assert back.nonce == entry.nonce
    _same_columns(cols, back.frames["bets"])
    _same_columns(entry.frames["forecasts"], back.frames["forecasts"])
    assert pd.isna(back.frames["bets"]["at_utc"][1]) and back.frames["bets"]["p"][0] == 0.1 + 0.2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=30),
       st.sampled_from(["str", "string[pyarrow]", "string[python]"]))
def test_string_columns_with_missing_values_round_trip(values, dtype):
    cols = {"s": pd.array(values, dtype=dtype), "_order": np.arange(len(values), dtype=np.int64)}
    _same_columns(cols, decode(encode(_entry({"bets": cols}))).frames["bets"])


def test_a_payload_of_another_format_is_refused_so_the_cohort_is_read_again():
    with pytest.raises(ValueError, match="format"):
        decode('{"nonce":"' + "0" * 32 + '","format":1}')  # the JSON text of format 1
    payload = bytearray(encode(_entry({"bets": {"n": np.arange(3, dtype=np.int64)}})))
    with pytest.raises(ValueError, match="format"):
        decode(b"XXXX" + bytes(payload[4:]))
    with pytest.raises(ValueError, match="format"):  # an entry of format 4 (keyed on aggregate marks): read again
        decode(b"AFC4" + bytes(payload[4:]))
    assert MAGIC == b"AFC" + str(frame_cache.FORMAT).encode() and frame_cache.FORMAT > 4


def test_each_frame_has_a_digest_of_its_content_that_travels_with_the_entry():
    cols = {"s": pd.array(["a", None, "b"], dtype="str"), "p": np.array([0.1, 0.2, 0.3]),
            "_order": np.arange(3, dtype=np.int64)}
    entry = _entry({"bets": cols, "forecasts": dict(cols)})
    assert entry.digests["bets"] == entry.digests["forecasts"]
    back = decode(encode(entry))
    assert back.digests == entry.digests
    assert _entry({"bets": dict(cols)}).digests["bets"] == entry.digests["bets"]  # content, not identity
    for changed in ({**cols, "p": np.array([0.1, 0.2, 0.30000000000000004])},
                    {**cols, "_order": np.array([0, 2, 1], dtype=np.int64)},
                    {**cols, "s": pd.array(["a", "", "b"], dtype="str")}):
        assert _entry({"bets": changed}).digests["bets"] != entry.digests["bets"]


def test_an_entry_serves_a_time_only_when_no_fact_it_depends_on_falls_between_and_its_markets_held():
    """An entry read as of T serves T itself; a later time too when its horizon (the latest fact) is at or before
    T; an earlier time only when that is at or after the horizon; never once one of its markets' versions moved."""
    entry = _entry({})
    versions = {"m:1": 3}  # m:2 has none: version 0
    assert entry.serves(AS_OF, versions) and entry.serves(AS_OF + timedelta(days=30), versions)
    assert entry.serves(HORIZON, versions) and not entry.serves(HORIZON - timedelta(microseconds=1), versions)
    assert not entry.serves(AS_OF, {"m:1": 4}) and not entry.serves(AS_OF, {"m:1": 3, "m:2": 1})
    late = _Entry(AS_OF, AS_OF + timedelta(hours=1), ["m:1"], [3], [], {})  # a fact stamped after T
    assert late.serves(AS_OF, versions) and not late.sees_all()
    assert not late.serves(AS_OF + timedelta(minutes=59), versions)  # between T and that fact: another reading
    assert late.serves(AS_OF + timedelta(hours=2), versions) is False  # read as of T, it lacks that fact
