"""The ``relay`` command's global options, as every command reads them (``ctx.obj``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Connection:
    """Where the server is and whose token to send: ``--url``, ``--token``, ``--agent``."""

    url: str | None = None
    token: str | None = None
    agent: str | None = None


# What ``relay mcp`` and ``relay hook`` say when given no token: they run in an agent's session,
# and never take the operator token a server on this machine wrote (the agent would act as the
# operator, approving its own requests).
NO_AGENT_TOKEN = (
    "no agent token: give this agent's token as RELAY_TOKEN in the host's MCP server or hook"
    " settings (relay agents register NAME prints one), or --token; the operator's token is"
    " used only when given so"
)


def given_token(conn: Connection) -> str | None:
    """The token given to a command that runs in an agent's session: ``--token``,
    ``RELAY_TOKEN`` or the config file's, never the local operator token file."""
    from relay_client.config import ClientConfig

    return ClientConfig.resolve(conn.url, token=conn.token, local_operator=False).token
