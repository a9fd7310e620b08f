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
