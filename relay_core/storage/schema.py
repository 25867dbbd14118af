"""The relational schema every SQL adapter queries, and Alembic's revisions build.

Declared once with SQLAlchemy Core: the PostgreSQL adapter (``postgres/``) builds its
statements from these tables, the SQLite adapter (``sqlite/sql.py``) derives its SQL text and
column codecs from them once at start-up, and a test checks that the migrated database matches
them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite keeps naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


# SQLite only auto-increments an INTEGER PRIMARY KEY; everywhere else ids are 64-bit.
Id = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
Name = String(200)
Ref = String(128)
State = String(32)

metadata = MetaData()


def _not_null(column: str) -> dict[str, Any]:
    """Where a partial index holds only rows with ``column`` set (SQLite and PostgreSQL)."""
    where = text(f'"{column}" IS NOT NULL')
    return {"sqlite_where": where, "postgresql_where": where}


def _id(name: str) -> Column[Any]:
    return Column(name, Id, primary_key=True, autoincrement=True)


def _at(name: str, nullable: bool = True) -> Column[Any]:
    return Column(name, UTCDateTime(), nullable=nullable)


agents = Table(
    "agents",
    metadata,
    Column("agent_id", Ref, primary_key=True),
    Column("name", Name),
    Column("kind", Name),
    Column("capabilities", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("status", Name),
    Column("note", Text),
    _at("last_seen_at"),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
    Column("token_hash", String(64), unique=True),
)

spaces = Table(
    "spaces",
    metadata,
    Column("space_id", Ref, primary_key=True),
    Column("name", Name, nullable=False),
    Column("description", Text),
    Column("status", State, nullable=False),
    _at("created_at", nullable=False),
    _at("archived_at"),
)

rooms = Table(
    "rooms",
    metadata,
    Column("room_id", Ref, primary_key=True),
    Column("name", Name, nullable=False),
    Column("topic", Text),
    Column("space_id", Ref, ForeignKey("spaces.space_id"), index=True),
    Column("created_by", Ref, nullable=False),
    _at("created_at", nullable=False),
    Column("platform_thread_id", Name),
)

room_members = Table(
    "room_members",
    metadata,
    _id("member_id"),
    Column("room_id", Ref, ForeignKey("rooms.room_id"), nullable=False),
    Column("agent_id", Ref, ForeignKey("agents.agent_id"), nullable=False),
    _at("joined_at", nullable=False),
    UniqueConstraint("room_id", "agent_id", name="uq_room_members_room_agent"),
)

messages = Table(
    "messages",
    metadata,
    _id("message_id"),
    Column("from_agent", Ref, nullable=False),
    Column("to", Ref, ForeignKey("agents.agent_id")),
    Column("room_id", Ref, ForeignKey("rooms.room_id")),
    Column("subject", Name),
    Column("text", Text, nullable=False),
    Column("payload", Json, nullable=False),
    Column("reply_to", BigInteger),
    Column("reply_to_notification", BigInteger),
    Column("status", State, nullable=False),
    _at("created_at", nullable=False),
    _at("delivered_at"),
    _at("acked_at"),
    Column("delivery_count", Integer, nullable=False, server_default="0"),
    # Its own id for a first message: the database gives it (a trigger, revision 0018).
    Column("thread_id", BigInteger),
    # Partial: a direct message is in the inbox index only, a room post in the room index only.
    Index("ix_messages_inbox", "to", "status", "message_id", **_not_null("to")),
    Index("ix_messages_room", "room_id", "message_id", **_not_null("room_id")),
    Index("ix_messages_thread", "thread_id", "message_id"),
    Index(
        "ix_messages_notification_reply",
        "reply_to_notification",
        **_not_null("reply_to_notification"),
    ),
)

tasks = Table(
    "tasks",
    metadata,
    _id("task_id"),
    Column("title", String(500), nullable=False),
    Column("description", Text),
    Column("payload", Json, nullable=False),
    Column("priority", Integer, nullable=False),
    Column("assignee", Ref),
    Column("room_id", Ref),
    Column("status", State, nullable=False),
    Column("created_by", Ref, nullable=False),
    Column("claimed_by", Ref),
    _at("claimed_at"),
    _at("lease_expires_at"),
    Column("lease_seconds", Integer),
    Column("attempts", Integer, nullable=False),
    Column("max_attempts", Integer, nullable=False),
    Column("progress", Integer),
    Column("result", Json),
    Column("error", Text),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
    _at("finished_at"),
    Index("ix_tasks_status_lease", "status", "lease_expires_at"),
    Index("ix_tasks_status_id", "status", "task_id"),
)

task_events = Table(
    "task_events",
    metadata,
    _id("event_id"),
    Column("task_id", BigInteger, ForeignKey("tasks.task_id"), nullable=False, index=True),
    Column("agent_id", Ref),
    Column("kind", Name, nullable=False),
    Column("message", Text),
    Column("progress", Integer),
    Column("data", Json, nullable=False),
    _at("created_at", nullable=False),
)

actions = Table(
    "actions",
    metadata,
    _id("action_id"),
    Column("agent_id", Ref, nullable=False, index=True),
    Column("action", Name, nullable=False),
    Column("target", String(1000)),
    Column("params", Json, nullable=False),
    Column("outcome", Text),
    Column("task_id", BigInteger),
    _at("created_at", nullable=False),
)

notifications = Table(
    "notifications",
    metadata,
    _id("notification_id"),
    Column("agent_id", Ref),
    Column("text", Text, nullable=False),
    Column("bridge", State, nullable=False),
    Column("platform_message_id", Name),
    Column("status", State, nullable=False),
    Column("error", Text),
    _at("created_at", nullable=False),
    _at("sent_at"),
    Index("ix_notifications_platform", "bridge", "platform_message_id"),
)

approvals = Table(
    "approvals",
    metadata,
    _id("approval_id"),
    Column("kind", State, nullable=False),
    Column("status", State, nullable=False, index=True),
    Column("title", String(500), nullable=False),
    Column("detail", Text),
    Column("payload", Json),
    Column("requested_by", Ref, nullable=False),
    Column("subject_id", Ref, nullable=False),
    Column("audience", Ref, nullable=False, server_default=text("'*'")),
    _at("created_at", nullable=False),
    _at("expires_at"),
    _at("decided_at"),
    Column("decided_by", Name),
    Column("note", Text),
    Column("platform_message_id", Name),
    Index("ix_approvals_audience", "audience", "approval_id"),
    Index(
        "ix_approvals_due",
        "expires_at",
        sqlite_where=text("status = 'pending' AND expires_at IS NOT NULL"),
        postgresql_where=text("status = 'pending' AND expires_at IS NOT NULL"),
    ),
)

enrollments = Table(
    "enrollments",
    metadata,
    _id("enroll_id"),
    Column("agent_id", Ref, nullable=False),
    Column("name", Name),
    Column("capabilities", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("reason", Text),
    Column("kind", Name),
    Column("status", State, nullable=False),
    Column("approval_id", BigInteger),
    Column("token_delivered", Boolean, nullable=False),
    _at("created_at", nullable=False),
    _at("decided_at"),
    Column("claim_hash", String(64), nullable=False),
    Index("ix_enrollments_status_created", "status", "created_at"),
)

interventions = Table(
    "interventions",
    metadata,
    Column("intervention_id", Ref, primary_key=True),
    Column("status", State, nullable=False),
    Column("title", String(500)),
    Column("risk", State),
    Column("proposed_action", Text),
    Column("approval_id", BigInteger),
    Column("approval_status", State, nullable=False),
    Column("created_by", Ref, nullable=False),
    Column("participants", Json, nullable=False, server_default=text("'[]'")),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
    Index("ix_interventions_created", "created_at"),
)

diagnostics = Table(
    "diagnostics",
    metadata,
    _id("diagnostic_id"),
    Column("intervention_id", Ref, ForeignKey("interventions.intervention_id"), nullable=False),
    Column("agent_id", Ref, nullable=False),
    Column("summary", String(2000), nullable=False),
    Column("content", Json, nullable=False),
    Column("content_type", Name),
    Column("severity", State, nullable=False),
    _at("created_at", nullable=False),
    Index("ix_diagnostics_intervention", "intervention_id", "diagnostic_id"),
)

intervention_actions = Table(
    "intervention_actions",
    metadata,
    _id("action_id"),
    Column("intervention_id", Ref, ForeignKey("interventions.intervention_id"), nullable=False),
    Column("agent_id", Ref, nullable=False),
    Column("action", Text, nullable=False),
    Column("status", State, nullable=False),
    Column("evidence_before", Json, nullable=False),
    Column("evidence_after", Json, nullable=False),
    Column("link", String(2000)),
    _at("created_at", nullable=False),
    Index("ix_intervention_actions_intervention", "intervention_id", "action_id"),
)


events = Table(
    "events",
    metadata,
    _id("event_id"),
    Column("kind", Name, nullable=False),
    Column("audience", Ref, nullable=False),
    Column("subject_id", Ref, nullable=False),
    Column("data", Json, nullable=False),
    _at("created_at", nullable=False),
    Index("ix_events_audience", "audience", "event_id"),
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    _id("record_id"),
    Column("scope", Ref, nullable=False),
    Column("key_hash", String(64), nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("sealed_body", Text, nullable=False),
    _at(
        "created_at",
        nullable=False,
    ),
    UniqueConstraint("scope", "key_hash", name="uq_idempotency_keys_scope_key_hash"),
    Index("ix_idempotency_keys_created", "created_at"),
)

bridge_offsets = Table(
    "bridge_offsets",
    metadata,
    Column("bridge", State, primary_key=True),
    Column("last_update_id", BigInteger, nullable=False),
    _at("updated_at", nullable=False),
    Column("cursor", Text),
)


posts = Table(
    "posts",
    metadata,
    _id("post_id"),
    Column("subject", State, nullable=False),
    Column("subject_id", BigInteger, nullable=False),
    Column("bridge", State, nullable=False),
    Column("platform_message_id", Name),
    Column("status", State, nullable=False),
    Column("error", Text),
    _at("created_at", nullable=False),
    Index("ix_posts_subject", "subject", "subject_id"),
    Index("ix_posts_platform", "bridge", "platform_message_id"),
)


room_threads = Table(
    "room_threads",
    metadata,
    _id("thread_key"),
    Column("room_id", Ref, nullable=False),
    Column("bridge", State, nullable=False),
    Column("platform_thread_id", Name, nullable=False),
    _at("created_at", nullable=False),
    Index("ix_room_threads_room", "room_id", "bridge", unique=True),
)


policies = Table(
    "policies",
    metadata,
    _id("policy_id"),
    Column("name", Name, nullable=False),
    Column("decision", State, nullable=False),
    Column("note", Text),
    Column("priority", Integer, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("match", Json, nullable=False),
    Column("limit", Json),
    Column("version", Integer, nullable=False),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
    Index("ix_policies_enabled", "enabled"),
)

policy_versions = Table(
    "policy_versions",
    metadata,
    _id("version_key"),
    Column("policy_id", Id, ForeignKey("policies.policy_id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("policy", Json, nullable=False),
    _at("created_at", nullable=False),
    Index("ix_policy_versions_policy", "policy_id", "version", unique=True),
)

policy_uses = Table(
    "policy_uses",
    metadata,
    _id("use_id"),
    Column("policy_id", Id, nullable=False),
    Column("agent_id", Ref, nullable=False),
    Column("approval_id", Id, nullable=False),
    _at("decided_at", nullable=False),
    Index("ix_policy_uses_window", "policy_id", "agent_id", "decided_at"),
)


stream_tickets = Table(
    "stream_tickets",
    metadata,
    Column("ticket_hash", String(64), primary_key=True),
    Column("kind", State, nullable=False),
    Column("agent_id", Ref),
    Column("token_hash", String(64)),
    _at("expires_at", nullable=False),
    Index("ix_stream_tickets_expires", "expires_at"),
)


webhooks = Table(
    "webhooks",
    metadata,
    _id("webhook_id"),
    Column("url", String(2000), nullable=False),
    Column("events", Json, nullable=False),
    Column("description", Text),
    Column("enabled", Boolean, nullable=False),
    Column("disabled_reason", Text),
    Column("sealed_secret", Text, nullable=False),
    Column("sealed_previous", Text),
    _at("previous_until"),
    Column("after_event_id", BigInteger, nullable=False),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    _id("delivery_id"),
    Column("webhook_id", Id, ForeignKey("webhooks.webhook_id"), nullable=False),
    Column("event_id", BigInteger, nullable=False),
    Column("event_type", Name, nullable=False),
    Column("message_id", Ref, nullable=False),
    Column("body", Text, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("status", State, nullable=False),
    Column("last_status_code", Integer),
    Column("last_error", Text),
    _at("next_attempt_at"),
    _at("created_at", nullable=False),
    Index("ix_webhook_deliveries_webhook", "webhook_id", "delivery_id"),
    # Only pending deliveries have a next attempt: the sender reads the due ones by it.
    Index("ix_webhook_deliveries_due", "next_attempt_at", **_not_null("next_attempt_at")),
    # The sweep finds the finished ones past their keeping by it.
    Index("ix_webhook_deliveries_age", "status", "created_at"),
)
