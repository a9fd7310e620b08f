"""The site manifest: what a rendered site holds, page by page — the key of the inputs it was built from
(`web.page_keys`) and the hash and size of the bytes written — kept in the site folder as `.arena-site.json`.

A render asks `fresh(path, key)` before building a page (same key and the file still there: leave it) and writes
through `write`, which leaves a file alone when its bytes did not change (so its modification time, and what a
static host or a sync tool sees, moves only with its content). A manifest that is missing, unreadable or written
by other code means nothing is fresh: the next render writes everything, then the manifest again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from arena.cache.housekeeping import SITE_MANIFEST
from arena.cache.code import code_digest

NAME = SITE_MANIFEST
FORMAT = 1


@dataclass
class SiteManifest:
    out: Path
    pages: dict[str, list[Any]] = field(default_factory=dict)  # site path → [input key, sha-256 of bytes, size]
    changes: dict[str, list[Any]] = field(default_factory=dict)  # what this process wrote or checked
    written: int = 0
    unchanged: int = 0

    @classmethod
    def load(cls, out: Path) -> SiteManifest:
        try:
            doc = orjson.loads((out / NAME).read_bytes())
            if doc.get("format") != FORMAT or doc.get("code") != code_digest() or not isinstance(doc.get("pages"), dict):
                return cls(out)
            return cls(out, doc["pages"])
        except (OSError, ValueError, AttributeError):
            return cls(out)

    def fresh(self, path: str, key: str) -> bool:
        """True when `path` was written from inputs with this key and is still there with the bytes written."""
        entry = self.pages.get(path)
        if not entry or entry[0] != key:
            return False
        try:
            st = (self.out / path).lstat()
        except OSError:
            return False
        return not stat.S_ISLNK(st.st_mode) and st.st_size == entry[2]  # a link planted since: rebuilt, replaced

    def write(self, path: str, text: str, key: str = "") -> bool:
        """Write `text` at `path` unless the file already holds exactly it; True when it was written."""
        data = text.encode("utf-8")
        sha = hashlib.sha256(data).hexdigest()
        entry = self.pages.get(path)
        target = self.out / path
        try:
            st = target.lstat()  # the entry itself: a symlink is never written through
            size = -1 if stat.S_ISLNK(st.st_mode) else st.st_size
        except OSError:
            size = -1
        if entry:
            same = entry[1] == sha and size == len(data)
        else:  # nothing recorded (a site written before, or a lost manifest): compare with the bytes there
            same = size == len(data) and target.read_bytes() == data
        if not same:
            replace_file(target, data)
        self.pages[path] = self.changes[path] = [key, sha, len(data)]
        if same:
            self.unchanged += 1
        else:
            self.written += 1
        return not same

    def report(self) -> dict[str, Any]:
        """What a forked child sends back to the parent (`merge`)."""
        return {"_pages": self.changes, "_written": self.written, "_unchanged": self.unchanged}

    def merge(self, reported: dict[str, Any]) -> dict[str, Any]:
        """Take a child's `report` in; returns the rest of what it reported (its page counts)."""
        rest = dict(reported)
        self.pages.update(rest.pop("_pages", {}))
        self.written += int(rest.pop("_written", 0))
        self.unchanged += int(rest.pop("_unchanged", 0))
        return rest

    def save(self) -> None:
        tmp = self.out / (NAME + ".tmp")
        tmp.write_bytes(orjson.dumps({"format": FORMAT, "code": code_digest(), "pages": self.pages}))
        os.replace(tmp, self.out / NAME)


def replace_file(target: Path, data: bytes) -> None:
    """Write `data` at `target` by replacing the entry: a temporary file beside it, renamed over it — so a
    symlink (or hard link) planted at `target` is replaced, never followed, and a reader sees the old or the
    new bytes, never half."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


__all__ = ["NAME", "SiteManifest", "replace_file"]
