"""SQLite's a2a_tasks_shown view: each task asked over A2A with what its listing and its reading
show beside it (the latest note of its conversation, the newest pending approval that names it),
so that a page of them is one statement. PostgreSQL reads the same with lateral joins.

Revision ID: 0037
Revises: 0036
Create Date: 2026-11-29
"""

from alembic import op

revision = "0037"
down_revision = "0036"
branch_labels = None
depends_on = None

VIEW = """
CREATE VIEW a2a_tasks_shown AS
SELECT a.task_id, a.agent_id, a.caller, a.context_id, a.message_id, t.status, t.updated_at,
       t.encoded AS task,
       (SELECT json_object(
            'event_id', e.event_id, 'task_id', e.task_id, 'agent_id', e.agent_id,
            'kind', e.kind, 'message', e.message, 'progress', e.progress, 'data', json(e.data),
            'created_at', replace(e.created_at, ' ', 'T') || 'Z')
        FROM task_events e
        WHERE e.task_id = a.task_id AND e.kind IN ('message', 'input_required')
        ORDER BY e.event_id DESC LIMIT 1) AS latest_note,
       (SELECT p.encoded FROM approvals_encoded p
        WHERE p.task_id = a.task_id AND p.status = 'pending'
        ORDER BY p.approval_id DESC LIMIT 1) AS waiting_on
FROM a2a_tasks a JOIN tasks t ON t.task_id = a.task_id
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(VIEW)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP VIEW a2a_tasks_shown")
