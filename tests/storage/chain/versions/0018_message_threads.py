"""messages.thread_id: the conversation a message belongs to (its own id when it starts one, the
first message's when it answers one), with its index; the stored messages are put in their
threads by following reply_to, depth after depth; a first message is given its own id by the
database as it is written (a trigger), whichever code writes it

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

TRIGGER = "messages_thread_of_a_first_message"

SQLITE_TRIGGER = f"""
CREATE TRIGGER {TRIGGER} AFTER INSERT ON messages
WHEN NEW.thread_id IS NULL
BEGIN
    UPDATE messages SET thread_id = NEW.message_id WHERE message_id = NEW.message_id;
END
"""
# PostgreSQL sets it before the row is written: the key's default is already in NEW.
POSTGRES_FUNCTION = f"""
CREATE FUNCTION {TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.thread_id IS NULL THEN
        NEW.thread_id := NEW.message_id;
    END IF;
    RETURN NEW;
END
$$
"""
POSTGRES_TRIGGER = (
    f"CREATE TRIGGER {TRIGGER} BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION {TRIGGER}()"
)
# A message answering one whose thread is known joins it; each pass settles one more depth.
ANSWERS = sa.text(
    "UPDATE messages SET thread_id = "
    "(SELECT p.thread_id FROM messages p WHERE p.message_id = messages.reply_to) "
    "WHERE thread_id IS NULL AND reply_to IN "
    "(SELECT message_id FROM messages WHERE thread_id IS NOT NULL)"
)


def upgrade() -> None:
    op.add_column("messages", sa.Column("thread_id", sa.BigInteger(), nullable=True))
    bind = op.get_bind()
    bind.execute(sa.text("UPDATE messages SET thread_id = message_id WHERE reply_to IS NULL"))
    while bind.execute(ANSWERS).rowcount:
        pass
    # What is left answers a message that is gone: it starts its own.
    bind.execute(sa.text("UPDATE messages SET thread_id = message_id WHERE thread_id IS NULL"))
    op.create_index("ix_messages_thread", "messages", ["thread_id", "message_id"])
    if bind.dialect.name == "sqlite":
        op.execute(SQLITE_TRIGGER)
    else:
        op.execute(POSTGRES_FUNCTION)
        op.execute(POSTGRES_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"DROP TRIGGER {TRIGGER}")
    else:
        op.execute(f"DROP TRIGGER {TRIGGER} ON messages")
        op.execute(f"DROP FUNCTION {TRIGGER}()")
    op.drop_index("ix_messages_thread", table_name="messages")
    op.drop_column("messages", "thread_id")
