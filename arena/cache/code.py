"""The code digest and the one cache key.

The code digest is one hash of everything that can change what a cached result holds — every file of the arena
package, its templates and migrations, and the versions of the libraries that compute or render it. Every cache
key (frames, boards and their parts, page keys) is made by `key`, over the code digest, the kind of result and its
inputs, so any change to the code, anywhere, moves every key; the site manifest records the digest it was written
with.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

PACKAGE = Path(__file__).resolve().parents[1]
# In the repository the templates and migrations sit beside the package; installed, they are inside it.
ROOTS = (PACKAGE, PACKAGE.parent / "templates", PACKAGE.parent / "db" / "migrations")
LIBRARIES = ("numpy", "pandas", "scipy", "pyarrow", "jinja2", "markupsafe", "sqlalchemy", "orjson")
_SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def digest_of(roots: Iterable[Path], libraries: Iterable[str] = LIBRARIES) -> str:
    """SHA-256 hex over each file under `roots` (its path relative to its root's parent, then its bytes, in path
    order) and each library's installed version ("absent" when it is not installed)."""
    h = hashlib.sha256(b"arena code digest 1")
    for root in roots:
        if not root.is_dir():
            continue
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in _SKIPPED_SUFFIXES
                       and "__pycache__" not in p.parts)
        for path in files:
            h.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    for lib in libraries:
        try:
            version = metadata.version(lib)
        except metadata.PackageNotFoundError:
            version = "absent"
        h.update(f"{lib} {version}\0".encode())
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_digest() -> str:
    """This process's code digest (computed once)."""
    return digest_of(ROOTS)


def key(kind: str, *inputs: Any) -> str:
    """The key of a cached result of `kind` computed from `inputs` (JSON-able: ids, versions, options, digests of
    rows): SHA-256 hex over the code digest, the kind and the inputs (mappings with their keys sorted)."""
    return hashlib.sha256(orjson.dumps([code_digest(), kind, *inputs],
                                       option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)).hexdigest()


__all__ = ["LIBRARIES", "ROOTS", "code_digest", "digest_of", "key"]
