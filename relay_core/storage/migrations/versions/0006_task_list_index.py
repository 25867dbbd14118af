"""tasks (status, task_id): a list filtered by status is read in id order from the index

Without it, GET /v1/tasks?status=open sorted every open task to return the first page.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_tasks_status_id", "tasks", ["status", "task_id"])


def downgrade() -> None:
    op.drop_index("ix_tasks_status_id", table_name="tasks")
