"""a2a_calls: the messages Relay sends to external A2A agents on its agents' behalf (POST
/v1/a2a/send), each with what its agent answered and, while its task runs, when the follower
reads it again (due_at; also a sending's lease, and a call approved and not yet sent); the
bearer token the caller gave, sealed. Indexes by caller, of the due ones, and of those held
for an approval. SQLite's a2a_calls_encoded view writes each row's JSON (without the token).

Revision ID: 0038
Revises: 0037
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, Json, UTCDateTime

revision = "0038"
down_revision = "0037"
branch_labels = None
depends_on = None

ENCODED = """
    'call_id', call_id, 'agent_id', agent_id, 'url', url, 'status', status,
    'approval_id', approval_id, 'remote_name', remote_name, 'endpoint', endpoint,
    'message', json(message), 'remote_task_id', remote_task_id, 'context_id', context_id,
    'state', state, 'answer', json(answer), 'error', error,
    'followed_until', replace(followed_until, ' ', 'T') || 'Z',
    'due_at', replace(due_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z'"""
DUE = sa.text("due_at IS NOT NULL")
AWAITING = sa.text("status = 'awaiting_approval'")


def upgrade() -> None:
    op.create_table(
        "a2a_calls",
        sa.Column("call_id", Id, autoincrement=True, nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("approval_id", Id, nullable=True),
        sa.Column("remote_name", sa.String(length=500), nullable=True),
        sa.Column("endpoint", sa.String(length=2000), nullable=True),
        sa.Column("message", Json, nullable=False),
        sa.Column("remote_task_id", sa.String(length=200), nullable=True),
        sa.Column("context_id", sa.String(length=200), nullable=True),
        sa.Column("state", sa.String(length=40), nullable=True),
        sa.Column("answer", Json, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("bearer_sealed", sa.Text(), nullable=True),
        sa.Column("followed_until", UTCDateTime(), nullable=True),
        sa.Column("due_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("call_id"),
    )
    op.create_index("ix_a2a_calls_agent", "a2a_calls", ["agent_id", "call_id"])
    op.create_index(
        "ix_a2a_calls_due", "a2a_calls", ["due_at"], sqlite_where=DUE, postgresql_where=DUE
    )
    op.create_index(
        "ix_a2a_calls_awaiting",
        "a2a_calls",
        ["approval_id"],
        sqlite_where=AWAITING,
        postgresql_where=AWAITING,
    )
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            f"CREATE VIEW a2a_calls_encoded AS SELECT *, json_object({ENCODED}) AS encoded"
            " FROM a2a_calls"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP VIEW a2a_calls_encoded")
    op.drop_index("ix_a2a_calls_awaiting", table_name="a2a_calls")
    op.drop_index("ix_a2a_calls_due", table_name="a2a_calls")
    op.drop_index("ix_a2a_calls_agent", table_name="a2a_calls")
    op.drop_table("a2a_calls")
