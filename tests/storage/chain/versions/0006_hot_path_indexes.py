"""Indexes for the hot paths

- tasks (status, task_id): a list filtered by status is read in id order from the index;
  without it, GET /v1/tasks?status=open sorted every open task to return the first page.
- messages: the inbox index holds direct messages only and the room index room posts only
  (partial indexes), so each new message writes one index entry instead of two.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _partial(column: str) -> dict[str, sa.TextClause]:
    where = sa.text(f'"{column}" IS NOT NULL')
    return {"sqlite_where": where, "postgresql_where": where}


def upgrade() -> None:
    op.create_index("ix_tasks_status_id", "tasks", ["status", "task_id"])
    op.drop_index("ix_messages_inbox", table_name="messages")
    op.create_index(
        "ix_messages_inbox", "messages", ["to", "status", "message_id"], **_partial("to")
    )
    op.drop_index("ix_messages_room", table_name="messages")
    op.create_index(
        "ix_messages_room", "messages", ["room_id", "message_id"], **_partial("room_id")
    )


def downgrade() -> None:
    op.drop_index("ix_messages_room", table_name="messages")
    op.create_index("ix_messages_room", "messages", ["room_id", "message_id"])
    op.drop_index("ix_messages_inbox", table_name="messages")
    op.create_index("ix_messages_inbox", "messages", ["to", "status", "message_id"])
    op.drop_index("ix_tasks_status_id", table_name="tasks")
