"""versions written with the facts: cohort_versions and market_versions, bumped by triggers

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27

A cache tells whether a cohort's pages or boards changed by summarising the rows they are read from. This
revision keeps a counter per cohort and per market instead, raised by database triggers in the transaction of
every write that can change what a page or board shows — whatever wrote it, the arena or a hand edit in SQL:

- a cohort's version: its own row and its agents; its decisions (except a heartbeat renewing `lease_until`),
  decision attempts, replicates, rejections, forecasts, forecast-set questions, model calls, fills and
  portfolio snapshots; and any change of a market it holds open (below);
- a market's version: its price snapshots and resolutions, and an update of its shown fields (question,
  description, kind, outcomes and their labels, status, close time, url, category, group, activity figures,
  extras, venue and native id) — not of a sync's bookkeeping (`updated_at`, `first_seen_at`, the content,
  description, quote and payload hashes, `quote_at`). A market is at version 0 until one of those happens.

A cohort holds a market open when the cohort is open (status "open") and has a fill, a forecast or a
forecast-set question on it. A completed cohort's version does not move with the markets it once traded:
a reader that needs those keys on the market versions of the markets it reads.

The counters live in two narrow tables rather than in columns of `cohorts` and `markets`: a market row carries
its description and extras, and rewriting it for every price snapshot would cost a sync as much again.
A missing row is version 0. Rows are never deleted (a trigger refuses it), so a version never goes back to a
value it had. SQLite: row triggers (one upsert per written row). PostgreSQL: statement triggers over the
statement's transition tables (one upsert per statement, in key order, so concurrent writers take the
counter rows' locks in the same order).
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None

VIA_DECISION = "decision"
# table → (how a row names its cohort: a column, or VIA_DECISION; the events that bump)
COHORT_FACTS = {
    "cohorts": ("id", ("INSERT", "UPDATE")),
    "agents": ("cohort_id", ("INSERT", "UPDATE", "DELETE")),
    "decisions": ("cohort_id", ("INSERT", "UPDATE", "DELETE")),
    "decision_attempts": (VIA_DECISION, ("INSERT", "UPDATE", "DELETE")),
    "decision_replicates": (VIA_DECISION, ("INSERT", "UPDATE", "DELETE")),
    "rejections": (VIA_DECISION, ("INSERT", "UPDATE", "DELETE")),
    "forecasts": (VIA_DECISION, ("INSERT", "UPDATE", "DELETE")),
    "model_calls": (VIA_DECISION, ("INSERT", "UPDATE", "DELETE")),
    "forecast_questions": ("cohort_id", ("INSERT", "UPDATE", "DELETE")),
    "portfolio_snapshots": ("cohort_id", ("INSERT", "UPDATE", "DELETE")),
    "fills": ("cohort_id", ("INSERT",)),  # append-only: an UPDATE or DELETE is refused before it happens
}
# table → (the column naming the market, the events that bump)
MARKET_FACTS = {
    "markets": ("id", ("UPDATE",)),
    "price_snapshots": ("market_id", ("INSERT", "UPDATE", "DELETE")),
    "resolutions": ("market_id", ("INSERT",)),  # append-only
}
# An UPDATE of these tables bumps only when one of these columns changed (the rest is bookkeeping).
COMPARED = {
    "markets": ("id", "venue", "native_id", "question", "description", "kind", "outcomes", "outcome_labels",
                "status", "close_time", "url", "category", "group_id", "volume", "volume_24h", "liquidity",
                "extra"),
    "decisions": ("id", "cohort_id", "agent_id", "round_key", "status", "as_of", "cash_at_start_micros",
                  "max_bet_micros", "actions", "reasoning", "error", "sizing_version", "claimed_at",
                  "completed_at", "claimed_by", "attempts"),  # not lease_until: a heartbeat renews it
}
JSON_COLUMNS = {"outcomes", "outcome_labels", "extra", "actions"}  # PostgreSQL's json has no equality


def _bump(table: str, key: str, keys_sql: str) -> str:
    """Raise the counter of every key `keys_sql` selects (as `k`) by one; a new key starts at 1."""
    return (f"INSERT INTO {table} ({key}, version) SELECT DISTINCT k, 1 FROM ({keys_sql}) AS bumped "
            f"WHERE k IS NOT NULL ORDER BY k "
            f"ON CONFLICT ({key}) DO UPDATE SET version = {table}.version + 1")


def _holders(markets_sql: str) -> str:
    """The open cohorts holding any of the markets `markets_sql` selects, as `k`; `markets_sql` may also be
    "= x" (one market: SQLite builds a table for every IN list it evaluates)."""
    match = markets_sql if markets_sql.startswith("= ") else f"IN ({markets_sql})"
    return ("SELECT h.cohort_id AS k FROM ("
            f"SELECT cohort_id FROM fills WHERE market_id {match} "
            f"UNION SELECT cohort_id FROM forecast_questions WHERE market_id {match} "
            "UNION SELECT a.cohort_id FROM forecasts fo JOIN agents a ON a.id = fo.agent_id "
            f"WHERE fo.market_id {match}"
            ") AS h JOIN cohorts c ON c.id = h.cohort_id WHERE c.status = 'open'")


def _cohort_keys(column: str, rows: list[str]) -> str:
    """The cohorts of the rows in `rows` (row aliases or tables), as `k`."""
    if column == VIA_DECISION:
        ids = " UNION ".join(f"SELECT decision_id FROM {r}" for r in rows)
        return f"SELECT cohort_id AS k FROM decisions WHERE id IN ({ids})"
    return " UNION ".join(f"SELECT {column} AS k FROM {r}" for r in rows)


def upgrade() -> None:
    op.create_table(
        'cohort_versions',
        sa.Column('cohort_id', sa.Integer(), nullable=False),
        sa.Column('version', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('cohort_id'),
    )
    op.create_table(
        'market_versions',
        sa.Column('market_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column('version', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('market_id'),
    )
    # the holders of a market are found by market: these two had no index on it (fills has one)
    op.create_index('ix_forecast_questions_market_id', 'forecast_questions', ['market_id'])
    op.create_index('ix_forecasts_market_id', 'forecasts', ['market_id'])
    if op.get_bind().dialect.name == "postgresql":
        _postgresql_triggers()
    else:
        _sqlite_triggers()


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for table, events in _all_events():
        for event in events:
            name = f"{table}_version_{event.lower()}"
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}" if postgresql else f"DROP TRIGGER IF EXISTS {name}")
            if not postgresql and table in MARKET_FACTS:
                op.execute(f"DROP TRIGGER IF EXISTS {table}_holders_{event.lower()}")
            if postgresql:
                op.execute(f"DROP FUNCTION IF EXISTS arena_{name}()")
    for table in ("cohort_versions", "market_versions"):
        if postgresql:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_kept ON {table}")
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")
        else:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_kept")
    if postgresql:
        op.execute("DROP FUNCTION IF EXISTS arena_versions_kept()")
    op.drop_index('ix_forecasts_market_id', table_name='forecasts')
    op.drop_index('ix_forecast_questions_market_id', table_name='forecast_questions')
    op.drop_table('market_versions')
    op.drop_table('cohort_versions')


def _all_events() -> list[tuple[str, tuple[str, ...]]]:
    return [(t, ev) for t, (_, ev) in COHORT_FACTS.items()] + [(t, ev) for t, (_, ev) in MARKET_FACTS.items()]


# --- SQLite: row triggers -----------------------------------------------------------------------------------

def _sqlite_when(table: str, event: str) -> str:
    if event != "UPDATE" or table not in COMPARED:
        return ""
    return " WHEN " + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in COMPARED[table])


def _sqlite_upsert(table: str, key: str, select_sql: str) -> str:
    """Raise the counter of the key `select_sql` selects (with its WHERE clause) by one; new keys start at 1."""
    return (f"INSERT INTO {table} ({key}, version) {select_sql} "
            f"ON CONFLICT ({key}) DO UPDATE SET version = {table}.version + 1;")


def _sqlite_keys(column: str, event: str) -> list[str]:
    """SELECTs of the keys a row trigger bumps: the new row's (the old row's for a DELETE; for an UPDATE the old
    row's too when it differs)."""
    row = "OLD" if event == "DELETE" else "NEW"
    if column == VIA_DECISION:
        out = [f"SELECT cohort_id, 1 FROM decisions WHERE id = {row}.decision_id"]
        if event == "UPDATE":
            out.append("SELECT cohort_id, 1 FROM decisions WHERE id = OLD.decision_id "
                       "AND OLD.decision_id IS NOT NEW.decision_id")
        return out
    out = [f"SELECT {row}.{column}, 1 WHERE {row}.{column} IS NOT NULL"]
    if event == "UPDATE":
        out.append(f"SELECT OLD.{column}, 1 WHERE OLD.{column} IS NOT NEW.{column}")
    return out


