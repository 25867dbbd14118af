"""The ``relay`` command's global options, as every command reads them (``ctx.obj``)."""

from __future__ import annotations


class Connection:
    """Where the server is and whose token to send: ``--url``, ``--token``, ``--agent``. A
    plain class: a dataclass's ``inspect`` would cost every hook about 15 ms."""

    def __init__(
        self, url: str | None = None, token: str | None = None, agent: str | None = None
    ) -> None:
        self.url = url
        self.token = token
        self.agent = agent


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
