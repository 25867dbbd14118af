"""search_queue: SQLite indexes what a transaction wrote once, as it commits, not entry by entry.
FTS5 writes a segment of its index whenever a savepoint begins with words pending, and the
writer opens a savepoint for every unit of work: each POST paid for a segment of its own,
however many shared the group commit. The triggers now queue each entry in a plain table (rolled
back with its unit should that fail) and the writer moves the queue into the index inside the
transaction it commits, just before the COMMIT (relay_core.storage.sqlite.search.INDEX_QUEUED).
A task's new event queues the task's whole entry again. PostgreSQL is unchanged.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26
"""

import importlib

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

# Revision 0019's parts: what an entry holds and how each source makes one.
search = importlib.import_module("tests.storage.chain.versions.0019_search_index")

QUEUE = (
    "CREATE TABLE search_queue (key INTEGER PRIMARY KEY, kind TEXT NOT NULL, "
    "ref_id INTEGER NOT NULL, title TEXT, body TEXT NOT NULL, from_agent TEXT, to_agent TEXT, "
    "room_id TEXT, audience TEXT, created_at TEXT NOT NULL, "
    "replaces INTEGER NOT NULL)"  # 1: the index may hold an older entry under the key
)
QUEUED = f"INSERT OR REPLACE INTO search_queue ({search.COLUMNS}, replaces) SELECT"


def _drop_triggers() -> None:
    for source in [*search.SOURCES, "task_events"]:
        op.execute(f"DROP TRIGGER IF EXISTS search_{source}")
        op.execute(f"DROP TRIGGER IF EXISTS search_{source}_changed")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _drop_triggers()
    op.execute(QUEUE)
    for source in search.SOURCES:
        entry = search._entry(source, "NEW", sqlite=True)
        op.execute(
            f"CREATE TRIGGER search_{source} AFTER INSERT ON {source} BEGIN "
            f"{QUEUED} {entry}, 0; END"
        )
        if source in search.CHANGED:
            op.execute(
                f"CREATE TRIGGER search_{source}_changed AFTER UPDATE OF "
                f"{search.CHANGED[source]} ON {source} BEGIN {QUEUED} {entry}, 1; END"
            )
    task = search._entry("tasks", "tasks", sqlite=True)
    op.execute(
        "CREATE TRIGGER search_task_events AFTER INSERT ON task_events "
        f"WHEN NEW.message IS NOT NULL BEGIN {QUEUED} {task}, 1 FROM tasks "
        "WHERE tasks.task_id = NEW.task_id; END"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _drop_triggers()
    op.execute("DROP TABLE search_queue")  # empty: the writer empties it in every transaction
    search.sqlite_triggers()
