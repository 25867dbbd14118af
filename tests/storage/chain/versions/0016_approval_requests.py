"""approvals of kind request: what is to be approved (payload), a deadline (expires_at, with the
sweep's index of pending ones), and who may see one besides the operator (audience: everyone
for the approvals made before)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Json, UTCDateTime

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

DUE = sa.text("status = 'pending' AND expires_at IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("approvals") as table:
        table.add_column(sa.Column("payload", Json, nullable=True))
        table.add_column(
            sa.Column(
                "audience", sa.String(length=128), nullable=False, server_default=sa.text("'*'")
            )
        )
        table.add_column(sa.Column("expires_at", UTCDateTime(), nullable=True))
    op.create_index("ix_approvals_audience", "approvals", ["audience", "approval_id"])
    op.create_index(
        "ix_approvals_due", "approvals", ["expires_at"], sqlite_where=DUE, postgresql_where=DUE
    )


def downgrade() -> None:
    op.drop_index("ix_approvals_due", table_name="approvals")
    op.drop_index("ix_approvals_audience", table_name="approvals")
    with op.batch_alter_table("approvals") as table:
        table.drop_column("expires_at")
        table.drop_column("audience")
        table.drop_column("payload")
