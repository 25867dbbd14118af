"""webhooks: endpoints events are delivered to (their secrets sealed), and each event's
delivery to each endpoint, pending until it succeeds or its attempts run out

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, Json, UTCDateTime

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("webhook_id", Id, autoincrement=True, nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("events", Json, nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("sealed_secret", sa.Text(), nullable=False),
        sa.Column("sealed_previous", sa.Text(), nullable=True),
        sa.Column("previous_until", UTCDateTime(), nullable=True),
        sa.Column("after_event_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("webhook_id"),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("delivery_id", Id, autoincrement=True, nullable=False),
        sa.Column("webhook_id", Id, sa.ForeignKey("webhooks.webhook_id"), nullable=False),
        sa.Column("event_id", sa.BigInteger(), nullable=False),
        sa.Column("event_type", sa.String(length=200), nullable=False),
        sa.Column("message_id", sa.String(length=128), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("delivery_id"),
    )
    op.create_index(
        "ix_webhook_deliveries_webhook", "webhook_deliveries", ["webhook_id", "delivery_id"]
    )
    where = sa.text('"next_attempt_at" IS NOT NULL')
    op.create_index(
        "ix_webhook_deliveries_due",
        "webhook_deliveries",
        ["next_attempt_at"],
        sqlite_where=where,
        postgresql_where=where,
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_webhook", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
