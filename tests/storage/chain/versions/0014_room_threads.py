"""room_threads: each room's place on each operator platform (several bridges); a room's thread
kept in rooms.platform_thread_id before is copied as Telegram's (the only bridge with threads then)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Id, UTCDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "room_threads",
        sa.Column("thread_key", Id, autoincrement=True, nullable=False),
        sa.Column("room_id", sa.String(length=128), nullable=False),
        sa.Column("bridge", sa.String(length=32), nullable=False),
        sa.Column("platform_thread_id", sa.String(length=200), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("thread_key"),
    )
    op.create_index("ix_room_threads_room", "room_threads", ["room_id", "bridge"], unique=True)
    op.execute(
        "INSERT INTO room_threads (room_id, bridge, platform_thread_id, created_at) "
        "SELECT room_id, 'telegram', platform_thread_id, created_at FROM rooms "
        "WHERE platform_thread_id IS NOT NULL"
    )


def downgrade() -> None:
    op.drop_index("ix_room_threads_room", table_name="room_threads")
    op.drop_table("room_threads")
