"""a2a: how an agent is reached over A2A (agents.a2a, the JSON of A2AConfig; SQLite's
agents_encoded view writes it too), and a2a_tasks: the tasks asked of an agent over A2A, with
the conversation (context_id) each belongs to and the asker's message id (a resent message is
the same task), indexed for an asker's listing of one agent's tasks.

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, Json, UTCDateTime

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None

AGENT = """
    'agent_id', agent_id, 'name', name, 'kind', kind,
    'capabilities', json(capabilities), 'metadata', json(metadata), 'status', status,
    'note', note, 'last_seen_at', replace(last_seen_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z', 'token_hash', token_hash"""


def _agents_view(encoded: str) -> None:
    op.execute("DROP VIEW agents_encoded")
    op.execute(
        f"CREATE VIEW agents_encoded AS SELECT *, json_object(\n{encoded}\n) AS encoded FROM agents"
    )


def upgrade() -> None:
    op.add_column("agents", sa.Column("a2a", Json, nullable=True))
    if op.get_bind().dialect.name == "sqlite":
        _agents_view(AGENT + ", 'a2a', json(a2a)")
    op.create_table(
        "a2a_tasks",
        sa.Column("task_id", Id, nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("caller", sa.String(length=128), nullable=False),
        sa.Column("context_id", sa.String(length=200), nullable=False),
        sa.Column("message_id", sa.String(length=200), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("task_id"),
        sa.UniqueConstraint("caller", "agent_id", "message_id", name="uq_a2a_tasks_message"),
    )
    op.create_index("ix_a2a_tasks_caller", "a2a_tasks", ["caller", "agent_id", "context_id"])


def downgrade() -> None:
    op.drop_index("ix_a2a_tasks_caller", table_name="a2a_tasks")
    op.drop_table("a2a_tasks")
    if op.get_bind().dialect.name == "sqlite":
        _agents_view(AGENT)
    op.drop_column("agents", "a2a")
