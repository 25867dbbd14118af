"""policies: rules that decide approvals as they are created; every version kept
(policy_versions), and the decisions a limited policy made, to count them (policy_uses)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, Json, UTCDateTime

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "policies",
        sa.Column("policy_id", Id, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("decision", sa.String(length=32), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("match", Json, nullable=False),
        sa.Column("limit", Json, nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("policy_id"),
    )
    op.create_index("ix_policies_enabled", "policies", ["enabled"])
    op.create_table(
        "policy_versions",
        sa.Column("version_key", Id, autoincrement=True, nullable=False),
        sa.Column("policy_id", Id, sa.ForeignKey("policies.policy_id"), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("policy", Json, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("version_key"),
    )
    op.create_index(
        "ix_policy_versions_policy", "policy_versions", ["policy_id", "version"], unique=True
    )
    op.create_table(
        "policy_uses",
        sa.Column("use_id", Id, autoincrement=True, nullable=False),
        sa.Column("policy_id", Id, nullable=False),
        sa.Column("agent_id", sa.String(length=128), nullable=False),
        sa.Column("approval_id", Id, nullable=False),
        sa.Column("decided_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("use_id"),
    )
    op.create_index("ix_policy_uses_window", "policy_uses", ["policy_id", "agent_id", "decided_at"])


def downgrade() -> None:
    op.drop_index("ix_policy_uses_window", table_name="policy_uses")
    op.drop_table("policy_uses")
    op.drop_index("ix_policy_versions_policy", table_name="policy_versions")
    op.drop_table("policy_versions")
    op.drop_index("ix_policies_enabled", table_name="policies")
    op.drop_table("policies")
