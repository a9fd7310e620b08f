"""The code digest: one hash of everything that can change what a cached result holds — every file of the arena
package, its templates and migrations, and the versions of the libraries that compute or render it. Every cache
key (boards, frames, page keys, the site manifest) includes it, so any change to the code, anywhere, moves every key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path

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


__all__ = ["LIBRARIES", "ROOTS", "code_digest", "digest_of"]
