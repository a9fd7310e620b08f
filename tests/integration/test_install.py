"""The project installs like any Python tool: a wheel built from the checkout, installed (not editable) into a fresh
venv, runs `arena demo` and `arena render` from an empty directory, with the migrations, templates and prompts read
from the installed package and every file it writes in that directory, none in site-packages.

Offline: the wheel is built without build isolation (setuptools and wheel come with the test extras) and installed
with --no-deps; the fresh venv finds the dependencies through a .pth line naming this venv's site-packages (a plain
path line: the editable install's own .pth hook there is not run, so `arena` can only come from the wheel)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{argv} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


def test_wheel_installs_and_runs_from_an_empty_directory(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a copy, so setuptools' build/ cache never ships a stale file from an earlier build
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".*", "build", "dist", "site", "*.egg-info", "__pycache__",
                                                              "*.sqlite*", "backups", "tests", "benchmarks"))
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index",
          "--quiet", "--wheel-dir", str(dist)], cwd=tmp_path)
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.startswith("arena_forecast-")  # the distribution name; the command stays `arena`
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names if not n.startswith("arena_forecast-")} == {"arena"}  # no top-level jobs
    for shipped in ("arena/jobs/scheduler.py", "arena/_migrations/env.py", "arena/_migrations/script.py.mako",
                    "arena/_migrations/versions/0001_initial_schema.py", "arena/_templates/base.html",
                    "arena/_templates/prompts/decision_v2.j2", "arena/_templates/prompts/decision_v3.j2"):
        assert shipped in names
    for folder, package in (("templates", "arena/_templates"), ("db/migrations", "arena/_migrations")):
        for f in (ROOT / folder).rglob("*"):  # every page, prompt, asset and migration in the repo ships
            if f.is_file() and "__pycache__" not in f.parts:
                assert f"{package}/{f.relative_to(ROOT / folder).as_posix()}" in names, f"{f} is not in the wheel"

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=tmp_path).stdout.strip())
    (purelib / "arena_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "--quiet",
          str(wheel)], cwd=tmp_path)

    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARENA_DATABASE_URL", "ARENA_DATA_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    arena = str(venv / "bin" / "arena")
    where = _run([str(python), "-c", "import arena, arena.jobs; print(arena.__file__); print(arena.jobs.__file__)"],
                 cwd=work, env=env).stdout.split()
    assert all(Path(p).is_relative_to(purelib) for p in where), where  # the wheel's code, not the checkout's

    demo = _run([arena, "demo", "--cohorts", "1", "--decision-weeks", "1", "--seed", "3"], cwd=work, env=env)
    db = work / "db" / "demo-seed3.sqlite"
    assert f"database: sqlite:///{db}" in demo.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM cohorts").fetchone()[0] == 1
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    render = _run([arena, "render", "--out", "site", "--db", "sqlite:///db/demo-seed3.sqlite"], cwd=work, env=env)
    index = work / "site" / "index.html"
    assert "<html" in index.read_text(encoding="utf-8") and "site" in render.stdout
    assert any((work / "site" / "cohorts").glob("*.html"))
    written = {p for p in purelib.rglob("*") if p.suffix in (".sqlite", ".html") and "_templates" not in p.parts}
    assert not written, f"user data inside the installed tree: {written}"
