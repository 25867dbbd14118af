"""approvals.traceparent: the W3C trace an approval was asked in, handed on to the agent that
waits on it. SQLite's approvals_encoded view writes it in each row's JSON.

Revision ID: 0040
Revises: 0039
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None

# Each approval as the JSON its model reads, field by field (revision 0035's, and the trace).
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
    'escalate_at', replace(escalate_at, ' ', 'T') || 'Z', 'escalated_to', escalated_to,
    'task_id', task_id"""
FIELDS = BEFORE + ", 'traceparent', traceparent"


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM approvals"
    return f"CREATE VIEW approvals_encoded AS {select}"


def _shown() -> str:
    """Revision 0037's view of A2A tasks, which reads approvals_encoded: SQLite checks every
    view as a table changes, so it goes while approvals_encoded is made again."""
    found = op.get_bind().execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'a2a_tasks_shown'")
    )
    return str(found.scalar_one())


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        shown = _shown()
        op.execute("DROP VIEW a2a_tasks_shown")
        op.execute("DROP VIEW approvals_encoded")
    op.add_column("approvals", sa.Column("traceparent", sa.String(length=55), nullable=True))
    if sqlite:
        op.execute(_view(FIELDS))
        op.execute(shown)


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        shown = _shown()
        op.execute("DROP VIEW a2a_tasks_shown")
        op.execute("DROP VIEW approvals_encoded")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE approvals DROP COLUMN traceparent")
    if sqlite:
        op.execute(_view(BEFORE))
        op.execute(shown)
