"""The ``relay`` CLI through Typer's CliRunner against a real server.

The environment names the server and its data directory only: the operator token is found the
way it is on the server's machine, with no flags.
"""

from __future__ import annotations

import ast
import inspect
import json
import operator
import os
import re
import shlex
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from typer.testing import CliRunner, Result

from relay_api import __version__
from relay_api.operations import OPERATIONS
from relay_cli._common import out
from relay_cli.main import app
from relay_cli.workspace import normalized_remote
from relay_client import RelayClient
from tests.live import LiveServer, live_server, relay_command


def commands(
    group: typer.Typer, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the CLI: the words that run it, and its function."""
    for command in group.registered_commands:
        assert command.callback is not None
        yield (*words, command.name or command.callback.__name__), command.callback
    for sub in group.registered_groups:
        assert sub.typer_instance is not None and sub.name is not None
        yield from commands(sub.typer_instance, (*words, sub.name))


def sdk_calls(function: Any) -> set[str]:
    """The client methods a command calls: ``c.tasks.get(...)`` is ``tasks.get``; a command made
    from the table (``relay_cli.listing``) says which operation it runs."""
    if hasattr(function, "operation"):
        return {function.operation}
    found = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function)))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            chain, target = [node.func.attr], node.func.value
            while isinstance(target, ast.Attribute):
                chain.insert(0, target.attr)
                target = target.value
            if isinstance(target, ast.Name) and target.id in ("c", "client"):
                found.add(".".join(chain))
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-cli")) as running:
        yield running


@pytest.fixture
def relay(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("RELAY_TOKEN", "RELAY_AGENT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RELAY_URL", server.url)
    monkeypatch.setenv("RELAY_DATA_DIR", str(server.data_dir))
    runner = CliRunner()

    def run(*args: str, code: int = 0, answer: str | None = None) -> Result:
        result = runner.invoke(app, list(args), input=answer)
        assert result.exit_code == code, (args, result.stdout, result.stderr, result.exception)
        return result

    def data(*args: str) -> Any:
        return json.loads(run(*args, "--json").stdout)

    run.json = data  # type: ignore[attr-defined]
    return run


def test_relay_version_says_the_version_without_a_server(tmp_path: Path) -> None:
    """``relay --version`` as a user types it: the installed command, no server anywhere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    shown = subprocess.run(
        [*relay_command(), "--version"],
        env={**env, "HOME": str(tmp_path), "RELAY_URL": "http://127.0.0.1:9"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == f"relay {__version__}\n"


def test_every_operation_has_a_command_with_an_example() -> None:
    """Found from the commands' own code (the client method each calls), not from a list: every
    operation has a command, and every client method a command calls exists."""
    runner = CliRunner()
    reached: dict[str, tuple[str, ...]] = {}
    for words, function in commands(app):
        for name in sdk_calls(function):
            assert callable(operator.attrgetter(name)(RelayClient("http://relay.invalid"))), name
            reached.setdefault(name, words)
    for op in OPERATIONS:
        assert op.id in reached, f"no command runs {op.id}"
        result = runner.invoke(app, [*reached[op.id], "--help"])
        assert result.exit_code == 0, (op.id, result.stdout)
        assert "Example: relay" in result.stdout, op.id
    assert "Example:" in runner.invoke(app, ["--help"]).stdout


def test_the_operator_flow_with_no_flags(relay: Any) -> None:
    run = relay.json
    n = uuid.uuid4().hex[:6]
    builder = f"builder-{n}"
    registered = run("agents", "register", builder, "--name", "Build bot", "-c", "ci")
    assert registered["token"].startswith("rly_agent_")
    token = registered["token"]
    assert builder in {a["agent_id"] for a in run("agents", "list")["agents"]}
    assert run("health") == {"status": "ok", "version": "0.1.0"}
    assert run("status")["storage"] == "sqlite"

    as_builder = ["--token", token, "--agent", builder]
    beat = run(*as_builder, "agents", "heartbeat", "--status", "idle")
    assert beat["presence"] == "online"
    sent = run("messages", "send", "hello", "--to", builder, "--payload", '{"n": 1}')
    assert sent["payload"] == {"n": 1}
    peeked = run(*as_builder, "inbox", "--peek")["messages"]
    assert [(m["text"], m["status"], m["delivery_count"]) for m in peeked] == [
        ("hello", "pending", 0)
    ]
    assert [m["text"] for m in run(*as_builder, "inbox")["messages"]] == ["hello"]
    assert run(*as_builder, "messages", "ack", str(sent["message_id"]))["status"] == "acked"

    room = f"room-{n}"
    run(*as_builder, "rooms", "join", room)
    run(*as_builder, "messages", "send", "in room", "--room", room)
    assert [m["text"] for m in run("rooms", "messages", room, "-n", "5")["messages"]] == ["in room"]
    assert room in {r["room_id"] for r in run("rooms", "list")["rooms"]}

    space = run("spaces", "create", f"Space {n}")["space_id"]
    assert run("spaces", "add-room", space, "Bench", "--topic", "t")["space_id"] == space
    assert run("spaces", "sync")["bridge"] == "local"
    assert run("spaces", "archive", space)["status"] == "archived"
    assert space in {s["space_id"] for s in run("spaces", "list", "--archived")["spaces"]}

    task = run("tasks", "create", f"reindex {n}", "--priority", "3", "--max-attempts", "2")
    tid = str(task["task_id"])
    assert run(*as_builder, "tasks", "claim", tid)["claimed_by"] == builder
    assert run(*as_builder, "tasks", "event", tid, "--progress", "30")["progress"] == 30
    assert run(*as_builder, "tasks", "fail", tid, "--error", "flaky", "--retry")["status"] == "open"
    run(*as_builder, "tasks", "claim", tid)
    done = run(*as_builder, "tasks", "complete", tid, "--result", '{"docs": 12}')
    assert done["result"] == {"docs": 12} and run("tasks", "show", tid) == done
    assert [t["task_id"] for t in run("tasks", "list", "--claimed-by", builder)["tasks"]] == [
        task["task_id"]
    ]
    assert run("tasks", "events", tid)["events"][-1]["kind"] == "completed"

    action = run(*as_builder, "actions", "record", "deploy", "--target", "web", "--task", tid)
    assert run("actions", "list", "--of", builder)["actions"][0] == action

    note = run(*as_builder, "notify", "need a hand")
    assert run("notifications", "retry", str(note["notification_id"]))["status"] == "sent"
    reply = run("notifications", "reply", note["platform_message_id"], "coming")
    assert reply["to"] == builder
    assert note["notification_id"] in {
        x["notification_id"] for x in run("notifications", "list")["notifications"]
    }

    created = run("enroll", "request", f"linter-{n}", "--reason", "new bot")
    assert (
        run("enroll", "status", str(created["enroll_id"]), "--claim", created["claim"])["status"]
        == "pending"
    )
    pending = {
        a["approval_id"] for a in run("approvals", "list", "--status", "pending")["approvals"]
    }
    assert created["approval_id"] in pending
    assert run("approvals", "show", str(created["approval_id"]))["kind"] == "enrollment"
    assert run("approvals", "approve", str(created["approval_id"]))["status"] == "approved"
    polled = run("enroll", "status", str(created["enroll_id"]), "--claim", created["claim"])
    assert polled["token"].startswith("rly_agent_")

    inc = f"inc-{n}"
    diag = run(
        *as_builder,
        "interventions",
        "diagnostic",
        inc,
        "--summary",
        "slow",
        "--content",
        '{"p99": 9}',
    )
    assert diag["content"] == {"p99": 9}
    assert run("interventions", "show-diagnostic", inc) == diag
    asked = run(
        *as_builder,
        "interventions",
        "request-approval",
        inc,
        "--title",
        "restart",
        "--reason",
        "slow",
        "--proposed-action",
        "restart it",
        "--risk",
        "low",
    )
    assert run("interventions", "approval", inc)["approval_id"] == asked["approval_id"]
    run("approvals", "reject", str(asked["approval_id"]), "--note", "later")
    again = run(
        *as_builder,
        "interventions",
        "request-approval",
        inc,
        "--title",
        "restart",
        "--reason",
        "slower",
        "--proposed-action",
        "restart it",
    )
    run("approvals", "approve", str(again["approval_id"]))
    trace = run(
        *as_builder,
        "interventions",
        "action",
        inc,
        "--action",
        "restart",
        "--status",
        "succeeded",
        "--before",
        '{"p99": 9}',
        "--after",
        "all good now",
    )
    assert trace["evidence_after"] == "all good now"
    listed = run("interventions", "list", "-n", "50")["interventions"]
    assert next(i for i in listed if i["intervention_id"] == inc)["status"] == "remediated"
    run("agents", "register", f"runner-{n}")
    added = run("interventions", "add-participant", inc, f"runner-{n}")
    assert added["participants"] == [f"runner-{n}"]
    asked = run(
        *as_builder,
        "approvals",
        "request",
        "Deploy build 7",
        "--payload",
        '{"build": 7}',
        "--expires-in",
        "600",
    )
    assert asked["kind"] == "request" and asked["payload"] == {"build": 7}
    run("approvals", "reject", str(asked["approval_id"]), "--note", "not today")
    waited = run(*as_builder, "approvals", "show", str(asked["approval_id"]), "--wait", "5")
    assert waited["status"] == "rejected" and waited["note"] == "not today"

    cursor = run("events", "list")["cursor"]
    run("tasks", "create", f"announced {n}")
    feed = run("events", "list", "--after", str(cursor), "--wait", "5")
    assert [e["kind"] for e in feed["events"]] == ["task.created"]
    streamed = relay("events", "stream", "--after", str(cursor), "--count", "1").stdout
    assert json.loads(streamed)["event_id"] == feed["events"][0]["event_id"]
    waited = run(*as_builder, "inbox", "--wait", "0.2")
    assert [m["text"] for m in waited["messages"]] == ["coming"]  # the operator's reply


def test_human_output_is_tables_and_confirmations(relay: Any) -> None:
    agent = f"human-{uuid.uuid4().hex[:6]}"
    registered = relay("agents", "register", agent)
    assert registered.stdout.startswith(f"Registered agent {agent}; token: rly_agent_")
    listed = relay("agents", "list").stdout
    assert "agent_id" in listed and agent in listed
    created = relay("enroll", "request", f"{agent}-2").stdout
    approval_id = created.split("pending approval ")[1].split(";")[0]
    assert relay("approvals", "approve", approval_id).stdout.startswith(f"Approved {approval_id}:")


def test_remember_makes_a_policy_with_its_scope_and_says_how_to_undo_it(relay: Any) -> None:
    agent = f"coder-{uuid.uuid4().hex[:6]}"
    relay("agents", "register", agent)
    payload = {"source": "claude-code", "tool_name": "Bash", "tool_input": {"command": "make"}}

    def ask() -> str:
        asked = relay.json(
            "--agent", agent, "approvals", "request", "Bash: make", "--payload", json.dumps(payload)
        )
        return str(asked["approval_id"])

    first = ask()
    misused = relay("approvals", "approve", first, "--every-agent", code=2)
    assert "go with --remember" in misused.stderr
    bad = relay("approvals", "approve", first, "--remember", "--limit", "five", code=2)
    assert "COUNT/SECONDS" in bad.stderr
    said = relay("approvals", "approve", first, "--remember", "--every-agent", "--limit", "5/60")
    policy_id = said.stdout.split("remembered as policy ")[1].split(" ")[0]
    assert f"undo: relay policies disable {policy_id})" in said.stdout
    policy = relay.json("policies", "show", policy_id)
    assert "agents" not in policy["match"] and policy["limit"] == {"count": 5, "per_seconds": 60}
    assert relay.json("approvals", "show", ask())["status"] == "approved"


def requests_counted(server: LiveServer) -> dict[str, float]:
    """How many requests the server answered, by operation (its /metrics)."""
    answer = httpx.get(
        f"{server.url}/metrics", headers={"Authorization": f"Bearer {server.operator_token}"}
    )
    counted: dict[str, float] = {}
    for line in answer.text.splitlines():
        if line.startswith("relay_requests_total{"):
            operation = line.split('operation="')[1].split('"')[0]
            counted[operation] = counted.get(operation, 0) + float(line.rsplit(" ", 1)[1])
    return counted


def test_approve_with_a_command_is_one_request(relay: Any, server: LiveServer) -> None:
    agent = f"coder-{uuid.uuid4().hex[:6]}"
    relay("agents", "register", agent)
    payload = {"source": "claude-code", "tool_name": "Bash", "tool_input": {"command": "make"}}
    asked = relay.json(
        "--agent", agent, "approvals", "request", "Bash: make", "--payload", json.dumps(payload)
    )
    before = requests_counted(server)
    said = relay("approvals", "approve", str(asked["approval_id"]), "--command", "make -j1")
    after = requests_counted(server)
    assert "changed: it runs make -j1" in said.stdout
    made = {op: n - before.get(op, 0) for op, n in after.items() if n != before.get(op, 0)}
    assert made == {"approvals.approve": 1, "metrics": 1}  # the metrics: the first count
    both = relay("approvals", "approve", "1", "--command", "ls", "--payload", "{}", code=2)
    assert "not both" in both.stderr


def test_approve_several_by_id_or_all_that_match_once_asked(relay: Any) -> None:
    agents = [f"batch-{uuid.uuid4().hex[:6]}" for _ in range(2)]
    for agent in agents:
        relay("agents", "register", agent)

    def ask(agent: str, title: str) -> str:
        return str(relay.json("--agent", agent, "approvals", "request", title)["approval_id"])

    tests = [ask(agents[0], f"Bash: npm test -- {n}") for n in range(3)]
    other = ask(agents[0], "Bash: rm -rf build")
    theirs = ask(agents[1], "Bash: npm test -- 9")
    question = relay.json(
        "--agent", agents[0], "approvals", "ask", "Bash: npm test* or not?", "-o", "a", "-o", "b"
    )

    def status(approval_id: str) -> str:
        return str(relay.json("approvals", "show", approval_id)["status"])

    match = ("--all", "--agent", agents[0], "--title", "Bash: npm test*")
    declined = relay("approvals", "approve", *match, code=2, answer="n\n")
    listed = [line.split()[0] for line in declined.stdout.splitlines()[:-1]]
    assert listed == tests and "Approve these 3?" in declined.stdout  # oldest first, no question
    assert {status(one) for one in [*tests, other, theirs]} == {"pending"}
    cursor = relay.json("events", "list")["cursor"]
    approved = relay("approvals", "approve", *match, answer="y\n").stdout
    assert [status(one) for one in tests] == ["approved"] * 3
    events = relay.json("events", "list", "--after", str(cursor), "--limit", "100")["events"]
    decided = [e["subject_id"] for e in events if e["kind"] == "approval.decided"]
    assert decided == tests  # each decision audited on its own
    assert all(f"Approved {one}: " in approved for one in tests)
    assert status(other) == status(theirs) == "pending"
    assert status(str(question["approval_id"])) == "pending"
    assert relay("approvals", "approve", *match).stdout.startswith("no pending approval matches")

    # By id, each on its own: one that cannot be approved is said, and the others still are.
    said = relay("approvals", "approve", other, "999999", theirs, code=1)
    assert "approval 999999 does not exist" in said.stderr
    assert status(other) == status(theirs) == "approved"
    misused = relay("approvals", "approve", tests[0], tests[1], "--remember", code=2)
    assert "--remember approve one approval" in misused.stderr
    assert (
        "--agent and --title go with --all"
        in relay("approvals", "approve", tests[0], "--title", "x", code=2).stderr
    )


def test_an_agent_asks_a_question_and_the_operator_answers_it(relay: Any) -> None:
    agent = f"asker-{uuid.uuid4().hex[:6]}"
    relay("agents", "register", agent)
    asked = relay.json(
        "--agent", agent, "approvals", "ask", "Which DB?", "-o", "Postgres", "-o", "SQLite"
    )
    assert asked["kind"] == "question" and [o["label"] for o in asked["options"]] == [
        "Postgres",
        "SQLite",
    ]
    refused = relay("approvals", "answer", str(asked["approval_id"]), "MySQL", code=1)
    assert "not among the question's options" in refused.stderr and "HTTP 422" in refused.stderr
    said = relay("approvals", "answer", str(asked["approval_id"]), "Postgres").stdout
    assert (
        said.startswith(f"Answered {asked['approval_id']}: Which DB?")
        and "answer: Postgres" in said
    )
    shown = relay.json("--agent", agent, "approvals", "show", str(asked["approval_id"]))
    assert shown["status"] == "answered" and shown["answer"] == ["Postgres"]
    # The same answer again is a no-op (exit 0); another is a conflict (non-zero), as approve
    # after reject is.
    same = relay("approvals", "answer", str(asked["approval_id"]), "Postgres")
    assert "nothing changed" in same.stdout
    other = relay("approvals", "answer", str(asked["approval_id"]), "SQLite", code=1)
    assert "already answered (Postgres)" in other.stderr and "HTTP 409" in other.stderr


def test_ids_are_never_cut_at_80_columns(relay: Any) -> None:
    """The ids a reader types next are whole in an 80-column table; the other columns wrap or
    give way."""
    agent = f"api-gw-restarter-with-a-long-name-{uuid.uuid4().hex[:6]}"
    relay("agents", "register", agent)
    title = "restart the gateway after the certificate rotation finished everywhere"
    relay("tasks", "create", title, "--assignee", agent, "--priority", "5")
    for words in (("agents", "list"), ("tasks", "list", "--assignee", agent)):
        table = relay(*words).stdout
        assert all(len(line) <= 80 for line in table.splitlines()), table
        assert agent in table, table
    table = relay("tasks", "list", "--assignee", agent).stdout
    assert "restart the" in table and "…" not in table


def test_titles_get_the_room_of_empty_columns_at_80_columns(relay: Any) -> None:
    """A column empty on every row is left out, a short value (a status, a time ago) stays
    whole, and a title takes what is left rather than ten characters a line."""
    agent = f"summarizer-{uuid.uuid4().hex[:6]}"
    token = relay("agents", "register", agent).stdout.split("token: ")[1].split()[0]
    title = "summarize the quarterly report for the board meeting next week"
    task = relay.json("tasks", "create", title)["task_id"]
    relay("--agent", agent, "tasks", "claim", str(task))
    asked = "Bash: npm test -- --runInBand --coverage"
    relay("--token", token, "approvals", "request", asked)
    for words, wanted in (
        (("tasks", "list", "--claimed-by", agent), title),
        (("--token", token, "approvals", "list"), asked),
    ):
        table = relay(*words).stdout
        lines = table.splitlines()
        heading = lines[0]
        assert all(len(line) <= 80 for line in lines), table
        assert "assignee" not in heading and "progress" not in heading, table
        assert agent in table, table  # an id, whole
        at = [name.strip() for name in heading.split("┃")].index("title")
        rows: list[list[str]] = []  # each row's lines of its title
        for line in lines[2:]:
            cells = line.split("│")
            if cells[0].strip():
                rows.append([])
            rows[-1].append(cells[at].strip())
        assert wanted in [" ".join(row) for row in rows], table
        assert max(len(line.rstrip()) for line in lines) >= 78, table  # the room is taken
    relay("messages", "send", "hello", "--to", agent)
    inbox = relay("inbox", agent, "--peek").stdout.splitlines()
    assert inbox[0].split("┃")[-1].strip() == "created_at" and inbox[2].rstrip().endswith(" s ago")


def test_errors_go_to_stderr_with_exit_codes(relay: Any, server: LiveServer) -> None:
    created = relay.json("enroll", "request", f"err-{uuid.uuid4().hex[:6]}")
    relay("approvals", "reject", str(created["approval_id"]))
    refused = relay("approvals", "approve", str(created["approval_id"]), code=1)
    assert refused.stdout == ""
    assert refused.stderr.strip() == (
        f"error: approval {created['approval_id']} is already rejected [conflict, HTTP 409]"
    )
    missing = relay("approvals", "show", "999999", code=1)
    assert "[not_found, HTTP 404]" in missing.stderr
    invalid = relay("rooms", "messages", "anything", "-n", "5000", code=1)
    assert "query.limit" in invalid.stderr and "HTTP 422" in invalid.stderr
    denied = relay("--token", "rly_agent_nope", "agents", "list", code=1)
    assert "[unauthenticated, HTTP 401]" in denied.stderr

    offline = relay("--url", "http://127.0.0.1:9", "health", code=3)
    assert offline.stderr.startswith("error: cannot reach http://127.0.0.1:9")

    assert relay("approvals", "approve", code=2).exit_code == 2  # missing argument
    assert relay("approvals", "approve", "twelve", code=2).exit_code == 2
    bad_json = relay("tasks", "create", "x", "--payload", "{nope", code=2)
    assert "--payload" in bad_json.stderr
    no_agent = relay("agents", "heartbeat", code=2)
    assert "say which agent acts with --agent" in no_agent.stderr
    task = str(relay.json("tasks", "create", f"nobody's {uuid.uuid4().hex[:6]}")["task_id"])
    for words in (["claim"], ["event", "--progress", "5"], ["complete"], ["fail"]):
        unnamed = relay("tasks", words[0], task, *words[1:], code=2)
        assert unnamed.stderr.strip() == (
            "error: the operator's token is no agent's: say which agent acts with --agent <id>"
        ), unnamed.stderr


def test_whoami_says_who_the_server_says_the_token_is(relay: Any, server: LiveServer) -> None:
    """A token with the operator's prefix is not the operator's until the server says so; a URL
    where nothing listens is not anyone."""
    wrong = relay("--token", "rly_op_wrong", "whoami", code=1)
    assert wrong.stdout == "" and "[unauthenticated, HTTP 401]" in wrong.stderr
    nowhere = relay("--url", "http://127.0.0.1:9", "whoami", code=3)
    assert nowhere.stdout == "" and nowhere.stderr.startswith("error: cannot reach")
    assert nowhere.stderr.splitlines()[-1] == "is `relay serve` running at http://127.0.0.1:9?"
    mistyped = relay("--token", "rly_agnet_typo", "whoami", code=1)
    assert "the bearer token is unknown" in mistyped.stderr
    assert relay.json("whoami") == {"operator": True, "url": server.url}
    assert relay.json("status")["caller"] == "operator"


def test_an_operator_token_of_any_form_is_known_as_the_operators_from_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RELAY_OPERATOR_TOKEN may be any string: the CLI asks the server whose a token is, so an
    agent's command with the operator's token asks for --agent instead of the API's error."""
    chosen = f"team-operator-{uuid.uuid4().hex}"
    with live_server(tmp_path, RELAY_OPERATOR_TOKEN=chosen) as custom:
        for name in ("RELAY_TOKEN", "RELAY_AGENT_ID", "RELAY_DATA_DIR"):
            monkeypatch.delenv(name, raising=False)
        asked = CliRunner().invoke(
            app, ["--url", custom.url, "--token", chosen, "tasks", "claim", "7"]
        )
        assert asked.exit_code == 2, asked.stderr
        assert "say which agent acts with --agent" in asked.stderr


def test_lists_page_with_limit_and_all(relay: Any) -> None:
    owner = f"pager-{uuid.uuid4().hex[:8]}"
    relay("agents", "register", owner)
    for n in range(5):
        relay("tasks", "create", f"paged {n}", "--assignee", owner)
    page = relay("tasks", "list", "--assignee", owner, "--limit", "2", "--json")
    first = json.loads(page.stdout)
    assert len(first["tasks"]) == 2 and "--cursor" in page.stderr
    second = relay.json(
        "tasks", "list", "--assignee", owner, "--limit", "2", "--cursor", first["next_cursor"]
    )
    assert [t["title"] for t in second["tasks"]] == ["paged 2", "paged 3"]
    every = relay.json("tasks", "list", "--assignee", owner, "--limit", "2", "--all")
    assert [t["title"] for t in every["tasks"]] == [f"paged {n}" for n in range(5)]
    assert "next_cursor" not in every
    table = relay("tasks", "list", "--assignee", owner, "--all")
    assert "paged 4" in table.stdout and "--cursor" not in table.stderr


def test_an_agent_token_is_enough_to_say_who_acts(relay: Any) -> None:
    """With only its token (no --agent), an agent joins, acks, claims, reports and finishes:
    the server takes the agent the token belongs to."""
    run = relay.json
    n = uuid.uuid4().hex[:6]
    agent = f"solo-{n}"
    token = run("agents", "register", agent)["token"]
    me = ["--token", token]
    assert run(*me, "whoami")["agent_id"] == agent
    assert relay(*me, "whoami").stdout.startswith(f"agent {agent} at ")
    assert relay("whoami").stdout.startswith("the operator, at ")
    assert run(*me, "rooms", "join", f"ops-{n}")["agent_id"] == agent
    assert run(*me, "agents", "heartbeat", "--status", "idle")["agent_id"] == agent
    sent = run("messages", "send", "hi", "--to", agent)
    assert [m["text"] for m in run(*me, "inbox")["messages"]] == ["hi"]
    assert run(*me, "messages", "ack", str(sent["message_id"]))["status"] == "acked"
    task = str(run("tasks", "create", f"solo {n}")["task_id"])
    assert run(*me, "tasks", "claim", task)["claimed_by"] == agent
    assert run(*me, "tasks", "event", task, "--progress", "50")["agent_id"] == agent
    assert run(*me, "tasks", "complete", task)["status"] == "completed"
    # The operator is no agent: it must say which one it acts for (in the CLI's words).
    other = str(run("tasks", "create", f"other {n}")["task_id"])
    refused = relay("tasks", "claim", other, code=2)
    assert "--agent <id>" in refused.stderr and "query." not in refused.stderr


def test_deciding_again_says_nothing_changed(relay: Any, server: LiveServer) -> None:
    with RelayClient(server.url, token=server.operator_token) as op:
        op.agents.register(f"asker-{uuid.uuid4().hex[:6]}")
        intervention = f"inc-{uuid.uuid4().hex[:6]}"
        asked = op.interventions.request_approval(
            intervention, title="restart db", reason="pool full", proposed_action="restart"
        )
    approval = str(asked.approval_id)
    first = relay("approvals", "approve", approval, "--note", "welcome")
    assert first.stdout.startswith(f"Approved {approval}")
    again = relay("approvals", "approve", approval, "--note", "a second thought")
    assert again.stdout.strip().startswith(f"approval {approval} was already approved by operator ")
    assert again.stdout.strip().endswith("ago (note: welcome); nothing changed")
    answered = relay.json("approvals", "approve", approval)
    assert answered["changed"] is False and answered["note"] == "welcome"
    assert relay("approvals", "reject", approval, code=1).stderr.startswith("error: ")


def test_no_token_found_says_where_it_looked(
    relay: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAY_DATA_DIR", str(tmp_path / "not-the-servers"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    refused = relay("approvals", "list", code=1)
    assert "no token was found; looked in: --token, RELAY_TOKEN, the agent's token relay" in (
        refused.stderr
    )
    assert str(tmp_path / "not-the-servers" / "operator_token") in refused.stderr


# Examples that do not end on their own: they serve, or follow a stream, until stopped.
RUN_UNTIL_STOPPED = {"relay serve --port 8765", "relay events stream --after 120"}


def test_every_help_example_runs(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``Example:`` of every command's help, run as printed against a server that has the
    agents, rooms and records the examples name: none is a usage error. One the server refuses
    (a record with that id is not there, or not in that state) is fine."""
    runner = CliRunner()
    # The help is each command's docstring (read here, where no terminal width wraps it).
    texts = [app.info.help or ""] + [
        inspect.getdoc(function) or "" for _, function in commands(app)
    ]
    # An example too long for one line goes on over lines that start with an option.
    shown = re.compile(r"Example: (relay .+(?:\n\s*--.+)*)")
    examples = [" ".join(m.group(1).split()) for text in texts for m in shown.finditer(text)]
    assert len(examples) > 40
    # The webhook example's host is not looked up (there is no network here to resolve it).
    with live_server(tmp_path, RELAY_WEBHOOKS_ALLOW_PRIVATE="true") as server:
        monkeypatch.setenv("RELAY_URL", server.url)
        monkeypatch.setenv("RELAY_DATA_DIR", str(server.data_dir))
        monkeypatch.chdir(tmp_path)  # where an example writes a file (relay backup)
        # A repository, where relay guard installs its hook and checks what is staged.
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
        subprocess.run(["git", "config", "relay.workspace", "acme"], cwd=tmp_path, check=True)
        with RelayClient(server.url, token=server.operator_token) as op:
            for agent in ("builder", "deployer"):
                op.agents.register(agent)
            op.messages.send("for the inbox example", to="builder")
            for n in range(7):
                op.tasks.create(f"task {n + 1}")
            op.rooms.join("ops", agent_id="builder")
        succeeded = 0
        for example in examples:
            if example in RUN_UNTIL_STOPPED:
                continue
            result = runner.invoke(app, shlex.split(example)[1:])
            assert result.exit_code in (0, 1), (example, result.stdout, result.stderr)
            if result.exit_code == 1:
                # An A2A agent's host is not looked up either: the call is kept, failed; relay
                # doctor (and connect, which ends with it) says what fails, one line a check.
                refused = r"\[(not_found|conflict), HTTP|A2A call \d+ to \S+ is failed|^FAIL "
                said = result.stderr + result.stdout
                assert re.search(refused, said, re.MULTILINE), (
                    example,
                    result.stderr,
                )
            succeeded += result.exit_code == 0
        assert succeeded >= len(examples) * 2 // 3, succeeded


def test_reserve_in_a_repository_and_release(
    relay: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "shop"
    (repo / "src" / "api").mkdir(parents=True)
    for args in (["init", "-q"], ["remote", "add", "origin", "git@GitHub.com:acme/shop.git"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    monkeypatch.chdir(repo / "src")  # a pattern given here is from here
    for agent in ("rez-a", "rez-b"):
        relay("agents", "register", agent)
    said = relay("--agent", "rez-a", "reserve", "api/**", "--for", "2h", "--reason", "auth")
    assert said.stdout.startswith("Reserved #") and "in github.com/acme/shop until" in said.stdout
    assert said.stdout.rstrip().endswith(": src/api/**")
    refused = relay("--agent", "rez-b", "reserve", "/src/api/app.py", code=1)
    assert "src/api/**: held by rez-a (#" in refused.stderr and "for auth until" in refused.stderr
    assert "[conflict, HTTP 409]" in refused.stderr
    # An absolute path inside the repository, and one through '..', are its paths from the root.
    for spelled in (str(repo / "src" / "api" / "app.py"), "../src/./api/app.py"):
        refused = relay("--agent", "rez-b", "reserve", spelled, code=1)
        assert "src/api/**: held by rez-a (#" in refused.stderr, (spelled, refused.stderr)
    # What names no path of the repository is the server's to refuse, saying why.
    outside = relay("--agent", "rez-b", "reserve", "../../elsewhere.py", code=1)
    assert "'..'" in outside.stderr and "[validation_error, HTTP 422]" in outside.stderr
    listed = relay.json("reservations", "list", "--path", "src/api/app.py")["reservations"]
    [held] = [r for r in listed if r["workspace"] == "github.com/acme/shop"]
    assert held["holder"] == "rez-a"
    assert relay("--agent", "rez-a", "release", str(held["reservation_id"])).stdout.startswith(
        f"Reservation {held['reservation_id']} is released"
    )
    assert relay("--agent", "rez-b", "reserve", "api/app.py", "--for", "soon", code=2)
    monkeypatch.chdir(tmp_path)  # no repository: the workspace must be said
    outside = relay("--agent", "rez-b", "reserve", "x", code=2)
    assert "--workspace" in outside.stderr


def test_a_remote_url_is_one_workspace_whatever_its_protocol() -> None:
    for url in (
        "git@github.com:acme/shop.git",
        "https://github.com/acme/shop.git",
        "https://user:secret@GitHub.com/acme/shop",
        "ssh://git@github.com:22/acme/shop.git/",
    ):
        assert normalized_remote(url) == "github.com/acme/shop", url


def test_policies_that_answer_a_question_or_leave_it_to_the_operator(relay: Any) -> None:
    run = relay.json
    tag = uuid.uuid4().hex[:6]
    title = {"title": f"^{tag} "}
    answering = run(
        "policies",
        "create",
        "Our database",
        "--decision",
        "answer",
        "--answer",
        "Postgres",
        "--match",
        json.dumps({**title, "kinds": ["question"]}),
    )
    assert answering["answer"] == ["Postgres"]
    said = relay(
        "policies",
        "simulate",
        "builder",
        f"{tag} Which database?",
        "--kind",
        "question",
        "-o",
        "Postgres",
        "-o",
        "SQLite",
    ).stdout
    assert said.startswith("answer: policy") and "answer: Postgres" in said
    held = run(
        "policies",
        "create",
        "Prod waits",
        "--decision",
        "ask",
        "--match",
        json.dumps(title),
        "--remind-after",
        "300",
        "--escalate-after",
        "900",
    )
    assert (held["remind_after"], held["escalate_after"]) == (300, 900)
    assert run("policies", "simulate", "builder", f"{tag} deploy prod")["decision"] == "ask"
    refused = relay(
        "policies", "create", "x", "--decision", "approve", "--remind-after", "5", code=1
    )
    assert "ask policy" in refused.stderr and "HTTP 422" in refused.stderr


def test_policies_from_a_file_with_a_limit_and_a_simulation(relay: Any, tmp_path: Path) -> None:
    run = relay.json
    rule = tmp_path / "reads.json"
    rule.write_text(json.dumps({"kinds": ["request"], "title": "^Read: "}))
    created = run(
        "policies",
        "create",
        "Reads pass",
        "--decision",
        "approve",
        "--match",
        f"@{rule}",
        "--limit",
        "5/3600",
        "--note",
        "reading is fine",
    )
    assert created["match"] == {"kinds": ["request"], "title": "^Read: "}
    assert created["limit"] == {"count": 5, "per_seconds": 3600} and created["version"] == 1
    verdict = run("policies", "simulate", "anyone", "Read: notes.md")
    assert verdict["decision"] == "approve" and verdict["policy_id"] == created["policy_id"]
    replaced = run(
        "policies",
        "replace",
        str(created["policy_id"]),
        "Reads pass",
        "--decision",
        "reject",
        "--disabled",
    )
    assert replaced["version"] == 2 and replaced["enabled"] is False
    shown = run("policies", "show", str(created["policy_id"]), "--version", "1")
    assert shown["decision"] == "approve"
    usage = relay("policies", "create", "x", "--decision", "approve", "--limit", "five", code=2)
    assert "COUNT/SECONDS" in usage.stderr
    missing = relay("policies", "create", "x", "--decision", "approve", "--match", "@/nope", code=2)
    assert "cannot read /nope" in missing.stderr


def test_rotate_token_says_how_the_agent_gets_its_new_token() -> None:
    shown = CliRunner().invoke(app, ["agents", "register", "--help"], env={"COLUMNS": "200"})
    assert "RELAY_TOKEN" in " ".join(shown.stdout.split()), shown.stdout


def test_text_agents_wrote_is_printed_literally(
    relay: Any, server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rich markup in an agent's text is text: no traceback, no lost brackets; a search hit's
    matches are highlighted by the CLI, their words kept."""
    monkeypatch.setattr(out, "width", 250)  # one line a row, to find each text whole
    tag = uuid.uuid4().hex[:6]
    sender, reader = f"lit-a-{tag}", f"lit-b-{tag}"
    with RelayClient(server.url, token=server.operator_token) as op:
        token = op.agents.register(sender).token
        op.agents.register(reader)
    markup = f"Run [/] cleanup [bold]now {tag}"
    path = f"Edit: src/app/[id]/page.tsx {tag}"
    with RelayClient(server.url, token=token) as agent:
        asked = [agent.approvals.request(title).approval_id for title in (markup, path)]
        sent = agent.messages.send(f"[red]green[/red] {tag} [link=x]y", to=reader)
    for words in (("approvals", "list"), ("approvals", "show", str(asked[0]))):
        assert markup in relay(*words).stdout
    assert path in relay("approvals", "show", str(asked[1])).stdout
    relay("approvals", "approve", str(asked[0]))
    listed = relay("approvals", "list").stdout
    assert path in listed and markup in listed
    assert f"[red]green[/red] {tag} [link=x]y" in relay("inbox", reader, "--peek").stdout
    thread = relay("messages", "thread", str(sent.thread_id)).stdout
    assert f"[red]green[/red] {tag}" in thread
    shown = relay("messages", "show", str(sent.message_id)).stdout
    assert "sent, not delivered yet" in shown and f"[red]green[/red] {tag}" in shown
    relay("inbox", reader)  # the operator reads the agent's inbox for it: a delivery
    assert "not acknowledged yet" in relay("messages", "show", str(sent.message_id)).stdout
    found = relay("search", tag).stdout
    assert tag in found and "[" + tag + "]" not in found
    command = "echo " + "x" * 5000 + " | sh"
    with RelayClient(server.url, token=token) as agent:
        long = agent.approvals.request(
            "Bash: echo", payload={"tool_name": "Bash", "tool_input": {"command": command}}
        )
    shown = relay("approvals", "show", str(long.approval_id))
    text = "".join(shown.stdout.split())  # the table folds the long word: read it unfolded
    assert text.startswith("commandechoxxx") and "x|sh" in text
    assert "characters" in text and text.count("x") < 2 * 2000
    assert "--json prints it whole" in shown.stderr
    assert relay.json("approvals", "show", str(long.approval_id))["payload"]["tool_input"] == {
        "command": command
    }
