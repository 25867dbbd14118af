"""The operator's whole answer, on approvals: remembered_policy_id (the policy an "always allow
this" created with the decision), interrupt (a rejection that also asks the agent to stop),
and a question's options (JSON), multiple and allow_other (whether several may be chosen,
whether the operator may answer in their own words) and answer (JSON). SQLite's
approvals_encoded view writes them in each approval's JSON.

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Json

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

# Each approval as the JSON its model reads, field by field (revision 0030's, and the new ones).
BEFORE = """
    'approval_id', approval_id, 'kind', kind, 'status', status, 'title', title,
    'detail', detail, 'payload', json(payload), 'approved_payload', json(approved_payload),
    'requested_by', requested_by, 'subject_id', subject_id, 'audience', audience,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z',
    'decided_by', decided_by, 'note', note, 'platform_message_id', platform_message_id"""
FIELDS = (
    BEFORE
    + """,
    'remembered_policy_id', remembered_policy_id, 'interrupt', interrupt,
    'options', json(options), 'multiple', multiple, 'allow_other', allow_other,
    'answer', json(answer)"""
)
COLUMNS = ("remembered_policy_id", "interrupt", "options", "multiple", "allow_other", "answer")


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM approvals"
    return f"CREATE VIEW approvals_encoded AS {select}"


def _flag(name: str) -> sa.Column[bool]:
    return sa.Column(name, sa.Boolean, nullable=False, server_default=sa.false())


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    op.add_column("approvals", sa.Column("remembered_policy_id", sa.Integer, nullable=True))
    op.add_column("approvals", _flag("interrupt"))
    op.add_column("approvals", sa.Column("options", Json, nullable=True))
    op.add_column("approvals", _flag("multiple"))
    op.add_column("approvals", _flag("allow_other"))
    op.add_column("approvals", sa.Column("answer", Json, nullable=True))
    if sqlite:
        op.execute(_view(FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    for column in COLUMNS:
        op.execute(f"ALTER TABLE approvals DROP COLUMN {column}")
    if sqlite:
        op.execute(_view(BEFORE))
