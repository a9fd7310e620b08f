"""what a proxy reports about a model call, and the model's reasoning

Revision ID: 0016
Revises: 0014
Create Date: 2026-11-27

Behind a LiteLLM proxy the reply's `model` is the proxy's alias; the model and endpoint it routed the call to come
only in its response headers (`x-litellm-model-name` or `-model-id`, `x-litellm-model-api-base`). Both are kept, and
so is the reasoning a model returns beside its answer (`reasoning_content`, or OpenRouter's `reasoning`). All
nullable: older calls, and endpoints that report none of it.
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0016'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('upstream_model', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True))
        batch_op.add_column(sa.Column('upstream_base', sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True))
        batch_op.add_column(sa.Column('reasoning_content', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('model_calls', schema=None) as batch_op:
        batch_op.drop_column('reasoning_content')
        batch_op.drop_column('upstream_base')
        batch_op.drop_column('upstream_model')
