"""webhook deliveries: an index by state and age, by which the sweep deletes the finished ones
past RELAY_WEBHOOK_KEEP_DAYS

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-26
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_webhook_deliveries_age", "webhook_deliveries", ["status", "created_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_age", table_name="webhook_deliveries")
