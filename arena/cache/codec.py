"""The memo codec: every cached value is a few named DataFrames and a little metadata, stored as Arrow IPC streams.

A payload is `MAGIC`, a 32-character tag (the frame cache's entry nonce, so a reader can check which entry is
stored from its head alone), the metadata's length and the metadata as JSON (small: names, markets, versions),
then each named frame as an Arrow IPC stream preceded by its length (a frame that is None has length 0).

Decoding gives back an equal frame — same columns, dtypes and values bit for bit — which pyarrow's pandas
conversion does for every dtype the arena's frames use but three, handled here: a string column stored by Python
comes back stored by Python; an `object` column (the boards' notes and labels, which mix None, NaN, numbers and
strings) is stored as an Arrow dense union of those kinds; the column labels keep their index dtype. A value of
any other kind in an object column is refused (`TypeError`), and the memo then computes instead of storing.

`to_table`/`from_tables` are the same conversion without the bytes: the frame cache keeps a cohort's rows as Arrow
tables in memory and builds one pandas frame from many cohorts' tables at once (`from_tables` concatenates
first), so a fresh process pays pandas' per-frame cost once per frame kind, not once per cohort.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc

FORMAT = 1
MAGIC = b"AMC" + str(FORMAT).encode()
TAG = 32
HEAD = len(MAGIC) + TAG
_META = b"arena"  # the schema metadata key of the arena's own column notes

# an object column's kinds of value, in union type-code order
_KINDS: tuple[tuple[str, pa.DataType], ...] = (
    ("none", pa.null()), ("na", pa.null()), ("float", pa.float64()), ("int", pa.int64()), ("bool", pa.bool_()),
    ("str", pa.large_string()))
_UNION = pa.dense_union([pa.field(name, t) for name, t in _KINDS], type_codes=list(range(len(_KINDS))))


def _kind(value: Any) -> int:
    if value is None:
        return 0
    if value is pd.NA:
        return 1
    if isinstance(value, (bool, np.bool_)):
        return 4
    if isinstance(value, (float, np.floating)):
        return 2
    if isinstance(value, (int, np.integer)):
        return 3
    if isinstance(value, str):
        return 5
    raise TypeError(f"the memo codec stores no {type(value).__name__} in an object column")


def _object_array(values: Sequence[Any]) -> pa.Array:
    """An object column as a dense union of its values' kinds (`_KINDS`)."""
    codes = np.fromiter((_kind(v) for v in values), dtype=np.int8, count=len(values))
    offsets = np.zeros(len(values), dtype=np.int32)
    children = []
    for code, (name, arrow_type) in enumerate(_KINDS):
        at = np.flatnonzero(codes == code)
        offsets[at] = np.arange(len(at), dtype=np.int32)
        members = [values[i] for i in at]
        if arrow_type == pa.null():
            children.append(pa.nulls(len(members)))
        else:
            cast = {2: float, 3: int, 4: bool, 5: str}[code]
            children.append(pa.array([cast(v) for v in members], type=arrow_type))
    return pa.UnionArray.from_dense(pa.array(codes, pa.int8()), pa.array(offsets, pa.int32()), children,
                                    [n for n, _ in _KINDS], list(range(len(_KINDS))))


def _object_values(column: pa.ChunkedArray) -> np.ndarray:
    values = np.empty(len(column), dtype=object)
    at = 0
    for chunk in column.chunks:
        values[at:at + len(chunk)] = chunk.to_pylist()
        na = np.flatnonzero(np.asarray(chunk.type_codes) == 1)
        values[at + na] = pd.NA
        at += len(chunk)
    return values


def to_table(frame: pd.DataFrame) -> pa.Table:
    """`frame` as an Arrow table that `from_tables` turns back into an equal frame (its index is not kept)."""
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names) or any(not isinstance(c, str) for c in frame.columns):
        raise TypeError("the memo codec stores frames with distinct string column labels only")
    objects = [c for c in names if frame[c].dtype == object]
    if len(objects) < len(names) or not names:
        table = pa.Table.from_pandas(frame.drop(columns=objects) if objects else frame, preserve_index=False)
        for c in objects:
            table = table.append_column(pa.field(c, _UNION), _object_array(frame[c].tolist()))
    else:  # (no typed column to carry the length)
        table = pa.Table.from_arrays([_object_array(frame[c].tolist()) for c in objects], names=objects)
    table = table.select(names)
    # a string dtype's storage: pyarrow reads every string column back as stored by Arrow
    python = [c for c in names if isinstance(frame[c].dtype, pd.StringDtype) and frame[c].dtype.storage == "python"]
    notes = orjson.dumps({"objects": objects, "labels": str(frame.columns.dtype), "python": python})
    return table.replace_schema_metadata({**(table.schema.metadata or {}), _META: notes})


