"""A table of bad inputs run through `arena.cli.main([...])`: each gets ONE line on stderr naming the problem
(and the fix), the right exit code (2: the input was wrong, 1: the world failed), no traceback, and writes no
database, directory or file.

Arguments may use {tmp} (the test's directory, also the working directory), {db} (a SQLite URL there that
does not exist), {live} (a migrated SQLite database, copied in only for the cases that need one) and {busy} (a
port held open by the test). Files named in the case are written into {tmp} first.
"""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from arena.cli import main
from arena.store.engine import open_store

REPLAY_LINE = json.dumps({"platform": "manifold", "market_id": "abc", "question": "Will it?", "resolution": 1,
                          "first_resolved_observation_date": "2025-01-10",
                          "history": [["2025-01-01", 0.25], ["2025-01-05", 0.5]], "history_source": "RF"}) + "\n"
DEEP = "[" * 100_000 + "]" * 100_000 + "\n"
DEEP_OBJECT = '{"forecaster": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
NOT_UTF8 = b"\xff\xfe\x00\x81 not text\n"
CSV_OK_HEADER = "forecaster,question,probability,outcome\n"
UNREACHABLE_PG = "postgresql://postgres@127.0.0.1:1/arena"


def case(id_: str, argv: str | list[str], message: str, code: int = 2, files: dict | None = None,
         live: bool = False, env: dict | None = None):  # type: ignore[no-untyped-def]
    args = argv.split() if isinstance(argv, str) else argv
    return pytest.param(args, message, code, files or {}, live, env or {}, id=id_)


def config(text: str) -> dict:
    return {"arena-test.toml": text}


