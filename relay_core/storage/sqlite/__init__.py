"""SQLite storage, the embedded default: one process serves one file.

- ``sql.py``: each table's SQL text and value codecs, derived from ``schema.py``;
- ``tables.py``: each table's verbs on one connection;
- ``writer.py``: the group-commit writer and the units of work;
- ``storage.py``: the adapter: connections, migrations, the checkpointer, the readers' pool.
"""

from relay_core.storage.sqlite.storage import SqliteStorage, serve_alone

__all__ = ["SqliteStorage", "serve_alone"]
