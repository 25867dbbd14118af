"""stream_tickets: a browser's event-stream ticket is a random value kept by its hash, not a
signed copy of the caller's token hash in a URL

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import UTCDateTime

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stream_tickets",
        sa.Column("ticket_hash", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=True),
        sa.Column("token_hash", sa.String(length=64), nullable=True),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("ticket_hash"),
    )
    op.create_index("ix_stream_tickets_expires", "stream_tickets", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_stream_tickets_expires", table_name="stream_tickets")
    op.drop_table("stream_tickets")
