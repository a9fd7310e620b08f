"""the frame cache

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23

Every render re-read every cohort's facts (a million bets at a thousand cohorts) to find the few cohorts whose
boards changed. `frame_cache` keeps each cohort's frames (forecast set, bets, portfolios) under a fingerprint of
the facts they are read from (`store.fingerprints`); it holds no fact and may be emptied at any time.
"""
from alembic import op
import sqlalchemy as sa

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'frame_cache',
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('cohort', sa.String(length=100), nullable=False),
        sa.Column('payload', sa.Text(), nullable=False),
        sa.Column('stored_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('used_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('key'),
    )
    op.create_index('ix_frame_cache_cohort', 'frame_cache', ['cohort'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_frame_cache_cohort', table_name='frame_cache')
    op.drop_table('frame_cache')
