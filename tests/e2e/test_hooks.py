"""``relay hook claude-code|codex`` as the coding agents run it: a subprocess reading a recorded
prompt on stdin, against a real server, answered by the operator or a policy, or by nobody."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from tests.live import LiveServer, free_port, live_server, relay_command

HOOKS = Path(__file__).with_name("hooks")
CODEX_OUTPUT = json.loads(
    (HOOKS / "codex" / "permission-request.command.output.schema.json").read_text()
)
CLAUDE_CODE_OUTPUT = json.loads(
    (HOOKS / "claude-code" / "sync-hook-output.schema.json").read_text()
)
TITLES = {
    ("claude-code", "bash"): "Bash: npm publish --tag next",
    ("claude-code", "edit"): "Edit: src/app.py",
    ("claude-code", "write"): "Write: /etc/hosts",
    ("claude-code", "webfetch"): "WebFetch: example.com",
    ("claude-code", "mcp"): "mcp__github__create_pull_request",
    ("codex", "bash"): "Bash: rm -rf node_modules && npm ci",
    ("codex", "network"): "NetworkAccess: curl -sS https://registry.npmjs.org/left-pad",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay")) as running:
        yield running


@pytest.fixture(scope="module")
def coder(server: LiveServer) -> str:
    """The agent identity the hook files its requests as."""
    op = {"Authorization": f"Bearer {server.operator_token}"}
    registered = httpx.post(
        server.url + "/v1/agents/register", json={"agent_id": "coder"}, headers=op
    )
    registered.raise_for_status()
    return str(registered.json()["token"])


def hook(
    source: str, prompt: bytes, url: str, token: str, home: Path, *args: str
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {
        "RELAY_URL": url,
        "RELAY_TOKEN": token,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    given = home / f"prompt-{time.monotonic_ns()}.json"
    given.write_bytes(prompt)
    with given.open("rb") as stdin:  # the agent writes the prompt and closes its end
        process = subprocess.Popen(
            [*relay_command(), "hook", source, *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    return process


def pending_titled(server: LiveServer, title: str, timeout: float = 20) -> dict[str, Any]:
    op = {"Authorization": f"Bearer {server.operator_token}"}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = httpx.get(
            server.url + "/v1/approvals", params={"status": "pending"}, headers=op
        ).json()["approvals"]
        found = [a for a in pending if a["title"] == title]
        if found:
            return dict(found[0])
        time.sleep(0.1)
    raise AssertionError(f"no pending approval titled {title!r}")


def decide(server: LiveServer, approval_id: int, verb: str, note: str | None = None) -> None:
    op = {"Authorization": f"Bearer {server.operator_token}"}
    body = {"note": note} if note else {}
    httpx.post(
        f"{server.url}/v1/approvals/{approval_id}/{verb}", json=body, headers=op
    ).raise_for_status()


def answered(process: subprocess.Popen[bytes], source: str) -> dict[str, Any]:
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    answer = json.loads(out)
    jsonschema.validate(answer, CODEX_OUTPUT if source == "codex" else CLAUDE_CODE_OUTPUT)
    return dict(answer)


def operator_cli(server: LiveServer, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``relay <args>`` as the operator runs it in a terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"RELAY_URL": server.url, "RELAY_TOKEN": server.operator_token, "HOME": str(home)}
    return subprocess.run(
        [*relay_command(), *args], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.parametrize(("source", "name"), sorted(TITLES), ids=lambda v: str(v))
def test_the_operator_allows_or_denies_each_prompt(
    server: LiveServer, coder: str, tmp_path: Path, source: str, name: str
) -> None:
    prompt = (HOOKS / source / f"{name}.json").read_bytes()
    recorded = json.loads(prompt)
    for verb, note in (("approve", None), ("reject", "not on a Friday")):
        process = hook(source, prompt, server.url, coder, tmp_path)
        asked = pending_titled(server, TITLES[(source, name)])
        payload = asked["payload"]
        assert payload["source"] == source and payload["tool_name"] == recorded["tool_name"]
        assert payload["tool_input"] == recorded["tool_input"]
        assert payload["cwd"] == recorded["cwd"] and payload["session_id"] == recorded["session_id"]
        assert asked["requested_by"] == "coder" and asked["expires_at"] is not None
        decide(server, asked["approval_id"], verb, note)
        decision = answered(process, source)["hookSpecificOutput"]
        assert decision["hookEventName"] == "PermissionRequest"
        if verb == "approve":
            assert decision["decision"] == {"behavior": "allow"}
        else:
            assert decision["decision"] == {"behavior": "deny", "message": "not on a Friday"}


def test_a_command_the_operator_changed_is_what_claude_code_runs(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    prompt = (HOOKS / "claude-code" / "bash.json").read_bytes()
    recorded = json.loads(prompt)
    process = hook("claude-code", prompt, server.url, coder, tmp_path)
    asked = pending_titled(server, TITLES[("claude-code", "bash")])
    instead = "npm publish --tag next --dry-run"
    said = operator_cli(
        server, tmp_path, "approvals", "approve", str(asked["approval_id"]), "--command", instead
    )
    assert said.returncode == 0, said.stderr
    assert f"changed: it runs {instead}" in said.stdout
    decision = answered(process, "claude-code")["hookSpecificOutput"]["decision"]
    changed_input = {**recorded["tool_input"], "command": instead}
    assert decision == {"behavior": "allow", "updatedInput": changed_input}


def test_always_allow_adds_a_session_rule_for_the_exact_command(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    """``--remember``: the policy answers the next prompt at once, and Claude Code is told to
    stop asking for this command in the session (``updatedPermissions``)."""
    recorded = json.loads((HOOKS / "claude-code" / "bash.json").read_text())
    recorded["tool_input"]["command"] = "npm run lint"
    prompt = json.dumps(recorded).encode()
    process = hook("claude-code", prompt, server.url, coder, tmp_path)
    asked = pending_titled(server, "Bash: npm run lint")
    said = operator_cli(
        server, tmp_path, "approvals", "approve", str(asked["approval_id"]), "--remember"
    )
    assert said.returncode == 0, said.stderr
    assert "remembered as policy" in said.stdout and "relay policies disable" in said.stdout
    decision = answered(process, "claude-code")["hookSpecificOutput"]["decision"]
    rule = {"toolName": "Bash", "ruleContent": "npm run lint"}
    assert decision == {
        "behavior": "allow",
        "updatedPermissions": [
            {"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}
        ],
    }
    again = answered(hook("claude-code", prompt, server.url, coder, tmp_path), "claude-code")
    assert again["hookSpecificOutput"]["decision"]["behavior"] == "allow"
    policy_id = said.stdout.split("remembered as policy ")[1].split(" ")[0]
    op = {"Authorization": f"Bearer {server.operator_token}"}
    newest = httpx.get(server.url + "/v1/approvals", headers=op).json()["approvals"][0]
    assert newest["title"] == "Bash: npm run lint"
    assert newest["decided_by"] == f"policy:{policy_id}@1"  # nobody was asked
    assert operator_cli(server, tmp_path, "policies", "disable", policy_id).returncode == 0


def test_claude_codes_questions_are_answered_by_the_operator(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    """AskUserQuestion at PreToolUse (Claude Code's modes other than the default): each question
    asked in Relay; once the operator answered every one, the tool is allowed with its
    ``answers`` filled in."""
    given = json.loads((HOOKS / "claude-code" / "ask-user-question.json").read_bytes())
    prompt = json.dumps(given | {"permission_mode": "acceptEdits"}).encode()
    recorded = given["tool_input"]
    process = hook("claude-code", prompt, server.url, coder, tmp_path)
    first = pending_titled(server, "Which database should the cache use?")
    second = pending_titled(server, "Which checks should run before the merge?")
    assert first["kind"] == "question" and first["detail"] == "Database"
    assert [o["label"] for o in first["options"]] == ["Postgres (Recommended)", "SQLite"]
    assert second["multiple"] is True and second["allow_other"] is True
    answers = (
        (second, ["Unit tests", "Type check"]),
        (first, ["SQLite"]),
    )
    for asked, chosen in answers:
        said = operator_cli(
            server, tmp_path, "approvals", "answer", str(asked["approval_id"]), *chosen
        )
        assert said.returncode == 0, said.stderr
    output = answered(process, "claude-code")["hookSpecificOutput"]
    assert output == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {
            **recorded,
            "answers": {
                "Which database should the cache use?": "SQLite",
                "Which checks should run before the merge?": "Unit tests, Type check",
            },
        },
    }


def test_in_the_default_mode_the_permission_request_asks_the_questions_once(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    """Claude Code's default mode sends AskUserQuestion as a PermissionRequest too: its
    PreToolUse says nothing and asks nobody; the PermissionRequest asks each question once and
    allows the tool with its ``questions`` kept and the operator's ``answers``."""
    asked_here = "Which database, in the default mode?"

    def recorded_as(name: str) -> dict[str, Any]:
        given = json.loads((HOOKS / "claude-code" / name).read_text())
        given["tool_input"]["questions"][0]["question"] = asked_here
        return dict(given)

    pre_tool_use = recorded_as("ask-user-question.json")
    quiet = hook("claude-code", json.dumps(pre_tool_use).encode(), server.url, coder, tmp_path)
    out, err = quiet.communicate(timeout=30)
    assert quiet.returncode == 0 and out == b"", err
    prompt = recorded_as("permission-request-ask-user-question.json")
    recorded = prompt["tool_input"]
    assert recorded == pre_tool_use["tool_input"]
    process = hook("claude-code", json.dumps(prompt).encode(), server.url, coder, tmp_path)
    first = pending_titled(server, asked_here)
    second = pending_titled(server, "Which checks should run before the merge?")
    assert [o["label"] for o in first["options"]] == ["Postgres (Recommended)", "SQLite"]
    for asked, chosen in ((first, ["Postgres (Recommended)"]), (second, ["Benchmarks"])):
        said = operator_cli(
            server, tmp_path, "approvals", "answer", str(asked["approval_id"]), *chosen
        )
        assert said.returncode == 0, said.stderr
    output = answered(process, "claude-code")["hookSpecificOutput"]
    assert output == {
        "hookEventName": "PermissionRequest",
        "decision": {
            "behavior": "allow",
            "updatedInput": {
                **recorded,
                "answers": {
                    asked_here: "Postgres (Recommended)",
                    "Which checks should run before the merge?": "Benchmarks",
                },
            },
        },
    }
    op = {"Authorization": f"Bearer {server.operator_token}"}
    listed = httpx.get(server.url + "/v1/approvals", params={"limit": 1000}, headers=op).json()
    assert [a["title"] for a in listed["approvals"]].count(asked_here) == 1  # asked once


def test_a_question_the_operator_declines_is_denied_with_the_reason(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    recorded = json.loads((HOOKS / "claude-code" / "ask-user-question.json").read_text())
    recorded["permission_mode"] = "plan"
    recorded["tool_input"]["questions"] = recorded["tool_input"]["questions"][:1]
    recorded["tool_input"]["questions"][0]["question"] = "Which database, again?"
    process = hook("claude-code", json.dumps(recorded).encode(), server.url, coder, tmp_path)
    asked = pending_titled(server, "Which database, again?")
    decide(server, asked["approval_id"], "reject", "decide it yourself")
    output = answered(process, "claude-code")["hookSpecificOutput"]
    assert output == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "decide it yourself",
    }


def test_a_codex_prompt_is_approved_only_as_asked(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    prompt = (HOOKS / "codex" / "bash.json").read_bytes()
    process = hook("codex", prompt, server.url, coder, tmp_path)
    asked = pending_titled(server, TITLES[("codex", "bash")])
    # Why Codex asks, and that the command would leave its sandbox, reach the operator.
    assert asked["payload"]["approval_context"] == {
        "sandbox_permissions": "require_escalated",
        "justification": "Reinstall dependencies from the lockfile",
    }
    approval_id = str(asked["approval_id"])
    said = operator_cli(server, tmp_path, "approvals", "approve", approval_id, "--command", "ls")
    assert said.returncode != 0 and "Codex" in said.stderr and "HTTP 409" in said.stderr
    assert pending_titled(server, TITLES[("codex", "bash")])["approval_id"] == asked["approval_id"]
    assert operator_cli(server, tmp_path, "approvals", "approve", approval_id).returncode == 0
    assert answered(process, "codex")["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


@pytest.mark.parametrize("source", ["claude-code", "codex"])
def test_reject_and_stop_ends_claude_codes_turn(
    server: LiveServer, coder: str, tmp_path: Path, source: str
) -> None:
    """``--stop``: Claude Code's hook denies with ``interrupt``; Codex's, whose hook fails
    closed on it, denies with the reason alone."""
    recorded = json.loads((HOOKS / source / "bash.json").read_text())
    recorded["tool_input"]["command"] = f"git push --force origin main # {source}"
    process = hook(source, json.dumps(recorded).encode(), server.url, coder, tmp_path)
    asked = pending_titled(server, f"Bash: git push --force origin main # {source}")
    said = operator_cli(
        server,
        tmp_path,
        "approvals",
        "reject",
        str(asked["approval_id"]),
        "--stop",
        "--note",
        "never force-push main; wait for me",
    )
    assert said.returncode == 0, said.stderr
    assert "the agent is asked to stop what it is doing" in said.stdout
    decision = answered(process, source)["hookSpecificOutput"]["decision"]
    stop = {"interrupt": True} if source == "claude-code" else {}
    assert decision == {"behavior": "deny", "message": "never force-push main; wait for me"} | stop


def test_a_rejection_without_a_note_says_who_rejected(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    prompt = (HOOKS / "codex" / "network.json").read_bytes()
    process = hook("codex", prompt, server.url, coder, tmp_path)
    decide(server, pending_titled(server, TITLES[("codex", "network")])["approval_id"], "reject")
    decision = answered(process, "codex")["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "rejected by the operator"}


@pytest.mark.parametrize("source", ["claude-code", "codex"])
def test_a_policy_answers_at_once(
    server: LiveServer, coder: str, tmp_path: Path, source: str
) -> None:
    op = {"Authorization": f"Bearer {server.operator_token}"}
    rule = {
        "name": f"no rm -rf ({source})",
        "decision": "reject",
        "note": "rm -rf is never run unattended",
        "match": {
            "payload": {
                "/tool_input/command": {"regex": r"\brm\s+-rf\b"},
                "/source": {"eq": source},
            }
        },
    }
    httpx.post(server.url + "/v1/policies", json=rule, headers=op).raise_for_status()
    prompt = json.loads((HOOKS / "codex" / "bash.json").read_text())
    started = time.monotonic()
    process = hook(source, json.dumps(prompt).encode(), server.url, coder, tmp_path)
    decision = answered(process, source)["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "rm -rf is never run unattended"}
    assert time.monotonic() - started < 10  # no wait for anyone: a process start and a request


def test_nobody_deciding_in_time_prints_nothing_and_the_approval_expires(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    prompt = (HOOKS / "claude-code" / "write.json").read_bytes()
    started = time.monotonic()
    process = hook("claude-code", prompt, server.url, coder, tmp_path, "--timeout", "2")
    out, err = process.communicate(timeout=30)
    took = time.monotonic() - started
    assert process.returncode == 0 and out == b"", err
    [line] = err.decode().splitlines()  # the one promised line
    assert re.fullmatch(
        r"relay hook: nobody decided approval \d+ within 2 s; the agent asks in its terminal", line
    ), line
    # It waited until less than a second of its two was left (it returns before the host's
    # own timeout would kill it), then returned; the upper margin is the interpreter's start
    # and the approval's expiry on a loaded machine (four test workers on two cores).
    assert 2 - 1 < took < 2 + 10, took
    op = {"Authorization": f"Bearer {server.operator_token}"}
    mine = [
        a
        for a in httpx.get(server.url + "/v1/approvals", headers=op).json()["approvals"]
        if a["title"] == TITLES[("claude-code", "write")]
    ]
    shown = httpx.get(
        f"{server.url}/v1/approvals/{mine[0]['approval_id']}", params={"wait": 5}, headers=op
    ).json()
    assert shown["status"] == "expired" and shown["decided_by"] == "deadline"


def test_a_server_that_cannot_be_reached_is_said_once_to_the_person(tmp_path: Path) -> None:
    """Nothing is decided, the terminal asks; the host's user is told why once a session (its
    ``systemMessage``, which both hosts show), and stderr keeps the detail."""
    recorded = json.loads((HOOKS / "claude-code" / "bash.json").read_text())
    for source in ("claude-code", "codex"):
        (tmp_path / source).mkdir()
        prompt = json.dumps(recorded | {"session_id": f"unreached-{source}"}).encode()
        started = time.monotonic()
        url = f"http://127.0.0.1:{free_port()}"
        process = hook(source, prompt, url, "rly_agent_x", tmp_path / source)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        told = json.loads(out)
        schema = CLAUDE_CODE_OUTPUT if source == "claude-code" else CODEX_OUTPUT
        jsonschema.validate(told, schema)
        assert told == {
            "systemMessage": f"Relay unreachable at {url}: prompts stay in this terminal; run"
            " `relay doctor`"
        }
        [line] = err.decode().splitlines()
        assert line.startswith(f"relay hook: nothing to say: cannot reach {url}: "), line
        assert line.endswith("(is relay serve running there?); the agent asks in its terminal")
        assert time.monotonic() - started < 5
        again = hook(source, prompt, url, "rly_agent_x", tmp_path / source)
        assert again.communicate(timeout=30)[0] == b""  # once a session: then quiet


@pytest.mark.parametrize("prompt", [b"", b"not json", b"[]", b'{"tool_name": 7}'])
def test_input_that_cannot_be_read_prints_nothing(
    server: LiveServer, coder: str, tmp_path: Path, prompt: bytes
) -> None:
    process = hook("claude-code", prompt, server.url, coder, tmp_path)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and out == b"", err
    [line] = err.decode().splitlines()  # in words, not an exception's name
    assert line.startswith("relay hook: nothing to say: its input is not "), line
    assert not re.search(r"\b[A-Z][a-z]+Error\b", line), line


def test_a_url_is_titled_by_the_host_a_browser_reaches(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    """WHATWG parsing: a backslash ends the host, so this URL reaches evil.example, not
    github.com; the title and the payload's url_host (for policies) say so."""
    prompt = json.loads((HOOKS / "claude-code" / "webfetch.json").read_text())
    prompt["tool_input"]["url"] = "https://evil.example\\@github.com/x"
    process = hook("claude-code", json.dumps(prompt).encode(), server.url, coder, tmp_path)
    asked = pending_titled(server, "WebFetch: evil.example")
    assert asked["payload"]["url_host"] == "evil.example"
    decide(server, asked["approval_id"], "reject")
    assert answered(process, "claude-code")["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def edit_prompt(name: str, repo: Path) -> bytes:
    """A recorded PreToolUse input, in the repository the test made."""
    return (HOOKS / name).read_text().replace("/home/dev/shop", str(repo)).encode()


def repository(root: Path, workspace: str) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "config", "relay.workspace", workspace], cwd=root, check=True)
    return root


def holder_token(server: LiveServer, agent_id: str) -> str:
    """The token of another agent, registered now, that holds paths."""
    op = {"Authorization": f"Bearer {server.operator_token}"}
    registered = httpx.post(
        server.url + "/v1/agents/register", json={"agent_id": agent_id}, headers=op
    )
    return str(registered.json()["token"])


def reserve_as(holder: str, server: LiveServer, workspace: str, *paths: str, **more: Any) -> int:
    """A reservation of ``paths`` in ``workspace`` by the holder of token ``holder``; its id."""
    reserved = httpx.post(
        server.url + "/v1/reservations",
        json={"workspace": workspace, "paths": list(paths), **more},
        headers={"Authorization": f"Bearer {holder}"},
    )
    assert reserved.status_code == 201, reserved.text
    return int(reserved.json()["reservation_id"])


def test_an_edit_of_a_file_another_agent_reserved_is_denied_before_it_is_made(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    op = {"Authorization": f"Bearer {server.operator_token}"}
    holder = holder_token(server, "api-owner")
    repo = repository(tmp_path / "shop", "acme/edits")
    reserve_as(holder, server, "acme/edits", "src/api/**", reason="auth refactor")
    codex_input = json.loads(
        (HOOKS / "codex" / "pre-tool-use.command.input.schema.json").read_text()
    )
    codex_output = json.loads(
        (HOOKS / "codex" / "pre-tool-use.command.output.schema.json").read_text()
    )
    for source, name in (
        ("claude-code", "claude-code/pre-tool-use-edit.json"),
        ("codex", "codex/pre-tool-use-apply-patch.json"),
    ):
        prompt = edit_prompt(name, repo)
        if source == "codex":
            jsonschema.validate(json.loads(prompt), codex_input)
        out, err = hook(source, prompt, server.url, coder, tmp_path).communicate(timeout=30)
        answer = json.loads(out)
        jsonschema.validate(answer, codex_output if source == "codex" else CLAUDE_CODE_OUTPUT)
        said = answer["hookSpecificOutput"]
        assert said["hookEventName"] == "PreToolUse" and said["permissionDecision"] == "deny"
        reason = said["permissionDecisionReason"]
        assert reason.startswith("src/api/app.py is reserved by api-owner until "), reason
        assert reason.endswith("UTC (auth refactor): message api-owner or pick other work")

    # A file nobody holds: nothing said; with --reserve-on-edit, reserved for the editor once.
    free = edit_prompt("claude-code/pre-tool-use-edit.json", repo).replace(b"src/api/", b"lib/")
    for _ in range(2):
        process = hook("claude-code", free, server.url, coder, tmp_path, "--reserve-on-edit")
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0 and out == b"", err
    mine = httpx.get(
        server.url + "/v1/reservations",
        params={"workspace": "acme/edits", "holder": "coder"},
        headers=op,
    ).json()["reservations"]
    assert [(r["paths"], r["exclusive"]) for r in mine] == [(["lib/app.py"], False)]
    # Outside any repository nothing is said; Relay out of reach: the edit goes, and the
    # person is told once (above); exit 0.
    outside = (HOOKS / "claude-code" / "pre-tool-use-edit.json").read_bytes()
    in_repo = edit_prompt("claude-code/pre-tool-use-edit.json", repo)
    for prompt, url in ((outside, server.url), (in_repo, f"http://127.0.0.1:{free_port()}")):
        process = hook("claude-code", prompt, url, coder, tmp_path)
        out, _ = process.communicate(timeout=30)
        assert process.returncode == 0
        assert b"permissionDecision" not in out


def test_codexs_own_patch_tool_is_checked_for_every_file_it_names(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    """Codex sends its edits as ``apply_patch`` (the patch in ``tool_input.command``): a file it
    adds, updates, deletes or moves (from and to, absolute or relative) that another agent holds
    is denied."""
    holder = holder_token(server, "patch-owner")
    repo = repository(tmp_path / "shop", "acme/patches")
    patch = edit_prompt("codex/pre-tool-use-apply-patch-tool.json", repo)
    for held in ("docs/notes.md", "lib/old.py", "src/api/**", "tools/gone.py"):
        reservation_id = reserve_as(holder, server, "acme/patches", held)
        out, err = hook("codex", patch, server.url, coder, tmp_path).communicate(timeout=30)
        said = json.loads(out)["hookSpecificOutput"]
        assert said["permissionDecision"] == "deny", (held, err)
        assert "is reserved by patch-owner" in said["permissionDecisionReason"]
        released = httpx.post(
            f"{server.url}/v1/reservations/{reservation_id}/release",
            headers={"Authorization": f"Bearer {holder}"},
        )
        assert released.status_code == 200
    out, err = hook("codex", patch, server.url, coder, tmp_path).communicate(timeout=30)
    assert out == b"", err  # nobody holds any of them: nothing said


# Shell commands that write src/api/x.py, which another agent holds; and ones that do not.
SHELL_WRITES = (
    "sed -i s/a/b/ src/api/x.py",
    "echo DEBUG=0 > src/api/x.py",
    "cat notes >> src/api/x.py 2>&1",
    "make | tee -a src/api/x.py",
    "mv src/api/x.py src/x.py",
    "cp /tmp/x.py src/api/x.py",
    "rm -f src/api/x.py",
    "truncate -s 0 src/api/x.py",
    "git checkout -- src/api/x.py",
    "sh -c 'echo > src/api/x.py'",
    "pytest -q && sed -i.bak 's/a/b/' {repo}/src/api/x.py",
)
SHELL_READS = (
    "cat src/api/x.py",
    "sed s/a/b/ src/api/x.py",
    "ls > docs/listing.txt",
    "grep -r x src",
)


def test_a_shell_command_that_writes_a_reserved_file_is_denied(
    server: LiveServer, coder: str, tmp_path: Path
) -> None:
    """PreToolUse of Bash (Claude Code and Codex): the command read with Relay's shell parser;
    a redirection, tee, sed -i, mv, cp, rm, truncate or git checkout of a file another agent
    holds is denied; a command that only reads it says nothing."""
    repo = repository(tmp_path / "shop", "acme/shell")
    reserve_as(holder_token(server, "shell-owner"), server, "acme/shell", "src/api/**")
    recorded = json.loads(edit_prompt("claude-code/pre-tool-use-edit.json", repo))
    both = (*SHELL_WRITES, *SHELL_READS)
    for source, commands in (("claude-code", both), ("codex", (*SHELL_WRITES[:2], SHELL_READS[0]))):
        for command in commands:
            given = recorded | {
                "tool_name": "Bash",
                "tool_input": {"command": command.format(repo=repo)},
            }
            out, err = hook(
                source, json.dumps(given).encode(), server.url, coder, tmp_path
            ).communicate(timeout=30)
            if command in SHELL_READS:
                assert out == b"", (source, command, err)
                continue
            said = json.loads(out)["hookSpecificOutput"]
            assert said["permissionDecision"] == "deny", (source, command)
            assert "is reserved by shell-owner" in said["permissionDecisionReason"]