def _sqlite_triggers() -> None:
    for table, (column, events) in COHORT_FACTS.items():
        for event in events:
            body = " ".join(_sqlite_upsert("cohort_versions", "cohort_id", k) for k in _sqlite_keys(column, event))
            op.execute(f"CREATE TRIGGER {table}_version_{event.lower()} AFTER {event} ON {table}"
                       f"{_sqlite_when(table, event)} BEGIN {body} END")
    for table, (column, events) in MARKET_FACTS.items():
        for event in events:
            body = " ".join(_sqlite_upsert("market_versions", "market_id", k) for k in _sqlite_keys(column, event))
            op.execute(f"CREATE TRIGGER {table}_version_{event.lower()} AFTER {event} ON {table}"
                       f"{_sqlite_when(table, event)} BEGIN {body} END")
            # the holders, in a trigger of their own that a few index probes skip for a market nobody holds
            # (a first sync stores a snapshot of thousands of such markets)
            rows = ["OLD"] if event == "DELETE" else ["NEW", "OLD"] if event == "UPDATE" else ["NEW"]
            markets = ", ".join(f"{r}.{column}" for r in rows)
            if len(rows) == 1:
                markets = f"= {markets}"
            match = markets if len(rows) == 1 else f"IN ({markets})"
            held = " OR ".join(f"EXISTS (SELECT 1 FROM {t} WHERE market_id {match})"
                               for t in ("fills", "forecast_questions", "forecasts"))
            when = _sqlite_when(table, event)
            when = f" WHEN ({when.removeprefix(' WHEN ')}) AND ({held})" if when else f" WHEN {held}"
            bump = _sqlite_upsert("cohort_versions", "cohort_id", f"SELECT k, 1 FROM ({_holders(markets)}) WHERE true")
            op.execute(f"CREATE TRIGGER {table}_holders_{event.lower()} AFTER {event} ON {table}{when} "
                       f"BEGIN {bump} END")
    for table in ("cohort_versions", "market_versions"):
        op.execute(f"CREATE TRIGGER {table}_kept BEFORE DELETE ON {table} "
                   f"BEGIN SELECT RAISE(ABORT, '{table} rows are kept: DELETE refused'); END")


