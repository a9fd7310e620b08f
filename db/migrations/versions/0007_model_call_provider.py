"""the provider a model call was served by

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23

OpenRouter names the upstream provider that served each call (its `provider` field); the model id alone does
not say where a call ran. Nullable: older calls and other endpoints do not say.
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('provider', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.drop_column('provider')
