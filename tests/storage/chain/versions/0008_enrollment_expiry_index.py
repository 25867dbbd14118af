"""enrollments (status, created_at): the background sweep finds due enrollments by index

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_enrollments_status_created", "enrollments", ["status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_enrollments_status_created", table_name="enrollments")
