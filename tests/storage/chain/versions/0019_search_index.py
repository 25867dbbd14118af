"""search: what agents and the operator wrote, kept searchable by the database as it is written
(triggers, in the writing transaction), and what was stored before indexed now. SQLite: an FTS5
table (unicode61 words, BM25, snippet()); PostgreSQL: search_docs with a generated tsvector of
the text's words ('simple') and its GIN index. One entry a record, keyed by its id times 8 plus
its kind's place (message or room post 1, task 2, approval 3, action 4): a task's entry holds its
title, description, payload's and result's strings and its events' messages

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26
"""

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

COLUMNS = "key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at"

# Each source's entry key, and its entry's other values, from a row named NEW (a trigger's) or
# by the table's name (the backfill); {strings_*} is how the dialect joins a JSON value's
# strings, {events} a task's events' messages.
KEYS = {
    "messages": "{row}.message_id * 8 + 1",
    "tasks": "{row}.task_id * 8 + 2",
    "approvals": "{row}.approval_id * 8 + 3",
    "actions": "{row}.action_id * 8 + 4",
}
MESSAGE = (
    "CASE WHEN {row}.room_id IS NULL THEN 'message' ELSE 'room_post' END, {row}.message_id, "
    '{row}.subject, {row}.text, {row}.from_agent, {row}."to", {row}.room_id, NULL, '
    "{row}.created_at"
)
TASK = (
    "'task', {row}.task_id, {row}.title, "
    "coalesce({row}.description, '') || ' ' || {strings_payload} || ' ' || {strings_result} "
    "|| ' ' || coalesce((SELECT {events} FROM task_events e "
    "WHERE e.task_id = {row}.task_id), ''), "
    "{row}.created_by, NULL, {row}.room_id, '*', {row}.created_at"
)
APPROVAL = (
    "'approval', {row}.approval_id, {row}.title, "
    "coalesce({row}.detail, ''), {row}.requested_by, NULL, NULL, {row}.audience, {row}.created_at"
)
ACTION = (
    "'action', {row}.action_id, {row}.action, "
    "coalesce({row}.target, '') || ' ' || coalesce({row}.outcome, '') || ' ' || "
    "{strings_params}, {row}.agent_id, NULL, NULL, NULL, {row}.created_at"
)
SOURCES = {"messages": MESSAGE, "tasks": TASK, "approvals": APPROVAL, "actions": ACTION}
# What a changed row of each table re-indexes (inserts always do).
CHANGED = {
    "tasks": "title, description, payload, result",
    "approvals": "title, detail, audience",
}


def _sqlite_strings(column: str) -> str:
    return (
        f"coalesce((SELECT group_concat(value, ' ') FROM json_tree({column}) "
        "WHERE type = 'text'), '')"
    )


def _postgres_strings(column: str) -> str:
    return f"search_json_strings({column})"


SQLITE_EVENTS = "group_concat(e.message, ' ')"
POSTGRES_EVENTS = "string_agg(e.message, ' ' ORDER BY e.event_id)"


def _entry(source: str, row: str, sqlite: bool, values: str | None = None) -> str:
    """The values of ``source``'s entry for ``row`` (NEW, or the table's name), made as
    ``values`` says (``SOURCES[source]`` unless a later revision says otherwise)."""
    strings = _sqlite_strings if sqlite else _postgres_strings
    return (
        KEYS[source].format(row=row)
        + ", "
        + (values or SOURCES[source]).format(
            row=row,
            strings_payload=strings(f"{row}.payload"),
            strings_result=strings(f"{row}.result"),
            strings_params=strings(f"{row}.params"),
            events=SQLITE_EVENTS if sqlite else POSTGRES_EVENTS,
        )
    )


def _sqlite() -> None:
    op.execute(
        "CREATE VIRTUAL TABLE search_index USING fts5(title, body, kind UNINDEXED, "
        "ref_id UNINDEXED, from_agent UNINDEXED, to_agent UNINDEXED, room_id UNINDEXED, "
        "audience UNINDEXED, created_at UNINDEXED, tokenize = 'unicode61')"
    )
    fts_columns = COLUMNS.replace("key", "rowid", 1)
    for source in SOURCES:
        backfill = _entry(source, source, sqlite=True)
        op.execute(f"INSERT INTO search_index ({fts_columns}) SELECT {backfill} FROM {source}")
    sqlite_triggers()


