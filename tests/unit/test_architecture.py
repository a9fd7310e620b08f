"""The folder layout is the architecture: pure layers import no I/O libraries and never read the wall clock; the
web layer sits at the edge (only the CLI and the jobs import it; it imports no venue or agent) in small modules."""

import ast
from pathlib import Path

ARENA = Path(__file__).resolve().parents[2] / "arena"
PURE = ["domain", "scoring"]
FORBIDDEN = {"httpx", "sqlmodel", "sqlalchemy", "jinja2", "apscheduler", "requests", "arena.store",
             "arena.usecases", "arena.ops", "arena.read", "arena.cache", "arena.venues"}


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


# --- the web layer (issue 11): it only reshapes, it sits at the edge, and its modules stay small -----------------

WEB = ARENA / "web"
WEB_MAX_LINES = 400
ROOT = ARENA.parent


def _imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function, including `importlib.import_module("…")`
    with a literal name (the way an optional module is reached)."""
    names = _imports(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return names


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_web_never_imports_the_venues_or_the_agents():
    offenders = [f"{f.relative_to(ARENA)} imports {name}" for f in WEB.rglob("*.py") for name in _imported_modules(f)
                 if _under(name, "arena.venues") or _under(name, "arena.agents")]
    assert offenders == []


def test_only_the_cli_and_the_jobs_import_the_web():
    allowed = {WEB, ROOT / "jobs"}
    offenders = []
    for f in list(ARENA.rglob("*.py")) + list((ROOT / "jobs").rglob("*.py")):
        if any(f.is_relative_to(a) for a in allowed) or (f.parent == ARENA and f.name.startswith("cli")):
            continue
        offenders += [f"{f.relative_to(ROOT)} imports {name}" for name in _imported_modules(f)
                      if _under(name, "arena.web")]
    assert offenders == []


def test_the_web_checks_see_an_import_made_inside_a_function(tmp_path):
    """The two checks above would pass vacuously if they missed lazy imports: make sure they see one."""
    probe = tmp_path / "probe.py"
    probe.write_text('"""p."""\nimport importlib\n\ndef f():\n    from arena.venues.simulated import X\n'
                     '    importlib.import_module("arena.agents.llm")\n')
    assert {"arena.venues.simulated", "arena.agents.llm"} <= _imported_modules(probe)


def test_no_web_module_is_over_400_lines():
    sizes = {str(f.relative_to(ARENA)): len(f.read_text().splitlines()) for f in WEB.rglob("*.py")}
    assert len(sizes) > 10  # the web layer is split into modules (not one big contexts.py)
    assert {f: n for f, n in sizes.items() if n > WEB_MAX_LINES} == {}


def test_the_store_and_its_read_model_sit_below_the_services():
    offenders = [f"{f.relative_to(ARENA)} imports {name}" for f in (ARENA / "store").rglob("*.py")
                 for name in _imported_modules(f)
                 if any(_under(name, up) for up in ("arena.usecases", "arena.ops", "arena.read", "arena.cache", "arena.web", "arena.agents", "arena.venues",
                                                    "arena.jobs", "arena.cli"))]
    assert offenders == []


def test_every_set_based_frame_is_read_through_the_read_model():
    """The frames (positions, cash, prices, resolutions, bets, forecasts) are defined once, in store/frames.py."""
    from arena.store import frames

    defined_elsewhere = []
    for f in ARENA.rglob("*.py"):
        if f == ARENA / "store" / "frames.py":
            continue
        tree = ast.parse(f.read_text())
        defined_elsewhere += [f"{f.relative_to(ARENA)}: {n.name}" for n in tree.body
                              if isinstance(n, ast.FunctionDef) and n.name in frames.__all__]
    assert defined_elsewhere == []


# --- issue 29: page modules receive what the readers (arena/read) return and issue no SQL ---------------------------

SQL_BUILDERS = {"sqlalchemy": {"select", "text", "func"}, "sqlmodel": {"select"}}
SQL_CALLS = {"execute", "exec_driver_sql", "scalars", "scalar"}  # a connection's or session's ways to run SQL
WEB_SQL_ALLOWED: set[str] = set()  # every web module reads the store through arena/read


def _sql_in_source(source: str) -> list[str]:
    """Where `source` builds or runs SQL: a `select`/`text`/`func` imported from sqlalchemy (or `select` from
    sqlmodel), the same reached through the imported module (`sa.select`), or a call of `.execute(` and its
    kin."""
    found = []
    modules: dict[str, str] = {}  # local name → the SQL library it names
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0]
            bad = SQL_BUILDERS.get(root, set())
            found += [f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names if a.name in bad]
        elif isinstance(node, ast.Import):
            for a in node.names:
                root = a.name.split(".")[0]
                if root in SQL_BUILDERS:
                    modules[a.asname or root] = root
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr in SQL_BUILDERS[modules[node.value.id]]):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
            found.append(f"line {node.lineno}: .{node.func.attr}(")
    return found


def test_web_pages_issue_no_sql():
    offenders = [f"{f.relative_to(ARENA)} {where}" for f in sorted(WEB.rglob("*.py")) if f.name not in WEB_SQL_ALLOWED
                 for where in _sql_in_source(f.read_text())]
    assert offenders == []


def test_the_no_sql_check_catches_a_planted_query():
    """The check above would pass vacuously if it missed SQL: plant each kind of violation and see it caught."""
    planted = {
        "from sqlalchemy import select\n": "from sqlalchemy import select",
        "from sqlalchemy import func as f\n": "from sqlalchemy import func",
        "from sqlalchemy.sql.expression import text\n": "import text",
        "from sqlmodel import Session, select\n": "from sqlmodel import select",
        "import sqlalchemy as sa\nq = sa.select(1)\n": "sa.select",
        "def f(conn, q):\n    return conn.execute(q).all()\n": ".execute(",
        "def f(s, q):\n    return s.scalars(q)\n": ".scalars(",
    }
    for source, expected in planted.items():
        found = _sql_in_source(source)
        assert len(found) == 1 and expected in found[0], (source, found)
    clean = ("from sqlalchemy.engine import Engine\nfrom arena.read.cohorts import cohort_cards\n"
             "def f(engine: Engine, as_of):\n    return cohort_cards(engine, as_of)\n")
    assert _sql_in_source(clean) == []
