"""The memo codec (`cache.codec`) and the frame cache's entries stored with it: every kind of column the arena's
frames hold comes back with the same values, the same dtype and the same array type — strings stored by Arrow and
by Python, missing values, times with and without a zone (NaT included), numbers, booleans, object columns mixing
None, NaN, pd.NA, numbers and strings — one payload or many at once, and a frame-cache entry's nonce heads its
payload, so a process can tell which stored entry it holds without decoding it."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cache import codec, frame_cache
from arena.cache.codec import decode_frames, decode_many_frames, encode_frames
from arena.cache.frame_cache import _Entry, _split, decode, encode

AS_OF = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
HORIZON = datetime(2026, 2, 28, 9, 30, 0, 123456, tzinfo=timezone.utc)


def _entry(frames) -> _Entry:
    return _Entry(AS_OF, HORIZON, ["m:1", "m:2"], [3, 0], ["m:2"], frames)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for c in a.columns:
        assert type(a[c].array) is type(b[c].array), c
        assert [type(v) for v in a[c].tolist()] == [type(v) for v in b[c].tolist()], c  # None stays None, NA stays NA


def _every_kind() -> pd.DataFrame:
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
        "maybe": pd.array([1, None, 3], dtype="Int64"),
        "other": pd.Series([1, "two", None], dtype=object),
        "notes": pd.Series([float("nan"), pd.NA, True], dtype=object),
        "labels": pd.Series(["a", "b", None], dtype=object),
    })
    frame.columns = pd.Index(list(frame.columns), dtype=object)
    return frame


def test_every_kind_of_column_round_trips_exactly():
    frame = _every_kind()
    frames, meta = decode_frames(encode_frames({"board": frame, "none": None, "empty": frame.iloc[:0]}, {"x": [1]}))
    assert meta == {"x": [1]} and frames["none"] is None
    _same(frame, frames["board"])
    _same(frame.iloc[:0], frames["empty"])
    assert frames["board"]["p"][0] == 0.1 + 0.2 and pd.isna(frames["board"]["at_utc"][1])


def test_many_payloads_decode_at_once_as_each_does_alone():
    frame = _every_kind()
    payloads = [encode_frames({"a": frame, "b": frame.iloc[1:]}), encode_frames({"a": frame.iloc[2:], "b": None}),
                encode_frames({"a": frame[["p", "n"]]})]  # another shape
    for (together, meta), payload in zip(decode_many_frames(payloads), payloads):
        alone, meta_alone = decode_frames(payload)
        assert meta == meta_alone and list(together) == list(alone)
        for name in alone:
            assert (together[name] is None) == (alone[name] is None)
            if alone[name] is not None:
                _same(alone[name], together[name])


def test_a_value_the_codec_does_not_hold_is_refused():
    with pytest.raises(TypeError, match="tuple"):
        encode_frames({"a": pd.DataFrame({"x": pd.Series([(1, 2)], dtype=object)})})
    with pytest.raises(TypeError, match="string column labels"):
        encode_frames({"a": pd.DataFrame({0: [1.0]})})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=30),
       st.sampled_from(["str", "string[pyarrow]", "string[python]", "object"]))
def test_string_columns_with_missing_values_round_trip(values, dtype):
    frame = pd.DataFrame({"s": pd.Series(values, dtype=dtype), "_order": np.arange(len(values), dtype=np.int64)})
    _same(frame, decode_frames(encode_frames({"f": frame}))[0]["f"])


def test_a_frame_cache_entry_round_trips_with_its_nonce_at_the_head():
    frame = _every_kind().assign(cohort="c1", _order=np.arange(3, dtype=np.int64))
    tables = _split(frame, {1: "c1"})
    entry = _entry({"forecasts": tables[1], "bets": _split(frame.iloc[:0], {1: "c1"})[1], "portfolios": tables[1]})
    payload = encode(entry)
    assert isinstance(payload, bytes) and payload[:codec.HEAD] == codec.head(entry.nonce)
    back = decode(payload)
    assert (back.as_of, back.horizon, back.markets, back.versions, back.touched, back.nonce) == (
        AS_OF, HORIZON, ["m:1", "m:2"], [3, 0], ["m:2"], entry.nonce)
    assert back.digests == entry.digests and entry.digests["forecasts"] == entry.digests["portfolios"]
    _same(frame_cache._frame([back.frames["forecasts"]]), frame.drop(columns="_order"))


def test_a_payload_of_another_format_is_refused_so_the_cohort_is_read_again():
    frame = pd.DataFrame({"n": np.arange(3, dtype=np.int64), "cohort": "c", "_order": np.arange(3)})
    one = _split(frame, {1: "c"})[1]
    payload = encode(_entry({"forecasts": one, "bets": one, "portfolios": one}))
    for other in (b'{"nonce":"' + b"0" * 32 + b'","format":1}', b"XXXX" + payload[4:], b"AFC5" + payload[4:],
                  encode_frames({"board": frame}, {"format": 1})):
        with pytest.raises(ValueError):
            decode(other)


def test_each_frame_has_a_digest_of_its_content_that_travels_with_the_entry():
    base = pd.DataFrame({"s": pd.array(["a", None, "b"], dtype="str"), "p": [0.1, 0.2, 0.3], "cohort": "c",
                         "_order": np.arange(3, dtype=np.int64)})

    def digest(frame: pd.DataFrame) -> str:
        return _entry({"bets": _split(frame, {1: "c"})[1]}).digests["bets"]

    assert digest(base) == digest(base.copy())  # content, not identity
    for changed in (base.assign(p=[0.1, 0.2, 0.30000000000000004]), base.assign(_order=[0, 2, 1]),
                    base.assign(s=pd.array(["a", "", "b"], dtype="str"))):
        assert digest(changed) != digest(base)


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
