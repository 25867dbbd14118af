"""Alembic environment of revisions 0001–0043 as they were before the baseline folded them,
run on a connection the test hands over (as relay_core.storage.migrate hands Relay's)."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
