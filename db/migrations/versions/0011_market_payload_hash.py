"""market payload fingerprint

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24

`payload_hash` is the fingerprint (arena/venues/fingerprint.py) of the venue payload whose parse the market's
row, description, extras and last stored quote hash are equal to, or "" when no such payload is known. A sync
that receives a payload with the same fingerprint skips its parse (arena/usecases/sync.py). Existing rows
start with "" (the first sync after the upgrade parses every market, as before).
"""
import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("markets") as batch:
        batch.add_column(sa.Column("payload_hash", sa.String(length=32), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("markets") as batch:
        batch.drop_column("payload_hash")
