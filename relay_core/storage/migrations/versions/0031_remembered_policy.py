"""approvals.remembered_policy_id: the policy the operator's "always allow this" created with
the decision (approve with remember); null otherwise. SQLite's approvals_encoded view writes it
in each approval's JSON.

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

# Each approval as the JSON its model reads, field by field (revision 0030's, and the new one).
BEFORE = """
    'approval_id', approval_id, 'kind', kind, 'status', status, 'title', title,
    'detail', detail, 'payload', json(payload), 'approved_payload', json(approved_payload),
    'requested_by', requested_by, 'subject_id', subject_id, 'audience', audience,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z',
    'decided_by', decided_by, 'note', note, 'platform_message_id', platform_message_id"""
FIELDS = BEFORE.replace(
    "'requested_by', requested_by,",
    "'remembered_policy_id', remembered_policy_id,\n    'requested_by', requested_by,",
)


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM approvals"
    return f"CREATE VIEW approvals_encoded AS {select}"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    op.add_column("approvals", sa.Column("remembered_policy_id", sa.Integer, nullable=True))
    if sqlite:
        op.execute(_view(FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE approvals DROP COLUMN remembered_policy_id")
    if sqlite:
        op.execute(_view(BEFORE))
