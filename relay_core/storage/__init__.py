"""Storage adapters: in-memory and SQL (SQLite, PostgreSQL)."""
