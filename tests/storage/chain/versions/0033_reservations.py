"""reservations: the paths of a workspace (a repository the agents share) an agent holds, each
until its expires_at or its end (released, expired: status and ended_at), shared or exclusive;
indexes by workspace for the grant's check, by holder, of the active ones due (the sweep), and
of those bound to a task. SQLite's reservations_encoded view writes each row's JSON.

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, Json, UTCDateTime

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None

ENCODED = """
    'reservation_id', reservation_id, 'workspace', workspace, 'paths', json(paths),
    'exclusive', exclusive, 'holder', holder, 'reason', reason, 'task_id', task_id,
    'status', status, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'ended_at', replace(ended_at, ' ', 'T') || 'Z'"""
ACTIVE = sa.text("status = 'active'")
BOUND = sa.text("status = 'active' AND task_id IS NOT NULL")


def upgrade() -> None:
    op.create_table(
        "reservations",
        sa.Column("reservation_id", Id, autoincrement=True, nullable=False),
        sa.Column("workspace", sa.String(length=200), nullable=False),
        sa.Column("paths", Json, nullable=False),
        sa.Column("exclusive", sa.Boolean(), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("task_id", Id, nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("reservation_id"),
    )
    op.create_index(
        "ix_reservations_workspace", "reservations", ["workspace", "status", "reservation_id"]
    )
    op.create_index("ix_reservations_holder", "reservations", ["holder", "reservation_id"])
    op.create_index(
        "ix_reservations_due",
        "reservations",
        ["expires_at"],
        sqlite_where=ACTIVE,
        postgresql_where=ACTIVE,
    )
    op.create_index(
        "ix_reservations_task",
        "reservations",
        ["task_id"],
        sqlite_where=BOUND,
        postgresql_where=BOUND,
    )
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            f"CREATE VIEW reservations_encoded AS SELECT *, json_object({ENCODED}) AS encoded"
            " FROM reservations"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP VIEW reservations_encoded")
    op.drop_index("ix_reservations_task", table_name="reservations")
    op.drop_index("ix_reservations_due", table_name="reservations")
    op.drop_index("ix_reservations_holder", table_name="reservations")
    op.drop_index("ix_reservations_workspace", table_name="reservations")
    op.drop_table("reservations")
