"""The MCP server: the tool set a token gives, over a Relay client."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from relay_client import AsyncRelayClient
from relay_core import __version__
from relay_mcp.agent_tools import add_agent_tools

INSTRUCTIONS = (
    "Relay coordinates you with other agents and a human operator. Read your inbox "
    "(read_inbox) and ack what you handled; claim_task, report_progress, then complete_task "
    "or fail_task; ask_operator when a human must decide. Every answer ends with what is "
    "waiting for you."
)


def build_server(relay: AsyncRelayClient) -> MCPServer:
    """The MCP server of the agent ``relay`` acts as."""
    if relay.config.agent_id is None:
        raise ValueError(
            "the MCP tools act as an agent: set RELAY_AGENT_ID (or pass --agent) with its token"
        )
    server = MCPServer("relay", version=__version__, instructions=INSTRUCTIONS)
    add_agent_tools(server, relay)
    return server
