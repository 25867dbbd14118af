"""messages.traceparent: the W3C trace a message was sent in, handed on to whoever handles it.
SQLite's messages_encoded view writes it last in each message's JSON, as the model does.

Revision ID: 0039
Revises: 0038
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None


def _time(column: str) -> str:
    """A stored time as pydantic writes it (revision 0028's)."""
    whole = f"iif(substr({column}, 20) = '.000000', substr({column}, 1, 19), {column})"
    return f"replace({whole}, ' ', 'T') || 'Z'"


# The JSON model_dump_json writes for relay_api.models.Message, field by field in its order
# (tests/storage/test_messages_store.py holds the two to each other): revision 0028's, and the
# trace.
BEFORE = (
    "json_object('message_id', message_id, 'from_agent', from_agent, 'to', \"to\","
    " 'room_id', room_id, 'subject', subject, 'text', text, 'payload', json(payload),"
    " 'reply_to', reply_to, 'thread_id', thread_id,"
    " 'reply_to_notification', reply_to_notification, 'status', status,"
    f" 'created_at', {_time('created_at')}, 'delivered_at', {_time('delivered_at')},"
    f" 'acked_at', {_time('acked_at')}, 'delivery_count', delivery_count"
)
ENCODED = BEFORE + ", 'traceparent', traceparent)"


def _view(encoded: str) -> str:
    return f"""CREATE VIEW messages_encoded AS
SELECT message_id, "to", status, room_id, thread_id, reply_to_notification,
    {encoded} AS encoded
FROM messages"""


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW messages_encoded")
    op.add_column("messages", sa.Column("traceparent", sa.String(length=55), nullable=True))
    if sqlite:
        op.execute(_view(ENCODED))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW messages_encoded")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE messages DROP COLUMN traceparent")
    if sqlite:
        op.execute(_view(BEFORE + ")"))
