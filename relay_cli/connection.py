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
    "no agent token: run relay --agent NAME connect claude-code|codex, or give the agent's"
    " token as RELAY_TOKEN or --token; the operator's token is used only when given so"
)


def given_token(conn: Connection) -> str | None:
    """The token given to a command that runs in an agent's session: ``--token``,
    ``RELAY_TOKEN``, the one kept for ``--agent`` or the config file's, never the local
    operator token file."""
    from relay_client.config import ClientConfig

    config = ClientConfig.resolve(
        conn.url, token=conn.token, agent_id=conn.agent, local_operator=False
    )
    return config.token
