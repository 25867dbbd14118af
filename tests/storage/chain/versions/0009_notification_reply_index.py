"""messages (reply_to_notification): the notification list counts each page's replies by index

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    where = sa.text('"reply_to_notification" IS NOT NULL')
    op.create_index(
        "ix_messages_notification_reply",
        "messages",
        ["reply_to_notification"],
        sqlite_where=where,
        postgresql_where=where,
    )


def downgrade() -> None:
    op.drop_index("ix_messages_notification_reply", table_name="messages")
