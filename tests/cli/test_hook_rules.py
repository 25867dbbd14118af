"""The session rule ``relay hook claude-code`` adds for a remembered approval: only for one
plain command, whose Claude Code rule can mean nothing wider than the command itself."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest

from relay_api.models import Approval
from relay_cli.hook_answers import allowed
from tests.e2e.test_hooks import CLAUDE_CODE_OUTPUT


def approval(command: str, remembered: int | None = 7, tool: str = "Bash") -> dict[str, Any]:
    """An approved request as the server's answer carries it (the hook reads its JSON)."""
    payload = {"source": "claude-code", "tool_name": tool, "tool_input": {"command": command}}
    return Approval(
        kind="request",
        status="approved",
        title=f"{tool}: {command}",
        payload=payload,
        requested_by="coder",
        subject_id="coder",
        created_at=datetime.now(UTC),
        remembered_policy_id=remembered,
    ).model_dump(mode="json")


def test_one_plain_command_becomes_a_session_rule() -> None:
    answer = allowed("claude-code", approval("npm run lint"))
    assert answer is not None
    jsonschema.validate(answer, CLAUDE_CODE_OUTPUT)
    [update] = answer["hookSpecificOutput"]["decision"]["updatedPermissions"]
    assert update["rules"] == [{"toolName": "Bash", "ruleContent": "npm run lint"}]
    assert update["destination"] == "session" and update["behavior"] == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "ls *.py",
        "npm test && npm publish",
        "pytest; sh",
        "make | tee log",
        "echo $HOME",
        "x > y",
        "pytest -k 'a b'",
        "npm test:*",
    ],
)
def test_a_command_a_rule_would_widen_gets_none(command: str) -> None:
    answer = allowed("claude-code", approval(command))
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }


def test_nothing_remembered_or_another_host_or_tool_gets_none() -> None:
    plain = {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
    assert allowed("claude-code", approval("npm test", remembered=None)) == {
        "hookSpecificOutput": plain
    }
    assert allowed("codex", approval("npm test")) == {"hookSpecificOutput": plain}
    assert allowed("claude-code", approval("npm test", tool="Edit")) == {
        "hookSpecificOutput": plain
    }
