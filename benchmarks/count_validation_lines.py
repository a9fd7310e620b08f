"""Count the lines of hand-written validation code in the config and the LLM-reply reader (issue 11, item 3).

Run: ``python benchmarks/count_validation_lines.py [--rev REV]`` — with ``--rev`` the files are read from that git
revision (``git show REV:path``), so ``--rev main`` measures the code before a change and no flag the working tree.

What counts as a line of code: a source line that holds at least one token other than a comment, a blank line,
or a docstring (the string statement opening a module, class or function). A multi-line string literal that is
not a docstring (a message, the example configuration) counts every line it spans.

Two figures per file, both printed:

- **validation**: the code lines of the definitions whose job is checking input (field readers, checks, error
  messages, the reply schema), listed below by name for each shape of the code. A name is a top-level function,
  class or assignment, or ``Class.method`` for one method of a class. Names not found in a file are reported, so
  a stale list shows rather than silently counting less.
- **whole file**: every code line of the file except the documented example configuration (``_EXAMPLE``, data
  rather than code), for a figure that does not depend on choosing names.

The names of the hand-written version (before pydantic) and of the pydantic version are both listed; the script
picks the list whose names the file actually defines.
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# file -> {shape: names of the validation definitions}
VALIDATION: dict[str, dict[str, tuple[str, ...]]] = {
    "arena/config.py": {
        "hand-written": (
            "_Table", "parse_config", "_cohort", "_cron_problem", "_operations", "_schedule", "_leaderboard",
            "_LLM_KEYS", "_agent", "_tools", "_ablation", "_extra_headers", "_json_value", "_extra_body",
            "_check_names", "_ENV_NAME", "_CRON_FIELD", "_AGENT_NAME", "_HEADER_NAME",
        ),
        # the models' field declarations are not counted (the dataclass fields they replace were not either);
        # their validator methods, the field checks and the translation of pydantic's errors are
        "pydantic": (
            "Expect", "_bad", "_not_nan", "_money", "_cron_problem", "_trigger", "_board_rank",
            "_base_url", "_tool_names", "_headers", "_json_value", "_body", "_params", "Number", "USD", "Count",
            "Strings", "Trigger", "_EMPTY", "_ENV_NAME", "_CRON_FIELD", "_URL", "_HEADER_NAME", "UNKNOWN_KEY",
            "_Model", "CohortConfig._bets_fit", "AgentConfig._keys_of_the_kind", "AgentConfig._consistent",
            "ArenaConfig._names", "_TABLES", "_expected", "_place", "_raw", "_config_error", "parse_config",
            "_LLM_KEYS",
        ),
    },
    "arena/agents/parse.py": {
        "hand-written": (
            "_BET_SCHEMA", "_SELL_SCHEMA", "REPLY_SCHEMA", "response_format",
            "_number", "_show", "_text", "_match_outcome", "_choices", "_Checker", "parse_reply", "_THOUSANDS",
        ),
        "pydantic": (
            "_lenient_number", "Number", "Probability", "Fraction", "_Reply", "BetAction", "SellAction",
            "DecisionReply", "_SchemaOfReply", "_plain", "reply_schema", "REPLY_SCHEMA", "response_format",
            "_NUMBERS", "_BOUNDS", "_read_number",
            "_number", "_show", "_text", "_match_outcome", "_choices", "_Checker", "parse_reply", "_THOUSANDS",
        ),
    },
}
EXCLUDED_FROM_WHOLE_FILE = ("_EXAMPLE",)


def source(path: str, rev: str | None) -> str:
    if rev is None:
        return (ROOT / path).read_text(encoding="utf-8")
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def docstring_lines(tree: ast.Module) -> set[int]:
    """Line numbers of every docstring (module, class, function)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return out


def code_lines(text: str) -> set[int]:
    """Line numbers holding code: any token but comments, line ends and indentation, outside docstrings."""
    skip = docstring_lines(ast.parse(text))
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENDMARKER):
            continue
        for n in range(tok.start[0], tok.end[0] + 1):
            if n not in skip:
                lines.add(n)
    return lines


def definitions(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """name -> (first line, last line) of every top-level def/class/assignment and every method (Class.method).
    A definition's span includes its decorators."""
    out: dict[str, tuple[int, int]] = {}

    def span(node: ast.AST) -> tuple[int, int]:
        decorators = [d.lineno for d in getattr(node, "decorator_list", [])]
        first = min([node.lineno, *decorators])  # type: ignore[attr-defined]
        return first, node.end_lineno or node.lineno  # type: ignore[attr-defined]

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = span(node)
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        out[f"{node.name}.{sub.name}"] = span(sub)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out[t.id] = span(node)
    return out


def measure(path: str, rev: str | None) -> dict[str, object]:
    text = source(path, rev)
    tree = ast.parse(text)
    code = code_lines(text)
    defs = definitions(tree)
    shapes = VALIDATION[path]
    shape = max(shapes, key=lambda s: sum(n in defs for n in shapes[s]))
    names = shapes[shape]
    counted: set[int] = set()
    per_name: dict[str, int] = {}
    missing = [n for n in names if n not in defs]
    for n in names:
        if n in defs:
            lo, hi = defs[n]
            mine = {i for i in code if lo <= i <= hi}
            per_name[n] = len(mine)
            counted |= mine
    excluded: set[int] = set()
    for n in EXCLUDED_FROM_WHOLE_FILE:
        if n in defs:
            lo, hi = defs[n]
            excluded |= set(range(lo, hi + 1))
    return {"shape": shape, "validation": len(counted), "whole": len(code - excluded),
            "raw_lines": len(text.splitlines()), "per_name": per_name, "missing": missing}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", help="a git revision to read the files from (default: the working tree)")
    ap.add_argument("--names", action="store_true", help="also print the code lines of each counted name")
    args = ap.parse_args(argv)
    where = args.rev or "working tree"
    total_v = total_w = 0
    print(f"hand-written validation, lines of code (no blanks, comments, docstrings) — {where}")
    for path in VALIDATION:
        m = measure(path, args.rev)
        total_v += m["validation"]  # type: ignore[operator]
        total_w += m["whole"]  # type: ignore[operator]
        print(f"  {path:26} validation {m['validation']:4}   whole file {m['whole']:4}   "
              f"({m['raw_lines']} lines in all; names of the {m['shape']} version)")
        if m["missing"]:
            print(f"    names not found: {', '.join(m['missing'])}")  # type: ignore[arg-type]
        if args.names:
            for n, c in m["per_name"].items():  # type: ignore[attr-defined]
                print(f"      {n:40} {c:4}")
    print(f"  {'total':26} validation {total_v:4}   whole file {total_w:4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
