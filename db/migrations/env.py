"""Alembic environment: runs on the connection the arena passes in (arena.store.engine.migrate)."""

from alembic import context
from sqlmodel import SQLModel

import arena.store.tables  # noqa: F401  (registers the tables on the metadata)

config = context.config
target_metadata = SQLModel.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        from arena.store.engine import make_engine

        with make_engine().begin() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
