"""Alembic environment: Relay always hands it an open connection (see ``migrate.py``)."""

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "run migrations through relay_core.storage.migrate, which passes a connection"
    )

# The revisions are the schema's one description: there is no model to compare them with.
context.configure(connection=connection, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
