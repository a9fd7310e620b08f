"""replicates

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23

An agent with `replicates = k` is asked each decision k times independently. Every replicate's stated
forecasts are kept (`forecasts.replicate`, part of the unique key) and every model call says which replicate
it served; `decision_replicates` records each replicate as it completes, so a resumed decision asks only the
missing ones. Existing rows are replicate 1 (the executed one).
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('forecasts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('replicate', sa.Integer(), nullable=False, server_default='1'))
        batch_op.drop_constraint('uq_forecast', type_='unique')
        batch_op.create_unique_constraint('uq_forecast', ['decision_id', 'market_id', 'source', 'replicate'])

    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('replicate', sa.Integer(), nullable=False, server_default='1'))

    op.create_table('decision_replicates',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('decision_id', sa.Integer(), nullable=False),
    sa.Column('replicate', sa.Integer(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('actions', sa.JSON(), nullable=False),
    sa.Column('reasoning', sa.Text(), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('decision_attempt', sa.Integer(), nullable=False),
    sa.Column('model_calls', sa.Integer(), nullable=False),
    sa.Column('as_of', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['decision_id'], ['decisions.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('decision_id', 'replicate', name='uq_decision_replicate')
    )
    with op.batch_alter_table('decision_replicates', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_decision_replicates_decision_id'), ['decision_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('decision_replicates', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_decision_replicates_decision_id'))
    op.drop_table('decision_replicates')

    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.drop_column('replicate')

    op.execute("DELETE FROM forecasts WHERE replicate <> 1")  # the older schema holds one forecast per key
    with op.batch_alter_table('forecasts', schema=None) as batch_op:
        batch_op.drop_constraint('uq_forecast', type_='unique')
        batch_op.create_unique_constraint('uq_forecast', ['decision_id', 'market_id', 'source'])
        batch_op.drop_column('replicate')
