"""SQLite storage, the embedded default: one process serves one file.

- ``queries/``: each resource's named statements, run by ``statements.py`` on one connection
  (the stores are ``relay_core/storage/<resource>.py``);
- ``times.py``: times as SQLite keeps them;
- ``search.py``: the full-text index;
- ``writer.py``: the group-commit writer and the units of work;
- ``storage.py``: the adapter: connections, migrations, the checkpointer, the readers' pool.
"""

from relay_core.storage.sqlite.storage import SqliteStorage, serve_alone

__all__ = ["SqliteStorage", "serve_alone"]
