"""``relay mcp`` as an MCP client launches it: a subprocess over stdio, driven by the official
``mcp`` client, against a live server. The agent's identity comes from the environment, as it
does for the CLI."""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import operator
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import ResourceUpdated
from mcp.types import (
    CallToolResult,
    ElicitRequestParams,
    ElicitResult,
    ResourceUpdatedNotification,
    TextResourceContents,
)

from relay_client import RelayClient
from relay_mcp import agent_tools, inbox, operator_tools, reservation_tools
from tests.live import LiveServer, live_server, relay_command

AGENT_TOOLS = {
    "whoami",
    "send_message",
    "read_inbox",
    "ack_messages",
    "list_rooms",
    "join_room",
    "post_to_room",
    "read_room",
    "read_thread",
    "search",
    "list_tasks",
    "create_task",
    "claim_task",
    "report_progress",
    "complete_task",
    "fail_task",
    "record_action",
    "ask_operator",
    "check_operator_reply",
    "ask_approval",
    "request_approval",
    "check_approval",
    "upload_diagnostic",
    "record_remediation",
    "wait_for_events",
}
OPERATOR_TOOLS = {
    "fleet_status",
    "list_pending_approvals",
    "approve",
    "reject",
    "reply_to_notification",
    "list_notifications",
    "list_policies",
    "simulate_policy",
    "set_policy",
    "send_message",
    "create_task",
    "list_tasks",
}
# The first request of a strict 2025-protocol host (Codex's rmcp), byte for byte in spirit.
STRICT_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "codex-mcp-client", "version": "0.142.0"},
    },
}


Action = Literal["accept", "decline", "cancel"]


class Human:
    """The person at the MCP client: answers each form as told, and remembers what it read."""

    def __init__(self, action: Action = "accept", confirm: bool = True) -> None:
        self.action = action
        self.confirm = confirm
        self.read: list[str] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.read.append(params.message)
        content = {"confirm": self.confirm} if self.action == "accept" else None
        return ElicitResult(action=self.action, content=content)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp")) as running:
        yield running


def agent_process(server: LiveServer, agent_id: str) -> tuple[str, list[str], dict[str, str]]:
    """``relay mcp`` for an agent registered now, configured as a user would (environment):
    its command, arguments and environment."""
    with RelayClient(server.url, token=server.operator_token) as op:
        token = op.agents.register(agent_id).token
    assert token is not None
    command, *args = relay_command()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"RELAY_URL": server.url, "RELAY_TOKEN": token, "RELAY_AGENT_ID": agent_id}
    return command, [*args, "mcp"], env


def operator_mcp(server: LiveServer) -> StdioServerParameters:
    """``relay mcp`` with the operator's token."""
    command, *args = relay_command()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"RELAY_URL": server.url, "RELAY_TOKEN": server.operator_token}
    return StdioServerParameters(command=command, args=[*args, "mcp"], env=env)


def agent(server: LiveServer, agent_id: str) -> StdioServerParameters:
    command, args, env = agent_process(server, agent_id)
    return StdioServerParameters(command=command, args=args, env=env)


def data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


async def test_the_agent_tools_are_listed(server: LiveServer) -> None:
    async with Client(agent(server, "lister")) as client:
        listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == AGENT_TOOLS
    for tool in listed.tools:
        assert tool.description and tool.input_schema["type"] == "object", tool.name
    reads = {t.name for t in listed.tools if t.annotations and t.annotations.read_only_hint}
    assert {"read_inbox", "list_tasks", "whoami", "check_approval"} <= reads
    assert "send_message" not in reads


async def test_messages_tasks_and_errors_over_stdio(server: LiveServer) -> None:
    with RelayClient(server.url, token=server.operator_token) as op:
        task = op.tasks.create("summarise the logs")
    async with (
        Client(agent(server, "ada")) as ada,
        Client(agent(server, "bob")) as bob,
    ):
        sent = await ada.call_tool("send_message", {"to": "bob", "text": "build 7 is green"})
        message_id = data(sent)["message_id"]
        inbox = await bob.call_tool("read_inbox", {"wait_seconds": 5})
        assert [m["text"] for m in data(inbox)["messages"]] == ["build 7 is green"]
        assert data(inbox)["waiting"] == "1 unread message"
        assert "build 7 is green" in inbox.content[0].text  # type: ignore[union-attr]
        acked = await bob.call_tool("ack_messages", {"message_ids": [message_id]})
        assert data(acked)["waiting"] == "0 unread messages"

        claimed = await bob.call_tool("claim_task", {})
        assert data(claimed)["task_id"] == task.task_id
        taken = await ada.call_tool("claim_task", {"task_id": task.task_id})
        assert taken.is_error and taken.structured_content is not None
        assert taken.structured_content["code"] == "conflict"
        done = await bob.call_tool("complete_task", {"task_id": task.task_id, "result": {"n": 3}})
        assert data(done)["status"] == "completed"

        who = await bob.call_tool("whoami", {})
        assert data(who)["agent_id"] == "bob" and data(who)["held_tasks"] == []
        refused = await bob.call_tool("read_inbox", {"limit": 0})
        assert refused.is_error  # the input schema's bound, before any request


