"""The folder layout is the architecture: pure layers import no I/O libraries and never read the wall clock."""

import ast
from pathlib import Path

ARENA = Path(__file__).resolve().parents[2] / "arena"
PURE = ["domain", "scoring"]
FORBIDDEN = {"httpx", "sqlmodel", "sqlalchemy", "jinja2", "apscheduler", "requests", "arena.store",
             "arena.services", "arena.venues"}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_pure_layers_import_no_io_libraries():
    offenders = []
    for layer in PURE:
        for f in (ARENA / layer).rglob("*.py"):
            for name in _imports(f):
                if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN):
                    offenders.append(f"{f.relative_to(ARENA)} imports {name}")
    assert offenders == []


def test_pure_layers_never_read_the_wall_clock():
    offenders = []
    for layer in PURE:
        for f in (ARENA / layer).rglob("*.py"):
            text = f.read_text()
            for call in ("datetime.now(", "datetime.utcnow(", "time.time(", "date.today("):
                if call in text:
                    offenders.append(f"{f.relative_to(ARENA)}: {call}")
    assert offenders == []


def test_every_module_says_what_it_owns():
    missing = [str(f.relative_to(ARENA)) for f in ARENA.rglob("*.py")
               if f.name != "__main__.py" and ast.get_docstring(ast.parse(f.read_text())) is None]
    assert missing == []
