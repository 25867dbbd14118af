"""events.traceparent and webhook_deliveries.traceparent: the W3C trace an event happened in
(the request's that made it), handed on in the feed and in the ``traceparent`` header of each
webhook delivery of it. SQLite's webhook_deliveries_encoded view writes it in each row's JSON.

Revision ID: 0043
Revises: 0042
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0043"
down_revision = "0042"
branch_labels = None
depends_on = None

# Each delivery as the JSON its model reads (revision 0029's, and the trace).
BEFORE = """
    'delivery_id', delivery_id, 'webhook_id', webhook_id, 'event_id', event_id,
    'event_type', event_type, 'message_id', message_id, 'body', body, 'attempts', attempts,
    'status', status, 'last_status_code', last_status_code, 'last_error', last_error,
    'next_attempt_at', replace(next_attempt_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z'"""
FIELDS = BEFORE + ", 'traceparent', traceparent"


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM webhook_deliveries"
    return f"CREATE VIEW webhook_deliveries_encoded AS {select}"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.add_column("events", sa.Column("traceparent", sa.String(length=55), nullable=True))
    if sqlite:
        op.execute("DROP VIEW webhook_deliveries_encoded")
    op.add_column(
        "webhook_deliveries", sa.Column("traceparent", sa.String(length=55), nullable=True)
    )
    if sqlite:
        op.execute(_view(FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW webhook_deliveries_encoded")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE webhook_deliveries DROP COLUMN traceparent")
    if sqlite:
        op.execute(_view(BEFORE))
    op.execute("ALTER TABLE events DROP COLUMN traceparent")
