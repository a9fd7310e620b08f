"""the asked forecast set

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27

Each seat's view recomputed the round's forecast set from the markets it saw, and only the answers were stored:
a question no seat answered left no trace, and nothing said the seats of a round were asked the same markets.
`forecast_questions` holds each (cohort, round)'s set, written once before any seat is asked. Older databases
get their sets back from the stored forecasts: for each (cohort, round), the distinct markets of its forecast-set
rows (replicate 1) in market-id order, the price the median of their stored YES prices (rounded to the nearest
ppm; NULL when none was stored), `in_band` with the default band [0.05, 0.95], `filled` false, `as_of` the
round's earliest forecast. A market of the set that no seat answered cannot be recovered.
"""
from statistics import median

from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None

DEFAULT_BAND_PPM = (50_000, 950_000)  # the default band [0.05, 0.95] when this revision was written
BATCH = 5_000


def upgrade() -> None:
    op.create_table(
        'forecast_questions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('cohort_id', sa.Integer(), nullable=False),
        sa.Column('round_key', sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column('market_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('price_ppm', sa.BigInteger(), nullable=True),
        sa.Column('in_band', sa.Boolean(), nullable=False),
        sa.Column('filled', sa.Boolean(), nullable=False),
        sa.Column('as_of', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['cohort_id'], ['cohorts.id'], ),
        sa.ForeignKeyConstraint(['market_id'], ['markets.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('cohort_id', 'round_key', 'market_id', name='uq_forecast_question'),
        sa.UniqueConstraint('cohort_id', 'round_key', 'position', name='uq_forecast_question_position'),
    )
    op.create_index('ix_forecast_questions_cohort_id', 'forecast_questions', ['cohort_id'], unique=False)
    _backfill()


def _backfill() -> None:
    forecasts = sa.table('forecasts', sa.column('decision_id', sa.Integer), sa.column('market_id', sa.String),
                         sa.column('source', sa.String), sa.column('replicate', sa.Integer),
                         sa.column('market_price_ppm', sa.BigInteger), sa.column('as_of', sa.DateTime(timezone=True)))
    decisions = sa.table('decisions', sa.column('id', sa.Integer), sa.column('cohort_id', sa.Integer),
                         sa.column('round_key', sa.String))
    questions = sa.table('forecast_questions', sa.column('cohort_id', sa.Integer), sa.column('round_key', sa.String),
                         sa.column('market_id', sa.String), sa.column('position', sa.Integer),
                         sa.column('price_ppm', sa.BigInteger), sa.column('in_band', sa.Boolean),
                         sa.column('filled', sa.Boolean), sa.column('as_of', sa.DateTime(timezone=True)))
    rows = op.get_bind().execute(
        sa.select(decisions.c.cohort_id, decisions.c.round_key, forecasts.c.market_id, forecasts.c.market_price_ppm,
                  forecasts.c.as_of)
        .select_from(forecasts.join(decisions, decisions.c.id == forecasts.c.decision_id))
        .where(forecasts.c.source == 'forecast_set', forecasts.c.replicate == 1)
    ).all()
    rounds: dict[tuple[int, str], dict[str, list[int]]] = {}
    first: dict[tuple[int, str], object] = {}
    for cohort_id, round_key, market_id, price, at in rows:
        key = (int(cohort_id), str(round_key))
        prices = rounds.setdefault(key, {}).setdefault(str(market_id), [])
        if price is not None:
            prices.append(int(price))
        if key not in first or at < first[key]:
            first[key] = at
    out = []
    lo, hi = DEFAULT_BAND_PPM
    for key in sorted(rounds):
        for position, market_id in enumerate(sorted(rounds[key])):
            prices = rounds[key][market_id]
            price = int(round(median(prices))) if prices else None
            out.append({'cohort_id': key[0], 'round_key': key[1], 'market_id': market_id, 'position': position,
                        'price_ppm': price, 'in_band': price is not None and lo <= price <= hi, 'filled': False,
                        'as_of': first[key]})
    for start in range(0, len(out), BATCH):
        op.bulk_insert(questions, out[start:start + BATCH])


def downgrade() -> None:
    op.drop_index('ix_forecast_questions_cohort_id', table_name='forecast_questions')
    op.drop_table('forecast_questions')
