"""approvals.approved_payload: the payload as the operator approved it, when it is not as the
agent asked (an edited command); null otherwise. SQLite's approvals_encoded view writes it in
each approval's JSON.

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Json

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

# Each approval as the JSON its model reads, field by field (revision 0029's, and the new one).
FIELDS = """
    'approval_id', approval_id, 'kind', kind, 'status', status, 'title', title,
    'detail', detail, 'payload', json(payload), 'approved_payload', json(approved_payload),
    'requested_by', requested_by, 'subject_id', subject_id, 'audience', audience,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z',
    'decided_by', decided_by, 'note', note, 'platform_message_id', platform_message_id"""


def _view(fields: str) -> str:
    select = f"SELECT *, json_object({fields}) AS encoded FROM approvals"
    return f"CREATE VIEW approvals_encoded AS {select}"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    op.add_column("approvals", sa.Column("approved_payload", Json, nullable=True))
    if sqlite:
        op.execute(_view(FIELDS))


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("DROP VIEW approvals_encoded")
    # In place on both (SQLite 3.35+): a table copied by batch mode would lose its triggers.
    op.execute("ALTER TABLE approvals DROP COLUMN approved_payload")
    if sqlite:
        before = FIELDS.replace(" 'approved_payload', json(approved_payload),\n   ", "")
        op.execute(_view(before))
