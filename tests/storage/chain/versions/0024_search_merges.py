"""search: SQLite's index merges its segments sixteen at a time, not four (FTS5's 'automerge'),
and all at once only past sixty-four on a level ('crisismerge', so that incremental merging
keeps every level below it). Each commit writes a segment of its own, and each merge rewrites
its words: the fewer merges cost every write less CPU, no search longer and no commit longer
(docs/performance.md, "Figures behind the code"). PostgreSQL is unchanged.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-27
"""

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def _merges(automerge: int, crisismerge: int) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for option, value in (("automerge", automerge), ("crisismerge", crisismerge)):
        op.execute(f"INSERT INTO search_index (search_index, rank) VALUES ('{option}', {value})")


def upgrade() -> None:
    _merges(16, 64)


def downgrade() -> None:
    _merges(4, 16)  # FTS5's defaults
