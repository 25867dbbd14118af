"""The ``relay`` command's global options, as every command reads them (``ctx.obj``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Connection:
    """Where the server is and whose token to send: ``--url``, ``--token``, ``--agent``."""

    url: str | None = None
    token: str | None = None
    agent: str | None = None
