"""``/mcp`` on the server's own port: the official client over Streamable HTTP with the same
bearer tokens as the API, against ``relay serve``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated
from mcp.types import CallToolResult, TextResourceContents

from relay_client import RelayClient
from relay_core.hub import Hub
from relay_server.mcp import asgi as mcp_door
from tests.e2e.test_mcp_schemas import check_listing
from tests.e2e.test_mcp_stdio import AGENT_TOOLS, OPERATOR_TOOLS, STRICT_INITIALIZE, agent
from tests.live import LiveServer, agent_token, live_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp-http")) as running:
        yield running


@asynccontextmanager
async def connected(
    url: str,
    token: str,
    mode: str = "auto",
    elicitation: ElicitationFnT | None = None,
    extra: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    """The official client on ``url``/mcp with a bearer token (``mode="legacy"``: the 2025
    protocol's initialize handshake), answering forms with ``elicitation`` if given, sending
    ``extra`` headers too."""
    headers = {"Authorization": f"Bearer {token}", **(extra or {})}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=elicitation) as client:
            yield client


def data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


async def test_a_client_sent_door_header_is_dropped_for_the_operator(server: LiveServer) -> None:
    """The door's own headers are the door's: an operator's client that sends
    X-Relay-MCP-Agent does not act as that agent (its decision would be recorded as the
    agent's)."""
    from tests.e2e.test_mcp_stdio import Human

    asker = agent_token(server, "private-asker")
    agent_token(server, "victim")
    with RelayClient(server.url, token=asker) as agent_client:
        asked = agent_client.approvals.request("a private request").approval_id
    forged = {"X-Relay-MCP-Agent": "victim"}
    async with connected(
        server.url, server.operator_token, elicitation=Human(), extra=forged
    ) as op:
        decided = data(await op.call_tool("approve", {"approval_id": asked}))
    assert decided["status"] == "approved"
    with RelayClient(server.url, token=server.operator_token) as operator:
        assert operator.approvals.show(asked).decided_by == "operator"


def test_no_token_no_mcp(server: LiveServer) -> None:
    answer = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 401 and answer.json()["code"] == "unauthenticated"
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    wrong = httpx.post(
        f"{server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Authorization": "Bearer rly_agent_nobody"},
    )
    assert wrong.status_code == 401
    assert wrong.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


async def test_agent_and_operator_tools_over_http(server: LiveServer) -> None:
    async with (
        connected(server.url, agent_token(server, "hana")) as hana,
        connected(server.url, agent_token(server, "ivan")) as ivan,
        connected(server.url, server.operator_token) as op,
    ):
        agent_tools, operator_tools = (await hana.list_tools()).tools, (await op.list_tools()).tools
        assert {t.name for t in agent_tools} == AGENT_TOOLS
        assert {t.name for t in operator_tools} == OPERATOR_TOOLS
        check_listing(agent_tools)  # as over stdio: titled, hinted, described, bounded
        check_listing(operator_tools)
        invalid = await hana.call_tool("join_room", {"room_id": "x" * 100_000})
        assert invalid.is_error and invalid.structured_content is not None
        assert invalid.structured_content["code"] == "validation_error"
        sent = await hana.call_tool("send_message", {"to": "ivan", "text": "over http"})
        assert data(sent)["message_id"] > 0
        inbox = data(await ivan.call_tool("read_inbox", {}))
        assert [m["text"] for m in inbox["messages"]] == ["over http"]
        assert inbox["messages"][0]["from_agent"] == "hana"  # the caller is the token's agent
        assert inbox["waiting"] == "1 unread message"
        refused = await ivan.call_tool("complete_task", {"task_id": 999999})
        assert refused.is_error and refused.structured_content is not None
        assert refused.structured_content["code"] == "not_found"
        status = data(await op.call_tool("fleet_status", {}))
        assert status["agents"] >= 2
    log = server.log.read_text()
    assert "Traceback" not in log and "internal error" not in log


async def test_a_2025_protocol_client_works_over_http_without_a_promise_of_push(
    server: LiveServer,
) -> None:
    """Hosts still on the initialize handshake get every tool. Stateless HTTP keeps no session
    to tell them of mail on, so the door does not offer ``resources/subscribe``: they learn of
    it from the waiting line of every answer."""
    async with (
        connected(server.url, agent_token(server, "jo"), mode="legacy") as jo,
        connected(server.url, agent_token(server, "kai"), mode="legacy") as kai,
    ):
        capabilities = jo.session.server_capabilities
        assert capabilities is not None and capabilities.resources is not None
        assert not capabilities.resources.subscribe
        assert {t.name for t in (await jo.list_tools()).tools} == AGENT_TOOLS
        await kai.call_tool("send_message", {"to": "jo", "text": "handshake era"})
        assert data(await jo.call_tool("whoami", {}))["waiting"] == "1 unread message"


def test_the_wire_as_a_strict_2025_client_sends_it(server: LiveServer) -> None:
    """What Codex's client (rmcp) does, byte by byte: initialize, then the initialized
    notification (202, empty), then opens a GET stream, which a stateless door refuses with
    405 so the client holds no idle connection."""
    headers = {
        "Authorization": f"Bearer {agent_token(server, 'lev')}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    # The door loads the MCP SDK on its first request (seconds on a busy machine).
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
        opened = http.post("/mcp", json=STRICT_INITIALIZE)
        assert opened.status_code == 200 and "mcp-session-id" not in opened.headers
        [event] = [line for line in opened.text.splitlines() if line.startswith("data: ")]
        assert json.loads(event[6:])["result"]["protocolVersion"] == "2025-06-18"
        ready = http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert ready.status_code == 202 and ready.content == b""
        for method in ("GET", "DELETE"):
            refused = http.request(method, "/mcp")
            assert refused.status_code == 405 and refused.headers["allow"] == "POST"


async def test_the_door_keeps_a_bounded_set_of_clients_and_closes_the_evicted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mcp_door, "CLIENTS_KEPT", 2)
    monkeypatch.setattr(mcp_door, "RETIRE_SECONDS", 0)
    door = mcp_door.McpDoor(Hub())

    class Call:  # what a tool's context offers the door: the request's headers
        def __init__(self, token: str) -> None:
            self.headers = {
                "authorization": f"Bearer {token}",
                mcp_door.LOOPBACK_HEADER: "http://127.0.0.1:9",
            }

    first = door.client(Call("a"))  # type: ignore[arg-type]
    assert door.client(Call("a")) is first  # type: ignore[arg-type]
    for token in ("b", "c"):
        door.client(Call(token))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    assert first._http.is_closed and first.config.token == "a"  # the oldest caller was evicted


async def test_an_agent_hears_of_its_own_mail_only_over_http(server: LiveServer) -> None:
    """One server serves every agent: relay://inbox is each agent's own, and so are its
    updates."""
    async with (
        connected(server.url, agent_token(server, "jade")) as jade,
        connected(server.url, agent_token(server, "kurt")) as kurt,
    ):
        async with (
            jade.listen(resource_subscriptions=["relay://inbox"]) as jade_hears,
            kurt.listen(resource_subscriptions=["relay://inbox"]) as kurt_hears,
        ):
            with RelayClient(server.url, token=server.operator_token) as op:
                op.messages.send("for jade", to="jade")
            async with asyncio.timeout(20):
                event = await anext(aiter(jade_hears))
            assert isinstance(event, ResourceUpdated) and event.uri == "relay://inbox"
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(1):
                    await anext(aiter(kurt_hears))
        [contents] = (await jade.read_resource("relay://inbox")).contents
        assert isinstance(contents, TextResourceContents)
        assert [m["text"] for m in json.loads(contents.text)["messages"]] == ["for jade"]
        [empty] = (await kurt.read_resource("relay://inbox")).contents
        assert isinstance(empty, TextResourceContents)
        assert json.loads(empty.text)["messages"] == []


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_initialize_and_discover_answer_the_same_capabilities(server: LiveServer) -> None:
    """A 2025 client learns the server's capabilities from ``initialize``, a 2026-07-28 one
    from ``server/discover``: on either door, the same tools, resources and prompts."""
    found = {}
    for mode in ("legacy", "auto"):
        async with Client(agent(server, f"discoverer-{mode}"), mode=mode) as client:
            found[("stdio", mode)] = client.server_capabilities
            assert client.protocol_version.startswith("2025" if mode == "legacy" else "2026")
        async with connected(server.url, agent_token(server, f"http-{mode}"), mode) as client:
            found[("http", mode)] = client.server_capabilities
    for door in ("stdio", "http"):
        legacy, modern = found[(door, "legacy")], found[(door, "auto")]
        for capability in ("tools", "resources", "prompts"):
            assert (getattr(legacy, capability) is None) == (getattr(modern, capability) is None)
        assert legacy.tools is not None and legacy.prompts is not None
        assert legacy.resources is not None


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_threads_search_and_approvals_with_a_deadline_over_http(
    server: LiveServer, mode: str
) -> None:
    """The tools of finding 10 on the HTTP door, on both protocol revisions."""
    lia, max_ = f"lia-{mode}", f"max-{mode}"
    async with (
        connected(server.url, agent_token(server, lia), mode) as asker,
        connected(server.url, agent_token(server, max_), mode) as answerer,
    ):
        question = {"to": max_, "text": f"is the {mode} certificate renewed?"}
        asked = data(await asker.call_tool("send_message", question))
        answer = {"to": lia, "text": "renewed this morning", "reply_to": asked["message_id"]}
        replied = data(await answerer.call_tool("send_message", answer))
        thread = data(await asker.call_tool("read_thread", {"message_id": replied["message_id"]}))
        assert [m["message_id"] for m in thread["messages"]] == [
            asked["message_id"],
            replied["message_id"],
        ]
        found = data(await answerer.call_tool("search", {"q": f"{mode} certificate"}))
        assert [(h["kind"], h["id"]) for h in found["hits"]] == [("message", asked["message_id"])]
        approval = {"title": f"Restart the {mode} cache", "expires_in": 600}
        requested = data(await asker.call_tool("ask_approval", approval))
        assert requested["status"] == "pending" and requested["expires_at"]
        checked = data(
            await asker.call_tool("check_approval", {"approval_id": requested["approval_id"]})
        )
        assert checked["status"] == "pending" and checked["next"].startswith("check_approval(")
