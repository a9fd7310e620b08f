"""Endpoint slots: at most N model calls in flight per endpoint — within a process, and on PostgreSQL across
every process sharing the database (the workers of a round, the scheduler).

An endpoint is the longest configured URL prefix a request's URL starts with (``https://openrouter.ai/api/v1``),
else the request's origin (scheme, host and port). A limit is taken as a **slot**: one of N numbered locks for
the endpoint. In one process the slots are a semaphore; on PostgreSQL each slot is also a session-level
advisory lock (`pg_try_advisory_lock(endpoint key, slot)`) held for the length of the call on the process's one
slot connection, so a limit holds however many workers run. A worker that dies frees its locks with that
connection, but the endpoint may still be answering the calls it left behind: so each taken slot also has an
`endpoint_holds` row saying until when its call can run (now + the request's timeouts), deleted when the call
ends. A slot whose lock is free but whose hold has not run out belongs to a dead holder's orphaned call and is
not taken until the hold runs out — the limit counts calls the endpoint may still be serving, not only those
a live process waits for.

The slots sit at the I/O edge, in the HTTP transport the round's shared client sends through
(`LimitedTransport`): a slot is taken when a request is sent and given back when its response is closed (a
streamed reply holds it until read), and no agent or service needs to know about them.
"""

from __future__ import annotations

import random
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from arena.errors import InputError

ADVISORY_NAMESPACE = "arena.endpoint:"  # hashed with the endpoint into the advisory lock's first key
DEFAULT_HOLD_S = 600.0  # how long a call with no timeout may still be running after its holder died


