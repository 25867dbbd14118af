"""tasks.traceparent: the W3C trace a task was created in, handed on to whoever works on it.

SQLite keeps each task's JSON in a stored generated column (revision 0027), which a column
cannot be added beside: the table is made again with the trace and the JSON that writes it,
its rows copied, the old one dropped and the new one renamed into place, its indexes and
triggers made again as they were. The views are taken away meanwhile and put back as they were
(SQLite checks every view as a table changes; one of them reads tasks). PostgreSQL adds the
column.

Revision ID: 0042
Revises: 0041
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0042"
down_revision = "0041"
branch_labels = None
depends_on = None

# The columns both tables have, copied from one to the other (a trace starts empty).
SHARED = (
    "task_id, title, description, payload, priority, assignee, room_id, status, created_by,"
    " claimed_by, claimed_at, lease_expires_at, lease_seconds, attempts, max_attempts, progress,"
    " result, error, created_at, updated_at, finished_at"
)


def _time(column: str) -> str:
    """A stored time as pydantic writes it (revision 0027's)."""
    whole = f"iif(substr({column}, 20) = '.000000', substr({column}, 1, 19), {column})"
    return f"replace({whole}, ' ', 'T') || 'Z'"


# The JSON model_dump_json writes for relay_api.models.Task, field by field in its order
# (tests/storage/test_tasks_store.py holds the two to each other): revision 0027's, and the
# trace.
BEFORE = (
    "'task_id', task_id, 'title', title, 'description', description,"
    " 'payload', json(payload), 'priority', priority, 'assignee', assignee,"
    " 'room_id', room_id, 'status', status, 'created_by', created_by,"
    f" 'claimed_by', claimed_by, 'claimed_at', {_time('claimed_at')},"
    f" 'lease_expires_at', {_time('lease_expires_at')}, 'lease_seconds', lease_seconds,"
    " 'attempts', attempts, 'max_attempts', max_attempts, 'progress', progress,"
    " 'result', json(result), 'error', error,"
    f" 'created_at', {_time('created_at')}, 'updated_at', {_time('updated_at')},"
    f" 'finished_at', {_time('finished_at')}"
)
ENCODED = BEFORE + ", 'traceparent', traceparent"
TABLE = """CREATE TABLE tasks_remade (
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
    finished_at DATETIME,{traced}
    encoded TEXT GENERATED ALWAYS AS (json_object({encoded})) STORED,
    PRIMARY KEY (task_id)
)"""


def _remake(encoded: str, traced: str) -> None:
    """SQLite's tasks made again, with the ``traced`` column or none, and its JSON as
    ``encoded`` writes it."""
    conn = op.get_bind()
    kept = [
        sql
        for (sql,) in conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'tasks'"
            " AND type IN ('index', 'trigger') AND sql IS NOT NULL"
        )
    ]
    views = list(conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'view'"))
    for name, _ in reversed(views):
        op.execute(f'DROP VIEW "{name}"')
    op.execute(TABLE.format(traced=traced, encoded=encoded))
    op.execute(f"INSERT INTO tasks_remade ({SHARED}) SELECT {SHARED} FROM tasks")
    op.execute("DROP TABLE tasks")  # with its indexes and triggers, made again below
    # Renamed as SQLite did before 3.26, without checking the schema's other triggers, which
    # name "tasks" (task_events' search trigger) and read it again once it is back.
    op.execute("PRAGMA legacy_alter_table=ON")
    op.execute("ALTER TABLE tasks_remade RENAME TO tasks")
    op.execute("PRAGMA legacy_alter_table=OFF")
    for sql in kept:
        op.execute(sql)
    for _, sql in views:
        op.execute(sql)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _remake(ENCODED, "\n    traceparent VARCHAR(55),")
    else:
        op.add_column("tasks", sa.Column("traceparent", sa.String(length=55), nullable=True))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _remake(BEFORE, "")
    else:
        op.drop_column("tasks", "traceparent")
