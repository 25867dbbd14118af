"""What ``relay hook claude-code|codex`` answers to one event of a coding agent's hooks.

At ``PermissionRequest`` it reads the prompt on stdin, files an approval request as the
configured agent (policies may answer it at once), waits up to ``--timeout`` seconds for the
decision, and prints it in the agent's own format. When nobody decides in time, the server
cannot be reached, the input cannot be read, or anything else fails, it prints nothing and
exits 0: the coding agent then asks in its terminal as it would have without the hook. It never
allows by default.

At ``PreToolUse`` of Claude Code's ``AskUserQuestion`` it asks the operator the session's
questions and fills in their answers. At ``Stop``, ``SessionStart`` and ``UserPromptSubmit`` it
hands the session what waits for the agent in Relay (``relay_cli.handover``), and on any
failure prints nothing as well.

It runs on every tool call, edit, prompt and stop, so it imports neither Typer (the command's
options are read by ``relay_cli.entry``, or by ``relay_cli.commands.hook`` for the rest) nor
the SDK's client and models: its requests are ``relay_cli.hook_http``'s, its records JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Literal

from relay_api.prompts import command_of, one_line, prompt_payload, title_of
from relay_cli.connection import NO_AGENT_TOKEN, Connection, given_token
from relay_cli.hook_http import JsonObject, Refused, Unreachable, Wire
from relay_client.config import ClientConfig

Source = Literal["claude-code", "codex"]
MAX_INPUT = 1024 * 1024
DEFAULT_TIMEOUT = 55  # below Claude Code's default hook timeout of 60 s
TIMEOUTS = range(1, 3601)  # the seconds --timeout may say
ASK_USER_QUESTION = "AskUserQuestion"  # Claude Code's tool that asks its user questions
CONNECT_SECONDS = 3.0  # a server that cannot be reached is given up on within this
HANDED_OVER = frozenset({"Stop", "SessionStart", "UserPromptSubmit"})  # relay_cli.handover
FALLBACK = "the agent asks in its terminal"  # what follows when the hook says nothing

# What keeps a command out of a Claude Code session rule: a rule's `*` is a wildcard there,
# and a line of several commands is matched part by part. Such a command stays Relay's policy's
# alone (which reads the line with a shell parser).
NOT_FOR_A_RULE = frozenset("*;&|<>$`()\n\\'\"")


def output(
    behavior: str,
    message: str | None,
    updated_input: dict[str, Any] | None = None,
    updated_permissions: list[dict[str, Any]] | None = None,
    interrupt: bool = False,
) -> dict[str, Any]:
    """The hook's answer, as Claude Code and Codex read it (the same shape for both; only
    Claude Code takes ``updatedInput``, ``updatedPermissions`` and ``interrupt``)."""
    decision: dict[str, Any] = {"behavior": behavior}
    if message is not None:
        decision["message"] = message
    if interrupt:
        decision["interrupt"] = True
    if updated_input is not None:
        decision["updatedInput"] = updated_input
    if updated_permissions:
        decision["updatedPermissions"] = updated_permissions
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


def _answer(
    source: Source, prompt: dict[str, Any], timeout: int, conn: Connection
) -> dict[str, Any] | None:
    """The decision for ``prompt``, or None to let the agent ask in its terminal."""
    started = time.monotonic()
    tool_name, tool_input = prompt["tool_name"], prompt.get("tool_input") or {}
    if not isinstance(tool_name, str) or not isinstance(tool_input, dict):
        say(f"nothing to say: its input is not a permission prompt it knows; {FALLBACK}")
        return None
    cwd = prompt["cwd"] if isinstance(prompt.get("cwd"), str) else ""
    # Codex says why it asks, and whether the command would leave its sandbox: for the operator.
    context = prompt.get("approval_context")
    more = {"approval_context": context} if isinstance(context, dict) else {}
    payload = prompt_payload(
        source, tool_name, tool_input, cwd, session_id=prompt.get("session_id"), **more
    )
    wire = _wire(conn)
    title = title_of(tool_name, tool_input, cwd)
    asked = wire.call(
        "POST", "/v1/approvals", {"title": title, "payload": payload, "expires_in": timeout}
    )
    approval = _decided(wire, asked, started + timeout)
    if approval is None or approval["status"] == "expired":
        say(f"nobody decided approval {asked['approval_id']} within {timeout} s; {FALLBACK}")
        return None
    if approval["status"] == "approved":
        return allowed(source, approval)
    if approval["status"] == "rejected":
        # Codex's hook fails closed on interrupt (its schema reserves it): a plain deny there.
        stop = bool(approval.get("interrupt")) and source == "claude-code"
        why = approval.get("note") or "rejected by the operator"
        return output("deny", why, interrupt=stop)
    say(f"approval {asked['approval_id']} was {approval['status']}; {FALLBACK}")
    return None


def say(line: str) -> None:
    """The hook's one line on stderr: why it says nothing (the host shows it in its log)."""
    sys.stderr.write(f"relay hook: {line}\n")


