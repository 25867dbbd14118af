"""``relay hook claude-code|codex`` at ``Stop``, ``SessionStart`` and ``UserPromptSubmit``, as
the hosts run it: a subprocess reading a recorded event on stdin, against a live server. Every
answer is validated against the host's published schema (``tests/e2e/hooks/README.md``)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from relay_cli.handover import MAX_BLOCKS
from relay_client import RelayClient
from tests.e2e.test_hooks import hook
from tests.live import LiveServer, agent_token, free_port, live_server

HOOKS = Path(__file__).with_name("hooks")
HOSTS = ("claude-code", "codex")
CLAUDE_CODE_OUTPUT = json.loads(
    (HOOKS / "claude-code" / "sync-hook-output.schema.json").read_text()
)
CODEX_OUTPUT = {
    event: json.loads((HOOKS / "codex" / f"{name}.command.output.schema.json").read_text())
    for event, name in (
        ("Stop", "stop"),
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
    )
}
RECORDED = {
    "Stop": "stop",
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-handover")) as running:
        yield running


def recorded(host: str, event: str, **changes: Any) -> bytes:
    given = json.loads((HOOKS / host / f"{RECORDED[event]}.json").read_text())
    return json.dumps(given | changes).encode()


def run_hook(
    host: str, event: str, url: str, token: str, home: Path, **changes: Any
) -> dict[str, Any] | None:
    """The hook's answer (validated against the host's schema), or None when it printed
    nothing; it always exits 0."""
    process = hook(host, recorded(host, event, **changes), url, token, home)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    if not out.strip():
        return None
    answer = json.loads(out)
    if host == "codex":
        jsonschema.validate(answer, CODEX_OUTPUT[event])
    else:
        jsonschema.validate(answer, CLAUDE_CODE_OUTPUT)
    return dict(answer)


def context_of(answer: dict[str, Any] | None, event: str) -> str:
    assert answer is not None
    assert answer["hookSpecificOutput"]["hookEventName"] == event
    return str(answer["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("host", HOSTS)
def test_the_session_is_handed_its_mail_once(server: LiveServer, tmp_path: Path, host: str) -> None:
    me = f"coder-{host}"
    token = agent_token(server, me)
    with RelayClient(server.url, token=server.operator_token) as op:
        assert run_hook(host, "SessionStart", server.url, token, tmp_path) is None
        assert run_hook(host, "Stop", server.url, token, tmp_path) is None  # it may stop

        first = op.messages.send("the staging DB is yours until 5pm", to=me)
        task = op.tasks.create("fix the flaky checkout test", assignee=me)
        started = context_of(
            run_hook(host, "SessionStart", server.url, token, tmp_path), "SessionStart"
        )
        assert f"Direct message #{first.message_id} from the operator" in started
        assert "the staging DB is yours until 5pm" in started
        assert f"Task #{task.task_id}" in started and "fix the flaky checkout test" in started
        assert op.messages.show(first.message_id).delivered_at is not None  # handed over

        second = op.messages.send("also: rotate the API key", to=me)
        stop = run_hook(host, "Stop", server.url, token, tmp_path)
        assert stop is not None and stop["decision"] == "block"
        assert "also: rotate the API key" in stop["reason"]
        assert "staging DB" not in stop["reason"]  # handed before: not again
        assert "relay messages ack <id>" in stop["reason"]
        # The host says a Stop hook already made it go on: it may stop now.
        assert run_hook(host, "Stop", server.url, token, tmp_path, stop_hook_active=True) is None

    with (
        RelayClient(server.url, token=token) as agent,
        RelayClient(server.url, token=server.operator_token) as op,
    ):
        asked = agent.approvals.request("Drop the old sessions table?")
        op.approvals.reject(asked.approval_id, note="keep it a week")
        told = context_of(
            run_hook(host, "UserPromptSubmit", server.url, token, tmp_path), "UserPromptSubmit"
        )
        assert f"request #{asked.approval_id}" in told and "rejected by the operator" in told
        assert "keep it a week" in told and "rotate the API key" not in told
        agent.messages.ack(first.message_id)
        agent.messages.ack(second.message_id)
        # Decided while no session of the agent ran: the next session is told, once.
        later = agent.approvals.request("Rotate the staging certificate?")
        op.approvals.approve(later.approval_id)
        started = context_of(
            run_hook(host, "SessionStart", server.url, token, tmp_path, session_id="next-day"),
            "SessionStart",
        )
        assert f"request #{later.approval_id}" in started and "approved by the operator" in started
        assert "Drop the old sessions table" not in started  # told before, in another session


@pytest.mark.parametrize("host", HOSTS)
def test_stop_is_blocked_a_few_times_at_most(server: LiveServer, tmp_path: Path, host: str) -> None:
    me = f"busy-{host}"
    token = agent_token(server, me)
    with RelayClient(server.url, token=server.operator_token) as op:
        for n in range(MAX_BLOCKS):
            op.messages.send(f"ping {n}", to=me)
            stop = run_hook(host, "Stop", server.url, token, tmp_path)
            assert stop is not None and f"ping {n}" in stop["reason"]
        op.messages.send("one more", to=me)
        assert run_hook(host, "Stop", server.url, token, tmp_path) is None
        # Another session of the same agent starts afresh.
        other = run_hook(host, "Stop", server.url, token, tmp_path, session_id="another-one")
        assert other is not None and "one more" in other["reason"]


def test_failures_tell_the_person_once_and_end_quickly(server: LiveServer, tmp_path: Path) -> None:
    """A server that is down, a wrong token: each event of each host meets one of them (every
    event goes through the same path); the host's user is told once a session in its
    ``systemMessage``, then the hook says nothing. Input that is no JSON: nothing."""
    down = f"http://127.0.0.1:{free_port()}"
    cases = (
        ("claude-code", "Stop", down, "relay_a_x", f"Relay unreachable at {down}"),
        ("codex", "SessionStart", server.url, "relay_a_wrong", "Relay refused this agent's token"),
        ("claude-code", "UserPromptSubmit", server.url, "relay_a_wrong", "Relay refused"),
        ("codex", "Stop", down, "relay_a_x", f"Relay unreachable at {down}"),
    )
    for n, (host, event, url, token, told) in enumerate(cases):
        session = f"failing-{n}"
        began = time.monotonic()
        first = run_hook(host, event, url, token, tmp_path, session_id=session)
        assert first is not None and set(first) == {"systemMessage"}, first
        assert first["systemMessage"].startswith(told)
        assert first["systemMessage"].endswith("prompts stay in this terminal; run `relay doctor`")
        assert run_hook(host, event, url, token, tmp_path, session_id=session) is None
        assert time.monotonic() - began < 10
    process = hook("codex", b"{not json", server.url, "relay_a_x", tmp_path)
    out, _ = process.communicate(timeout=10)
    assert process.returncode == 0 and out == b""
