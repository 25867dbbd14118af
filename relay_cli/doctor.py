"""``relay doctor``'s checks, in order, each one line: ok, or what is wrong and the command that
fixes it. What a coding agent's host runs is run as it runs it: each hook command from an
empty environment (no ``PATH``) on a sample edit that asks Relay a real question and nobody
anything, ``relay mcp`` over stdio through ``initialize`` and ``tools/list``."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import typer

from relay_api.models import OPERATOR
from relay_cli.host_settings import SettingsError, Wiring
from relay_client import RelayClient, errors
from relay_client.config import ClientConfig

# The host versions that have what Relay wires: Claude Code's channels, Codex's apply_patch hook.
NEEDED = {"claude-code": ("claude", (2, 1, 80)), "codex": ("codex", (0, 123, 0))}
SAMPLE_SECONDS = 30.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    said: str


def report(checks: Iterator[Check], as_json: bool) -> int:
    """Print each check as it is made (or all as one JSON object); 0 when all passed."""
    made = []
    for check in checks:
        made.append(check)
        if not as_json:
            typer.echo(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.said}")
    passed = all(check.ok for check in made)
    if as_json:
        typer.echo(json.dumps({"ok": passed, "checks": [asdict(c) for c in made]}))
    return 0 if passed else 1


def common(url: str, agent: str | None) -> Iterator[Check]:
    """The server, and the agent's identity on it."""
    try:
        with RelayClient(url, anonymous=True, max_retries=0, timeout=5) as client:
            version = client.health().version
    except errors.RelayError as exc:
        yield Check("server", False, f"{url} does not answer ({exc}): start it (relay serve)")
        return
    yield Check("server", True, f"Relay {version} at {url}")
    config = ClientConfig.resolve(url, agent_id=agent, local_operator=False)
    if config.token is None:
        yield Check(
            "identity", False, "no agent token: relay --agent NAME connect claude-code|codex"
        )
        return
    try:
        with RelayClient(url, token=config.token, max_retries=0, timeout=5) as client:
            caller = client.status().caller
    except errors.RelayError as exc:
        yield Check("identity", False, f"the token is refused ({exc}): run relay connect again")
        return
    if caller == OPERATOR:
        yield Check(
            "identity",
            False,
            "the token is the operator's: an agent would act as the operator; give it an"
            " agent's (relay --agent NAME connect …)",
        )
    else:
        yield Check("identity", True, f"agent {caller}")


def for_host(wiring: Wiring) -> Iterator[Check]:
    """Everything, for one host as ``relay connect`` wired it."""
    checks = list(common(wiring.url, wiring.agent))
    yield from checks
    yield from _settings(wiring)
    if all(c.ok for c in checks):
        yield from _hooks(wiring)
        yield _mcp(wiring)
    yield _host_version(wiring)


def _settings(wiring: Wiring) -> Iterator[Check]:
    for path in wiring.files():
        if not path.exists():
            yield Check("settings", False, f"{path} is missing: relay connect {wiring.host}")
            continue
        try:
            found = wiring.entries(path, path.read_text())
        except SettingsError as exc:
            yield Check("settings", False, str(exc))
            continue
        expected = 5 if path == wiring.hooks_file() else 1
        if found == expected:
            yield Check("settings", True, f"{path} holds Relay's entries once")
        else:
            yield Check(
                "settings",
                False,
                f"{path} holds {found} of Relay's {expected} entries: relay disconnect"
                f" {wiring.host}, then relay connect {wiring.host}",
            )


def _hooks(wiring: Wiring) -> Iterator[Check]:
    """Each hook command of the host's settings, run from an empty environment on a sample
    edit (``_sample_edit``)."""
    try:
        document = json.loads(wiring.hooks_file().read_text())
    except (OSError, ValueError):
        return
    commands = {
        hook["command"]
        for groups in (document.get("hooks") or {}).values()
        for group in groups
        for hook in group.get("hooks", [])
        if isinstance(hook, dict) and f" hook {wiring.host}" in str(hook.get("command"))
    }
    with tempfile.TemporaryDirectory(prefix="relay-doctor-") as scratch:
        sample = _sample_edit(wiring.host, Path(scratch))
        yield from _answering(wiring, sorted(commands), sample)


