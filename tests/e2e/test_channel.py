"""``relay mcp`` as a Claude Code channel, driven as Claude Code drives it: a subprocess over
stdio, the official MCP client in the 2025 handshake with Claude Code's name, recording the
``notifications/claude/channel*`` it is sent and sending the permission prompts Claude Code
sends (the channels reference's contract), against a live server."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.types import Implementation
from pydantic import BaseModel

from relay_client import RelayClient, in_trace
from relay_client.errors import ConflictError
from tests.live import LiveServer, agent_token, live_server, relay_command

PUSH = "notifications/claude/channel"
PERMISSION = "notifications/claude/channel/permission"
ARRIVES = 2.0  # seconds from the commit to the host: what the channel promises
CLAUDE_CODE = Implementation(name="claude-code", version="2.1.240")


class ChannelEvent(BaseModel):
    content: str
    meta: dict[str, str] = {}


class Verdict(BaseModel):
    request_id: str
    behavior: str


class PermissionRequest(BaseModel):
    """``notifications/claude/channel/permission_request``, as Claude Code sends it."""

    method: str = "notifications/claude/channel/permission_request"
    params: dict[str, str]


class Host(ClientExtension):
    """What Claude Code's session receives from the channel, in order."""

    identifier = "com.example/claude-code-host"

    def __init__(self) -> None:
        self.events: asyncio.Queue[ChannelEvent] = asyncio.Queue()
        self.verdicts: asyncio.Queue[Verdict] = asyncio.Queue()

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return (
            NotificationBinding(method=PUSH, params_type=ChannelEvent, handler=self.events.put),
            NotificationBinding(method=PERMISSION, params_type=Verdict, handler=self.verdicts.put),
        )

    async def next_event(self, timeout: float = ARRIVES) -> ChannelEvent:
        return await asyncio.wait_for(self.events.get(), timeout)

    async def nothing_more(self, seconds: float = 1.5) -> None:
        await asyncio.sleep(seconds)
        assert self.events.empty(), self.events.get_nowait()
        assert self.verdicts.empty(), self.verdicts.get_nowait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-channel")) as running:
        yield running


def channel(
    server: LiveServer, token: str, state: Path, *args: str, url: str | None = None
) -> StdioServerParameters:
    """``relay mcp`` as Claude Code starts it from the plugin's ``.mcp.json``, its state (the
    channel's cursor) under ``state``."""
    command, *rest = relay_command()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {
        "RELAY_URL": url or server.url,
        "RELAY_TOKEN": token,
        "HOME": str(state),
        "XDG_STATE_HOME": str(state / "state"),
        "XDG_CONFIG_HOME": str(state / "config"),
    }
    return StdioServerParameters(command=command, args=[*rest, "mcp", *args], env=env)


def session(
    params: StdioServerParameters, host: Host, name: str = "claude-code", mode: str = "legacy"
) -> Client:
    """A session as Claude Code opens one: the 2025 handshake (``initialize``) by default,
    ``mode="auto"`` for the 2026 protocol's ``server/discover``, which newer versions probe."""
    info = Implementation(name=name, version=CLAUDE_CODE.version)
    return Client(params, mode=mode, client_info=info, extensions=[host])