CASES = [
    # -- the database URL ------------------------------------------------------------------------------------------
    case("db-not-a-url", "leaderboard --db notaurl", "is not a database URL"),
    case("db-garbage-scheme", "migrate --db ://nothing", "is not a database URL"),
    case("db-unknown-driver", "leaderboard --db foo://x/y", "unknown database driver 'foo'"),
    case("db-unknown-pg-driver", "migrate --db postgresql+nodriver://u@h/db", "unknown database driver"),
    case("db-driver-not-installed", "migrate --db mysql://u@h/db", "driver for 'mysql' is not installed"),
    case("db-unreachable-migrate", f"migrate --db {UNREACHABLE_PG}", "cannot open the database", 1),
    case("db-unreachable-round", f"round --db {UNREACHABLE_PG}", "Connection refused", 1),
    case("db-unreachable-cohort", f"cohort start --db {UNREACHABLE_PG}", "cannot open the database", 1),
    case("db-password-hidden", "migrate --db postgresql://postgres:hunter2@127.0.0.1:1/arena",
         "postgres:***@127.0.0.1", 1),
    case("db-not-a-database-file", "migrate --db sqlite:///{tmp}/junk.sqlite", "cannot open the database", 1,
         files={"junk.sqlite": "this is not a database, it is text\n" * 200}),
    case("db-under-a-file", "migrate --db sqlite:///{tmp}/plain.txt/arena.sqlite", "plain.txt", 1,
         files={"plain.txt": "x"}),
    case("db-bad-url-in-sync", "sync --venue replay --file {tmp}/r.jsonl --db notaurl", "not a database URL",
         files={"r.jsonl": REPLAY_LINE}),
    # -- read-only commands never create a database ----------------------------------------------------------------
    case("ro-leaderboard", "leaderboard --db {db}", "no database at", 1),
    case("ro-leaderboard-env", "leaderboard", "no database at", 1),
    case("ro-export-csv", "export --out {tmp}/csv --db {db}", "no database at", 1),
    case("ro-export-replay", "export replay --out {tmp}/r.jsonl --db {db}", "no database at", 1),
    case("ro-render", "render --out {tmp}/site --db {db}", "no database at", 1),
    case("ro-serve", "serve --db {db}", "no database at", 1),
    case("ro-jobs-list", "jobs list --db {db}", "no database at", 1),
    case("ro-missing-directory", "leaderboard --db sqlite:///{tmp}/no/such/dir/a.sqlite", "no database at", 1),
    # -- serve -------------------------------------------------------------------------------------------------------
    case("serve-port-in-use", "serve --db {live} --port {busy}", "is already in use", 1, live=True),
    case("serve-port-range", "serve --db {live} --port 70000", "port from 0 to 65535", live=True),
    case("serve-port-text", "serve --port http", "'http' is not a whole number"),
    case("serve-port-negative", "serve --port -1", "port from 0 to 65535"),
    # -- dates -----------------------------------------------------------------------------------------------------
    case("at-notadate", "sync --venue replay --file {tmp}/r.jsonl --at notadate", "'notadate' is not a date"),
    case("at-bad-month", "sync --venue replay --file {tmp}/r.jsonl --at 2026-13-01", "'2026-13-01' is not a date"),
    case("at-empty", ["sync", "--venue", "replay", "--at", ""], "is not a date or time"),
    case("at-five-digit-year", "sync --venue replay --at 20266-01-01", "is not a date"),
    case("at-long-ago", "sync --venue replay --at 1900-01-01", "outside 2000-2100"),
    case("as-of-words", "render --out {tmp}/site --as-of yesterday", "'yesterday' is not a date"),
    case("as-of-feb-30", "render --out {tmp}/site --as-of 2026-02-30", "'2026-02-30' is not a date"),
    case("demo-start-notadate", "demo --start soon", "'soon' is not a date"),
    case("demo-start-time", "demo --start 2026-01-04T10:00", "is not a date"),
    case("demo-start-monday", "demo --start 2026-01-05 --db {db}", "--start must be a Sunday"),
    # -- counts ----------------------------------------------------------------------------------------------------
    case("demo-cohorts-0", "demo --cohorts 0", "--cohorts: must be at least 1"),
    case("demo-cohorts-negative", "demo --cohorts -2", "--cohorts: must be at least 1"),
    case("demo-cohorts-text", "demo --cohorts many", "'many' is not a whole number"),
    case("demo-cohorts-float", "demo --cohorts 1.5", "'1.5' is not a whole number"),
    case("demo-weeks-0", "demo --decision-weeks 0", "--decision-weeks: must be at least 1"),
    case("demo-weeks-negative", "demo --decision-weeks -3", "--decision-weeks: must be at least 1"),
    case("demo-markets-0", "demo --markets-per-week 0", "--markets-per-week: must be at least 1"),
    case("demo-forecast-k-0", "demo --forecast-k 0", "--forecast-k: must be at least 1"),
    case("demo-days-negative", "demo --days -1", "--days: must be 0 or more"),
    case("demo-seed-text", "demo --seed lucky", "invalid int value"),
    case("sync-top-0", "sync --venue replay --top 0", "--top: must be at least 1"),
    case("sync-horizon-negative", "sync --venue replay --horizon-days -5", "--horizon-days: must be at least 1"),
    case("score-bootstrap-negative", "score {tmp}/f.csv --bootstrap -1", "--bootstrap: must be 0 or more"),
    # -- usage -----------------------------------------------------------------------------------------------------
    case("no-command", [], "the following arguments are required: command"),
    case("unknown-command", "frobnicate", "invalid choice: 'frobnicate'"),
    case("unknown-flag", "leaderboard --bogus", "unrecognized arguments: --bogus"),
    case("leaderboard-unknown-track", "leaderboard --track robot", "invalid choice: 'robot'"),
    case("sync-no-venue", "sync", "the following arguments are required: --venue"),
    case("sync-unknown-venue", "sync --venue nasdaq", "invalid choice: 'nasdaq'"),
    case("sync-replay-no-file", "sync --venue replay --db {db}", "needs the replay file"),
    case("jobs-no-action", "jobs", "the following arguments are required: action"),
    case("jobs-run-no-name", "jobs run --db {db}", "needs a job name"),
    case("jobs-run-unknown", "jobs run lunch --db {db}", "unknown job 'lunch'"),
    case("jobs-run-render-no-site", "jobs run render --db {db}", "has no site to render"),
    case("jobs-list-with-name", "jobs list mark --db {db}", "takes no job name"),
    case("jobs-replay-no-file", "jobs run sync --venue replay --db {db}", "--venue replay needs the replay file"),
    case("scheduler-replay-no-file", "scheduler --venue replay --db {db}", "--venue replay needs the replay file"),
    case("export-bad-kind", "export pdf --out x", "invalid choice: 'pdf'"),
    # -- replay files ----------------------------------------------------------------------------------------------
    case("replay-missing", "sync --venue replay --file {tmp}/nope.jsonl --db {db}", "no replay file at"),
    case("replay-not-utf8", "sync --venue replay --file {tmp}/r.jsonl --db {db}", "is not UTF-8 text",
         files={"r.jsonl": NOT_UTF8}),
    case("replay-is-csv", "sync --venue replay --file {tmp}/r.csv --db {db}", "is not a replay file",
         files={"r.csv": CSV_OK_HEADER + "a,q,0.5,1\n"}),
    case("replay-empty", "sync --venue replay --file {tmp}/r.jsonl --db {db}", "holds no market records",
         files={"r.jsonl": "\n\n"}),
    case("replay-deep-json", "sync --venue replay --file {tmp}/r.jsonl --db {db}", "nested too deeply",
         files={"r.jsonl": DEEP}),
    case("replay-other-json", "sync --venue replay --file {tmp}/r.jsonl --db {db}", "is not a replay file",
         files={"r.jsonl": '{"hello": "world"}\n[1, 2, 3]\n'}),
    case("replay-directory", "sync --venue replay --file {tmp}/dir --db {db}", "is a directory",
         files={"dir/keep": "x"}),
    case("demo-replay-missing", "demo --replay {tmp}/nope.jsonl --db {db}", "no replay file at"),
    case("demo-replay-csv", "demo --replay {tmp}/r.csv --db {db}", "is not a replay file",
         files={"r.csv": CSV_OK_HEADER + "a,q,0.5,1\n"}),
    case("demo-replay-not-utf8", "demo --replay {tmp}/r.jsonl --db {db}", "is not UTF-8 text",
         files={"r.jsonl": NOT_UTF8}),
    # -- configuration files ---------------------------------------------------------------------------------------
    case("config-cron-99", "jobs list --config {tmp}/arena-test.toml --db {db}", "not a valid crontab",
         files=config('[schedule]\nmark = "99 99 * * *"\n')),
    case("config-cron-scheduler", "scheduler --config {tmp}/arena-test.toml --db {db}", "[schedule] settle",
         files=config('[schedule]\nsettle = "0 25 * * *"\n')),
    case("config-cron-step-0", "cohort start --config {tmp}/arena-test.toml --db {db}", "not a valid crontab",
         files=config('[schedule]\nsync = "*/0 * * * *"\n')),
    case("config-cron-words", "round --config {tmp}/arena-test.toml --db {db}", "5-field crontab",
         files=config('[schedule]\nmark = "every day"\n')),
    case("config-huge-cash", "cohort start --config {tmp}/arena-test.toml --db {db}", "starting_cash",
         files=config("[cohort]\nstarting_cash = 1e30\n")),
    case("config-negative-cash", "cohort start --config {tmp}/arena-test.toml --db {db}", "must not be negative",
         files=config("[cohort]\nstarting_cash = -5\n")),
    case("config-unknown-key", "round --config {tmp}/arena-test.toml --db {db}", "[cohort] decision_wekes",
         files=config("[cohort]\ndecision_wekes = 3\n")),
    case("config-wrong-type", "round --config {tmp}/arena-test.toml --db {db}", "decision_weeks: must be an integer",
         files=config('[cohort]\ndecision_weeks = "five"\n')),
    case("config-zero-weeks", "round --config {tmp}/arena-test.toml --db {db}", "decision_weeks: must be an integer",
         files=config("[cohort]\ndecision_weeks = 0\n")),
    # -- the forecast set's band and per-event cap (issue 26 item 5) --------------------------------------------------
    case("config-band-inverted", "cohort start --config {tmp}/arena-test.toml --db {db}",
         "forecast_band: the forecast band is inverted", files=config("[cohort]\nforecast_band = [0.95, 0.05]\n")),
    case("config-band-outside", "replay run --config {tmp}/arena-test.toml --db {db} --from 2025-11-02 "
         "--until 2025-11-09 {tmp}/r.jsonl", "forecast_band: the forecast band must lie inside (0, 1)",
         files={**config("[cohort]\nforecast_band = [0.05, 1.0]\n"), "r.jsonl": REPLAY_LINE}),
    case("config-band-one-number", "round --config {tmp}/arena-test.toml --db {db}",
         "forecast_band: must be two numbers [lo, hi]", files=config("[cohort]\nforecast_band = [0.05]\n")),
    case("config-negative-event-cap", "replay run --config {tmp}/arena-test.toml --db {db} --from 2025-11-02 "
         "--until 2025-11-09 {tmp}/r.jsonl", "forecast_max_per_event: must be an integer ≥ 0 and ≤ 1000, got -1",
         files={**config("[cohort]\nforecast_max_per_event = -1\n"), "r.jsonl": REPLAY_LINE}),
    # -- the contamination guard's dates (issue 30 item 1) -------------------------------------------------------------
    case("config-cutoff-in-future", "replay run --config {tmp}/arena-test.toml --db {db} --from 2025-11-02 "
         "--until 2025-11-09 {tmp}/r.jsonl", "agents[0] (a) knowledge_cutoff: 2999-01-01 is in the future",
         files={**config('[[agents]]\nname = "a"\nmodel = "m"\nknowledge_cutoff = 2999-01-01\n'),
                "r.jsonl": REPLAY_LINE}),
    case("config-released-in-future", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (a) released: 2999-01-01 is in the future",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nreleased = 2999-01-01\n')),
    case("config-released-before-cutoff", "cohort start --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (a) released: 2024-01-01 is before knowledge_cutoff 2024-06-30",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nknowledge_cutoff = 2024-06-30\n'
                      'released = 2024-01-01\n')),
    case("config-cutoff-with-a-time", "round --config {tmp}/arena-test.toml --db {db}",
         "knowledge_cutoff: must be a date like 2025-06-30",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nknowledge_cutoff = 2024-06-30T12:00:00Z\n')),
    case("config-cutoff-not-a-date", "round --config {tmp}/arena-test.toml --db {db}",
         "knowledge_cutoff: must be a date like 2025-06-30",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nknowledge_cutoff = "June 2024"\n')),
    # (api_key_env PATH: a variable every environment sets, so the key check passes and the guard's is reached)
    case("replay-window-all-contaminated", "replay run --config {tmp}/arena-test.toml --db {db} --from 2025-01-02 "
         "--until 2025-01-09 {tmp}/r.jsonl", "so it would have no clean question",
         files={**config('[[agents]]\nname = "a"\nmodel = "m"\napi_key_env = "PATH"\n'
                         'knowledge_cutoff = 2025-06-30\n'), "r.jsonl": REPLAY_LINE}),
    case("config-cutoff-on-baseline", "round --config {tmp}/arena-test.toml --db {db}",
         "knowledge_cutoff: applies only to kind = \"llm\"",
         files=config('[[agents]]\nname = "r"\nkind = "random"\nknowledge_cutoff = 2024-06-30\n')),
    case("config-missing", "round --config {tmp}/nope.toml --db {db}", "no such configuration file"),
    case("config-not-toml", "round --config {tmp}/arena-test.toml --db {db}", "not valid TOML",
         files=config("[cohort\nx = \n")),
    case("config-not-utf8", "round --config {tmp}/arena-test.toml --db {db}", "cannot read the configuration",
         files={"arena-test.toml": NOT_UTF8}),
    case("config-api-key", "round --config {tmp}/arena-test.toml --db {db}", "keys never go in the configuration",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\napi_key = "sk-123"\n')),
    case("config-auth-header", "round --config {tmp}/arena-test.toml --db {db}", "cannot be overridden",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nextra_headers = { Authorization = "Bearer x" }\n')),
    case("config-reasoning-effort", "round --config {tmp}/arena-test.toml --db {db}", "reasoning_effort",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nreasoning_effort = "extreme"\n')),
    case("config-tiny-reply-limit", "round --config {tmp}/arena-test.toml --db {db}", "max_reply_bytes",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nmax_reply_bytes = 1\n')),
    case("config-unknown-tool", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (a) tools: unknown tool 'crystal_ball'",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\ntools = ["price_history", "crystal_ball"]\n')),
    case("config-tools-not-a-list", "cohort start --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (a) tools: must be a list of strings",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\ntools = "price_history"\n')),
    case("config-track-disagrees", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (a) track: 'agent' disagrees with the tools",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\ntrack = "agent"\n')),
    case("config-unknown-track", "round --config {tmp}/arena-test.toml --db {db}", "track: must be one of",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\ntrack = "robot"\n')),
    case("config-web-search-no-url", "round --config {tmp}/arena-test.toml --db {db}", "web_search_url: must be",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\ntools = ["web_search"]\n'
                      'web_search_key_env = "SEARCH_KEY"\n')),
    case("config-web-search-url-without-tool", "round --config {tmp}/arena-test.toml --db {db}",
         "web_search_url: applies only when tools include 'web_search'",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nweb_search_url = "https://search.example/s"\n')),
    case("config-tool-rounds-0", "round --config {tmp}/arena-test.toml --db {db}", "max_tool_rounds",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\ntools = ["order_book"]\nmax_tool_rounds = 0\n')),
    case("config-tools-on-baseline", "round --config {tmp}/arena-test.toml --db {db}",
         "tools: applies only to kind = \"llm\"",
         files=config('[[agents]]\nname = "r"\nkind = "random"\ntools = ["order_book"]\n')),
    case("config-deeply-nested", "round --config {tmp}/arena-test.toml --db {db}", "nested too deeply",
         files=config("x = " + "[" * 100_000 + "]" * 100_000 + "\n")),
    case("config-unknown-job", "jobs list --config {tmp}/arena-test.toml --db {db}", "unknown job",
         files=config('[schedule]\nlunch = "0 12 * * *"\n')),
    case("demo-llm-no-agents", "demo --llm --config {tmp}/arena-test.toml --db {db}", "has no LLM agents",
         files=config("baselines = true\n")),
    case("demo-llm-no-key", "demo --llm --config {tmp}/arena-test.toml --db {db}", "a needs ARENA_TEST_NO_KEY",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\napi_key_env = "ARENA_TEST_NO_KEY"\n')),
    # -- forecast files (`arena score`) -----------------------------------------------------------------------------
    case("score-missing", "score {tmp}/nope.csv", "cannot read"),
    case("score-not-utf8", "score {tmp}/f.csv", "cannot read", files={"f.csv": NOT_UTF8}),
    case("score-empty", "score {tmp}/f.csv", "empty", files={"f.csv": ""}),
    case("score-deep-jsonl", "score {tmp}/f.jsonl", "nested too deeply", files={"f.jsonl": DEEP_OBJECT}),
    case("score-deep-json-array", "score {tmp}/f.json", "nested too deeply", files={"f.json": DEEP}),
    case("score-columns-differ-in-case", "score {tmp}/f.csv", "'outcome' and 'Outcome' are the same column",
         files={"f.csv": "forecaster,question,probability,outcome,Outcome\na,q,0.5,1,0\n"}),
    case("score-columns-repeated", "score {tmp}/f.csv", "are the same column",
         files={"f.csv": "forecaster,question,probability,probability\na,q,0.5,0.6\n"}),
    case("score-json-keys-differ-in-case", "score {tmp}/f.jsonl", "are the same column",
         files={"f.jsonl": '{"forecaster": "a", "Forecaster": "b", "question": "q", "probability": 0.5}\n'}),
    case("score-extra-field", "score {tmp}/f.csv", "line 3: 5 fields but the header names 4 columns",
         files={"f.csv": CSV_OK_HEADER + "a,q1,0.5,1\nb,q1,0.5,1,extra\n"}),
    case("score-extra-field-first-row", "score {tmp}/f.csv", "line 2: 5 fields",
         files={"f.csv": CSV_OK_HEADER + "alice,q1,0.5,1,1\n"}),
    case("score-two-outcomes", "score {tmp}/f.csv", "question 'q1' has two different outcomes, line 2 (1) and line 3",
         files={"f.csv": CSV_OK_HEADER + "a,q1,0.5,1\nb,q1,0.5,0\n"}),
    case("score-outcome-maybe", "score {tmp}/f.csv", "line 2: outcome 'maybe'",
         files={"f.csv": CSV_OK_HEADER + "a,q1,0.5,maybe\n"}),
    case("score-outcome-2", "score {tmp}/f.csv", "line 3: outcome '2'",
         files={"f.csv": CSV_OK_HEADER + "a,q1,0.5,TRUE\na,q2,0.5,2\n"}),
    case("score-outcome-jsonl", "score {tmp}/f.jsonl", "line 2: outcome 'perhaps'",
         files={"f.jsonl": '{"forecaster": "a", "question": "q", "probability": 0.5, "outcome": "yes"}\n'
                           '{"forecaster": "b", "question": "q", "probability": 0.5, "outcome": "perhaps"}\n'}),
    case("score-missing-column", "score {tmp}/f.csv", "lacks required column(s) probability",
         files={"f.csv": "forecaster,question\na,q\n"}),
    case("score-jsonl-not-object", "score {tmp}/f.jsonl", "line 1 is not a JSON object",
         files={"f.jsonl": "[1, 2]\n"}),
    case("score-out-missing-dir", "score {tmp}/f.csv --out {tmp}/no/dir/s.csv", "cannot write", 1,
         files={"f.csv": CSV_OK_HEADER + "a,q1,0.5,1\n"}),
    # replicates and ablations (issue 13): the key path and the fix in one line
    case("config-variant-of-nobody", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (b) variant_of: 'nobody' names no agent of the lineup; name another agent",
         files=config('[[agents]]\nname = "b"\nmodel = "m"\nvariant_of = "nobody"\nfactor = "model"\n')),
    case("config-variant-of-itself", "round --config {tmp}/arena-test.toml --db {db}", "variant_of: 'b' names itself",
         files=config('[[agents]]\nname = "b"\nmodel = "m"\nvariant_of = "b"\nfactor = "model"\n')),
    case("config-replicates-zero", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (a) replicates: must be an integer ≥ 1 and ≤ 20, got 0",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nreplicates = 0\n')),
    case("config-replicates-not-integer", "cohort start --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (random) replicates: must be an integer ≥ 1 and ≤ 20, got 2.5",
         files=config('[[agents]]\nname = "random"\nkind = "random"\nreplicates = 2.5\n')),
    case("config-unknown-factor", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (b) factor: must be one of 'prompt version', 'temperature', 'model', 'tools'",
         files=config('[[agents]]\nname = "b"\nmodel = "m"\nvariant_of = "random"\nfactor = "colour"\n')),
    case("config-variant-without-factor", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (b) factor: is required with variant_of",
         files=config('[[agents]]\nname = "b"\nmodel = "m"\nvariant_of = "random"\n')),
    case("compare-unknown-agent", "compare random nobody --db {live}", "unknown agent 'random' — name a seat",
         live=True),
    case("compare-unknown-cohort", "compare random kelly --db {live} --cohort cohort-1999-01-03",
         "unknown cohort 'cohort-1999-01-03' — choose from", live=True),
    case("compare-bad-format", "compare a b --db {live} --format csv", "unknown --format 'csv' — choose from text, json",
         live=True),
    case("compare-no-database", "compare a b --db {db}", "no database at", 1),
    # issue 27 item 3: values the validator used to accept and that then broke every later job
    case("config-weeks-int64", "cohort start --config {tmp}/arena-test.toml --db {db}",
         "[cohort] decision_weeks: must be an integer ≥ 1 and ≤ 104, got 9223372036854775807 — correct it",
         files=config("[cohort]\ndecision_weeks = 9223372036854775807\n")),
    case("config-retry-window-huge", "round --config {tmp}/arena-test.toml --db {db}",
         "[operations] retry_window_hours: must be an integer ≥ 0 and ≤ 168",
         files=config("[operations]\nretry_window_hours = 99999999999999\n")),
    case("config-sync-weeks-huge", "jobs list --config {tmp}/arena-test.toml --db {db}",
         "[schedule] sync: an interval must be at most 366 days",
         files=config("[schedule]\nsync = { weeks = 99999999999 }\n")),
    case("config-timeout-inf", "round --config {tmp}/arena-test.toml --db {db}",
         "agents[0] (a) timeout_s: must be a number > 0.0 and ≤ 3600.0, got inf",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\ntimeout_s = inf\n')),
    case("config-price-inf", "round --config {tmp}/arena-test.toml --db {db}", "price_per_million_input",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nprice_per_million_input = inf\n'
                      'price_per_million_output = 1.0\n')),
    case("config-max-tokens-huge", "round --config {tmp}/arena-test.toml --db {db}", "max_tokens: must be an integer",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nmax_tokens = 9223372036854775807\n')),
    case("config-param-seed-huge", "round --config {tmp}/arena-test.toml --db {db}",
         "params.seed: must be a number ≥ 0 and ≤ 4294967295",
         files=config('[[agents]]\nname = "r"\nkind = "random"\nparams = { seed = 99999999999999999 }\n')),
    case("config-horizon-huge", "cohort start --config {tmp}/arena-test.toml --db {db}", "horizon_days",
         files=config("[cohort]\nhorizon_days = 9223372036854775807\n")),
    # issue 27 item 7: read commands never create, migrate or upgrade; no command trips over a schema it
    # does not know; compaction does not create the database it is asked to thin
    case("ro-empty-file", "leaderboard --db sqlite:///{tmp}/empty.sqlite", "is not an arena database", 2,
         files={"empty.sqlite": b""}),
    case("ro-other-application", "leaderboard --db sqlite:///{tmp}/notes.sqlite", "is not an arena database", 2,
         files={"notes.sqlite": "OTHER_APP"}),
    case("ro-other-application-render", "render --out {tmp}/site --db sqlite:///{tmp}/notes.sqlite",
         "is not an arena database", 2, files={"notes.sqlite": "OTHER_APP"}),
    case("ro-older-schema", "leaderboard --db {old}", "older than this version's", 2, live=True),
    case("ro-older-schema-export", "export csv --out {tmp}/x --db {old}", "run `arena migrate", 2, live=True),
    case("ro-future-schema", "leaderboard --db {future}", "which this version of the arena does not know", 2,
         live=True),
    case("rw-future-schema", "migrate --db {future}", "a newer arena wrote it — use that newer arena", 2, live=True),
    case("rw-future-schema-round", "round --db {future}", "does not know", 2, live=True),
    case("compact-missing", "compact --db {db}", "no database at", 1),
    # issue 27 item 8: nothing written where it should not be
    case("render-out-empty", ["render", "--out", "", "--db", "{live}"], "--out: is empty", 2, live=True),
    case("export-out-empty", ["export", "csv", "--out", " ", "--db", "{live}"], "--out: is empty", 2, live=True),
    case("scheduler-site-empty", ["scheduler", "--site", "", "--db", "{db}"], "--site: is empty", 2),
    case("export-unknown-cohort", "export csv --out {tmp}/x --cohort nope --db {live}",
         "unknown cohort 'nope' — choose from none yet, or leave --cohort out", 2, live=True),
    # issue 27 item 9: nothing silent
    case("leaderboard-unknown-cohort", "leaderboard --cohort nope --db {live}", "unknown cohort 'nope' — choose",
         2, live=True),
    case("leaderboard-bad-format", "leaderboard --format xml --db {live}", "invalid choice: 'xml'", 2, live=True),
    case("sync-in-memory", "sync --venue replay --file {tmp}/r.jsonl --db sqlite://", "keeps nothing once the command",
         files={"r.jsonl": REPLAY_LINE}),
    case("leaderboard-in-memory", "leaderboard --db sqlite:///:memory:", "in-memory SQLite database"),
    case("demo-cohorts-huge", "demo --cohorts 100000000", "--cohorts: must be at most 520"),
    case("demo-markets-huge", "demo --markets-per-week 1000000000", "--markets-per-week: must be at most 10,000"),
    case("score-bootstrap-huge", "score {tmp}/f.csv --bootstrap 1000000000", "--bootstrap: must be at most 100,000",
         files={"f.csv": CSV_OK_HEADER + "a,q1,0.5,1\n"}),
    case("config-credential-header", "round --config {tmp}/arena-test.toml --db {db}",
         "X-Api-Key: looks like a credential header",
         files=config('[[agents]]\nname = "a"\nmodel = "m"\nextra_headers = { "X-Api-Key" = "sk-1" }\n')),
]


@pytest.fixture(scope="module")
def live_template(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("live") / "arena.sqlite"
    open_store(f"sqlite:///{path}").dispose()
    return path


@pytest.fixture(scope="module")
def old_template(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """An arena database one schema revision behind this version's."""
    from arena.store.engine import make_engine, migrate

    path = tmp_path_factory.mktemp("old") / "arena.sqlite"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine, "0014")
    engine.dispose()
    return path


@pytest.fixture(scope="module")
def future_template(tmp_path_factory, live_template) -> Path:  # type: ignore[no-untyped-def]
    """An arena database at a schema revision a newer arena wrote."""
    import sqlite3

    path = tmp_path_factory.mktemp("future") / "arena.sqlite"
    shutil.copy(live_template, path)
    with sqlite3.connect(path) as c:
        c.execute("UPDATE alembic_version SET version_num = '9999'")
    return path


@pytest.fixture(scope="module")
def other_app_template(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    import sqlite3

    path = tmp_path_factory.mktemp("other") / "notes.sqlite"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        c.execute("INSERT INTO notes (body) VALUES ('not an arena')")
    return path


def test_the_table_is_large_enough():
    assert len(CASES) >= 80


@pytest.mark.parametrize("argv, message, code, files, live, env", CASES)
def test_a_bad_input_is_one_line_and_a_nonzero_exit(argv, message, code, files, live, env, tmp_path, monkeypatch,
                                                     capsys, request):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'default.sqlite'}")
    monkeypatch.delenv("ARENA_TEST_NO_KEY", raising=False)
    for name, content in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if content == "OTHER_APP":  # another application's SQLite database
            content = request.getfixturevalue("other_app_template").read_bytes()
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    subs = {"tmp": str(tmp_path), "db": f"sqlite:///{tmp_path / 'arena.sqlite'}"}
    if live:
        for name in ("live", "old", "future"):
            shutil.copy(request.getfixturevalue(f"{name}_template"), tmp_path / f"{name}.sqlite")
            subs[name] = f"sqlite:///{tmp_path / f'{name}.sqlite'}"
    holder = None
    if any("{busy}" in a for a in argv):
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        subs["busy"] = str(holder.getsockname()[1])
    before = _contents(tmp_path)
    try:
        got = main([a.format(**subs) for a in argv])
    finally:
        if holder is not None:
            holder.close()
    out, err = capsys.readouterr()
    assert got == code, err
    assert "Traceback" not in err + out
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("arena"), err
    assert message in lines[0], err
    assert " — " in lines[0] and lines[0].split(" — ")[-1].strip(), f"no fix in: {err}"
    # nothing partial: no database, directory or file appeared, and none changed
    assert _contents(tmp_path) == before


def _contents(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


# -- what bad input used to get silently wrong, now right -------------------------------------------------------


def test_replay_sync_counts_malformed_lines_as_skipped(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text(REPLAY_LINE + "{not json\n" + "a,b,c\n", encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'a.sqlite'}"
    assert main(["sync", "--venue", "replay", "--file", str(path), "--at", "2025-01-03", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "skipped 2, failed 0" in out  # the file's two malformed lines, no longer silent
    assert "skipped 2 malformed line(s)" in err and "line 2" in err


def test_backups_go_beside_the_database_or_to_backup_dir(tmp_path, capsys, monkeypatch):
    from datetime import datetime, timezone

    from arena.ops.backup import backup

    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    engine = open_store(f"sqlite:///{elsewhere / 'arena.sqlite'}")
    try:
        result = backup(engine, datetime(2026, 3, 1, tzinfo=timezone.utc))
    finally:
        engine.dispose()
    assert result["status"] == "ok" and Path(str(result["file"])).parent == elsewhere / "backups"
    chosen = tmp_path / "chosen"
    assert main(["jobs", "run", "backup", "--db", f"sqlite:///{elsewhere / 'arena.sqlite'}",
                 "--backup-dir", str(chosen)]) == 0, capsys.readouterr().err
    assert len(list(chosen.glob("arena-*.sqlite"))) == 1


def test_every_numeric_option_has_a_documented_range():
    """Every numeric option is bounded on both sides, and docs/configuration.md lists exactly those ranges."""
    from arena.config import numeric_ranges

    ranges = numeric_ranges()
    assert all(low and high for _, _, low, high in ranges), [r for r in ranges if not (r[2] and r[3])]
    doc = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    listed = [line for line in doc.splitlines() if line.startswith("| `")]
    assert listed == [f"| `{t}` | `{k}` | {lo} | {hi} |" for t, k, lo, hi in ranges]


def test_a_crontab_that_never_fires_is_warned_about(tmp_path, capsys):
    cfg = tmp_path / "arena.toml"
    cfg.write_text('[schedule]\ncohort_start = "0 0 30 2 *"\n')
    db = f"sqlite:///{tmp_path / 'a.sqlite'}"
    assert main(["migrate", "--db", db]) == 0
    assert main(["jobs", "list", "--config", str(cfg), "--db", db]) == 0
    err = capsys.readouterr().err
    assert "[schedule] cohort_start = '0 0 30 2 *' matches no date, so cohort_start never runs — " in err
    cfg.write_text('[schedule]\ncohort_start = "0 0 29 2 *"\n')  # fires in leap years: no warning
    assert main(["jobs", "list", "--config", str(cfg), "--db", db]) == 0
    assert "never runs" not in capsys.readouterr().err


def test_a_huge_starting_cash_never_reaches_the_database(tmp_path):
    from arena.config import parse_config
    from arena.errors import ConfigError

    with pytest.raises(ConfigError, match="starting_cash: must be at most"):
        parse_config("[cohort]\nstarting_cash = 9223372036854775807\n")


def _raises(exc: BaseException):  # type: ignore[no-untyped-def]
    def command(args):  # type: ignore[no-untyped-def]
        raise exc

    return command


@pytest.mark.parametrize("exc, message, code", [
    (OperationalError("SELECT 1", {}, Exception("database is locked\nmore")),
     "the database failed: database is locked — check that it is reachable", 1),
    (ArgumentError("Could not parse URL"), "bad database URL or driver", 2),
    (NoSuchModuleError("Can't load plugin: x"), "bad database URL or driver", 2),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "a file is not UTF-8 text", 2),
    (PermissionError(13, "Permission denied", "/srv/site"), "cannot use /srv/site: Permission denied", 1),
    (ValueError("a value\nover two lines"), "bad input: a value over two lines", 2),
    (RecursionError("maximum recursion depth exceeded"), "bad input: maximum recursion depth", 2),
])
def test_the_boundary_turns_expected_failures_into_one_line(exc, message, code, monkeypatch, capsys):
    import arena.cli

    monkeypatch.setattr(arena.cli, "_leaderboard", _raises(exc))
    assert main(["leaderboard"]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arena: ") and message in err and "Traceback" not in err


def test_a_bug_still_raises(monkeypatch):
    import arena.cli

    monkeypatch.setattr(arena.cli, "_leaderboard", _raises(KeyError("a bug")))
    with pytest.raises(KeyError):
        main(["leaderboard"])


def test_help_exits_zero(capsys):
    assert main(["--help"]) == 0 and "usage: arena" in capsys.readouterr().out


def _replay_line(market_id: str = "abc", resolved: str = "2025-01-10") -> str:
    return json.dumps({"platform": "manifold", "market_id": market_id, "question": "Will it?", "resolution": 1,
                       "first_resolved_observation_date": resolved, "market_close_datetime": "2025-01-09T00:00:00Z",
                       "history": [["2025-01-01", 0.25], ["2025-01-05", 0.5]], "history_source": "RF"}) + "\n"


def test_a_line_resolving_in_year_9999_is_skipped_like_any_malformed_line(tmp_path, db_url, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text(_replay_line() + _replay_line("far", "9999-12-31"), encoding="utf-8")
    assert main(["sync", "--venue", "replay", "--file", str(path), "--at", "2025-01-03", "--db", db_url]) == 0
    out, err = capsys.readouterr()
    assert "ok 1, skipped 1, failed 0" in out and "'9999-12-31' is outside 2000-2099" in err


def test_a_market_id_longer_than_its_column_fails_alone_with_its_reason(tmp_path, db_url, capsys):
    from sqlalchemy import select
    from sqlmodel import Session

    from arena.store.engine import make_engine
    from arena.store.tables import MarketRow, SyncErrorRow

    path = tmp_path / "r.jsonl"
    path.write_text(_replay_line() + _replay_line("x" * 5000), encoding="utf-8")
    assert main(["sync", "--venue", "replay", "--file", str(path), "--at", "2025-01-03", "--db", db_url]) == 0
    assert "ok 1, skipped 0, failed 1" in capsys.readouterr().out
    eng = make_engine(db_url)
    with Session(eng) as s:
        assert list(s.scalars(select(MarketRow.id))) == ["replay:abc"]
        errors = [(e.kind, e.field, e.message) for e in s.scalars(select(SyncErrorRow))]
    eng.dispose()
    assert errors == [("failed", "native_id", "parse: native_id: 5,000 characters, more than the 160 stored")]


@pytest.mark.shared
def test_demo_replay_skips_a_line_resolving_in_year_9999(shared_dir, tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text((shared_dir / "data" / "replay" / "replay_markets.jsonl").read_text(encoding="utf-8")
                    + _replay_line("far", "9999-12-31"), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    assert main(["demo", "--replay", str(path), "--cohorts", "1", "--decision-weeks", "1", "--db", db]) == 0
    assert "(1 malformed lines skipped)" in capsys.readouterr().out


def test_a_formula_in_a_forecast_file_is_written_as_text(tmp_path, capsys):
    path = tmp_path / "f.csv"
    path.write_text(CSV_OK_HEADER + '"=HYPERLINK(""http://x"",""y"")",q1,0.2,1\n@SUM(1),q1,0.6,1\n-a,q1,0.5,1\n',
                    encoding="utf-8")
    out = tmp_path / "s.csv"
    assert main(["score", str(path), "--out", str(out)]) == 0
    import csv

    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    names = {r["forecaster"] for r in rows}
    assert names == {"'=HYPERLINK(\"http://x\",\"y\")", "'@SUM(1)", "'-a"}
    cells = [v for r in rows for v in r.values() if v]
    assert not any(v.startswith(("=", "+", "@")) for v in cells)


def test_neutralise_leaves_numbers_and_plain_text_alone():
    from arena.read.csv_cells import neutralise

    assert [neutralise(v) for v in ("-12.50", "+3", "1e-3", "-0.5e+2", "plain", "", 7)] == \
        ["-12.50", "+3", "1e-3", "-0.5e+2", "plain", "", 7]
    assert [neutralise(v) for v in ("=1+1", "+1+1", "-2+3", "@x", "\tx", "\r=x")] == \
        ["'=1+1", "'+1+1", "'-2+3", "'@x", "'\tx", "'\r=x"]


def test_a_huge_question_is_refused_not_stored_whole(tmp_path, db_url, capsys):
    from sqlalchemy import select
    from sqlmodel import Session

    from arena.store.engine import make_engine
    from arena.store.tables import MarketRow, SyncErrorRow

    line = json.loads(_replay_line("big"))
    line["question"] = "Will it? " + "x" * 5_000_000
    path = tmp_path / "r.jsonl"
    path.write_text(_replay_line() + json.dumps(line) + "\n", encoding="utf-8")
    assert main(["sync", "--venue", "replay", "--file", str(path), "--at", "2025-01-03", "--db", db_url]) == 0
    assert "ok 1, skipped 0, failed 1" in capsys.readouterr().out
    eng = make_engine(db_url)
    with Session(eng) as s:
        assert list(s.scalars(select(MarketRow.id))) == ["replay:abc"]
        assert [e.field for e in s.scalars(select(SyncErrorRow))] == ["question"]
    eng.dispose()