def _sample_edit(host: str, scratch: Path) -> dict[str, Any]:
    """A ``PreToolUse`` edit of a file in ``scratch``, made a repository of a workspace of its
    own: the hook asks Relay, with the agent's token, who holds the file (a real request on
    the path every edit takes), and nobody holds it or is asked anything."""
    for args in (["init", "-q"], ["config", "relay.workspace", f"relay-doctor/{scratch.name}"]):
        subprocess.run(["git", *args], cwd=scratch, capture_output=True, check=False)
    event = {"hook_event_name": "PreToolUse", "session_id": "relay-doctor", "cwd": str(scratch)}
    if host == "codex":
        patch = "*** Begin Patch\n*** Add File: relay-doctor-sample\n+sample\n*** End Patch\n"
        return event | {"tool_name": "apply_patch", "tool_input": {"command": patch}}
    written = {"file_path": str(scratch / "relay-doctor-sample"), "content": "sample"}
    return event | {"tool_name": "Write", "tool_input": written}


def _answering(wiring: Wiring, commands: list[str], sample: dict[str, Any]) -> Iterator[Check]:
    """Each command run as the host runs it on ``sample``: ok when it answers and says nothing
    went wrong (the hook's stderr line names what did)."""
    for command in commands:
        program = shlex.split(command)[0]
        if not Path(program).is_absolute():
            found = shutil.which(program, path="")
            yield Check(
                "hook",
                found is not None,
                f"{program!r} is not found without the shell's PATH (the host's may differ):"
                f" relay connect {wiring.host} writes its absolute path",
            )
            continue
        try:
            done = subprocess.run(
                shlex.split(command),
                input=json.dumps(sample),
                capture_output=True,
                text=True,
                env=_bare(wiring),
                timeout=SAMPLE_SECONDS,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            yield Check("hook", False, f"{program} does not run ({exc}): relay connect again")
            continue
        said = done.stderr.strip().splitlines()[-1:] or [""]
        ok = done.returncode == 0 and not said[0]
        yield Check("hook", ok, "answers" if ok else f"{command}: {said[0]}")


def _bare(wiring: Wiring) -> dict[str, str]:
    """The environment a host may give its hooks at the least: the user's home and where
    their files live, no PATH."""
    kept = {k: v for k, v in os.environ.items() if k.startswith("XDG_")}
    return kept | {"HOME": str(wiring.home)}


def _mcp(wiring: Wiring) -> Check:
    """``relay mcp`` as the host starts it: ``initialize``, then ``tools/list``."""
    server = wiring.mcp_server()
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": wiring.host, "version": "doctor"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]
    try:
        with subprocess.Popen(
            [server["command"], *server["args"]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_bare(wiring),
            text=True,
        ) as process:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
            process.stdin.flush()
            answers = [json.loads(process.stdout.readline() or "null") for _ in range(2)]
            process.stdin.close()
            process.wait(timeout=SAMPLE_SECONDS)
            stderr = process.stderr.read() if process.stderr is not None else ""
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return Check("mcp", False, f"relay mcp does not start ({exc})")
    if not all(isinstance(a, dict) and "result" in a for a in answers):
        why = stderr.strip().splitlines()[-1:] or ["no answer"]
        return Check("mcp", False, f"relay mcp: {why[0]}")
    tools = len(answers[1]["result"].get("tools", []))
    experimental = answers[0]["result"].get("capabilities", {}).get("experimental") or {}
    if wiring.host == "claude-code" and "claude/channel" not in experimental:
        return Check("mcp", False, f"relay mcp lists {tools} tools but declares no channel")
    return Check("mcp", True, f"relay mcp answers, {tools} tools")


def _host_version(wiring: Wiring) -> Check:
    command, needed = NEEDED[wiring.host]
    found = shutil.which(command)
    wanted = ".".join(str(n) for n in needed)
    if found is None:
        return Check(wiring.host, True, f"{command} is not on this PATH: not checked")
    try:
        said = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        said = ""
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", said)
    if match is None:
        return Check(wiring.host, False, f"{command} --version says no version")
    version = tuple(int(n) for n in match.groups())
    if version < needed:
        return Check(
            wiring.host, False, f"{command} {match.group(0)} is older than {wanted}: update it"
        )
    return Check(wiring.host, True, f"{command} {match.group(0)}")
