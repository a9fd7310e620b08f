"""the tool calls of a model call

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23

An agent of the `agent` track may ask for tools (price history, order book, related markets, resolution
criteria, web search) before it decides; each reply's tool calls and the results sent back are stored with the
model call, as a JSON list (None for calls without tools, and for every call made before tools existed).
"""
from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('tool_calls', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.drop_column('tool_calls')
