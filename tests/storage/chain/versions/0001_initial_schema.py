"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from tests.storage.chain.types import UTCDateTime

# Frozen copies of the column types this revision was written with.
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "actions",
        sa.Column("action_id", ID, autoincrement=True, nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("action", sa.String(length=200), nullable=False),
        sa.Column("target", sa.String(length=1000), nullable=True),
        sa.Column("params", JSON, nullable=False),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.Column("task_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("action_id"),
    )
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_actions_agent_id"), ["agent_id"], unique=False)

    op.create_table(
        "agents",
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("kind", sa.String(length=200), nullable=True),
        sa.Column("capabilities", JSON, nullable=False),
        sa.Column("metadata", JSON, nullable=False),
        sa.Column("status", sa.String(length=200), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("last_seen_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("agent_id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "approvals",
        sa.Column("approval_id", ID, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("requested_by", sa.String(length=128), nullable=False),
        sa.Column("subject_id", sa.String(length=128), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("decided_at", UTCDateTime(), nullable=True),
        sa.Column("decided_by", sa.String(length=200), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("approval_id"),
    )
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_approvals_status"), ["status"], unique=False)

    op.create_table(
        "enrollments",
        sa.Column("enroll_id", ID, autoincrement=True, nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("capabilities", JSON, nullable=False),
        sa.Column("metadata", JSON, nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("approval_id", sa.BigInteger(), nullable=True),
        sa.Column("token_delivered", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("decided_at", UTCDateTime(), nullable=True),
        sa.Column("claim_hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("enroll_id"),
    )
    op.create_table(
        "interventions",
        sa.Column("intervention_id", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=True),
        sa.Column("risk", sa.String(length=32), nullable=True),
        sa.Column("proposed_action", sa.Text(), nullable=True),
        sa.Column("approval_id", sa.BigInteger(), nullable=True),
        sa.Column("approval_status", sa.String(length=32), nullable=False),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("intervention_id"),
    )
    with op.batch_alter_table("interventions", schema=None) as batch_op:
        batch_op.create_index("ix_interventions_created", ["created_at"], unique=False)

    op.create_table(
        "notifications",
        sa.Column("notification_id", ID, autoincrement=True, nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("bridge", sa.String(length=32), nullable=False),
        sa.Column("platform_message_id", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("sent_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("notification_id"),
    )
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.create_index(
            "ix_notifications_platform", ["bridge", "platform_message_id"], unique=False
        )

    op.create_table(
        "spaces",
        sa.Column("space_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("archived_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("space_id"),
    )
    op.create_table(
        "tasks",
        sa.Column("task_id", ID, autoincrement=True, nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("assignee", sa.String(length=128), nullable=True),
        sa.Column("room_id", sa.String(length=128), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        sa.Column("claimed_by", sa.String(length=128), nullable=True),
        sa.Column("claimed_at", UTCDateTime(), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime(), nullable=True),
        sa.Column("lease_seconds", sa.Integer(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("progress", sa.Integer(), nullable=True),
        sa.Column("result", JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("task_id"),
    )
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.create_index("ix_tasks_status_lease", ["status", "lease_expires_at"], unique=False)

    op.create_table(
        "diagnostics",
        sa.Column("diagnostic_id", ID, autoincrement=True, nullable=False),
        sa.Column("intervention_id", sa.String(length=128), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("summary", sa.String(length=2000), nullable=False),
        sa.Column("content", JSON, nullable=False),
        sa.Column("content_type", sa.String(length=200), nullable=True),
        sa.Column("severity", sa.String(length=32), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["intervention_id"],
            ["interventions.intervention_id"],
        ),
        sa.PrimaryKeyConstraint("diagnostic_id"),
    )
    with op.batch_alter_table("diagnostics", schema=None) as batch_op:
        batch_op.create_index(
            "ix_diagnostics_intervention", ["intervention_id", "diagnostic_id"], unique=False
        )

    op.create_table(
        "intervention_actions",
        sa.Column("action_id", ID, autoincrement=True, nullable=False),
        sa.Column("intervention_id", sa.String(length=128), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("evidence_before", JSON, nullable=False),
        sa.Column("evidence_after", JSON, nullable=False),
        sa.Column("link", sa.String(length=2000), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["intervention_id"],
            ["interventions.intervention_id"],
        ),
        sa.PrimaryKeyConstraint("action_id"),
    )
    with op.batch_alter_table("intervention_actions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_intervention_actions_intervention", ["intervention_id", "action_id"], unique=False
        )

    op.create_table(
        "rooms",
        sa.Column("room_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("topic", sa.Text(), nullable=True),
        sa.Column("space_id", sa.String(length=128), nullable=True),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("platform_thread_id", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["space_id"],
            ["spaces.space_id"],
        ),
        sa.PrimaryKeyConstraint("room_id"),
    )
    with op.batch_alter_table("rooms", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rooms_space_id"), ["space_id"], unique=False)

    op.create_table(
        "task_events",
        sa.Column("event_id", ID, autoincrement=True, nullable=False),
        sa.Column("task_id", sa.BigInteger(), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=True),
        sa.Column("kind", sa.String(length=200), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("progress", sa.Integer(), nullable=True),
        sa.Column("data", JSON, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.task_id"],
        ),
        sa.PrimaryKeyConstraint("event_id"),
    )
    with op.batch_alter_table("task_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_task_events_task_id"), ["task_id"], unique=False)

    op.create_table(
        "messages",
        sa.Column("message_id", ID, autoincrement=True, nullable=False),
        sa.Column("from_agent", sa.String(length=128), nullable=False),
        sa.Column("to", sa.String(length=128), nullable=True),
        sa.Column("room_id", sa.String(length=128), nullable=True),
        sa.Column("subject", sa.String(length=200), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("reply_to", sa.BigInteger(), nullable=True),
        sa.Column("reply_to_notification", sa.BigInteger(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("delivered_at", UTCDateTime(), nullable=True),
        sa.Column("acked_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["room_id"],
            ["rooms.room_id"],
        ),
        sa.ForeignKeyConstraint(
            ["to"],
            ["agents.agent_id"],
        ),
        sa.PrimaryKeyConstraint("message_id"),
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index("ix_messages_inbox", ["to", "status", "message_id"], unique=False)
        batch_op.create_index("ix_messages_room", ["room_id", "message_id"], unique=False)

    op.create_table(
        "room_members",
        sa.Column("member_id", ID, autoincrement=True, nullable=False),
        sa.Column("room_id", sa.String(length=128), nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("joined_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.agent_id"],
        ),
        sa.ForeignKeyConstraint(
            ["room_id"],
            ["rooms.room_id"],
        ),
        sa.PrimaryKeyConstraint("member_id"),
        sa.UniqueConstraint("room_id", "agent_id", name="uq_room_members_room_agent"),
    )


def downgrade() -> None:
    op.drop_table("room_members")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("ix_messages_room")
        batch_op.drop_index("ix_messages_inbox")

    op.drop_table("messages")
    with op.batch_alter_table("task_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_task_events_task_id"))

    op.drop_table("task_events")
    with op.batch_alter_table("rooms", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rooms_space_id"))

    op.drop_table("rooms")
    with op.batch_alter_table("intervention_actions", schema=None) as batch_op:
        batch_op.drop_index("ix_intervention_actions_intervention")

    op.drop_table("intervention_actions")
    with op.batch_alter_table("diagnostics", schema=None) as batch_op:
        batch_op.drop_index("ix_diagnostics_intervention")

    op.drop_table("diagnostics")
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index("ix_tasks_status_lease")

    op.drop_table("tasks")
    op.drop_table("spaces")
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.drop_index("ix_notifications_platform")

    op.drop_table("notifications")
    with op.batch_alter_table("interventions", schema=None) as batch_op:
        batch_op.drop_index("ix_interventions_created")

    op.drop_table("interventions")
    op.drop_table("enrollments")
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_approvals_status"))

    op.drop_table("approvals")
    op.drop_table("agents")
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_actions_agent_id"))

    op.drop_table("actions")
