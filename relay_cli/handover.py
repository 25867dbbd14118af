"""What ``relay hook`` hands a coding agent's session at its ``Stop``, ``SessionStart`` and
``UserPromptSubmit`` events: the messages, assigned tasks and decisions waiting for the agent
that this session was not handed yet.

At ``Stop`` the hook blocks the stop with them as the reason, so the session goes on with its
mail; it lets the session stop when nothing new waits, when the host says a Stop hook already
made it go on (``stop_hook_active``), and after ``MAX_BLOCKS`` blocks in one session. At the
other two events they are added to the model's context. What a session was handed is kept per
session in the user's state directory, so that nothing is handed twice and nothing nags; a
decision is handed once per agent, to the first of its sessions that comes by.

It asks Relay with the hook's own requests (``relay_cli.hook_http``), not the SDK: it runs at
every prompt and stop, and the SDK's client and models would be most of its time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from platformdirs import user_state_dir

from relay_cli.hook_http import Wire, segment
from relay_client.coding_agents import (
    FRAMING,
    News,
    approval_news,
    message_news,
    task_news,
)
from relay_client.kept_files import Cursor, file_name, server_folder, write_json

MAX_BLOCKS = 5  # Stop blocks in one session; past them it always may stop
MAX_ITEMS = 20  # of each kind handed at once; the rest comes at the next event
KEPT_IDS = 1000  # of the ids a session was handed, the newest


class Handed:
    """What one session was handed, and how often its stop was blocked."""

    def __init__(
        self, messages: list[int] | None = None, tasks: list[int] | None = None, blocks: int = 0
    ) -> None:
        self.messages = messages or []
        self.tasks = tasks or []
        self.blocks = blocks


def state_path(url: str, agent_id: str, session_id: str) -> Path:
    """``~/.local/state/relay/sessions/<host>-<port>/<agent_id>/<session_id>.json``."""
    root = Path(user_state_dir("relay", appauthor=False))
    session = file_name(session_id) or "unnamed"
    return root / "sessions" / server_folder(url) / file_name(agent_id) / f"{session}.json"


def load(path: Path) -> Handed:
    try:
        kept = json.loads(path.read_text())
        return Handed(
            messages=[int(v) for v in kept["messages"]],
            tasks=[int(v) for v in kept["tasks"]],
            blocks=int(kept["blocks"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return Handed()


def keep(path: Path, handed: Handed) -> None:
    newest = {"messages": handed.messages[-KEPT_IDS:], "tasks": handed.tasks[-KEPT_IDS:]}
    write_json(path, vars(handed) | newest)


def waiting(wire: Wire, agent_id: str, handed: Handed, decided: Cursor) -> list[News]:
    """What waits for the agent that ``handed`` does not hold, noted in it: unacknowledged
    messages (read from the inbox: a delivery), open tasks assigned to it, and the decisions
    on its approvals since ``decided`` (the agent's, across sessions; moved on)."""
    news: list[News] = []
    inbox = wire.call("GET", f"/v1/agents/{segment(agent_id)}/inbox", query={"limit": MAX_ITEMS})
    for message in inbox["messages"]:
        if message["message_id"] not in handed.messages:
            news.append(message_news(message))
            handed.messages.append(message["message_id"])
    assigned = {"status": "open", "assignee": agent_id, "limit": MAX_ITEMS}
    for task in wire.call("GET", "/v1/tasks", query=assigned)["tasks"]:
        if task["task_id"] not in handed.tasks:
            news.append(task_news(task))
            handed.tasks.append(task["task_id"])
    after = decided.load()
    if after is None:  # the agent's first hand-over: decisions from now on
        decided.keep(wire.call("GET", "/v1/events", query={"limit": 1})["cursor"])
        return news
    feed = wire.call("GET", "/v1/events", query={"after": after, "limit": 1000})
    for event in feed["events"]:
        if event["kind"] != "approval.decided" or event.get("audience") != agent_id:
            continue
        told = approval_news(wire.call("GET", f"/v1/approvals/{int(event['subject_id'])}"))
        if told is not None:
            news.append(told)
    decided.keep(feed["cursor"])
    return news


def summary(news: list[News]) -> str:
    """The text the session reads: each item, then how to answer."""
    count = f"{len(news)} new item{'' if len(news) == 1 else 's'}"
    items = "\n\n".join(content for content, _ in news)
    return (
        f"Relay has {count} for you (coordination with other agents and the operator). "
        f"{FRAMING}\n\n{items}\n\nAnswer with Relay's tools (send_message, post_to_room, "
        "claim_task) or its CLI (relay messages send, relay tasks claim); acknowledge each "
        "message once handled (ack_messages, or relay messages ack <id>)."
    )


def hand_over(event: str, given: dict[str, Any], wire: Wire) -> dict[str, Any] | None:
    """The hook's answer to ``event`` (``Stop``, ``SessionStart`` or ``UserPromptSubmit``)
    with input ``given``, or None to print nothing."""
    if event == "Stop" and given.get("stop_hook_active") is True:
        return None
    session = given["session_id"] if isinstance(given.get("session_id"), str) else ""
    agent_id = wire.config.agent_id or str(wire.call("GET", "/v1/agents/me")["agent_id"])
    path = state_path(wire.config.url, agent_id, session)
    handed = load(path)
    if event == "Stop" and handed.blocks >= MAX_BLOCKS:
        return None
    news = waiting(wire, agent_id, handed, Cursor(path.parent / "decisions.cursor"))
    if news and event == "Stop":
        handed.blocks += 1
    keep(path, handed)
    if not news:
        return None
    if event == "Stop":
        return {"decision": "block", "reason": summary(news)}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": summary(news)}}
