"""A model that echoes its API key — in its reasoning, a bet's rationale, a tool call's arguments and the
reasoning beside its answer — or writes another bearer token, and whose reply is usable: the key reaches none
of the database, the rendered site, the exports (with and without --with-text) or the backups. Run through
the commands a user runs: sync, cohort start, round, render, export, backup."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import MetaData, select
from standin import forecast_ids, json_reply, tool_responder

from arena.agents.redact import REDACTED, scrub
from arena.cli import main
from arena.store.engine import make_engine

pytestmark = pytest.mark.shared

KEY = "sk-or-v1-0123456789abcdef0123456789abcdef"
OTHER = "sk-ant-api03-ZYXWVUTSRQPONMLKJIHG"  # somebody else's key, in the shape providers give them
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


def _answer(request, results):  # type: ignore[no-untyped-def]
    ids = forecast_ids(request)
    key = request.authorization.removeprefix("Bearer ")
    return json_reply({"actions": [{"type": "BET", "market_id": ids[0], "side": "YES", "amount": 60,
                                    "probability": 0.7, "rationale": f"my key is {key}, theirs {OTHER}"}],
                       "forecasts": {mid: 0.5 for mid in ids},
                       "reasoning": f"Authorization: Bearer {key}; token {JWT}"},
                      reasoning_content=f"the key {key} was in my headers")


def _arguments(request):  # type: ignore[no-untyped-def]
    return {"market_id": forecast_ids(request)[0], "note": request.authorization}


def _everything(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*")) if p.is_file())


def _database_text(url: str) -> str:
    eng = make_engine(url)
    try:
        meta = MetaData()
        meta.reflect(eng)
        with eng.connect() as c:
            return "\n".join(repr(row) for t in meta.sorted_tables for row in c.execute(select(t)))
    finally:
        eng.dispose()


def test_scrub_replaces_the_key_and_token_like_strings():
    text = f"k={KEY} o={OTHER} jwt={JWT} Bearer abcdefgh12345 plain words sk-short"
    out = scrub(text, KEY)
    assert KEY not in out and OTHER not in out and JWT not in out and "abcdefgh12345" not in out
    assert out.count(REDACTED) == 4 and "plain words sk-short" in out


def test_an_echoed_key_reaches_no_table_page_export_or_backup(standin, shared_dir, tmp_path, db_url, monkeypatch,
                                                               capsys):
    monkeypatch.setenv("ARENA_ECHO_KEY", KEY)
    cfg = tmp_path / "arena.toml"
    cfg.write_text(f'[cohort]\nforecast_set_size = 3\nprompt_markets = 10\n\n[[agents]]\nname = "echo"\n'
                   f'model = "vendor/echo"\nbase_url = "{standin.base_url}"\napi_key_env = "ARENA_ECHO_KEY"\n'
                   f'tools = ["price_history"]\n')
    standin.default = tool_responder("price_history", _arguments, _answer)
    replay = str(shared_dir / "data" / "replay" / "replay_markets.jsonl")
    db = ["--db", db_url]
    assert main(["sync", "--venue", "replay", "--file", replay, "--at", "2025-11-02", *db]) == 0
    assert main(["cohort", "start", "--config", str(cfg), "--at", "2025-11-02", *db]) == 0
    assert main(["round", "--config", str(cfg), "--at", "2025-11-02T00:05", *db]) == 0
    assert len(standin.requests) == 2 and standin.requests[0].authorization == f"Bearer {KEY}"
    site, plain, full, backups = (tmp_path / d for d in ("site", "csv", "csv-text", "backups"))
    assert main(["render", "--out", str(site), *db]) == 0
    assert main(["export", "csv", "--out", str(plain), *db]) == 0
    assert main(["export", "csv", "--out", str(full), "--with-text", *db]) == 0
    backed_up = main(["jobs", "run", "backup", "--backup-dir", str(backups), *db])
    capsys.readouterr()

    database = _database_text(db_url)
    assert REDACTED in database  # the reply was stored (scrubbed), not dropped
    assert "executed" in database and "price_history" in database
    places = {"database": database, "site": _everything(site), "export": _everything(plain),
              "export --with-text": _everything(full)}
    if backed_up == 0 and backups.exists():  # PostgreSQL backs up with pg_dump when it is installed
        places["backups"] = _everything(backups)
    if db_url.startswith("sqlite"):
        assert "backups" in places
        places["database file"] = _everything(Path(db_url.removeprefix("sqlite:///")).parent)
    for where, text in places.items():
        for secret in (KEY, OTHER, JWT):
            assert secret not in text, f"{secret[:12]}… found in the {where}"
    assert "my key is" in places["site"] or "my key is" in places["export --with-text"]
    assert "my key is [redacted]" in places["export"]  # decisions.csv keeps the rationale, scrubbed
