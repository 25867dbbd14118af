"""``relay connect``, ``relay disconnect`` and ``relay doctor`` as a user runs them, in a temporary
project and home, against a live server: the files written keep what was there and hold no
token, every hook command written answers from an empty environment, a second run changes
nothing, ``disconnect`` gives the files back byte for byte; without the operator's rights
``connect`` enrolls and completes once the operator approves."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest

from relay_client import RelayClient
from tests.live import LiveServer, live_server, relay_command

CLAUDE_SETTINGS = """{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}
}
"""
PATCH = "*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch\n"
CODEX_CONFIG = """# my Codex settings
model = "gpt-5.5-codex"  # keep this comment

[mcp_servers.other]
command = "other-server"
"""


HOOKS = Path(__file__).with_name("hooks")
# The hosts' published schemas of the settings files connect writes hooks into (their source
# and version: tests/e2e/hooks/README.md).
SETTINGS_SCHEMAS = {
    "claude-code": HOOKS / "claude-code" / "settings.schema.json",
    "codex": HOOKS / "codex" / "hooks.schema.json",
}


def valid_for_the_host(host: str, settings: Path) -> None:
    schema = json.loads(SETTINGS_SCHEMAS[host].read_text())
    jsonschema.Draft7Validator(schema).validate(json.loads(settings.read_text()))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-connect")) as running:
        yield running


def user(tmp_path: Path, server: LiveServer, operator: bool = True) -> dict[str, str]:
    """A user's environment: its own home and config, and (``operator``) the server's data
    directory readable, as on the server's machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RELAY_", "XDG_"))}
    env |= {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "XDG_STATE_HOME": str(tmp_path / "home" / ".state"),
        "CODEX_HOME": str(tmp_path / "home" / ".codex"),
    }
    if operator:
        env["RELAY_DATA_DIR"] = str(server.data_dir)
    return env


