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


# The revisions before the first release, which the baseline (versions/0043_baseline.py)
# folded: a database left at one of them was made by a development checkout.
FOLDED = {f"{number:04d}" for number in range(1, 43)}


class UnknownRevision(Exception):
    """The database's revision is none this Relay knows: nothing here can serve it."""

    def __init__(self, found: str, newest: str) -> None:
        if found in FOLDED:
            super().__init__(
                f"the database's schema is at revision {found}, made by a development checkout "
                "of Relay before its first release, which this Relay cannot upgrade: start on "
                "a new data directory (--data-dir), or run that checkout again"
            )
            return
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
