"""search: each entry names who may read it (its readers: 'relay0everyone', 'relay0a' and an
agent id's hex, 'relay0r' and a room id's hex: words nobody searches for), indexed, so that an
agent's search among many matches finds only what it may read inside the index lookup rather
than reading every match to filter it: a word in 5,000 others' direct messages costs an
agent's search what its own matches cost. SQLite: the FTS5 table made again with a 'readers'
column (FTS5 cannot add one), each entry's readers made from its stored columns; the writer
makes a new entry's as it indexes the queue. PostgreSQL: search_docs gets a generated 'readers'
array and its GIN index.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-27
"""

from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

ENTRY = "kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at"
# An entry's readers, from its columns (relay_core/storage/sqlite/search.py makes them the same
# way for the entries it indexes): what the API lets an agent read of it.
SQLITE_READERS = (
    "trim(CASE WHEN audience = '*' THEN 'relay0everyone ' ELSE '' END"
    " || CASE WHEN audience IS NOT NULL AND audience != '*' THEN 'relay0a' || hex(audience) || ' '"
    " ELSE '' END"
    " || CASE WHEN from_agent IS NOT NULL THEN 'relay0a' || hex(from_agent) || ' ' ELSE '' END"
    " || CASE WHEN to_agent IS NOT NULL THEN 'relay0a' || hex(to_agent) || ' ' ELSE '' END"
    " || CASE WHEN room_id IS NOT NULL THEN 'relay0r' || hex(room_id) ELSE '' END)"
)
FTS_TABLE = (
    "CREATE VIRTUAL TABLE {name} USING fts5(title, body, kind UNINDEXED, "
    "ref_id UNINDEXED, from_agent UNINDEXED, to_agent UNINDEXED, room_id UNINDEXED, "
    "audience UNINDEXED, created_at UNINDEXED{readers}, tokenize = 'unicode61')"
)
# Revision 0024's merge settings, kept by the new table.
MERGES = (
    "INSERT INTO search_index (search_index, rank) VALUES ('automerge', 16)",
    "INSERT INTO search_index (search_index, rank) VALUES ('crisismerge', 64)",
)
POSTGRES_READERS = (
    "array_remove(ARRAY["
    "CASE WHEN audience = '*' THEN '*' END, "
    "CASE WHEN audience <> '*' THEN 'a:' || audience END, "
    "'a:' || from_agent, 'a:' || to_agent, 'r:' || room_id]::text[], NULL)"
)


def _sqlite_rebuild(readers: bool) -> None:
    """search_index made again with (or without) the readers column, every entry copied."""
    op.execute(FTS_TABLE.format(name="search_index_new", readers=", readers" if readers else ""))
    copied = f"rowid, {ENTRY}" + (", readers" if readers else "")
    values = f"rowid, {ENTRY}" + (f", {SQLITE_READERS}" if readers else "")
    op.execute(f"INSERT INTO search_index_new ({copied}) SELECT {values} FROM search_index")
    op.execute("DROP TABLE search_index")
    op.execute("ALTER TABLE search_index_new RENAME TO search_index")
    for setting in MERGES:
        op.execute(setting)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_rebuild(readers=True)
        return
    op.execute(
        f"ALTER TABLE search_docs ADD COLUMN readers text[] "
        f"GENERATED ALWAYS AS ({POSTGRES_READERS}) STORED"
    )
    op.execute("CREATE INDEX ix_search_docs_readers ON search_docs USING GIN (readers)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_rebuild(readers=False)
        return
    op.execute("DROP INDEX ix_search_docs_readers")
    op.execute("ALTER TABLE search_docs DROP COLUMN readers")
