"""approvals.task_id: the task an approval holds up (an A2A caller sees the task
input-required while it is pending), with an index of the pending ones by task. SQLite's
approvals_encoded view writes it in each row's JSON.

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None

# Each approval as the JSON its model reads, field by field (revision 0032's, and task_id).
BEFORE = """
    'approval_id', approval_id, 'kind', kind, 'status', status, 'title', title,
    'detail', detail, 'payload', json(payload), 'approved_payload', json(approved_payload),
    'requested_by', requested_by, 'subject_id', subject_id, 'audience', audience,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z',
    'decided_by', decided_by, 'note', note, 'platform_message_id', platform_message_id,
    'remembered_policy_id', remembered_policy_id, 'interrupt', interrupt,
    'options', json(options), 'multiple', multiple, 'allow_other', allow_other,
    'answer', json(answer), 'remind_at', replace(remind_at, ' ', 'T') || 'Z',
    'reminded_at', replace(reminded_at, ' ', 'T') || 'Z',
    'escalate_at', replace(escalate_at, ' ', 'T') || 'Z', 'escalated_to', escalated_to"""
FIELDS = BEFORE + ", 'task_id', task_id"
PENDING = sa.text("status = 'pending' AND task_id IS NOT NULL")


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM approvals"
    return f"CREATE VIEW approvals_encoded AS {select}"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    op.add_column("approvals", sa.Column("task_id", Id, nullable=True))
    op.create_index(
        "ix_approvals_pending_task",
        "approvals",
        ["task_id"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )
    if sqlite:
        op.execute(_view(FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    op.drop_index("ix_approvals_pending_task", table_name="approvals")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE approvals DROP COLUMN task_id")
    if sqlite:
        op.execute(_view(BEFORE))
