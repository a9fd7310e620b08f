"""covering index for the position fold

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22

Mark to market, settlement and scoring sum shares and cost basis per (cohort, agent, market, outcome); this
index answers that from the index alone.
"""
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_fill_position_fold", "fills",
                    ["cohort_id", "agent_id", "market_id", "outcome", "shares", "cost_micros"])


def downgrade() -> None:
    op.drop_index("ix_fill_position_fold", table_name="fills")
