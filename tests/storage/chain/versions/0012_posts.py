"""posts: what each operator platform did with a notification or an approval (several bridges)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "posts",
        sa.Column("post_id", Id, autoincrement=True, nullable=False),
        sa.Column("subject", sa.String(length=32), nullable=False),
        sa.Column("subject_id", sa.BigInteger(), nullable=False),
        sa.Column("bridge", sa.String(length=32), nullable=False),
        sa.Column("platform_message_id", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("post_id"),
    )
    op.create_index("ix_posts_subject", "posts", ["subject", "subject_id"])
    op.create_index("ix_posts_platform", "posts", ["bridge", "platform_message_id"])


def downgrade() -> None:
    op.drop_index("ix_posts_platform", table_name="posts")
    op.drop_index("ix_posts_subject", table_name="posts")
    op.drop_table("posts")