async def test_ask_operator_returns_the_reply_given_from_the_cli(server: LiveServer) -> None:
    """The operator answers seconds later through the CLI; the waiting tool returns it."""

    def operator_replies() -> None:
        with RelayClient(server.url, token=server.operator_token) as op:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                asked = [n for n in op.notify.list().notifications if n.agent_id == "carol"]
                if asked and asked[0].platform_message_id:
                    op.notify.reply(asked[0].platform_message_id, "yes, go ahead")
                    return
                time.sleep(0.2)

    replier = threading.Thread(target=operator_replies)
    async with Client(agent(server, "carol")) as carol:
        replier.start()
        answered = await carol.call_tool(
            "ask_operator", {"text": "may I restart the db?", "wait_seconds": 20}
        )
        replier.join()
        assert data(answered)["reply"] == "yes, go ahead" and not data(answered)["pending"]
        unanswered = await carol.call_tool("ask_operator", {"text": "and now?", "wait_seconds": 0})
        pending = data(unanswered)
        assert pending["pending"] is True
        later = await carol.call_tool(
            "check_operator_reply", {"notification_id": pending["notification_id"]}
        )
        assert data(later)["pending"] is True


async def test_ask_operator_with_options_is_a_question_the_cli_answers(
    server: LiveServer,
) -> None:
    """With options, the question is an approval of kind question: the operator answers it
    (through the SDK, as ``relay approvals answer`` does), and the waiting tool returns the
    option; unanswered, it says where to look."""

    def operator_answers() -> None:
        with RelayClient(server.url, token=server.operator_token) as op:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                waiting = op.approvals.list(status="pending").approvals
                asked = [a for a in waiting if a.requested_by == "quinn"]
                if asked:
                    op.approvals.answer(asked[0].approval_id, ["SQLite"])
                    return
                time.sleep(0.2)

    answerer = threading.Thread(target=operator_answers)
    async with Client(agent(server, "quinn")) as quinn:
        answerer.start()
        options = ["Postgres", "SQLite"]
        text = "Which database for the cache?\nThe shared cluster is busy."
        answered = data(
            await quinn.call_tool(
                "ask_operator", {"text": text, "options": options, "wait_seconds": 20}
            )
        )
        answerer.join()
        assert answered["reply"] == "SQLite" and answered["pending"] is False
        with RelayClient(server.url, token=server.operator_token) as op:
            asked = op.approvals.show(answered["approval_id"])
        assert asked.kind == "question" and asked.title == "Which database for the cache?"
        assert asked.detail == text  # the whole text, where the title is its first line
        unanswered = data(
            await quinn.call_tool(
                "ask_operator", {"text": "and now?", "options": options, "wait_seconds": 0}
            )
        )
        assert unanswered["pending"] is True
        assert unanswered["next"] == f"check_approval({unanswered['approval_id']}) later"
        refused = await quinn.call_tool("ask_operator", {"text": "one?", "options": ["only"]})
        assert refused.is_error  # 2 options at least, by the input schema


