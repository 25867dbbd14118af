"""enrollments.kind: the kind of agent asking to join, shown to the operator and kept on approval

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("enrollments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("kind", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("enrollments", schema=None) as batch_op:
        batch_op.drop_column("kind")
