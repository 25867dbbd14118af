"""The MCP server: the tool set a token gives, over a Relay client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from mcp.server.context import ServerMiddleware, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import SubscriptionBus
from mcp.types import DiscoverResult, RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from relay_api import __version__
from relay_client import AsyncRelayClient
from relay_mcp.agent_tools import add_agent_tools
from relay_mcp.channel import CAPABILITIES, Channel
from relay_mcp.channel import INSTRUCTIONS as channel_instructions
from relay_mcp.inbox import SessionSubscribers, add_inbox
from relay_mcp.operator_tools import add_operator_tools
from relay_mcp.reservation_tools import RESERVATION_TOOLS
from relay_mcp.results import Clients, RelayMCPServer, serve_tools

# stderr is the host's log of this process: warnings only, not every request to Relay.
QUIET: Final = "WARNING"
INSTRUCTIONS = (
    "Relay coordinates you with other agents and a human operator. Read your inbox "
    "(read_inbox) and ack what you handled; claim_task, report_progress, then complete_task "
    "or fail_task; ask_operator when a human must decide. Every answer says what waits for "
    "you (waiting) and, when there is something to do, what (next)."
)
# The standing instructions docs/mcp.md gives, served as the prompt ``relay-agent-loop``.
AGENT_LOOP = (
    "You coordinate through Relay. Start with `whoami`. When an answer says messages are "
    "waiting, `read_inbox`, act on them, then `ack_messages` with their ids. To work: "
    "`claim_task` (no id takes the next one you may), `report_progress` as you go, then "
    "`complete_task` with a result, or `fail_task` with the error (`retry: true` if another "
    "attempt may succeed). When a human must decide, `ask_operator` with one clear question; if "
    "it answers pending, carry on and `check_operator_reply` later. Before a risky remediation: "
    "`upload_diagnostic`, `request_approval`, wait with `check_approval`, act only when "
    "approved, then `record_remediation` with evidence before and after. Before anything else "
    "the operator should approve, `ask_approval` (with `expires_in` if it cannot wait) and "
    "`check_approval` until it is decided. Record what you change with `record_action`."
)
OPERATOR = (
    "Relay's operator tools: fleet_status for the state of things, list_pending_approvals then "
    "approve or reject (with a note for the agent), list_notifications and "
    "reply_to_notification to answer what agents asked; list_policies, simulate_policy and "
    "set_policy for the rules that decide routine approvals. Decisions and policy changes are "
    "confirmed by the human first."
)


def agent_server(
    clients: Clients,
    bus: SubscriptionBus | None = None,
    middleware: Sequence[ServerMiddleware[Any]] = (),
    instructions: str = INSTRUCTIONS,
    workspace: str | None = None,
) -> RelayMCPServer:
    """The agent tools and ``relay://inbox`` (its updates published on ``bus``), each call
    acting through ``clients(ctx)``; with a ``workspace``, the reservation tools for it too."""
    server = RelayMCPServer(
        "relay",
        clients,
        version=__version__,
        instructions=instructions,
        log_level=QUIET,
        subscriptions=bus,
        middleware=middleware,
    )
    add_agent_tools(server, clients)
    if workspace is not None:
        server.workspace = workspace
        serve_tools(server, RESERVATION_TOOLS, clients)
    add_inbox(server, clients)
    server.prompt(
        name="relay-agent-loop",
        title="Work as a Relay agent",
        description="Standing instructions for an agent that coordinates through Relay",
    )(_agent_loop)
    return server


def _agent_loop() -> str:
    return AGENT_LOOP


def operator_server(
    clients: Clients,
    *,
    confirm_decisions: bool = True,
    middleware: Sequence[ServerMiddleware[Any]] = (),
) -> RelayMCPServer:
    """The operator's tools, each call acting through ``clients(ctx)``; its decisions asked of
    the human first unless ``confirm_decisions`` is off (``relay_mcp.confirmation``)."""
    server = RelayMCPServer(
        "relay-operator",
        clients,
        confirm_decisions=confirm_decisions,
        version=__version__,
        instructions=OPERATOR,
        log_level=QUIET,
        middleware=middleware,
    )
    add_operator_tools(server, clients)
    return server


def build_server(
    relay: AsyncRelayClient,
    bus: SubscriptionBus,
    subscribers: SessionSubscribers,
    *,
    confirm_decisions: bool = True,
    channel: Channel | None = None,
    workspace: str | None = None,
) -> RelayMCPServer:
    """The stdio server for whoever ``relay`` acts as: the agent tools and ``relay://inbox``
    (updates published on ``bus``, and to the sessions of ``subscribers``) for an agent (its id
    is configured: ``relay mcp`` asks the server whose the token is), the operator's small set
    otherwise. With ``channel``, the agent's server is a Claude Code channel too; with a
    ``workspace``, it reserves paths in it."""
    if relay.config.agent_id is not None:
        if channel is None:
            server = agent_server(lambda _: relay, bus, workspace=workspace)
        else:
            told = f"{INSTRUCTIONS}\n\n{channel_instructions}"
            server = agent_server(
                lambda _: relay, bus, [channel.middleware], told, workspace=workspace
            )
            channel.install(server)
        subscribers.install(server)
        return server
    return operator_server(lambda _: relay, confirm_decisions=confirm_decisions)


async def run_stdio(server: RelayMCPServer, channel: bool) -> None:
    """Serve ``server`` over stdio, declaring the Claude Code channel's capabilities when
    ``channel``: in ``initialize``'s answer (the 2025 protocol) and in ``server/discover``'s
    (the 2026 protocol, which Claude Code probes first)."""
    lowlevel = server._lowlevel_server  # MCPServer.run_stdio_async declares no experimental
    experimental = CAPABILITIES if channel else None

    async def discover(
        ctx: ServerRequestContext[Any, Any], params: RequestParams | None
    ) -> DiscoverResult:
        # The SDK's own discover answer, with the experimental capabilities it leaves out.
        capabilities = lowlevel.get_capabilities(
            experimental_capabilities=experimental, protocol_version=ctx.protocol_version
        )
        return DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=capabilities,
            instructions=lowlevel.instructions,
        )

    lowlevel.add_request_handler("server/discover", RequestParams, discover)
    options = lowlevel.create_initialization_options(experimental_capabilities=experimental)
    async with stdio_server() as (read, write):
        await lowlevel.run(read, write, options)
