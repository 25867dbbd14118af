"""idempotency_keys (status): dropped; the answer's status is the operation's own

A stored answer is replayed with the success status of the operation it answered, which the
transport knows; the domain keeps the sealed body alone. A sealed answer was bound to its status
too, so one stored before this revision no longer opens: retried within its window (a day) with
the same key, it is refused as a conflict (409), never created twice.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("idempotency_keys") as table:
        table.drop_column("status")


def downgrade() -> None:
    with op.batch_alter_table("idempotency_keys") as table:
        table.add_column(sa.Column("status", sa.Integer(), nullable=False, server_default="201"))