def from_tables(tables: Sequence[pa.Table]) -> pd.DataFrame:
    """The rows of `tables` (all of one frame's shape, from `to_table`) as one pandas frame, in order."""
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    notes = orjson.loads((tables[0].schema.metadata or {})[_META])
    objects = notes["objects"]
    names = table.column_names
    typed = table.drop_columns(objects) if objects else table
    frame = typed.to_pandas() if typed.num_columns else pd.DataFrame(index=pd.RangeIndex(table.num_rows))
    for c in objects:
        frame[c] = pd.Series(_object_values(table.column(c)), index=frame.index, dtype=object)
    for c in notes["python"]:
        frame[c] = frame[c].astype(pd.StringDtype("python", na_value=frame[c].dtype.na_value))
    if objects:
        frame = frame[names]
    frame.columns = pd.Index(names, dtype=notes["labels"])
    return frame


def table_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _table(raw: memoryview) -> pa.Table:
    return ipc.open_stream(pa.py_buffer(raw)).read_all()


def encode_tables(tables: Mapping[str, pa.Table | None], meta: Mapping[str, Any] | None = None, *,
                  tag: str = "") -> bytes:
    """Named Arrow tables (None allowed) and JSON-able `meta` as one payload (module docstring)."""
    if len(tag) > TAG or not tag.isascii():
        raise ValueError(f"a payload tag is at most {TAG} ASCII characters")
    doc = orjson.dumps({"meta": dict(meta or {}), "names": list(tables)})
    blobs = [b"" if t is None else table_bytes(t) for t in tables.values()]
    return b"".join([MAGIC, tag.ljust(TAG).encode("ascii"), len(doc).to_bytes(8, "little"), doc,
                     *(part for blob in blobs for part in (len(blob).to_bytes(8, "little"), blob))])


def decode_tables(payload: bytes | memoryview) -> tuple[dict[str, pa.Table | None], dict[str, Any], str]:
    """(the named tables, the metadata, the tag) of a payload `encode_tables` wrote; ValueError for any other."""
    if not isinstance(payload, (bytes, bytearray, memoryview)) or bytes(payload[:len(MAGIC)]) != MAGIC:
        raise ValueError(f"not a memo payload of format {FORMAT}")
    view = memoryview(payload)
    size = int.from_bytes(view[HEAD:HEAD + 8], "little")
    doc = orjson.loads(view[HEAD + 8:HEAD + 8 + size])
    at = HEAD + 8 + size
    tables: dict[str, pa.Table | None] = {}
    try:
        for name in doc["names"]:
            n = int.from_bytes(view[at:at + 8], "little")
            tables[name] = _table(view[at + 8:at + 8 + n]) if n else None
            at += 8 + n
    except pa.ArrowInvalid as exc:
        raise ValueError(f"a memo payload's frame does not read: {exc}") from exc
    return tables, doc["meta"], bytes(view[len(MAGIC):HEAD]).decode("ascii").rstrip()


def head(tag: str) -> bytes:
    """How a payload tagged `tag` begins (what `MemoTable.heads` compares)."""
    return MAGIC + tag.ljust(TAG).encode("ascii")


def encode_frames(frames: Mapping[str, pd.DataFrame | None], meta: Mapping[str, Any] | None = None) -> bytes:
    """Named DataFrames (None allowed) and JSON-able `meta` as one payload."""
    return encode_tables({name: None if f is None else to_table(f) for name, f in frames.items()}, meta)


def decode_frames(payload: bytes | memoryview) -> tuple[dict[str, pd.DataFrame | None], dict[str, Any]]:
    tables, meta, _ = decode_tables(payload)
    return {name: None if t is None else from_tables([t]) for name, t in tables.items()}, meta


def decode_many_frames(payloads: Iterable[bytes | memoryview]) -> list[tuple[dict[str, pd.DataFrame | None],
                                                                            dict[str, Any]]]:
    """`[decode_frames(p) for p in payloads]`, equal frame for frame, building one pandas frame per shape (column
    names and types) and cutting it into the payloads' rows: a fresh process reading a thousand boards pays
    pandas' per-frame cost a few times, not once per board."""
    decoded = [decode_tables(p)[:2] for p in payloads]
    shapes: dict[bytes, list[tuple[int, str]]] = {}  # the schema, metadata included (it names the pandas dtypes)
    for i, (tables, _) in enumerate(decoded):
        for name, t in tables.items():
            if t is not None:
                shapes.setdefault(t.schema.serialize().to_pybytes(), []).append((i, name))
    out: list[tuple[dict[str, pd.DataFrame | None], dict[str, Any]]] = [
        ({name: None for name in tables}, meta) for tables, meta in decoded]
    for members in shapes.values():
        tables = [decoded[i][0][name] for i, name in members]
        together = from_tables(tables)  # type: ignore[arg-type]
        ends = np.cumsum([t.num_rows for t in tables])  # type: ignore[union-attr]
        for (i, name), end, t in zip(members, ends, tables):
            out[i][0][name] = together.iloc[end - t.num_rows:end].reset_index(drop=True)  # type: ignore[union-attr]
    return out


__all__ = ["FORMAT", "HEAD", "MAGIC", "decode_frames", "decode_many_frames", "decode_tables", "encode_frames",
           "encode_tables", "from_tables", "head", "table_bytes", "to_table"]
