"""Alembic environment: Relay always hands it an open connection (see ``migrate.py``)."""

from alembic import context

from relay_core.storage.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "run migrations through relay_core.storage.migrate, which passes a connection"
    )

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