def presence_of(op: RelayClient, agent_id: str, expected: str, timeout: float = 5) -> bool:
    """Whether the agent's presence becomes ``expected`` within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if {a.agent_id: a.presence for a in op.agents.list().agents}.get(agent_id) == expected:
            return True
        time.sleep(0.1)
    return False


def api(server: LiveServer, token: str) -> RelayClient:
    return RelayClient(server.url, token=token)


async def test_a_session_hears_messages_posts_tasks_and_decisions(
    server: LiveServer, tmp_path: Path
) -> None:
    ada, bob = agent_token(server, "ada"), agent_token(server, "bob")
    host = Host()
    with api(server, server.operator_token) as op, api(server, bob) as b, api(server, ada) as a:
        a.rooms.join("deploys", agent_id="ada")
        b.rooms.join("deploys", agent_id="bob")
        async with session(channel(server, ada, tmp_path), host) as claude:
            experimental = claude.server_capabilities.experimental or {}
            assert experimental["claude/channel"] == {}
            assert experimental["claude/channel/permission"] == {}
            assert '<channel source="relay"' in (claude.instructions or "")
            await claude.list_tools()  # the session is up
            assert await asyncio.to_thread(presence_of, op, "ada", "online")

            sent = b.messages.send("build 7 is red: <b>look</b>", to="ada", subject="CI")
            event = await host.next_event()
            assert event.meta == {
                "message_id": str(sent.message_id),
                "from": "bob",
                "kind": "message",
                "thread_id": str(sent.thread_id),
            }
            assert event.content == (
                f"Direct message #{sent.message_id} from agent bob, subject \u00abCI\u00bb:\n"
                "\u2502 build 7 is red: \u2039b\u203alook\u2039/b\u203a"  # quoted, no tag
            )

            receipt = b.messages.show(sent.message_id)  # the sender sees it reached a session
            assert receipt.status == "delivered" and receipt.delivered_at is not None
            assert receipt.acked_at is None

            post = b.messages.send("rolling back eu-west", room_id="deploys")
            event = await host.next_event()
            assert event.meta["kind"] == "post" and event.meta["room_id"] == "deploys"
            assert event.meta["message_id"] == str(post.message_id)
            assert f"Post #{post.message_id} by agent bob in room deploys" in event.content
            a.messages.send("my own post is not news", room_id="deploys")

            task = op.tasks.create(
                "rotate the keys", description="all of them", assignee="ada", max_attempts=2
            )
            event = await host.next_event()
            assert event.meta == {"kind": "task", "task_id": str(task.task_id), "from": "operator"}
            assert "rotate the keys" in event.content and "claim_task" in event.content
            a.tasks.claim(task.task_id)
            a.tasks.fail(task.task_id, error="vault sealed", retry=True)  # offered again
            event = await host.next_event()
            assert event.meta["task_id"] == str(task.task_id)
            assert "open again after 1 attempt" in event.content

            asked = a.approvals.request("Deploy 7 to production?")
            op.approvals.approve(asked.approval_id, note="go ahead")
            event = await host.next_event()
            assert event.meta == {
                "kind": "approval",
                "approval_id": str(asked.approval_id),
                "from": "operator",
            }
            assert "approved by the operator" in event.content and "go ahead" in event.content

            question = a.approvals.ask("Which region first?", ["eu-west", "us-east"])
            op.approvals.answer(question.approval_id, ["us-east"])
            event = await host.next_event()
            assert event.meta["approval_id"] == str(question.approval_id)
            assert (
                f"\u27e6operator\u27e7 Your question #{question.approval_id} \u00abWhich region"
                " first?\u00bb was answered" in event.content
            )
            assert "The answer:\n\u2502 us-east" in event.content

            notice = a.notify.send("Which region first?")
            assert notice.platform_message_id is not None
            op.notify.reply(notice.platform_message_id, "eu-west")
            event = await host.next_event()
            assert f"the operator answered your notification #{notice.notification_id}:" in (
                event.content
            )
            assert event.meta["from"] == "operator"

            repo = "github.com/acme/channel"
            held = a.reservations.create(repo, ["src/**"], reason="refactor")
            with pytest.raises(ConflictError):
                b.reservations.create(repo, ["src/app.py"], reason="a hotfix")
            event = await host.next_event()
            assert event.meta == {"kind": "reservation", "reservation_id": str(held.reservation_id)}
            assert event.content.startswith(
                f"Agent bob asked for src/app.py, which your reservation #{held.reservation_id}"
                " (src/**) holds; it was refused."
            )
            assert "Their reason:\n\u2502 a hotfix" in event.content
            assert f"relay release {held.reservation_id}" in event.content

            long = b.messages.send("x" * 10_000, to="ada")
            event = await host.next_event()
            assert len(event.content) < 4_300
            assert f"read_thread with message_id {long.message_id} reads it whole" in event.content
            await host.nothing_more()

        feed = b.events.list(after=0, limit=1000).events
        receipts = [(e.kind, e.subject_id) for e in feed if e.kind.startswith("message.")]
        assert ("message.delivered", str(sent.message_id)) in receipts


async def test_a_2026_protocol_host_hears_the_channel_too(
    server: LiveServer, tmp_path: Path
) -> None:
    jo = agent_token(server, "jo")
    host = Host()
    async with session(channel(server, jo, tmp_path), host, mode="auto") as claude:
        assert claude.session.protocol_version >= "2026"
        experimental = claude.server_capabilities.experimental or {}
        assert set(experimental) == {"claude/channel", "claude/channel/permission"}
        await claude.list_tools()
        # Sent in a trace: the event hands it on in its meta.
        traced = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        with api(server, server.operator_token) as op, in_trace(traced):
            sent = op.messages.send("over the 2026 protocol", to="jo")
        event = await host.next_event()
        assert event.meta["message_id"] == str(sent.message_id)
        assert event.meta["traceparent"] == traced


async def test_a_restarted_session_gets_what_it_missed_once(
    server: LiveServer, tmp_path: Path
) -> None:
    cy, dee = agent_token(server, "cy"), agent_token(server, "dee")
    host = Host()
    with api(server, dee) as d, api(server, cy) as c:
        waiting = d.messages.send("sent before the first session", to="cy")
        async with session(channel(server, cy, tmp_path), host) as claude:
            await claude.list_tools()
            assert (await host.next_event()).meta["message_id"] == str(waiting.message_id)
            first = d.messages.send("one", to="cy")
            assert (await host.next_event()).meta["message_id"] == str(first.message_id)

        missed = [d.messages.send(f"while away {n}", to="cy") for n in range(3)]
        c.messages.ack(missed[1].message_id)  # handled elsewhere: not pushed again
        assert d.messages.show(missed[0].message_id).delivered_at is None

        host = Host()
        async with session(channel(server, cy, tmp_path), host) as claude:
            await claude.list_tools()
            got = [(await host.next_event()).meta["message_id"] for _ in range(2)]
            assert got == [str(missed[0].message_id), str(missed[2].message_id)]
            await host.nothing_more()
        receipt = d.messages.show(missed[1].message_id)
        assert receipt.status == "acked" and receipt.acked_at is not None


async def test_another_host_is_not_pushed_to(server: LiveServer, tmp_path: Path) -> None:
    """A host that does not load channels would drop the pushes: nothing is pushed, and the
    message stays undelivered."""
    eve = agent_token(server, "eve")
    host = Host()
    with api(server, server.operator_token) as op:
        async with session(channel(server, eve, tmp_path), host, name="codex-mcp-client") as h:
            await h.list_tools()
            sent = op.messages.send("for whoever reads", to="eve")
            await host.nothing_more()
        assert op.messages.show(sent.message_id).status == "pending"


def prompt(request_id: str, command: str) -> PermissionRequest:
    preview = json.dumps({"command": command, "description": "run it"})
    return PermissionRequest(
        params={
            "request_id": request_id,
            "tool_name": "Bash",
            "description": "run it",
            "input_preview": preview,
        }
    )


async def ask(claude: Client, request: PermissionRequest) -> None:
    await claude.session.send_notification(cast(Any, request))


def pending_for(server: LiveServer, request_id: str, timeout: float = 10) -> dict[str, Any]:
    op = {"Authorization": f"Bearer {server.operator_token}"}
    for _ in range(int(timeout * 20)):
        pending = httpx.get(
            server.url + "/v1/approvals", params={"status": "pending"}, headers=op
        ).json()["approvals"]
        found = [a for a in pending if a["payload"].get("request_id") == request_id]
        if found:
            return dict(found[0])
        time.sleep(0.05)
    raise AssertionError(f"no pending approval for {request_id}")


async def test_permission_prompts_are_decided_by_policy_and_operator(
    server: LiveServer, tmp_path: Path
) -> None:
    fay = agent_token(server, "fay")
    host = Host()
    with api(server, server.operator_token) as op:
        policy = op.policies.create(
            "Tests run",
            "approve",
            match={
                "kinds": ["request"],
                "agents": ["fay"],
                "payload": {
                    "/tool_name": {"eq": "Bash"},
                    "/tool_input/command": {"command": {"allow": ["pytest *"]}},
                },
            },
        )
        try:
            async with session(channel(server, fay, tmp_path), host) as claude:
                await claude.list_tools()
                await ask(claude, prompt("abcde", "pytest -q tests"))
                verdict = await asyncio.wait_for(host.verdicts.get(), ARRIVES)
                assert verdict == Verdict(request_id="abcde", behavior="allow")

                await ask(claude, prompt("fghij", "npm publish"))
                asked = await asyncio.to_thread(pending_for, server, "fghij")
                assert asked["title"] == "Bash: npm publish"
                assert asked["requested_by"] == "fay"
                assert asked["payload"]["source"] == "claude-code-channel"
                assert asked["payload"]["tool_input"]["command"] == "npm publish"
                op.approvals.approve(asked["approval_id"])
                verdict = await asyncio.wait_for(host.verdicts.get(), ARRIVES)
                assert verdict == Verdict(request_id="fghij", behavior="allow")

                await ask(claude, prompt("kmnop", "git push --force"))
                asked = await asyncio.to_thread(pending_for, server, "kmnop")
                op.approvals.reject(asked["approval_id"], note="not on main", interrupt=True)
                verdict = await asyncio.wait_for(host.verdicts.get(), ARRIVES)
                assert verdict == Verdict(request_id="kmnop", behavior="deny")
                # The verdict has no room for the reason: the session is told it, and to stop.
                why = await host.next_event()
                assert why.meta["kind"] == "approval" and why.meta["from"] == "operator"
                assert why.content == (
                    "\u27e6operator\u27e7 The operator denied \u00abBash: git push --force\u00bb.\n"
                    "The operator's note:\n\u2502 not on main\n"
                    "\u27e6operator\u27e7 The operator asks you to stop what you are doing and"
                    " wait for their instructions."
                )

                # A cut preview is no command a policy may allow: the operator is asked.
                cut = PermissionRequest(
                    params={
                        "request_id": "qrstu",
                        "tool_name": "Bash",
                        "description": "Run shell command",
                        "input_preview": '{"command": "pytest ⋯ 4,000 code points elided ⋯ sh"}',
                    }
                )
                await ask(claude, cut)
                asked = await asyncio.to_thread(pending_for, server, "qrstu")
                assert "tool_input" not in asked["payload"]
                await host.nothing_more(0.5)
        finally:
            op.policies.disable(policy.policy_id)


async def test_a_prompt_nobody_decides_expires_and_sends_nothing(
    server: LiveServer, tmp_path: Path
) -> None:
    gus = agent_token(server, "gus")
    host = Host()
    params = channel(server, gus, tmp_path, "--permission-timeout", "5")
    async with session(params, host) as claude:
        await claude.list_tools()
        await ask(claude, prompt("vwxyz", "make deploy"))
        asked = await asyncio.to_thread(pending_for, server, "vwxyz")
        assert asked["expires_at"] is not None
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(host.verdicts.get(), 9)
    with api(server, server.operator_token) as op:
        ended = op.approvals.show(asked["approval_id"])
    assert ended.status == "expired" and ended.decided_by == "deadline"


async def test_a_prompt_left_when_the_session_ends_is_withdrawn(
    server: LiveServer, tmp_path: Path
) -> None:
    kit = agent_token(server, "kit")
    host = Host()
    async with session(channel(server, kit, tmp_path), host) as claude:
        await claude.list_tools()
        await ask(claude, prompt("bcdef", "npm publish"))
        asked = await asyncio.to_thread(pending_for, server, "bcdef")
    with api(server, server.operator_token) as op:
        for _ in range(100):
            ended = op.approvals.show(asked["approval_id"])
            if ended.status != "pending":
                break
            await asyncio.sleep(0.1)
    assert ended.status == "withdrawn" and ended.decided_by is None
    assert ended.note == "the Claude Code session ended before an answer"


async def test_a_server_that_goes_away_allows_nothing(tmp_path: Path) -> None:
    host = Host()
    (tmp_path / "gone").mkdir()
    with live_server(tmp_path / "gone") as gone:
        token = agent_token(gone, "hal")
        params = channel(gone, token, tmp_path)
        async with session(params, host) as claude:
            await claude.list_tools()
            await ask(claude, prompt("abcdf", "terraform apply"))
            await asyncio.to_thread(pending_for, gone, "abcdf")
            gone.process.terminate()
            gone.process.wait(10)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(host.verdicts.get(), 5)
            assert (await claude.list_tools()).tools  # the session goes on


async def test_the_plugin_starts_the_channel(server: LiveServer, tmp_path: Path) -> None:
    """The repository is a marketplace whose plugin's ``.mcp.json`` starts ``relay mcp``: the
    command it names, run as Claude Code runs it, is a channel."""
    root = Path(__file__).parents[2]
    marketplace = json.loads((root / ".claude-plugin" / "marketplace.json").read_text())
    assert marketplace["name"] == "relay" and marketplace["owner"]["name"]
    (plugin,) = marketplace["plugins"]
    folder = root / plugin["source"]
    manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == plugin["name"] == "relay"
    started = json.loads((folder / ".mcp.json").read_text())["mcpServers"]["relay"]
    assert started["command"] == "relay"
    params = channel(server, agent_token(server, "ivy"), tmp_path, *started["args"][1:])
    params.args = [*params.args[: params.args.index("mcp")], *started["args"]]
    host = Host()
    async with session(params, host) as claude:
        assert "claude/channel" in (claude.server_capabilities.experimental or {})
