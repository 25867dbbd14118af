"""search: a task's entry holds the words agents wrote on its trail, not the notes Relay writes
itself as its state changes ('lease 300s' on each claim, a lapsed lease's sentence). Those words
found every claimed task, and each claim wrote the task's whole entry into the index again:
deleting a contentful FTS5 entry reads and tokenizes it: most of a claim's SQL.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27
"""

import importlib

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

search = importlib.import_module("tests.storage.chain.versions.0019_search_index")
queue = importlib.import_module("tests.storage.chain.versions.0021_search_queue")

NOTES = "('claimed', 'lease_expired')"  # the trail's kinds whose message Relay writes
TASK = search.TASK.replace(
    "WHERE e.task_id = {row}.task_id",
    f"WHERE e.task_id = {{row}}.task_id AND e.kind NOT IN {NOTES}",
)
NOTED = (
    f"EXISTS (SELECT 1 FROM task_events n WHERE n.task_id = tasks.task_id AND n.kind IN {NOTES})"
)


def _sqlite(task: str, noted: str) -> None:
    """Triggers that make a task's entry as ``task`` does; the tasks with Relay's notes
    indexed again by it."""
    for trigger in ("search_tasks", "search_tasks_changed", "search_task_events"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    new = search._entry("tasks", "NEW", sqlite=True, values=task)
    each = search._entry("tasks", "tasks", sqlite=True, values=task)
    op.execute(
        f"CREATE TRIGGER search_tasks AFTER INSERT ON tasks BEGIN {queue.QUEUED} {new}, 0; END"
    )
    op.execute(
        f"CREATE TRIGGER search_tasks_changed AFTER UPDATE OF {search.CHANGED['tasks']} ON tasks "
        f"BEGIN {queue.QUEUED} {new}, 1; END"
    )
    op.execute(
        "CREATE TRIGGER search_task_events AFTER INSERT ON task_events "
        f"WHEN NEW.message IS NOT NULL{noted} BEGIN {queue.QUEUED} "
        f"{each}, 1 FROM tasks WHERE tasks.task_id = NEW.task_id; END"
    )
    fts_columns = search.COLUMNS.replace("key", "rowid", 1)
    op.execute(
        "DELETE FROM search_index WHERE rowid IN "
        f"(SELECT {search.KEYS['tasks'].format(row='tasks')} FROM tasks WHERE {NOTED})"
    )
    op.execute(f"INSERT INTO search_index ({fts_columns}) SELECT {each} FROM tasks WHERE {NOTED}")


def _postgres(task: str, noted: str) -> None:
    new = search._entry("tasks", "NEW", sqlite=False, values=task)
    each = search._entry("tasks", "tasks", sqlite=False, values=task)
    op.execute(
        "CREATE OR REPLACE FUNCTION search_tasks() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"INSERT INTO search_docs ({search.COLUMNS}) SELECT {new} {search.UPSERT}; "
        "RETURN NULL; END $$"
    )
    op.execute("DROP TRIGGER search_task_events ON task_events")
    op.execute(
        "CREATE TRIGGER search_task_events AFTER INSERT ON task_events FOR EACH ROW "
        f"WHEN (NEW.message IS NOT NULL{noted}) EXECUTE FUNCTION search_task_events()"
    )
    op.execute(
        f"INSERT INTO search_docs ({search.COLUMNS}) SELECT {each} FROM tasks WHERE {NOTED} "
        f"{search.UPSERT}"
    )


def upgrade() -> None:
    change = _sqlite if op.get_bind().dialect.name == "sqlite" else _postgres
    change(TASK, f" AND NEW.kind NOT IN {NOTES}")


def downgrade() -> None:
    change = _sqlite if op.get_bind().dialect.name == "sqlite" else _postgres
    change(search.TASK, "")
