"""A2A push notifications: an A2A caller's push-notification config is an endpoint of the
webhook sender that takes one task's events (webhooks.task_id), with what the protocol sends
with each (webhooks.a2a_push: the config's id, its caller and agent, its token and credentials
sealed). SQLite's webhooks_encoded view writes both in each row's JSON.

Revision ID: 0036
Revises: 0035
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, Json

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None

# Each endpoint as the JSON its model reads (revision 0029's, and the new ones).
BEFORE = """
    'webhook_id', webhook_id, 'url', url, 'events', json(events), 'description', description,
    'enabled', enabled, 'disabled_reason', disabled_reason, 'sealed_secret', sealed_secret,
    'sealed_previous', sealed_previous,
    'previous_until', replace(previous_until, ' ', 'T') || 'Z',
    'after_event_id', after_event_id, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z'"""
FIELDS = BEFORE + ", 'task_id', task_id, 'a2a_push', json(a2a_push)"
OF_A_TASK = sa.text("task_id IS NOT NULL")


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM webhooks"
    return f"CREATE VIEW webhooks_encoded AS {select}"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW webhooks_encoded")
    op.add_column("webhooks", sa.Column("task_id", Id, nullable=True))
    op.add_column("webhooks", sa.Column("a2a_push", Json, nullable=True))
    op.create_index(
        "ix_webhooks_task",
        "webhooks",
        ["task_id", "webhook_id"],
        sqlite_where=OF_A_TASK,
        postgresql_where=OF_A_TASK,
    )
    if sqlite:
        op.execute(_view(FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW webhooks_encoded")
    op.drop_index("ix_webhooks_task", table_name="webhooks")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE webhooks DROP COLUMN a2a_push")
    op.execute("ALTER TABLE webhooks DROP COLUMN task_id")
    if sqlite:
        op.execute(_view(BEFORE))
