"""What happens to an approval nobody answers. On approvals: remind_at (when the operator is
reminded of a pending one, once) and reminded_at (when that happened), escalate_at (when it is
next offered on a further step of RELAY_ESCALATION) and escalated_to (the step it was last
offered on), with the sweep's indexes of the pending ones due. On policies: answer (JSON: the
labels an answer policy answers a question with), remind_after and escalate_after (an ask
policy's). SQLite's approvals_encoded and policies_encoded views write them in each row's JSON.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Json, UTCDateTime

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

# Each approval as the JSON its model reads, field by field (revision 0031's, and the new ones).
BEFORE = """
    'approval_id', approval_id, 'kind', kind, 'status', status, 'title', title,
    'detail', detail, 'payload', json(payload), 'approved_payload', json(approved_payload),
    'requested_by', requested_by, 'subject_id', subject_id, 'audience', audience,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z',
    'decided_by', decided_by, 'note', note, 'platform_message_id', platform_message_id,
    'remembered_policy_id', remembered_policy_id, 'interrupt', interrupt,
    'options', json(options), 'multiple', multiple, 'allow_other', allow_other,
    'answer', json(answer)"""
FIELDS = (
    BEFORE
    + """,
    'remind_at', replace(remind_at, ' ', 'T') || 'Z',
    'reminded_at', replace(reminded_at, ' ', 'T') || 'Z',
    'escalate_at', replace(escalate_at, ' ', 'T') || 'Z', 'escalated_to', escalated_to"""
)
COLUMNS = ("remind_at", "reminded_at", "escalate_at", "escalated_to")
# Each policy as the JSON its model reads (revision 0029's, and the new ones).
POLICY_BEFORE = """
    'policy_id', policy_id, 'name', name, 'decision', decision, 'note', note,
    'priority', priority, 'enabled', enabled, 'match', json(match), 'limit', json("limit"),
    'version', version, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z'"""
POLICY_FIELDS = (
    POLICY_BEFORE
    + """,
    'answer', json(answer), 'remind_after', remind_after, 'escalate_after', escalate_after"""
)
POLICY_COLUMNS = ("answer", "remind_after", "escalate_after")
TO_REMIND = sa.text("status = 'pending' AND reminded_at IS NULL AND remind_at IS NOT NULL")
TO_ESCALATE = sa.text("status = 'pending' AND escalate_at IS NOT NULL")


def _view(table: str, fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM {table}"
    return f"CREATE VIEW {table}_encoded AS {select}"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
        op.execute("DROP VIEW policies_encoded")
    op.add_column("policies", sa.Column("answer", Json, nullable=True))
    op.add_column("policies", sa.Column("remind_after", sa.Integer, nullable=True))
    op.add_column("policies", sa.Column("escalate_after", sa.Integer, nullable=True))
    op.add_column("approvals", sa.Column("remind_at", UTCDateTime(), nullable=True))
    op.add_column("approvals", sa.Column("reminded_at", UTCDateTime(), nullable=True))
    op.add_column("approvals", sa.Column("escalate_at", UTCDateTime(), nullable=True))
    op.add_column("approvals", sa.Column("escalated_to", sa.String(length=32), nullable=True))
    op.create_index(
        "ix_approvals_to_remind",
        "approvals",
        ["remind_at"],
        sqlite_where=TO_REMIND,
        postgresql_where=TO_REMIND,
    )
    op.create_index(
        "ix_approvals_to_escalate",
        "approvals",
        ["escalate_at"],
        sqlite_where=TO_ESCALATE,
        postgresql_where=TO_ESCALATE,
    )
    if sqlite:
        op.execute(_view("approvals", FIELDS))
        op.execute(_view("policies", POLICY_FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
        op.execute("DROP VIEW policies_encoded")
    op.drop_index("ix_approvals_to_escalate", table_name="approvals")
    op.drop_index("ix_approvals_to_remind", table_name="approvals")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    for column in COLUMNS:
        op.execute(f"ALTER TABLE approvals DROP COLUMN {column}")
    for column in POLICY_COLUMNS:
        op.execute(f"ALTER TABLE policies DROP COLUMN {column}")
    if sqlite:
        op.execute(_view("approvals", BEFORE))
        op.execute(_view("policies", POLICY_BEFORE))
