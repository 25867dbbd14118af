"""notifications.traceparent: the W3C trace a notification was sent in, handed on with the
operator's replies to the agent. SQLite's notifications_encoded view writes it in each row's
JSON.

Revision ID: 0041
Revises: 0040
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0041"
down_revision = "0040"
branch_labels = None
depends_on = None

# Each notification as the JSON its model reads (revision 0029's, and the trace).
BEFORE = """
    'notification_id', notification_id, 'agent_id', agent_id, 'text', text, 'bridge', bridge,
    'platform_message_id', platform_message_id, 'status', status, 'error', error,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'sent_at', replace(sent_at, ' ', 'T') || 'Z'"""
FIELDS = BEFORE + ", 'traceparent', traceparent"


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM notifications"
    return f"CREATE VIEW notifications_encoded AS {select}"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW notifications_encoded")
    op.add_column("notifications", sa.Column("traceparent", sa.String(length=55), nullable=True))
    if sqlite:
        op.execute(_view(FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW notifications_encoded")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE notifications DROP COLUMN traceparent")
    if sqlite:
        op.execute(_view(BEFORE))
