"""The store: SQLModel tables, the engine (SQLite by default, any SQLAlchemy URL), migrations and repositories."""
