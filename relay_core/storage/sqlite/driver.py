"""The SQLite library Relay runs on: ``pysqlite3`` where its wheel installs (Linux on x86-64),
else the interpreter's own ``sqlite3``.

The interpreter's module is built against the system's SQLite (3.40 on Debian 12), where
pysqlite3's wheel carries a current one (3.51), which reads a room's 100 messages as JSON, an
inbox's 50 and a search of the million-message store with 15–40% less CPU (docs/performance.md,
"The SQLite library"). Both have the same interface; every setting that matters is set on each
connection (``SqliteStorage.connect``), so a store behaves the same on either.

Every connection of this process to a store goes through this one module: two copies of SQLite
in one process must never open the same file, or closing one's descriptor releases the other's
POSIX locks (https://www.sqlite.org/howtocorrupt.html, 2.2.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3  # the same interface, and the one with type information
else:
    try:
        import pysqlite3.dbapi2 as sqlite3
    except ImportError:
        import sqlite3

# A None or a bool is bound only after a search for its adapter: the registry, then the value's
# own ``__conform__``, which pysqlite3's module (an older copy of the interpreter's) looks up by
# raising and clearing AttributeError, 0.9 µs a parameter, and a write binds a dozen of them.
# Registered, each is found at once, and bound as before: NULL, and the integer.
sqlite3.register_adapter(type(None), lambda value: value)
sqlite3.register_adapter(bool, int)

__all__ = ["sqlite3"]