async def test_the_operator_token_gives_the_operator_tools(server: LiveServer) -> None:
    """Triage from an LLM: what is pending, a decision with a note, a reply to an agent."""
    with RelayClient(server.url, anonymous=True) as anonymous:
        asked = anonymous.enroll.request("dave", reason="new linter")
    async with (
        Client(operator_mcp(server), elicitation_callback=Human()) as op,
        Client(agent(server, "erin")) as erin,
    ):
        assert {t.name for t in (await op.list_tools()).tools} == OPERATOR_TOOLS
        status = await op.call_tool("fleet_status", {})
        assert data(status)["pending_approvals"] >= 1
        pending = data(await op.call_tool("list_pending_approvals", {}))["approvals"]
        assert asked.approval_id in [a["approval_id"] for a in pending]
        approved = await op.call_tool("approve", {"approval_id": asked.approval_id, "note": "ok"})
        assert data(approved)["status"] == "approved"
        again = await op.call_tool("reject", {"approval_id": asked.approval_id})
        assert again.is_error and again.structured_content["code"] == "conflict"  # type: ignore[index]

        waiting = await erin.call_tool("ask_operator", {"text": "deploy?", "wait_seconds": 0})
        notification_id = data(waiting)["notification_id"]
        listed = data(await op.call_tool("list_notifications", {}))["notifications"]
        assert notification_id in [n["notification_id"] for n in listed]
        sent = await op.call_tool(
            "reply_to_notification", {"notification_id": notification_id, "text": "go"}
        )
        assert data(sent)["message_id"] > 0
        got = await erin.call_tool("check_operator_reply", {"notification_id": notification_id})
        assert data(got)["reply"] == "go"
        missing = await op.call_tool(
            "reply_to_notification", {"notification_id": 999999, "text": "x"}
        )
        assert missing.is_error and missing.structured_content["code"] == "not_found"  # type: ignore[index]

        with RelayClient(server.url, token=server.operator_token) as rest:
            kept = rest.policies.create(
                "no rm", "reject", match={"payload": {"/command": {"regex": "^rm "}}}
            )
        listed_policies = data(await op.call_tool("list_policies", {}))["policies"]
        assert kept.policy_id in [p["policy_id"] for p in listed_policies]
        verdict = await op.call_tool(
            "simulate_policy",
            {"agent_id": "erin", "title": "Bash: rm x", "payload": {"command": "rm x"}},
        )
        assert data(verdict)["decision"] == "reject"
        assert data(verdict)["policy_id"] == kept.policy_id


async def test_the_token_alone_says_which_agent_relay_mcp_acts_as(server: LiveServer) -> None:
    """No RELAY_AGENT_ID: the server says whose the token is; a refused token or another
    agent's name stops ``relay mcp`` before any host lists its tools."""
    command, args, env = agent_process(server, "frank")
    del env["RELAY_AGENT_ID"]
    async with Client(StdioServerParameters(command=command, args=args, env=env)) as frank:
        assert data(await frank.call_tool("whoami", {}))["agent_id"] == "frank"

    def started(**changed: str) -> subprocess.CompletedProcess[str]:
        run = [command, *args]
        return subprocess.run(run, env=env | changed, capture_output=True, text=True, timeout=30)

    refused = started(RELAY_TOKEN="rly_agent_wrong")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "unauthenticated" in refused.stderr
    other = started(RELAY_AGENT_ID="grace")
    assert other.returncode == 1 and "belongs to agent 'frank', not 'grace'" in other.stderr


async def test_the_inbox_resource_is_pushed_when_a_message_commits(server: LiveServer) -> None:
    async with Client(agent(server, "gina")) as gina:
        async with gina.listen(resource_subscriptions=["relay://inbox"]) as subscription:
            with RelayClient(server.url, token=server.operator_token) as op:
                op.messages.send("new mail", to="gina")
            async with asyncio.timeout(20):
                event = await anext(aiter(subscription))
        assert isinstance(event, ResourceUpdated) and event.uri == "relay://inbox"
        [contents] = (await gina.read_resource("relay://inbox")).contents
        assert isinstance(contents, TextResourceContents)
        assert [m["text"] for m in json.loads(contents.text)["messages"]] == ["new mail"]


