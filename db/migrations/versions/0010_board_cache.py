"""the board cache

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23

A completed cohort's board does not change, yet every render recomputed it (paired bootstraps, difficulty and
IRT fits: ~0.2 s per cohort). `board_cache` memoises each cohort's board under a hash of its inputs; it holds no
fact and may be emptied at any time.
"""
from alembic import op
import sqlalchemy as sa

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'board_cache',
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('cohort', sa.String(length=100), nullable=False),
        sa.Column('payload', sa.Text(), nullable=False),
        sa.Column('stored_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('used_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('key'),
    )
    op.create_index('ix_board_cache_cohort', 'board_cache', ['cohort'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_board_cache_cohort', table_name='board_cache')
    op.drop_table('board_cache')
