"""The Alembic migrations (env.py, versions/), installed as `arena._migrations` (package data read with
importlib.resources; see pyproject.toml)."""
