"""one memo table: `memo` replaces `board_cache` and `frame_cache`

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28

Every cached result — a cohort's frames, its board, its board's parts, the overall board's parts — is now one row
of `memo`, its payload named frames in Arrow IPC (`cache.codec`), its `kind` saying which. The two tables it
replaces hold no fact: they are dropped, and the next render reads and computes each cohort once and stores it
in the new form.
"""
from alembic import op
import sqlalchemy as sa

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def _cache_table(name: str, payload: sa.types.TypeEngine) -> None:
    op.create_table(
        name,
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('cohort', sa.String(length=100), nullable=False),
        sa.Column('payload', payload, nullable=False),
        sa.Column('stored_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('used_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('key'),
    )
    op.create_index(f'ix_{name}_cohort', name, ['cohort'], unique=False)


def _drop(name: str) -> None:
    op.drop_index(f'ix_{name}_cohort', table_name=name)
    op.drop_table(name)


def upgrade() -> None:
    _drop('board_cache')
    _drop('frame_cache')
    op.create_table(
        'memo',
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('kind', sa.String(length=20), nullable=False),
        sa.Column('cohort', sa.String(length=100), nullable=False),
        sa.Column('payload', sa.LargeBinary(), nullable=False),
        sa.Column('stored_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('used_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('key'),
    )
    op.create_index('ix_memo_kind_cohort', 'memo', ['kind', 'cohort'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_memo_kind_cohort', table_name='memo')
    op.drop_table('memo')
    _cache_table('board_cache', sa.Text())
    _cache_table('frame_cache', sa.LargeBinary())
