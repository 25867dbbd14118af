"""Run the Alembic revisions shipped in ``migrations/`` on an open connection."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config pointing at the packaged revisions (and at ``connection`` if given)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


class UnknownRevision(Exception):
    """The database was upgraded by a newer Relay than this one: nothing here can serve it."""

    def __init__(self, found: str, newest: str) -> None:
        super().__init__(
            f"the database's schema is at revision {found}, which this Relay does not know (it "
            f"knows up to {newest}): a newer Relay upgraded it. Run that release again, or "
            "restore the backup taken before the upgrade (docs/upgrading.md)"
        )


def upgrade(connection: Connection) -> None:
    """Upgrade the database behind ``connection`` to the newest revision."""
    config = alembic_config(connection)
    script = ScriptDirectory.from_config(config)
    found = MigrationContext.configure(connection).get_current_revision()
    if found is not None and found not in {r.revision for r in script.walk_revisions()}:
        raise UnknownRevision(found, script.get_current_head() or "none")
    command.upgrade(config, "head")