def origin(url: str) -> str:
    """scheme://host:port of a URL (the port spelled out), the endpoint of a request no limit names."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def _normal(prefix: str) -> str:
    """A configured endpoint prefix in the form requests are matched in: origin with port, then the path."""
    parts = urlsplit(prefix.rstrip("/"))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"endpoint {prefix!r} is not an http(s) URL",
                         fix="write it as the agent's base_url, e.g. https://openrouter.ai/api/v1=8")
    return origin(prefix) + parts.path


@dataclass(frozen=True)
class EndpointLimits:
    """Calls in flight allowed per endpoint: `per_endpoint` (normalized URL prefix → N) and `default` for any
    other endpoint (None: unlimited)."""

    per_endpoint: Mapping[str, int] = field(default_factory=dict)
    default: int | None = None

    @classmethod
    def parse(cls, specs: list[str] | tuple[str, ...] | None) -> EndpointLimits:
        """From `--endpoint-limit` values: ``N`` (every endpoint) or ``URL=N`` (that endpoint), repeatable."""
        per: dict[str, int] = {}
        default: int | None = None
        for spec in specs or ():
            url, sep, count = spec.rpartition("=")
            try:
                n = int(count.strip())
            except ValueError:
                n = 0
            if n < 1:
                raise InputError(f"endpoint limit {spec!r} does not end in a whole number of calls of at least 1",
                                 fix="write N or URL=N, e.g. --endpoint-limit 8 or "
                                     "--endpoint-limit https://openrouter.ai/api/v1=16")
            if sep:
                per[_normal(url.strip())] = n
            else:
                default = n
        return cls(per, default)

    def endpoint(self, url: str) -> tuple[str, int | None]:
        """The endpoint a request URL counts against and its limit (None: unlimited)."""
        o = origin(url)
        full = o + urlsplit(url).path
        best = max((p for p in self.per_endpoint if full == p or full.startswith(p.rstrip("/") + "/")),
                   key=len, default=None)
        if best is not None:
            return best, self.per_endpoint[best]
        return o, self.default

    def __bool__(self) -> bool:
        return bool(self.per_endpoint) or self.default is not None


_SEMAPHORES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_SEMAPHORES_LOCK = threading.Lock()


class Slots:
    """Slots within this process: one semaphore per endpoint (and limit), shared by every user in the process."""

    def _sem(self, endpoint: str, n: int) -> threading.BoundedSemaphore:
        with _SEMAPHORES_LOCK:
            if (endpoint, n) not in _SEMAPHORES:
                _SEMAPHORES[(endpoint, n)] = threading.BoundedSemaphore(n)
            return _SEMAPHORES[(endpoint, n)]

    def acquire(self, endpoint: str, n: int, hold_s: float = DEFAULT_HOLD_S) -> Any:
        """Block until a slot of `endpoint` is free; returns the token `release` takes. `hold_s`: the longest
        the call may run (its slot stays taken that long if this process dies meanwhile)."""
        sem = self._sem(endpoint, n)
        sem.acquire()
        return sem

    def release(self, token: Any) -> None:
        token.release()

    def close(self) -> None:
        pass


def _key(endpoint: str) -> int:
    """The endpoint's advisory-lock key: a signed 32-bit hash (the first of pg_try_advisory_lock's two ints)."""
    h = zlib.crc32((ADVISORY_NAMESPACE + endpoint).encode())
    return h - (1 << 32) if h >= (1 << 31) else h


class PostgresSlots(Slots):
    """Slots shared by every process on one PostgreSQL database: slot i of an endpoint is the advisory lock
    (key, i). This process holds all its slots on **one** connection of its own (a session may hold many
    advisory locks), so a worker costs one extra connection however many calls it makes, and a worker that
    dies frees every slot with that connection. A session re-entering a lock it holds succeeds, so the slots
    this process holds are tracked here and never asked for twice; the process-local semaphore goes first, so
    it never asks for more than the limit."""

    def __init__(self, engine: Engine, poll_s: float = 0.02) -> None:
        self._engine = create_engine(engine.url, poolclass=NullPool)
        self._conn: Connection | None = None
        self._lock = threading.Lock()  # the one connection is used by one thread at a time
        self._held: dict[int, set[int]] = {}
        self._poll = poll_s

    def _connection(self) -> Connection:
        if self._conn is None or self._conn.closed or self._conn.invalidated:
            self._conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        return self._conn

    def _try(self, key: int, n: int, hold_s: float) -> int | None:
        """A free slot of the endpoint taken now (its number), or None. A slot is free when its lock is and
        no hold on it is still running (a dead holder's call the endpoint may still be answering)."""
        with self._lock:  # the held set is read under the lock: a stale one would re-enter a held slot
            held = self._held.setdefault(key, set())
            free = [i for i in range(n) if i not in held]
            random.shuffle(free)  # spread the tries over the slots
            conn = self._connection()
            for slot in free:
                ks = {"k": key, "s": slot}
                if not conn.execute(text("SELECT pg_try_advisory_lock(:k, :s)"), ks).scalar():
                    continue
                if conn.execute(text("SELECT until > now() FROM endpoint_holds WHERE endpoint_key = :k "
                                     "AND slot = :s"), ks).scalar():
                    conn.execute(text("SELECT pg_advisory_unlock(:k, :s)"), ks)
                    continue
                conn.execute(text("INSERT INTO endpoint_holds (endpoint_key, slot, until) "
                                  "VALUES (:k, :s, now() + make_interval(secs => :h)) "
                                  "ON CONFLICT (endpoint_key, slot) DO UPDATE SET until = EXCLUDED.until"),
                             {**ks, "h": hold_s})
                held.add(slot)
                return slot
        return None

    def acquire(self, endpoint: str, n: int, hold_s: float = DEFAULT_HOLD_S) -> Any:
        sem = super().acquire(endpoint, n)
        key = _key(endpoint)
        try:
            while (slot := self._try(key, n, hold_s)) is None:
                time.sleep(self._poll * (0.5 + random.random()))
        except BaseException:
            sem.release()
            raise
        return (sem, key, slot)

    def release(self, token: Any) -> None:
        sem, key, slot = token
        try:
            with self._lock:
                self._held.get(key, set()).discard(slot)
                if self._conn is not None:  # the call is over: its hold goes, then the lock
                    ks = {"k": key, "s": slot}
                    self._conn.execute(text("DELETE FROM endpoint_holds WHERE endpoint_key = :k AND slot = :s"), ks)
                    self._conn.execute(text("SELECT pg_advisory_unlock(:k, :s)"), ks)
        except Exception:  # noqa: BLE001 - a broken connection: its session, and every lock on it, is gone
            self._drop()
        finally:
            sem.release()

    def _drop(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.invalidate()
                self._conn = None
            self._held.clear()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        self._engine.dispose()


def slots_for(engine: Engine) -> Slots:
    """Slots that hold across processes where the database can share them (PostgreSQL), else in-process."""
    if engine.dialect.name == "postgresql":
        return PostgresSlots(engine)
    return Slots()


def hold_seconds(request: httpx.Request) -> float:
    """The longest a request may keep its endpoint busy: its connect, write and read timeouts together (the
    model's whole answer comes within the read timeout), DEFAULT_HOLD_S when it has none."""
    timeouts = request.extensions.get("timeout") or {}
    parts = [float(timeouts[k]) for k in ("connect", "write", "read") if timeouts.get(k) is not None]
    return sum(parts) if parts and timeouts.get("read") is not None else DEFAULT_HOLD_S


class _ReleasingStream(httpx.SyncByteStream):
    """A response body that gives its slot back when it is closed (or read to the end and closed)."""

    def __init__(self, inner: httpx.SyncByteStream, done: Any) -> None:
        self._inner, self._done = inner, done

    def __iter__(self) -> Iterator[bytes]:
        yield from self._inner

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._done()


class LimitedTransport(httpx.BaseTransport):
    """An httpx transport that holds an endpoint slot from sending a request until its response is closed."""

    def __init__(self, limits: EndpointLimits, slots: Slots, inner: httpx.BaseTransport | None = None) -> None:
        self.limits, self.slots = limits, slots
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        endpoint, n = self.limits.endpoint(str(request.url))
        if n is None:
            return self.inner.handle_request(request)
        token = self.slots.acquire(endpoint, n, hold_seconds(request))
        released = threading.Event()

        def done() -> None:
            if not released.is_set():
                released.set()
                self.slots.release(token)

        try:
            response = self.inner.handle_request(request)
        except BaseException:
            done()
            raise
        stream = response.stream
        assert isinstance(stream, httpx.SyncByteStream)
        return httpx.Response(response.status_code, headers=response.headers,
                              stream=_ReleasingStream(stream, done), extensions=response.extensions)

    def close(self) -> None:
        self.inner.close()


__all__ = ["EndpointLimits", "LimitedTransport", "PostgresSlots", "Slots", "origin", "slots_for"]
