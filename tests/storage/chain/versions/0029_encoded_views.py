"""SQLite: a view of each table its named statements read records of more than once,
<table>_encoded, with the table's columns and each row's JSON ("encoded"), so that the JSON a
record is read as is written once (relay_core/storage/sqlite/queries/*.sql select "encoded"
from it). PostgreSQL reads its rows as columns and has no such view.

A statement that writes and answers the row (UPDATE ... RETURNING) cannot read a view: it
writes the same json_object itself.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-28
"""

from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

# Each table's row as the JSON its model reads (``model_validate_json``), field by field.
ENCODED = {
    "actions": """
    'action_id', action_id, 'agent_id', agent_id, 'action', action, 'target', target,
    'params', json(params), 'outcome', outcome, 'task_id', task_id,
    'created_at', replace(created_at, ' ', 'T') || 'Z'""",
    "agents": """
    'agent_id', agent_id, 'name', name, 'kind', kind,
    'capabilities', json(capabilities), 'metadata', json(metadata), 'status', status,
    'note', note, 'last_seen_at', replace(last_seen_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z', 'token_hash', token_hash""",
    "approvals": """
    'approval_id', approval_id, 'kind', kind, 'status', status, 'title', title,
    'detail', detail, 'payload', json(payload), 'requested_by', requested_by,
    'subject_id', subject_id, 'audience', audience,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z',
    'decided_by', decided_by, 'note', note, 'platform_message_id', platform_message_id""",
    "enrollments": """
    'enroll_id', enroll_id, 'agent_id', agent_id, 'name', name, 'kind', kind,
    'capabilities', json(capabilities), 'metadata', json(metadata), 'reason', reason,
    'status', status, 'approval_id', approval_id, 'token_delivered', token_delivered,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z', 'claim_hash', claim_hash""",
    "interventions": """
    'intervention_id', intervention_id, 'status', status, 'title', title, 'risk', risk,
    'proposed_action', proposed_action, 'approval_id', approval_id,
    'approval_status', approval_status, 'created_by', created_by,
    'participants', json(participants), 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z'""",
    "notifications": """
    'notification_id', notification_id, 'agent_id', agent_id, 'text', text, 'bridge', bridge,
    'platform_message_id', platform_message_id, 'status', status, 'error', error,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'sent_at', replace(sent_at, ' ', 'T') || 'Z'""",
    "policies": """
    'policy_id', policy_id, 'name', name, 'decision', decision, 'note', note,
    'priority', priority, 'enabled', enabled, 'match', json(match), 'limit', json("limit"),
    'version', version, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z'""",
    "room_threads": """
    'thread_key', thread_key, 'room_id', room_id, 'bridge', bridge,
    'platform_thread_id', platform_thread_id, 'created_at', replace(created_at, ' ', 'T') || 'Z'""",
    "rooms": """
    'room_id', room_id, 'name', name, 'topic', topic, 'space_id', space_id,
    'created_by', created_by, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'platform_thread_id', platform_thread_id""",
    "spaces": """
    'space_id', space_id, 'name', name, 'description', description, 'status', status,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'archived_at', replace(archived_at, ' ', 'T') || 'Z'""",
    "webhook_deliveries": """
    'delivery_id', delivery_id, 'webhook_id', webhook_id, 'event_id', event_id,
    'event_type', event_type, 'message_id', message_id, 'body', body, 'attempts', attempts,
    'status', status, 'last_status_code', last_status_code, 'last_error', last_error,
    'next_attempt_at', replace(next_attempt_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z'""",
    "webhooks": """
    'webhook_id', webhook_id, 'url', url, 'events', json(events), 'description', description,
    'enabled', enabled, 'disabled_reason', disabled_reason, 'sealed_secret', sealed_secret,
    'sealed_previous', sealed_previous,
    'previous_until', replace(previous_until, ' ', 'T') || 'Z',
    'after_event_id', after_event_id, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z'""",
}


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table, encoded in ENCODED.items():
            op.execute(
                f"CREATE VIEW {table}_encoded AS SELECT *, json_object(\n{encoded}\n) AS encoded"
                f" FROM {table}"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table in ENCODED:
            op.execute(f"DROP VIEW {table}_encoded")
