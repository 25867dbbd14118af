"""Idempotency answers sealed, found by a hash of their key

The stored answer of a create may carry a secret shown once (an agent's token, an enrollment's
claim). Rows written before this revision hold it in the clear, so they are dropped, not
converted (their keys cannot be recovered to seal them): a client retrying across this upgrade
with a key from before it creates anew. SQLite overwrites the dropped pages (secure_delete).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import UTCDateTime

# Frozen copy of the column type this revision was written with.
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _create(key: str, body: str, unique: str) -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("record_id", ID, autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=128), nullable=False),
        sa.Column(key, sa.String(length=200 if key == "key" else 64), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column(body, sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("record_id"),
        sa.UniqueConstraint("scope", key, name=unique),
    )
    op.create_index("ix_idempotency_keys_created", "idempotency_keys", ["created_at"])


def _drop() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("PRAGMA secure_delete = ON")
    op.drop_index("ix_idempotency_keys_created", table_name="idempotency_keys")
    op.drop_table("idempotency_keys")


def upgrade() -> None:
    _drop()
    _create("key_hash", "sealed_body", "uq_idempotency_keys_scope_key_hash")


def downgrade() -> None:
    _drop()
    _create("key", "body", "uq_idempotency_keys_scope_key")
