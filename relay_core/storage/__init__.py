"""Storage adapters: SQLite (the embedded default) and PostgreSQL."""
