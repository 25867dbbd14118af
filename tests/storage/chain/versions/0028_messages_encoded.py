"""messages (SQLite): a view, messages_encoded, of each message's id, room, thread and JSON
("encoded"), which the named statements of relay_core/storage/sqlite/queries/messages.sql
read: SQLite writes the JSON as it reads the row, with no Python object per value, and a page
of them is one JSON array.

A view, not a generated column: SQLite computes a table's generated columns, even virtual ones,
at every insert and update of a row (50 messages delivered from an inbox: 0.98 million
instructions with the column, 0.44 without), and a message's row changes at its delivery and
its ack. PostgreSQL reads its rows as columns and has no such view.

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-28
"""

from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def _time(column: str) -> str:
    """A stored time (naive UTC text with microseconds) as pydantic writes it: ISO 8601 with a
    'T' and a 'Z', without '.000000'."""
    whole = f"iif(substr({column}, 20) = '.000000', substr({column}, 1, 19), {column})"
    return f"replace({whole}, ' ', 'T') || 'Z'"


# The JSON model_dump_json writes for relay_api.models.Message, field by field in its order
# (tests/storage/test_messages_store.py holds the two to each other).
ENCODED = (
    "json_object('message_id', message_id, 'from_agent', from_agent, 'to', \"to\","
    " 'room_id', room_id, 'subject', subject, 'text', text, 'payload', json(payload),"
    " 'reply_to', reply_to, 'thread_id', thread_id,"
    " 'reply_to_notification', reply_to_notification, 'status', status,"
    f" 'created_at', {_time('created_at')}, 'delivered_at', {_time('delivered_at')},"
    f" 'acked_at', {_time('acked_at')}, 'delivery_count', delivery_count)"
)


VIEW = f"""CREATE VIEW messages_encoded AS
SELECT message_id, "to", status, room_id, thread_id, reply_to_notification,
    {ENCODED} AS encoded
FROM messages"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(VIEW)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP VIEW messages_encoded")
