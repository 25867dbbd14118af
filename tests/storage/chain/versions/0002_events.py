"""events: the feed read by cursor (GET /v1/events)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from tests.storage.chain.types import UTCDateTime

# Frozen copies of the column types this revision was written with.
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("event_id", ID, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=200), nullable=False),
        sa.Column("audience", sa.String(length=128), nullable=False),
        sa.Column("subject_id", sa.String(length=128), nullable=False),
        sa.Column("data", JSON, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_audience", ["audience", "event_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_audience")
    op.drop_table("events")