def sqlite_triggers() -> None:
    """The triggers that keep SQLite's index, entry by entry (revision 0021 queues them)."""
    fts_columns = COLUMNS.replace("key", "rowid", 1)
    for source in SOURCES:
        entry = _entry(source, "NEW", sqlite=True)
        op.execute(
            f"CREATE TRIGGER search_{source} AFTER INSERT ON {source} BEGIN "
            f"INSERT INTO search_index ({fts_columns}) SELECT {entry}; END"
        )
        if source in CHANGED:
            op.execute(
                f"CREATE TRIGGER search_{source}_changed AFTER UPDATE OF {CHANGED[source]} "
                f"ON {source} BEGIN "
                f"DELETE FROM search_index WHERE rowid = {KEYS[source].format(row='NEW')}; "
                f"INSERT INTO search_index ({fts_columns}) SELECT {entry}; END"
            )
    op.execute(
        "CREATE TRIGGER search_task_events AFTER INSERT ON task_events "
        "WHEN NEW.message IS NOT NULL BEGIN "
        "UPDATE search_index SET body = body || ' ' || NEW.message "
        f"WHERE rowid = {KEYS['tasks'].format(row='NEW')}; END"
    )


POSTGRES_TABLE = """
CREATE TABLE search_docs (
    key BIGINT PRIMARY KEY,
    kind VARCHAR(16) NOT NULL,
    ref_id BIGINT NOT NULL,
    title TEXT,
    body TEXT NOT NULL,
    from_agent VARCHAR(128),
    to_agent VARCHAR(128),
    room_id VARCHAR(128),
    audience VARCHAR(128),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL,
    document tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', search_words(coalesce(title, ''))), 'A')
        || setweight(to_tsvector('simple', search_words(body)), 'B')
    ) STORED
)
"""
# An entry written again over the one of its key (PostgreSQL).
UPSERT = (
    "ON CONFLICT (key) DO UPDATE SET title = EXCLUDED.title, body = EXCLUDED.body, "
    "audience = EXCLUDED.audience"
)
# The words SQLite's unicode61 finds: runs of letters and digits, so that both stores index the
# same words (PostgreSQL's parser alone keeps a path or a host name as one).
POSTGRES_FUNCTIONS = (
    "CREATE FUNCTION search_words(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS "
    "$$ SELECT regexp_replace($1, '[^[:alnum:]]+', ' ', 'g') $$",
    "CREATE FUNCTION search_json_strings(value jsonb) RETURNS text LANGUAGE sql IMMUTABLE "
    "PARALLEL SAFE AS $$ SELECT coalesce(string_agg(s #>> '{}', ' '), '') "
    "FROM jsonb_path_query(value, 'strict $.**') AS s WHERE jsonb_typeof(s) = 'string' $$",
)


def _postgres() -> None:
    for function in POSTGRES_FUNCTIONS:
        op.execute(function)
    op.execute(POSTGRES_TABLE)
    op.execute("CREATE INDEX ix_search_docs_document ON search_docs USING GIN (document)")
    for source in SOURCES:
        entry = _entry(source, "NEW", sqlite=False)
        op.execute(
            f"CREATE FUNCTION search_{source}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"INSERT INTO search_docs ({COLUMNS}) SELECT {entry} {UPSERT}; "
            "RETURN NULL; END $$"
        )
        events = "INSERT" + (f" OR UPDATE OF {CHANGED[source]}" if source in CHANGED else "")
        op.execute(
            f"CREATE TRIGGER search_{source} AFTER {events} ON {source} "
            f"FOR EACH ROW EXECUTE FUNCTION search_{source}()"
        )
        backfill = _entry(source, source, sqlite=False)
        op.execute(f"INSERT INTO search_docs ({COLUMNS}) SELECT {backfill} FROM {source}")
    op.execute(
        "CREATE FUNCTION search_task_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "UPDATE search_docs SET body = body || ' ' || NEW.message "
        f"WHERE key = {KEYS['tasks'].format(row='NEW')}; RETURN NULL; END $$"
    )
    op.execute(
        "CREATE TRIGGER search_task_events AFTER INSERT ON task_events FOR EACH ROW "
        "WHEN (NEW.message IS NOT NULL) EXECUTE FUNCTION search_task_events()"
    )


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite()
    else:
        _postgres()


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for source in [*SOURCES, "task_events"]:
        if sqlite:
            op.execute(f"DROP TRIGGER IF EXISTS search_{source}")
            op.execute(f"DROP TRIGGER IF EXISTS search_{source}_changed")
        else:
            op.execute(f"DROP TRIGGER search_{source} ON {source}")
            op.execute(f"DROP FUNCTION search_{source}()")
    if sqlite:
        op.execute("DROP TABLE search_index")
    else:
        op.execute("DROP TABLE search_docs")
        op.execute("DROP FUNCTION search_json_strings(jsonb)")
        op.execute("DROP FUNCTION search_words(text)")
