"""Forked render workers: work done in a child process that sees everything built so far (copy-on-write), dies
with its parent and leaves the parent's database connections alone; `end_children` stops the ones still running.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from collections.abc import Callable

from sqlalchemy.engine import Engine


children: set[int] = set()  # pids of the render children alive now (ended by `end_children`)


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """In a forked child: have Linux kill it when the thread that forked it dies (PR_SET_PDEATHSIG), so a
    stopped or killed scheduler never leaves a renderer behind holding database sessions."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: `end_children` at shutdown is the remaining guard
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class Forked:
    """Work done in a forked child process (copy-on-write: it sees everything built so far, nothing is
    pickled); `join` returns the page counts it reports, or raises if it failed. The child dies with its
    parent, and leaves the parent's pooled database connections alone (`engine`: never used or closed there)."""

    def __init__(self, work: Callable[[], dict[str, int]], engine: Engine | None = None) -> None:
        self.read_fd, write_fd = os.pipe()
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:  # the child: do the work, report, and leave without running the parent's cleanup
            _die_with_parent(parent)
            if engine is not None:
                engine.dispose(close=False)  # the parent's connections stay the parent's
            os.close(self.read_fd)
            code = 0
            try:
                payload = json.dumps(work()).encode()
            except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
                payload, code = json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode(), 1
            with os.fdopen(write_fd, "wb") as fh:
                fh.write(payload)
            os._exit(code)
        children.add(self.pid)
        os.close(write_fd)

    def join(self) -> dict[str, int]:
        try:
            with os.fdopen(self.read_fd, "rb") as fh:
                data = json.loads(fh.read() or b"{}")
            _, status = os.waitpid(self.pid, 0)
        finally:
            children.discard(self.pid)
        if status != 0 or "error" in data:
            raise RuntimeError(f"a render process failed: {data.get('error', status)}")
        return data


def end_children() -> int:
    """Terminate every render child still running (at scheduler shutdown); returns how many were asked."""
    pids = list(children)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            children.discard(pid)
    return len(pids)


def can_fork(engine: Engine) -> bool:
    """Forking pays on a machine with more than one core, where fork exists, and only for a database a
    second process can open (not an in-memory SQLite)."""
    if not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
        return False
    url = engine.url
    return not (url.get_backend_name() == "sqlite" and (not url.database or url.database == ":memory:"))
