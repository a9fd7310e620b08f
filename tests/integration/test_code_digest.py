"""One code digest keys every cache: a change anywhere in the package (not only in `arena/scoring`) or in the
templates moves it, and a fresh process running changed code never serves a board cached by the old code — the
stale-board case of issue 29, replayed with a changed `config.track_of`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from three_cohorts import simulate_three_cohorts

from arena.cache import board_cache, code, frame_cache
from arena.cache.code import ROOTS, code_digest, digest_of, key
from arena.web import page_keys

REPO = Path(__file__).resolve().parents[2]


def _copy(tmp_path: Path) -> Path:
    """The package, its templates and migrations, copied as a repository would lay them out."""
    root = tmp_path / "code"
    for name in ("arena", "templates", "db"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.sqlite*"))
    return root


def _roots(root: Path) -> tuple[Path, ...]:
    return tuple(root / r.relative_to(REPO) for r in ROOTS)


def test_every_cache_key_is_made_over_the_one_digest(monkeypatch):
    """Frames, boards, board parts and pages are keyed by `cache.code.key`: a new code digest moves each."""
    assert digest_of(ROOTS) == code_digest()
    frames = pd.DataFrame({"cohort": ["c1"], "agent": ["a"], "x": [0.5]})
    made = lambda: (frame_cache._key(1, 2, "latest"),  # noqa: E731
                    board_cache.cohort_keys(frames, frames, frames, kinds={"a": "model"}, options={"n_boot": 1}),
                    board_cache.input_keys({"c1": "rows"}, {"c1": ["a"]}, kinds={}, options={}),
                    page_keys.model_year_key("m", 2026, ["k"], [2026]))
    assert frame_cache._key(1, 2, "latest") == key("frames", 1, 2, "latest")
    before = made()
    monkeypatch.setattr(code, "code_digest", lambda: "another release")
    after = made()
    assert all(a != b for a, b in zip(before, after))


@pytest.mark.parametrize("changed", ["arena/config.py", "arena/read/standings.py", "arena/scoring/brier.py",
                                     "templates/base.html", "db/migrations/env.py"])
def test_a_change_anywhere_in_the_code_moves_the_digest(tmp_path, changed):
    root = _copy(tmp_path)
    before = digest_of(_roots(root))
    with (root / changed).open("a") as fh:
        fh.write("\n")
    assert digest_of(_roots(root)) != before


def test_a_library_upgrade_moves_the_digest(tmp_path):
    root = _copy(tmp_path)
    assert digest_of(_roots(root), ["numpy"]) != digest_of(_roots(root), ["numpy", "not-a-real-library-xyz"])


def _board(root: Path, db_url: str, tmp_path: Path) -> tuple[list[dict], list[dict]]:
    """The model track's cohort rows and overall rows, as `arena leaderboard` prints them in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(root), "ARENA_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run([sys.executable, "-m", "arena", "leaderboard", "--db", db_url, "--track", "model",
                          "--format", "json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    return [row for cohort in doc["cohorts"] for row in cohort["rows"]], doc["overall"]


@pytest.mark.slow
def test_a_fresh_process_with_a_changed_rule_outside_scoring_serves_no_stale_board(engine, db_url, tmp_path):
    simulate_three_cohorts(engine)
    root = _copy(tmp_path)
    rows, overall = _board(root, db_url, tmp_path)  # fills the board caches
    assert rows and overall, "the model track holds the scripted seats"
    config = root / "arena" / "config.py"
    text = config.read_text()
    assert 'return "agent" if frozen.get("tools") else "model"' in text
    config.write_text(text.replace('return "agent" if frozen.get("tools") else "model"', 'return "agent"'))
    rows, overall = _board(root, db_url, tmp_path)  # every seat is now in the agent track
    assert (rows, overall) == ([], [])


def test_cache_stats_and_clear_through_the_cli(engine, db_url, tmp_path, capsys):
    from arena.cli import main
    from arena.read.standings import standings
    from three_cohorts import LATER

    simulate_three_cohorts(engine)
    computed = standings(engine, LATER, n_boot=40, cache=False)
    standings(engine, LATER, n_boot=40)  # fills the memo tables
    site = tmp_path / "site"
    site.mkdir()
    (site / ".arena-site.json").write_text('{"format": 1, "code": "x", "pages": {"index.html": {}}}')
    assert main(["cache", "stats", "--db", db_url, "--site", str(site)]) == 0
    out = capsys.readouterr().out
    assert "memo board: 0 entries" not in out and "memo frames: 0 entries" not in out
    assert ".arena-site.json: 1 entry" in out
    assert main(["cache", "clear", "--db", db_url, "--site", str(site)]) == 0
    capsys.readouterr()
    assert not (site / ".arena-site.json").exists()
    assert main(["cache", "stats", "--db", db_url]) == 0
    out = capsys.readouterr().out
    assert all(f"memo {kind}: 0 entries" in out for kind in ("frames", "board", "cohort part", "overall part", "model pairs"))
    again = standings(engine, LATER, n_boot=40)  # recomputed from the facts: the same boards
    for x, y in zip(computed.cohorts, again.cohorts):
        assert x.rows.equals(y.rows)