def failure(exc: Exception) -> str:
    """What went wrong, in words: the reader of a host's log should not need the source."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return "its input is not JSON"
    if isinstance(exc, KeyError | TypeError | AttributeError):
        return "its input is not a hook event it knows (a field is missing or of another kind)"
    if isinstance(exc, Unreachable):  # it names the URL tried
        return f"{exc} (is relay serve running there?)"
    if isinstance(exc, Refused):
        return f"Relay refused: {exc}"
    return f"it failed: {exc or type(exc).__name__}"


def allowed(source: Source, approval: JsonObject) -> dict[str, Any] | None:
    """The hook's answer to an approval: allowed as asked, or, when the operator changed what
    runs, allowed with the input as they approved it (Claude Code's ``updatedInput``). None
    where the change cannot be given to the host (Codex refuses ``updatedInput``; no tool
    input in it): nothing else than what was approved may run, so the agent asks in its
    terminal."""
    approved_payload = approval.get("approved_payload")
    if not isinstance(approved_payload, dict):
        rule = session_rule(approval) if source == "claude-code" else None
        return output("allow", None, updated_permissions=rule)
    tool_input = approved_payload.get("tool_input")
    if source != "claude-code" or not isinstance(tool_input, dict):
        return None
    return output("allow", None, tool_input)


def session_rule(approval: JsonObject) -> list[dict[str, Any]] | None:
    """For an approval the operator remembered as a policy ("always allow this"), Claude Code's
    session rule allowing its exact command, so that the session stops asking for it: only for
    one plain command, whose rule can mean nothing wider (``NOT_FOR_A_RULE``)."""
    command = command_of(approval.get("payload"))
    tool = (approval.get("payload") or {}).get("tool_name")
    if approval.get("remembered_policy_id") is None or command is None or tool != "Bash":
        return None
    if not command.strip() or NOT_FOR_A_RULE.intersection(command):
        return None
    rule = {"toolName": "Bash", "ruleContent": command.strip()}
    return [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}]


def _wire(conn: Connection) -> Wire:
    """Requests that give up on a server they cannot reach within ``CONNECT_SECONDS``, once:
    the agent's own prompt is the fallback."""
    config = ClientConfig.resolve(conn.url, token=conn.token, agent_id=conn.agent)
    return Wire(config, CONNECT_SECONDS)


def _decided(wire: Wire, approval: JsonObject, deadline: float) -> JsonObject | None:
    """``approval`` once decided, waited for until ``deadline`` (``time.monotonic``) with
    under a second of it to spare for the answer; None if it is still pending then."""
    while approval["status"] == "pending":
        left = deadline - time.monotonic()
        if left < 1:
            return None
        wait = min(int(left - 0.5), 60)
        approval = wire.call("GET", f"/v1/approvals/{approval['approval_id']}", wait=wait)
    return approval


def _answer_questions(
    prompt: dict[str, Any], timeout: int, conn: Connection
) -> dict[str, Any] | None:
    """Claude Code's ``AskUserQuestion`` (at ``PermissionRequest`` in its default mode, at
    ``PreToolUse`` in the others): each of its questions asked of the operator as a Relay
    question (its options, and the operator's own words, as Claude Code's own "Other" allows),
    and, once every one is answered, the tool allowed with its ``questions`` and ``answers``
    (the question's text to the labels chosen, joined by ", "), so that Claude Code asks nobody
    at its terminal; in the event's own shape. Declined: denied, with the operator's note. Not
    all answered in time: None, and the terminal asks."""
    started = time.monotonic()
    at_prompt = prompt.get("hook_event_name") == "PermissionRequest"
    tool_input = prompt.get("tool_input")
    questions = tool_input.get("questions") if isinstance(tool_input, dict) else None
    if not isinstance(tool_input, dict) or not isinstance(questions, list) or not questions:
        return None
    wire = _wire(conn)
    answers: dict[str, str] = {}
    asked = [wire.call("POST", "/v1/approvals", _question(q, prompt, timeout)) for q in questions]
    for question, pending in zip(questions, asked, strict=True):
        approval = _decided(wire, pending, started + timeout)
        if approval is None:
            say(f"nobody answered question {pending['approval_id']} within {timeout} s; {FALLBACK}")
            return None
        if approval["status"] == "rejected":
            why = approval.get("note") or "the operator declined to answer"
            if at_prompt:
                return output("deny", why)
            return _pre_tool_use({"permissionDecision": "deny", "permissionDecisionReason": why})
        if approval["status"] != "answered" or not approval.get("answer"):
            say(f"question {pending['approval_id']} was {approval['status']}; {FALLBACK}")
            return None
        answers[str(question["question"])] = ", ".join(approval["answer"])
    updated = {**tool_input, "answers": answers}
    if at_prompt:
        return output("allow", None, updated_input=updated)
    return _pre_tool_use({"permissionDecision": "allow", "updatedInput": updated})


def _question(question: dict[str, Any], prompt: dict[str, Any], timeout: int) -> JsonObject:
    """One of Claude Code's questions as a Relay question, answered by the operator's labels or
    words."""
    options = [
        {"label": o["label"], **({"description": o["description"]} if o.get("description") else {})}
        for o in question["options"]
    ]
    asked: JsonObject = {
        "kind": "question",
        "title": one_line(str(question["question"])),
        "options": options,
        # Marked as the hook's: it waits for the answer itself (no news to hand over).
        "payload": {"source": "claude-code", "session_id": prompt.get("session_id")},
        "multiple": bool(question.get("multiSelect")),
        "allow_other": True,
        "expires_in": timeout,
    }
    if question.get("header"):
        asked["detail"] = question["header"]
    return asked


def _pre_tool_use(decision: dict[str, Any]) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}