# The SDK's client warns that the 2026 protocol removed the method: that is the point here.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_2025_protocol_client_subscribes_and_hears_of_new_mail(server: LiveServer) -> None:
    """Hosts still on the initialize handshake subscribe with ``resources/subscribe``."""
    updates: asyncio.Queue[str] = asyncio.Queue()

    async def hear(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            await updates.put(message.params.uri)

    async with Client(agent(server, "hal"), mode="legacy", message_handler=hear) as hal:
        capabilities = hal.session.server_capabilities
        assert capabilities is not None and capabilities.resources is not None
        assert capabilities.resources.subscribe
        await hal.session.subscribe_resource("relay://inbox")
        with RelayClient(server.url, token=server.operator_token) as op:
            op.messages.send("handshake-era mail", to="hal")
        async with asyncio.timeout(20):
            assert await updates.get() == "relay://inbox"
        await hal.session.unsubscribe_resource("relay://inbox")
        with RelayClient(server.url, token=server.operator_token) as op:
            op.messages.send("unheard", to="hal")
        await asyncio.sleep(1)  # the time the first update took, many times over
        unread = data(await hal.call_tool("whoami", {}))["unread"]
        assert unread == 2 and updates.empty()


def test_stdout_carries_the_protocol_only(server: LiveServer) -> None:
    """A strict host (Codex) fails the handshake on any stdout line that is not JSON-RPC."""
    command, args, env = agent_process(server, "raw")
    lines = [
        STRICT_INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami"}},
    ]
    with subprocess.Popen(
        [command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        process.stdin.flush()
        # stdin stays open, as a host keeps it, until the last answer is in.
        answers = [json.loads(process.stdout.readline()) for _ in range(3)]
        process.stdin.close()
        rest = process.stdout.read()
    assert [a["id"] for a in answers] == [0, 1, 2]
    assert all("result" in a for a in answers), answers
    assert rest == ""
    assert answers[2]["result"]["structuredContent"]["agent_id"] == "raw"


def test_every_client_method_a_tool_calls_exists() -> None:
    """Checked against the SDK (which the operation table drives), as the CLI's commands are:
    a tool cannot call what the API does not offer."""
    client = RelayClient("http://relay.invalid", token="x")
    called = set()
    for module in (agent_tools, inbox, operator_tools, reservation_tools):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                chain, target = [node.func.attr], node.func.value
                while isinstance(target, ast.Attribute):
                    chain.insert(0, target.attr)
                    target = target.value
                if isinstance(target, ast.Name) and target.id == "relay" and len(chain) <= 2:
                    called.add(".".join(chain))
    assert len(called) > 20
    for name in called:
        assert callable(operator.attrgetter(name)(client)), name
    client.close()


async def test_rooms_progress_actions_interventions_and_events(server: LiveServer) -> None:
    """The rest of the agent tools, each through the real client, with what it must have done."""
    with RelayClient(server.url, token=server.operator_token) as op:
        first = op.tasks.create("flaky one", max_attempts=2)
        second = op.tasks.create("watched one")
    async with Client(agent(server, "olga")) as olga:
        joined = data(await olga.call_tool("join_room", {"room_id": "ops"}))
        assert joined["room_id"] == "ops"
        assert "ops" in data(await olga.call_tool("list_rooms", {}))["rooms"]
        data(await olga.call_tool("post_to_room", {"room_id": "ops", "text": "deploying"}))
        room = data(await olga.call_tool("read_room", {"room_id": "ops"}))
        assert [m["text"] for m in room["messages"]] == ["deploying"]

        listed = data(await olga.call_tool("list_tasks", {"status": "open"}))
        assert {first.task_id, second.task_id} <= {t["task_id"] for t in listed["tasks"]}
        data(await olga.call_tool("claim_task", {"task_id": first.task_id}))
        progress = {"task_id": first.task_id, "progress": 40, "message": "halfway"}
        noted = data(await olga.call_tool("report_progress", progress))
        assert noted["task_id"] == first.task_id
        retried = {"task_id": first.task_id, "error": "disk full", "retry": True}
        assert data(await olga.call_tool("fail_task", retried))["status"] == "open"

        action = {"action": "restart", "target": "web-1", "outcome": "ok", "params": {"n": 1}}
        recorded = data(await olga.call_tool("record_action", action))["action_id"]

        cursor = data(await olga.call_tool("wait_for_events", {"wait_seconds": 0}))["cursor"]
        kept = {"intervention_id": "inc-1", "summary": "p99 up", "details": "p99 900ms"}
        diagnostic = data(await olga.call_tool("upload_diagnostic", kept))
        assert diagnostic["diagnostic_id"] > 0
        ask = {
            "intervention_id": "inc-1",
            "title": "Restart web-1",
            "reason": "p99 is 900 ms",
            "proposed_action": "systemctl restart web",
            "risk": "low",
        }
        asked = data(await olga.call_tool("request_approval", ask))
        waiting = data(await olga.call_tool("check_approval", {"intervention_id": "inc-1"}))
        assert waiting["status"] == "pending"
        with RelayClient(server.url, token=server.operator_token) as op:
            op.approvals.approve(asked["approval_id"], note="go")
        decided = await olga.call_tool(
            "check_approval", {"intervention_id": "inc-1", "wait_seconds": 5}
        )
        assert data(decided)["status"] == "approved" and data(decided)["note"] == "go"
        assert decided.content[0].text == json.dumps(  # type: ignore[union-attr]
            decided.structured_content, separators=(",", ":")
        )  # the text is the same JSON
        assert data(decided)["waiting"] == "0 unread messages, 1 approval decided"
        told_once = data(await olga.call_tool("check_approval", {"intervention_id": "inc-1"}))
        assert told_once["waiting"] == "0 unread messages"
        remediation = {
            "intervention_id": "inc-1",
            "action": "restarted web-1",
            "status": "succeeded",
            "evidence_before": {"p99": 900},
            "evidence_after": {"p99": 80},
        }
        assert data(await olga.call_tool("record_remediation", remediation))["action_id"] > 0
        events = data(await olga.call_tool("wait_for_events", {"after": cursor, "wait_seconds": 1}))
        assert "intervention.diagnostic" in [e["kind"] for e in events["events"]]
    # What the answers only name is stored as asked.
    with RelayClient(server.url, token=server.operator_token) as op:
        trail = op.tasks.events(first.task_id).events
        assert [(e.progress, e.message) for e in trail if e.kind == "progress"] == [(40, "halfway")]
        [done] = [a for a in op.actions.list(agent_id="olga").actions if a.action_id == recorded]
        assert (done.agent_id, done.target, done.outcome) == ("olga", "web-1", "ok")


def test_without_a_token_relay_mcp_and_relay_hook_never_act_as_the_operator(
    server: LiveServer, tmp_path: Path
) -> None:
    """On the server's machine (its operator token file readable), a hand-written MCP or hook
    config that forgot RELAY_TOKEN stops with one line: neither takes the operator's token."""
    command, *args = relay_command()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"RELAY_URL": server.url, "RELAY_DATA_DIR": str(server.data_dir), "HOME": str(tmp_path)}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    served = subprocess.run(
        [command, *args, "mcp"], input="", capture_output=True, text=True, env=env, timeout=30
    )
    assert served.returncode == 2 and served.stdout == ""
    assert served.stderr.strip().splitlines() == [
        "Error: relay mcp: no agent token: run relay --agent NAME connect claude-code|codex, or"
        " give the agent's token as RELAY_TOKEN or --token; the operator's token is used only"
        " when given so"
    ]
    prompt = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "cwd": str(tmp_path)}
    prompt["tool_input"] = {"command": "git push --force"}
    hooked = subprocess.run(
        [command, *args, "hook", "claude-code"],
        input=json.dumps(prompt),
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert hooked.returncode == 0 and "no agent token" in hooked.stderr
    # The terminal asks, as before; the person is told why, once.
    assert json.loads(hooked.stdout) == {
        "systemMessage": "Relay has no agent identity here: prompts stay in this terminal; run"
        " `relay doctor`"
    }
    with RelayClient(server.url, token=server.operator_token) as op:
        assert not any("git push --force" in a.title for a in op.approvals.list().approvals)
    # The operator's token given explicitly is the operator's choice: it serves.
    env["RELAY_TOKEN"] = server.operator_token
    line = json.dumps(STRICT_INITIALIZE) + "\n"
    with subprocess.Popen(
        [command, *args, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(line)
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 0
        process.stdin.close()


async def test_a_session_stays_online_within_a_short_presence_window(tmp_path: Path) -> None:
    """With RELAY_PRESENCE_TTL=3 (the old beat was a fixed 20 s), a running relay mcp keeps its
    agent online: it beats within the window each heartbeat's answer gives."""
    with live_server(tmp_path, RELAY_PRESENCE_TTL="3") as short:
        async with Client(agent(short, "steady")) as session:
            await session.list_tools()
            with RelayClient(short.url, token=short.operator_token) as op:
                seen = []
                for _ in range(16):  # 8 s: past two windows
                    await asyncio.sleep(0.5)
                    agents = (await asyncio.to_thread(op.agents.list)).agents
                    seen.append({a.agent_id: a.presence for a in agents}["steady"])
        assert set(seen) == {"online"}, seen


def test_without_the_mcp_sdk_the_error_names_an_install_that_works(tmp_path: Path) -> None:
    """The MCP SDK is part of every install now; should it be broken, relay mcp names the
    command that installs this Relay again (here, a clone: an editable install of it)."""
    broken = tmp_path / "broken" / "mcp"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('the MCP SDK is broken here')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"PYTHONPATH": str(broken.parent), "HOME": str(tmp_path)}
    done = subprocess.run(
        [*relay_command(), "mcp"], capture_output=True, text=True, env=env, timeout=30
    )
    assert done.returncode == 2 and done.stdout == ""
    clone = Path(__file__).resolve().parents[2]
    assert done.stderr.startswith("Error: relay mcp cannot load the MCP SDK")
    assert f"-m pip install -e {clone}" in done.stderr
    assert "relay-agents[mcp]" not in done.stderr
