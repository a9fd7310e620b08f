"""the frame cache's payload as bytes

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26

A process that starts with an empty memory (`arena render` from cron) decoded a thousand cohorts' frames from JSON
text — a million strings parsed and every column built value by value — in several seconds. The payload is now a
small JSON header and the columns' bytes (`services.frame_cache`). The table holds no fact: it is emptied and made
again with a binary payload (the next render reads each cohort once and stores it in the new form).
"""
from alembic import op
import sqlalchemy as sa

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def _create(payload: sa.types.TypeEngine) -> None:
    op.create_table(
        'frame_cache',
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('cohort', sa.String(length=100), nullable=False),
        sa.Column('payload', payload, nullable=False),
        sa.Column('stored_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('used_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('key'),
    )
    op.create_index('ix_frame_cache_cohort', 'frame_cache', ['cohort'], unique=False)


def _drop() -> None:
    op.drop_index('ix_frame_cache_cohort', table_name='frame_cache')
    op.drop_table('frame_cache')


def upgrade() -> None:
    _drop()
    _create(sa.LargeBinary())


def downgrade() -> None:
    _drop()
    _create(sa.Text())
