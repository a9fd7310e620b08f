"""The dated corpus behind the `corpus_search` tool: a JSON-lines file of documents read whole and searched, with
SQLite FTS5's bm25 ranking, among the documents dated strictly before a decision time.

Owns the file format, its checks and the search; it must not import the store, the services or httpx.

Format: one JSON object per line with `date` (an ISO date "2025-03-01" or datetime "2025-03-01T14:30:00Z"; UTC
when no offset is given, converted to UTC when one is), `title`, `text` and `url` (strings; `title`, `text` and
`url` may be empty, but `title` and `text` not both). Blank lines are skipped; other keys are ignored. Any other
problem — a line that is not JSON, a missing or unparseable date, a field that is not a string — refuses the whole
corpus with its line number (`CorpusError`): half a corpus would quietly change what a seat could read.

Time: a document is shown to a decision at `as_of` only when its time is strictly before `as_of`. A date without
a time counts as the last instant of its day (23:59:59.999999 UTC), since it may have appeared at any hour of it:
"2025-03-01" is first visible to a decision at 2025-03-02 00:00 UTC. The index holds exactly the visible
documents when a search runs (documents are added or removed as the decision time moves), so bm25's statistics
— document count, term frequencies, average length — come from the visible documents only, and a later document
cannot even shift the ranking. Equal scores put the later document first.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from bisect import bisect_left
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Any

from arena.errors import InputError

MAX_QUERY_CHARS = 500  # of a query's text; longer queries are cut
MAX_QUERY_TERMS = 32  # words of a query searched for (OR-ed, ranked by bm25)
MAX_RESULTS = 10
EXCERPT_TOKENS = 48  # words of a document's text around the matches returned (FTS5 `snippet`, at most 64)
TITLE_WEIGHT = 2.0  # bm25 column weight of the title (the text's is 1)
_WORD = re.compile(r"\w+", re.UNICODE)
_FIX = ("give every line a JSON object with a \"date\" (ISO date or datetime, UTC) and string \"title\", \"text\" "
        "and \"url\" (see docs/configuration.md, corpus)")


class CorpusError(InputError):
    """The corpus file cannot be used: missing, unreadable, or a line that is not a dated document."""

    reason = "corpus"


@dataclass(frozen=True)
class Document:
    """One dated document. `at` is when it became knowable (UTC; a date alone counts as its day's end), `date`
    the date as the file wrote it."""

    at: datetime
    date: str
    title: str
    text: str
    url: str


def parse_date(value: Any) -> datetime:
    """When a document dated `value` became knowable, in UTC (ValueError when it is not an ISO date/datetime)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("has no date")
    text = value.strip()
    if not any(c in text for c in "Tt :"):  # a date alone: the end of its day
        day = date.fromisoformat(text)
        return datetime.combine(day, time.max, tzinfo=timezone.utc)
    when = datetime.fromisoformat(text)
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)


def read_documents(path: str | Path) -> tuple[list[Document], str]:
    """Every document of the corpus at `path`, oldest first, and the SHA-256 of the file. Raises CorpusError
    (one line naming the file and the line) on the first line that is not a dated document."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"corpus {p}: no such file", fix="check the agent's `corpus` path (relative paths are "
                                                          "read from the configuration file's folder)") from None
    except OSError as exc:
        raise CorpusError(f"corpus {p}: cannot be read ({exc.strerror or exc})",
                          fix="check the path and its permissions") from None
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise CorpusError(f"corpus {p}: not UTF-8 text (byte {exc.start})", fix="save it as UTF-8") from None
    docs = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        docs.append(_document(line, f"corpus {p} line {number}"))
    docs.sort(key=lambda d: d.at)  # stable: documents of one time keep the file's order
    return docs, hashlib.sha256(raw).hexdigest()


def _document(line: str, where: str) -> Document:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        raise CorpusError(f"{where}: not a JSON object", fix=_FIX) from None
    if not isinstance(obj, dict):
        raise CorpusError(f"{where}: not a JSON object", fix=_FIX)
    if "date" not in obj:
        raise CorpusError(f"{where}: has no \"date\"", fix=_FIX)
    try:
        at = parse_date(obj["date"])
    except (ValueError, TypeError, OverflowError):
        raise CorpusError(f"{where}: \"date\" {str(obj['date'])[:40]!r} is not an ISO date or datetime", fix=_FIX) \
            from None
    fields = {}
    for key in ("title", "text", "url"):
        value = obj.get(key, "")
        if not isinstance(value, str):
            raise CorpusError(f"{where}: \"{key}\" must be a string", fix=_FIX)
        fields[key] = value
    if not fields["title"].strip() and not fields["text"].strip():
        raise CorpusError(f"{where}: has neither a \"title\" nor a \"text\"", fix=_FIX)
    return Document(at, str(obj["date"]).strip(), fields["title"], fields["text"], fields["url"])


def fts_query(query: str) -> str:
    """An FTS5 query for the words of `query` (each a quoted string, OR-ed; bm25 ranks documents that match more
    and rarer words first); "" when it has no word. FTS5's own syntax in the text is never interpreted."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query[:MAX_QUERY_CHARS])))[:MAX_QUERY_TERMS]
    return " OR ".join(f'"{w}"' for w in words)


