"""idempotency keys; messages.delivery_count

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import UTCDateTime

# Frozen copy of the column type this revision was written with.
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("delivery_count", sa.Integer(), nullable=False, server_default="0")
        )
    op.create_table(
        "idempotency_keys",
        sa.Column("record_id", ID, autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=128), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("record_id"),
        sa.UniqueConstraint("scope", "key", name="uq_idempotency_keys_scope_key"),
    )
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.create_index("ix_idempotency_keys_created", ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_index("ix_idempotency_keys_created")
    op.drop_table("idempotency_keys")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("delivery_count")
