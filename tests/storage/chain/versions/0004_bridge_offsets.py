"""bridge_offsets: how far each operator platform's updates were applied

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import UTCDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bridge_offsets",
        sa.Column("bridge", sa.String(length=32), nullable=False),
        sa.Column("last_update_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("bridge"),
    )


def downgrade() -> None:
    op.drop_table("bridge_offsets")
