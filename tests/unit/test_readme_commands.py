"""The README's shell blocks as a first hour reads them: one way to name the command, said how to get, and an
offline walk-through whose `replay run` gets a database of its own (the step-by-step block fills the first one,
and `replay run` refuses a database that holds an arena)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def shell_blocks() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    return [[ln.split(" #")[0].strip() for ln in block.splitlines() if ln.strip()]
            for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def arena_lines() -> list[str]:
    return [ln for block in shell_blocks() for ln in block
            if re.search(r"(^|\s|/)arena\s", ln) and not ln.startswith(("make", "pip", "cd ", "cp "))]


def test_every_command_is_named_the_same_way_and_the_readme_says_how_to_get_it():
    lines = arena_lines()
    assert len(lines) >= 8
    assert [ln for ln in lines if ".venv/bin/arena" in ln] == []  # one name: `arena`, never the path in a block
    text = README.read_text(encoding="utf-8")
    assert "source .venv/bin/activate" in text and 'export PATH="$PWD/.venv/bin:$PATH"' in text


def test_the_replay_run_gets_a_database_the_step_by_step_block_did_not_fill():
    variables: dict[str, str] = {}
    used_by: dict[str, set[str]] = {}
    for block in shell_blocks():
        for line in block:
            for assignment in re.findall(r"(\w+)=(\S+)", line.split(" arena ")[0] if "arena" in line else line):
                name, value = assignment
                variables[name] = value.rstrip(";")
            words = shlex.split(line.replace("$", "\\$")) if line.startswith("arena") else []
            if words and "--db" in words:
                db = words[words.index("--db") + 1].lstrip("\\").lstrip("$")
                url = variables.get(db, db)
                command = " ".join(words[1:3]) if words[1] in ("replay", "jobs", "cohort") else words[1]
                used_by.setdefault(url, set()).add(command)
    replay_dbs = [url for url, commands in used_by.items() if "replay run" in commands]
    assert replay_dbs, used_by
    for url in replay_dbs:  # the database replay run writes is filled by no other step of the walk-through
        # (a fork and a comparison only read it)
        assert used_by[url] <= {"replay run", "leaderboard", "render", "replay fork", "compare"}, (url, used_by[url])
    filled = [url for url, commands in used_by.items() if "sync" in commands]
    assert filled and not set(filled) & set(replay_dbs)