def relay(
    env: dict[str, str], cwd: Path, *args: str, code: int = 0, program: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``relay args`` (``program``: another relay command) as the user runs it there."""
    command = [program] if program else relay_command()
    done = subprocess.run(
        [*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return done


def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / ".claude").mkdir(parents=True)
    (root / ".codex").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)
    (root / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }


def hook_commands(settings: Path) -> set[str]:
    hooks = json.loads(settings.read_text())["hooks"]
    return {h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]}


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_connect_wires_the_host_once_and_disconnect_gives_the_files_back(
    server: LiveServer, tmp_path: Path, host: str
) -> None:
    root = project(tmp_path)
    before = snapshot(root)
    env = user(tmp_path, server)
    agent = f"coder-{host}"
    said = relay(env, root, "--url", server.url, "--agent", agent, "connect", host)
    assert f"registered agent {agent}" in said.stdout
    assert "FAIL" not in said.stdout and said.stdout.count("ok ") >= 6, said.stdout

    settings = root / (".claude/settings.json" if host == "claude-code" else ".codex/hooks.json")
    mcp = root / (".mcp.json" if host == "claude-code" else ".codex/config.toml")
    written = {path: path.read_text() for path in (settings, mcp)}
    for text in written.values():
        assert "rly_" not in text  # no token in a host's settings
    valid_for_the_host(host, settings)
    if host == "claude-code":
        kept = json.loads(written[settings])
        assert kept["permissions"] == {"allow": ["Bash(ls)"]}  # what was there stays
        assert {"type": "command", "command": "echo mine"} in kept["hooks"]["Stop"][0]["hooks"]
        assert set(kept["hooks"]) == {
            "PermissionRequest",
            "PreToolUse",
            "Stop",
            "SessionStart",
            "UserPromptSubmit",
        }
        server_entry = json.loads(written[mcp])["mcpServers"]["relay"]
    else:
        assert written[mcp].startswith(CODEX_CONFIG)  # its comments and table kept
        assert "[mcp_servers.relay]" in written[mcp]
        server_entry = {"command": "", "args": []}
    commands = {c for c in hook_commands(settings) if f" hook {host}" in c}
    # Claude Code: the permission hook, the one before a tool (its questions wait longer) and
    # the hand-overs'; Codex: the permission hook and one for the rest.
    assert len(commands) == (3 if host == "claude-code" else 2)
    assert all(Path(shlex.split(c)[0]).is_absolute() for c in commands)
    assert all(f"--agent {agent}" in c for c in commands)
    if host == "claude-code":
        assert server_entry["args"][-1] == "mcp" and Path(server_entry["command"]).is_absolute()

    # Every hook command, for each event it is written for, run as the host runs it with
    # nothing but a home: it answers as the hook does. A policy decides the prompt; the edit
    # is of a file nobody holds; SessionStart hands over the operator's message, which the
    # other two then do not hand again.
    subprocess.run(["git", "config", "relay.workspace", f"acme/{host}"], cwd=root, check=True)
    with RelayClient(server.url, token=server.operator_token) as op:
        op.messages.send(f"hello {agent}", to=agent)
        match = {"/tool_name": {"eq": "Bash"}, "/tool_input/command": {"eq": f"echo {agent}"}}
        op.policies.create(f"{agent} may echo", "approve", match={"payload": match})
    bare = {k: env[k] for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")}
    common = {"session_id": f"s-{host}", "cwd": str(root)}
    edit = (
        {"tool_name": "Write", "tool_input": {"file_path": str(root / "a.py"), "content": ""}}
        if host == "claude-code"
        else {"tool_name": "apply_patch", "tool_input": {"command": PATCH}}
    )
    samples = {
        "PermissionRequest": {"tool_name": "Bash", "tool_input": {"command": f"echo {agent}"}},
        "PreToolUse": edit,
        "SessionStart": {"source": "startup"},
        "UserPromptSubmit": {"prompt": "go on"},
        "Stop": {"stop_hook_active": False},
    }
    wired = json.loads(settings.read_text())["hooks"]
    ran = set()
    for event, sample in samples.items():
        for group in wired[event]:
            for command in (
                h["command"] for h in group["hooks"] if f" hook {host}" in h["command"]
            ):
                answered = subprocess.run(
                    ["env", "-i", *(f"{k}={v}" for k, v in bare.items()), *shlex.split(command)],
                    input=json.dumps(common | {"hook_event_name": event} | sample),
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert answered.returncode == 0 and not answered.stderr, (event, answered)
                ran.add(event)
                said = json.loads(answered.stdout) if answered.stdout else None
                if event == "PermissionRequest":
                    assert said["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
                elif event == "SessionStart":
                    context = said["hookSpecificOutput"]["additionalContext"]
                    assert f"hello {agent}" in context
                else:
                    assert said is None, (event, said)
    assert ran == set(samples)

    # Twice changes nothing; disconnect gives every file back, byte for byte.
    relay(env, root, "--url", server.url, "--agent", agent, "connect", host)
    assert {path: path.read_text() for path in (settings, mcp)} == written
    relay(env, root, "--url", server.url, "--agent", agent, "disconnect", host)
    assert snapshot(root) == before


def test_what_the_user_changed_after_connect_stays_after_disconnect(
    server: LiveServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    env = user(tmp_path, server)
    relay(env, root, "--url", server.url, "--agent", "mixed", "connect", "claude-code")
    settings = root / ".claude" / "settings.json"
    document = json.loads(settings.read_text())
    mine = {"hooks": [{"type": "command", "command": "echo added-later"}]}
    document["hooks"]["SessionStart"].append(mine)
    settings.write_text(json.dumps(document, indent=2) + "\n")
    relay(env, root, "--url", server.url, "--agent", "mixed", "connect", "claude-code")
    relay(env, root, "--url", server.url, "--agent", "mixed", "disconnect", "claude-code")
    left = hook_commands(settings)
    assert "echo added-later" in left and "echo mine" in left
    assert not any(" hook claude-code" in command for command in left)


def test_dry_run_writes_nothing_and_a_broken_file_is_left_alone(
    server: LiveServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    env = user(tmp_path, server)
    before = snapshot(root)
    shown = relay(env, root, "--url", server.url, "--agent", "dry", "connect", "codex", "--dry-run")
    assert "+[mcp_servers.relay]" in shown.stdout and "hooks.json" in shown.stdout
    assert snapshot(root) == before
    (root / ".claude" / "settings.json").write_text('{\n  "hooks": {,\n}\n')
    broken = relay(env, root, "--url", server.url, "--agent", "x", "connect", "claude-code", code=1)
    assert "settings.json, line 2: not JSON" in broken.stderr
    assert (root / ".claude" / "settings.json").read_text() == '{\n  "hooks": {,\n}\n'


def test_without_the_operators_rights_connect_enrolls_and_waits_for_the_approval(
    server: LiveServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    env = user(tmp_path, server, operator=False)
    command = [*relay_command(), "--url", server.url, "--agent", "newcomer", "connect", "codex"]
    with subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        op = {"Authorization": f"Bearer {server.operator_token}"}
        deadline = time.monotonic() + 30
        asked = []
        while not asked and time.monotonic() < deadline:
            pending = httpx.get(
                server.url + "/v1/approvals", params={"status": "pending"}, headers=op
            ).json()["approvals"]
            asked = [a for a in pending if a["kind"] == "enrollment" and "newcomer" in a["title"]]
            time.sleep(0.2)
        assert asked, "no enrollment to approve"
        approved = httpx.post(
            f"{server.url}/v1/approvals/{asked[0]['approval_id']}/approve", json={}, headers=op
        )
        assert approved.status_code == 200, approved.text
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, (out, err)
    assert "asking the operator" in out and "the operator approved agent newcomer" in out
    assert "ok   identity: agent newcomer" in out


def test_doctor_names_what_is_wrong_and_the_fix(server: LiveServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    env = user(tmp_path, server)
    # Nothing connected yet: no identity, no settings.
    said = relay(env, root, "--url", server.url, "--agent", "nobody", "doctor", "codex", code=1)
    assert "FAIL identity: no agent token: relay --agent NAME connect" in said.stdout
    # The operator's token where an agent's should be.
    given = env | {"RELAY_TOKEN": server.operator_token}
    said = relay(given, root, "--url", server.url, "doctor", "--json", code=1)
    checks = json.loads(said.stdout)["checks"]
    assert checks[1]["name"] == "identity" and "operator's" in checks[1]["said"]
    # A token Relay does not know.
    unknown = env | {"RELAY_TOKEN": "rly_agent_unknown"}
    said = relay(unknown, root, "--url", server.url, "doctor", code=1)
    assert "FAIL identity: the token is refused" in said.stdout
    # The server down.
    said = relay(env, root, "--url", "http://127.0.0.1:9", "doctor", code=1)
    assert "FAIL server: http://127.0.0.1:9 does not answer" in said.stdout
    # A hand-written config whose hook calls a bare relay, and a settings file that breaks.
    relay(env, root, "--url", server.url, "--agent", "handmade", "connect", "claude-code")
    settings = root / ".claude" / "settings.json"
    text = settings.read_text()
    absolute = shlex.split(sorted(c for c in hook_commands(settings) if " hook " in c)[0])[0]
    settings.write_text(text.replace(absolute, "relay"))
    said = relay(
        env, root, "--url", server.url, "--agent", "handmade", "doctor", "claude-code", code=1
    )
    assert "FAIL hook: 'relay' is not found without the shell's PATH" in said.stdout
    # A hook that names another server, for which this agent has no token: its own words.
    settings.write_text(text.replace(server.url, "http://127.0.0.1:9"))
    said = relay(
        env, root, "--url", server.url, "--agent", "handmade", "doctor", "claude-code", code=1
    )
    assert "--url http://127.0.0.1:9 --agent handmade hook claude-code" in said.stdout
    assert "FAIL hook:" in said.stdout and "relay hook: no agent token" in said.stdout
    settings.write_text(text)
    said = relay(env, root, "--url", server.url, "--agent", "handmade", "doctor", "claude-code")
    assert "ok   hook: answers" in said.stdout and "FAIL" not in said.stdout, said.stdout
    settings.write_text("{ not json")
    said = relay(
        env, root, "--url", server.url, "--agent", "handmade", "doctor", "claude-code", code=1
    )
    assert "settings.json, line 1: not JSON" in said.stdout


def test_doctor_names_the_missing_mcp_sdk_and_the_install_that_brings_it(
    server: LiveServer, tmp_path: Path
) -> None:
    """A Relay installed without the MCP SDK: ``relay mcp`` (which doctor runs as the host
    does) fails to load it, and doctor names the command that installs Relay again."""
    root = project(tmp_path)
    env = user(tmp_path, server)
    bare = tmp_path / "without-mcp" / "relay"
    bare.parent.mkdir()
    bare.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "sys.modules['mcp'] = None  # as if it were not installed: every import of it fails\n"
        "from relay_cli.entry import run\n"
        "sys.exit(run())\n"
    )
    bare.chmod(0o755)
    args = ["--url", server.url, "--agent", "no-sdk"]
    relay(env, root, *args, "connect", "claude-code", code=1, program=str(bare))
    said = relay(env, root, *args, "doctor", "claude-code", code=1, program=str(bare))
    assert "FAIL mcp: relay mcp: Error: relay mcp cannot load the MCP SDK" in said.stdout
    assert "install Relay again with " in said.stdout
