"""leases and retries

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

A job run and a decision claim carry a lease (renewed by the holder's heartbeat): a claim whose holder died
is taken over once the lease has expired. A failed decision may be tried again a bounded number of times;
every attempt is kept in `decision_attempts`, and each model call says which attempt it belongs to.
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('job_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True))

    with op.batch_alter_table('decisions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('claimed_by', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('attempts', sa.Integer(), nullable=False, server_default='1'))

    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('decision_attempt', sa.Integer(), nullable=False, server_default='1'))

    op.create_table('decision_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('decision_id', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('runner', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
    sa.Column('model_calls', sa.Integer(), nullable=False),
    sa.Column('as_of', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['decision_id'], ['decisions.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('decision_id', 'attempt', name='uq_decision_attempt')
    )
    with op.batch_alter_table('decision_attempts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_decision_attempts_decision_id'), ['decision_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('decision_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_decision_attempts_decision_id'))
    op.drop_table('decision_attempts')

    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.drop_column('decision_attempt')

    with op.batch_alter_table('decisions', schema=None) as batch_op:
        batch_op.drop_column('attempts')
        batch_op.drop_column('lease_until')
        batch_op.drop_column('claimed_by')

    with op.batch_alter_table('job_runs', schema=None) as batch_op:
        batch_op.drop_column('heartbeat_at')
        batch_op.drop_column('lease_until')
