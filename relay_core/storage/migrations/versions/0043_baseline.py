"""The schema Relay starts from, on each dialect: baseline/sqlite.sql and
baseline/postgresql.sql. It folds the revisions 0001–0043 that made it before the first
release, and takes the last one's id, so that a database they made is already at it.

Revision ID: 0043
Revises:
Create Date: 2026-12-07
"""

from pathlib import Path

from alembic import op
from sqlalchemy.util import await_only

from relay_core.storage.sqlite.driver import sqlite3

revision = "0043"
down_revision = None
branch_labels = None
depends_on = None

BASELINE = Path(__file__).parents[1] / "baseline"


def sqlite_statements(script: str) -> list[str]:
    """``script``'s statements, split where SQLite itself says one is complete (a trigger's
    body holds semicolons of its own)."""
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return statements


def upgrade() -> None:
    bind = op.get_bind()
    script = (BASELINE / f"{bind.dialect.name}.sql").read_text()
    if bind.dialect.name == "sqlite":
        for statement in sqlite_statements(script):
            bind.exec_driver_sql(statement)
    else:
        # The whole script in one simple query, in the revision's transaction: PostgreSQL
        # parses its dollar-quoted function bodies itself.
        driver = bind.connection.driver_connection
        await_only(driver.execute(script))


def downgrade() -> None:
    raise RuntimeError("the baseline is Relay's first schema: there is no older one to go back to")
