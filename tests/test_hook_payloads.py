"""What ``relay hook`` reads of each event is what the hosts publish today: every field it reads
is declared for that event by the host's current input schema, and the recorded inputs the
other tests feed it validate against those schemas (sources and versions:
tests/e2e/hooks/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

HOOKS = Path(__file__).parent / "e2e" / "hooks"

# The fields relay_cli.hook_answers, .handover and .edits read of each event they handle.
READ = {
    "PermissionRequest": {"hook_event_name", "session_id", "cwd", "tool_name", "tool_input"},
    "PreToolUse": {
        *("hook_event_name", "session_id", "cwd", "tool_name", "tool_input"),
        "permission_mode",  # Claude Code's questions: which event of the pair answers them
    },
    "Stop": {"hook_event_name", "session_id", "stop_hook_active"},
    "SessionStart": {"hook_event_name", "session_id"},
    "UserPromptSubmit": {"hook_event_name", "session_id"},
}
READ_OF_CODEX = {"PermissionRequest": {"approval_context"}}  # its justification and sandbox

CLAUDE_CODE = json.loads((HOOKS / "claude-code" / "hook-input.schema.json").read_text())
# Codex publishes one schema an event (none for SessionStart's input).
CODEX = {
    "PermissionRequest": "permission-request.command.input.schema.json",
    "PreToolUse": "pre-tool-use.command.input.schema.json",
    "Stop": "stop.command.input.schema.json",
    "UserPromptSubmit": "user-prompt-submit.command.input.schema.json",
}
# Recorded inputs of an older Codex, which Relay still answers: the current schema no longer
# names the tool (NetworkAccess), or does not yet (apply_patch, since openai/codex#18391).
OLDER_CODEX = {"network.json", "pre-tool-use-apply-patch-tool.json"}


def declared(schema: dict[str, Any]) -> set[str]:
    return set(schema["properties"])


@pytest.mark.parametrize("event", sorted(READ))
def test_every_field_read_is_declared_by_claude_code(event: str) -> None:
    schema = CLAUDE_CODE["definitions"][f"{event}HookInput"]
    assert READ[event] <= declared(schema), READ[event] - declared(schema)


@pytest.mark.parametrize("event", sorted(CODEX))
def test_every_field_read_is_declared_by_codex(event: str) -> None:
    schema = json.loads((HOOKS / "codex" / CODEX[event]).read_text())
    wanted = (READ[event] | READ_OF_CODEX.get(event, set())) - {"permission_mode"}
    assert wanted <= declared(schema), wanted - declared(schema)


@pytest.mark.parametrize(
    "recorded",
    sorted(p.name for p in (HOOKS / "claude-code").glob("*.json") if "schema" not in p.name),
)
def test_the_recorded_claude_code_inputs_are_in_its_current_shape(recorded: str) -> None:
    given = json.loads((HOOKS / "claude-code" / recorded).read_text())
    jsonschema.Draft7Validator(CLAUDE_CODE).validate(given)
    assert set(given) >= READ[given["hook_event_name"]] - {"stop_hook_active", "permission_mode"}


@pytest.mark.parametrize(
    "recorded",
    sorted(
        p.name
        for p in (HOOKS / "codex").glob("*.json")
        if "schema" not in p.name and p.name not in OLDER_CODEX
    ),
)
def test_the_recorded_codex_inputs_are_in_its_current_shape(recorded: str) -> None:
    given = json.loads((HOOKS / "codex" / recorded).read_text())
    schema = CODEX.get(given["hook_event_name"])
    if schema is not None:
        jsonschema.Draft7Validator(json.loads((HOOKS / "codex" / schema).read_text())).validate(
            given
        )
    assert set(given) >= READ[given["hook_event_name"]] - {"stop_hook_active"}
