"""bridge_offsets.cursor: a platform's resume token where it is a string (Matrix's next_batch)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bridge_offsets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cursor", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bridge_offsets", schema=None) as batch_op:
        batch_op.drop_column("cursor")