class Corpus:
    """A loaded corpus, searched as of a decision time. Thread-safe (one lock around the index)."""

    def __init__(self, path: str | Path, documents: list[Document], sha256: str) -> None:
        self.path = str(path)
        self.documents = documents
        self.sha256 = sha256
        self._times = [d.at for d in documents]
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._indexed = 0  # the index holds documents[:_indexed]

    @classmethod
    def load(cls, path: str | Path) -> Corpus:
        documents, sha256 = read_documents(path)
        return cls(path, documents, sha256)

    def __len__(self) -> int:
        return len(self.documents)

    def __repr__(self) -> str:
        return f"Corpus({self.path!r}, {len(self)} documents)"

    def visible(self, as_of: datetime) -> int:
        """How many documents are dated strictly before `as_of`."""
        return bisect_left(self._times, as_of)

    def search(self, query: str, as_of: datetime, limit: int = 5) -> list[dict[str, Any]]:
        """The `limit` (1..MAX_RESULTS) documents dated strictly before `as_of` that best match `query` (bm25,
        the title weighted TITLE_WEIGHT), best first: date as written, title, url and an excerpt of the text
        around the matched words."""
        match = fts_query(query)
        limit = min(max(limit, 1), MAX_RESULTS)
        if not match:
            return []
        with self._lock:
            db = self._index_until(self.visible(as_of))
            rows = db.execute(
                "SELECT rowid, snippet(docs, 1, '', '', '…', ?) FROM docs WHERE docs MATCH ? "
                "ORDER BY bm25(docs, ?, 1.0), rowid DESC LIMIT ?",
                (EXCERPT_TOKENS, match, TITLE_WEIGHT, limit)).fetchall()
        out = []
        for rowid, excerpt in rows:
            doc = self.documents[rowid - 1]
            if not doc.at < as_of:  # the index never holds one; a guard that costs nothing
                raise AssertionError("a document dated at or after the decision time was indexed")
            out.append({"date": doc.date, "title": doc.title, "url": doc.url, "excerpt": excerpt})
        return out

    def _index_until(self, n: int) -> sqlite3.Connection:
        """The FTS5 index holding exactly documents[:n] (rowid = position + 1), grown or shrunk from the last."""
        if self._db is None:
            self._db = sqlite3.connect(":memory:", check_same_thread=False)
            self._db.execute("CREATE VIRTUAL TABLE docs USING fts5(title, text, tokenize='porter unicode61')")
        db = self._db
        if n > self._indexed:
            db.executemany("INSERT INTO docs(rowid, title, text) VALUES (?, ?, ?)",
                           ((i + 1, d.title, d.text) for i, d in enumerate(self.documents[self._indexed:n],
                                                                          self._indexed)))
        elif n < self._indexed:
            db.execute("DELETE FROM docs WHERE rowid > ?", (n,))
        self._indexed = n
        return db


def check_corpus(path: str | Path) -> int:
    """Read the corpus at `path` as a decision would (CorpusError on a bad line); its document count."""
    return len(read_documents(path)[0])


__all__ = ["Corpus", "CorpusError", "Document", "MAX_RESULTS", "check_corpus", "fts_query", "parse_date",
           "read_documents"]