def _checked_edit(
    source: Source, given: dict[str, Any], conn: Connection, reserve: bool
) -> dict[str, Any] | None:
    """A file write another agent reserved: denied, the holder named in the reason the model
    reads; else nothing said (and, with ``reserve``, the file reserved shared)."""
    from relay_cli import edits  # git's and the shell parser's helpers: loaded only for an edit

    if not edits.targets(source, given):
        return None
    why = edits.reserved_edit(_wire(conn), source, given, reserve)
    if why is None:
        return None
    return _pre_tool_use({"permissionDecision": "deny", "permissionDecisionReason": why})


def run(conn: Connection, source: Source, timeout: int, reserve_on_edit: bool = False) -> None:
    """Answer one hook event (a permission prompt, or one that hands over what waits);
    whatever fails, print nothing and exit 0."""
    given: Any = None
    try:
        given = json.loads(sys.stdin.read(MAX_INPUT))
        conn.token = given_token(conn)
        if conn.token is None:
            say(f"{NO_AGENT_TOKEN}; {FALLBACK}")
            _tell_once(given, f"Relay has no agent identity here: {PERSON_FALLBACK}")
            return
        event = given.get("hook_event_name", "PermissionRequest")
        # Claude Code's questions: at PermissionRequest in its default mode, else at PreToolUse.
        asks = source == "claude-code" and given.get("tool_name") == ASK_USER_QUESTION
        if event in HANDED_OVER:
            from relay_cli import handover  # loaded only to hand over

            answer = handover.hand_over(event, given, _wire(conn))
        elif event == "PreToolUse":
            if not asks:
                answer = _checked_edit(source, given, conn, reserve_on_edit)
            elif given.get("permission_mode") != "default":
                answer = _answer_questions(given, timeout, conn)
            else:  # its PermissionRequest follows, and answers it: the question is asked once
                answer = None
        elif asks:
            answer = _answer_questions(given, timeout, conn)
        else:
            answer = _answer(source, given, timeout, conn)
    except Exception as exc:  # the agent's own prompt is the fallback, never an allow
        say(f"nothing to say: {failure(exc)}; {FALLBACK}")
        if (told := _for_a_person(exc, conn)) is not None:
            _tell_once(given, told)
        return
    if answer is not None:
        sys.stdout.write(json.dumps(answer) + "\n")


# What the person at the terminal is told, once a session, when Relay cannot answer for them.
PERSON_FALLBACK = "prompts stay in this terminal; run `relay doctor`"


def _for_a_person(exc: Exception, conn: Connection) -> str | None:
    """The one line the host shows its user for a failure they can fix (Relay out of reach,
    the agent's token refused); None for the rest (stderr has it)."""
    if isinstance(exc, Unreachable):
        url = ClientConfig.resolve(conn.url, anonymous=True).url
        return f"Relay unreachable at {url}: {PERSON_FALLBACK}"
    refused = isinstance(exc, Refused) and exc.status in (401, 403)
    return f"Relay refused this agent's token: {PERSON_FALLBACK}" if refused else None


def _tell_once(given: Any, line: str) -> None:
    """``line`` as the hook's ``systemMessage`` (which both hosts show their user), the first
    time in a session; then quiet (a marker in the user's state directory)."""
    from platformdirs import user_state_dir

    from relay_client.kept_files import file_name

    session = given.get("session_id") if isinstance(given, dict) else None
    told = (
        Path(user_state_dir("relay", appauthor=False))
        / "told"
        / file_name(session if isinstance(session, str) and session else "unnamed")
    )
    if told.exists():
        return
    told.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    told.touch()
    sys.stdout.write(json.dumps({"systemMessage": line}) + "\n")
