"""One shape of row: SQLite's reads answer a record's columns, as PostgreSQL's do, and one
mapper reads them (relay_core/storage/rows.py); the views that wrote each row as JSON go.
messages_encoded and tasks.encoded stay, for the hot lists still built in SQL, and
approvals_encoded for a2a_tasks_shown (an A2A task's pending approval, as JSON).

Revision ID: 0045
Revises: 0044
Create Date: 2026-12-08
"""

from alembic import op

revision = "0045"
down_revision = "0044"
branch_labels = None
depends_on = None

VIEWS = (
    "a2a_calls_encoded",
    "actions_encoded",
    "agents_encoded",
    "enrollments_encoded",
    "interventions_encoded",
    "notifications_encoded",
    "policies_encoded",
    "reservations_encoded",
    "room_threads_encoded",
    "rooms_encoded",
    "spaces_encoded",
    "webhooks_encoded",
)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":  # PostgreSQL never had them
        for view in VIEWS:
            bind.exec_driver_sql(f"DROP VIEW {view}")


def downgrade() -> None:
    raise RuntimeError("the JSON views are gone for good: restore the backup taken before")