# --- PostgreSQL: statement triggers over transition tables ---------------------------------------------------

def _pg_changed(table: str, key: str) -> str:
    """The keys (`key` of the old and the new row) of an UPDATE's rows whose compared columns changed."""
    def col(alias: str, c: str) -> str:
        return f"{alias}.{c}::text" if c in JSON_COLUMNS else f"{alias}.{c}"
    differs = " OR ".join(f"{col('n', c)} IS DISTINCT FROM {col('o', c)}" for c in COMPARED[table])
    pairs = f"new_rows n FULL JOIN old_rows o ON o.id = n.id WHERE n.id IS NULL OR o.id IS NULL OR {differs}"
    return f"SELECT n.{key} AS k FROM {pairs} UNION SELECT o.{key} AS k FROM {pairs}"


def _pg_function(name: str, body: list[str]) -> None:
    statements = " ".join(f"{s};" for s in body)
    op.execute(f"CREATE OR REPLACE FUNCTION arena_{name}() RETURNS trigger AS $$ "
               f"BEGIN {statements} RETURN NULL; END $$ LANGUAGE plpgsql")


def _pg_trigger(table: str, event: str, name: str) -> None:
    referencing = {"INSERT": "NEW TABLE AS new_rows", "DELETE": "OLD TABLE AS old_rows",
                   "UPDATE": "OLD TABLE AS old_rows NEW TABLE AS new_rows"}[event]
    op.execute(f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {referencing} "
               f"FOR EACH STATEMENT EXECUTE FUNCTION arena_{name}()")


def _pg_rows(event: str) -> list[str]:
    return {"INSERT": ["new_rows"], "DELETE": ["old_rows"], "UPDATE": ["new_rows", "old_rows"]}[event]


def _postgresql_triggers() -> None:
    for table, (column, events) in COHORT_FACTS.items():
        for event in events:
            name = f"{table}_version_{event.lower()}"
            if event == "UPDATE" and table in COMPARED:
                keys = _pg_changed(table, column)
            else:
                keys = _cohort_keys(column, _pg_rows(event))
            _pg_function(name, [_bump("cohort_versions", "cohort_id", keys)])
            _pg_trigger(table, event, name)
    for table, (column, events) in MARKET_FACTS.items():
        for event in events:
            name = f"{table}_version_{event.lower()}"
            if event == "UPDATE" and table in COMPARED:
                keys = _pg_changed(table, column)
            else:
                keys = " UNION ".join(f"SELECT {column} AS k FROM {r}" for r in _pg_rows(event))
            _pg_function(name, [_bump("market_versions", "market_id", keys),
                                _bump("cohort_versions", "cohort_id", _holders(f"SELECT k FROM ({keys}) AS m"))])
            _pg_trigger(table, event, name)
    op.execute("CREATE OR REPLACE FUNCTION arena_versions_kept() RETURNS trigger AS $$ "
               "BEGIN RAISE EXCEPTION '% rows are kept: % refused', TG_TABLE_NAME, TG_OP; END $$ LANGUAGE plpgsql")
    for table in ("cohort_versions", "market_versions"):
        op.execute(f"CREATE TRIGGER {table}_kept BEFORE DELETE ON {table} "
                   f"FOR EACH ROW EXECUTE FUNCTION arena_versions_kept()")
        op.execute(f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                   f"FOR EACH STATEMENT EXECUTE FUNCTION arena_versions_kept()")
