"""Run the Alembic revisions shipped in ``migrations/`` on an open connection."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config pointing at the packaged revisions (and at ``connection`` if given)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(connection: Connection) -> None:
    """Upgrade the database behind ``connection`` to the newest revision."""
    command.upgrade(alembic_config(connection), "head")
