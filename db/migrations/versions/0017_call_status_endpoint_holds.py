"""model calls written before they are sent; endpoint slots held past a dead holder

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27

`model_calls.status`: a call is written "in_flight" before its request is sent and completed "done" with the
reply; a call whose runner died first is marked "abandoned" at takeover, so no call made goes unrecorded.
Existing rows are complete calls ("done").

`endpoint_holds`: on PostgreSQL a slot of an endpoint's concurrency limit is taken with an advisory lock and a
hold row until the call's timeout; a dead process frees its lock at once but its hold keeps the slot taken
until the orphaned call can no longer be running at the endpoint.
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=12), nullable=False,
                                      server_default='done'))
    op.create_table(
        'endpoint_holds',
        sa.Column('endpoint_key', sa.Integer(), nullable=False),
        sa.Column('slot', sa.Integer(), nullable=False),
        sa.Column('until', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('endpoint_key', 'slot'),
    )


def downgrade() -> None:
    op.drop_table('endpoint_holds')
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.drop_column('status')
