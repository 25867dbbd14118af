"""A2A 1.0's JSON-RPC binding for the agents reachable over it: what a request asks, in the
protocol's own types (generated from the specification's proto: ``a2a.proto`` beside this),
and Relay's tasks as the protocol shows them.

Relay's task states map onto A2A's: ``open`` is submitted, ``claimed`` and ``in_progress``
working, then completed, failed and canceled; a task whose agent asked a question the asker
has not answered, or that waits on the operator's approval, is input-required, with that
question (or the approval) as its status message. A completed task's result is its one
artifact.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message as ProtoMessage

import relay_api
from relay_api import models as m
from relay_core.services.a2a import ASKED, A2AConversation, A2AMessage, A2APushConfig
from relay_server.a2a import a2a_pb2 as pb
from relay_server.a2a import errors
from relay_server.a2a.errors import A2AError

P = TypeVar("P", bound=ProtoMessage)

VERSION = "1.0"
BINDING = "JSONRPC"
JSONRPC_VERSION = "2.0"
MEDIA_TYPES = ["text/plain", "application/json"]
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100

STATES: dict[m.TaskStatus, pb.TaskState] = {
    "open": pb.TASK_STATE_SUBMITTED,
    "claimed": pb.TASK_STATE_WORKING,
    "in_progress": pb.TASK_STATE_WORKING,
    "completed": pb.TASK_STATE_COMPLETED,
    "failed": pb.TASK_STATE_FAILED,
    "cancelled": pb.TASK_STATE_CANCELED,
}
# The tasks a listing of one A2A state shows: of these Relay statuses, asking their asker a
# question or not (None: either).
SHOWN_AS: dict[pb.TaskState, tuple[list[m.TaskStatus], bool | None]] = {
    pb.TASK_STATE_SUBMITTED: (["open"], False),
    pb.TASK_STATE_WORKING: (["claimed", "in_progress"], False),
    pb.TASK_STATE_INPUT_REQUIRED: (["open", "claimed", "in_progress"], True),
    pb.TASK_STATE_COMPLETED: (["completed"], None),
    pb.TASK_STATE_FAILED: (["failed"], None),
    pb.TASK_STATE_CANCELED: (["cancelled"], None),
}


def error_body(error: A2AError, request_id: Any) -> dict[str, Any]:
    """The binding's answer to ``error``: its code and message, and the reason the
    specification names it by in a ``google.rpc.ErrorInfo`` (§9.5)."""
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": error.reason,
        "domain": "a2a-protocol.org",
    }
    error_json = {"code": error.code, "message": error.message, "data": [info]}
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "error": error_json}


def parse_error(why: str) -> A2AError:
    return errors.ParseError(f"Invalid JSON payload: {why}")


def invalid_request(why: str) -> A2AError:
    return errors.InvalidRequestError(f"Request payload validation error: {why}")


def method_not_found(method: str) -> A2AError:
    return errors.MethodNotFoundError(f"Method not found: {method}")


def invalid_params(why: str) -> A2AError:
    return errors.InvalidParamsError(f"Invalid parameters: {why}")


def task_not_found(task_id: str) -> A2AError:
    return errors.TaskNotFoundError(f"Task not found: {task_id}")


def not_cancelable(why: str) -> A2AError:
    return errors.TaskNotCancelableError(f"Task cannot be canceled: {why}")


def unsupported(why: str) -> A2AError:
    return errors.UnsupportedOperationError(f"This operation is not supported: {why}")


def version_not_supported(asked: str) -> A2AError:
    return errors.VersionNotSupportedError(
        f"A2A version {asked or '0.3 (no A2A-Version header)'} is not supported; send "
        f"A2A-Version: {VERSION}"
    )


def parse(params: Any, message: type[P]) -> P:
    """The request's params as the method's request type; InvalidParams if they are not."""
    if not isinstance(params, dict):
        raise invalid_params("params must be an object")
    try:
        return json_format.ParseDict(params, message())
    except json_format.ParseError as exc:
        raise invalid_params(str(exc)) from None


def task_number(task_id: str) -> int:
    """Relay's id of the task an A2A id names; TaskNotFound if it names none."""
    if not task_id.isascii() or not task_id.isdigit() or len(task_id) > 18:
        raise task_not_found(task_id)
    return int(task_id)


def asked(message: pb.Message) -> A2AMessage:
    """What a sent message asks, as Relay keeps it."""
    if not message.message_id:
        raise invalid_params("message.messageId is required")
    if not message.parts:
        raise invalid_params("message.parts must hold at least one part")
    texts = [part.text for part in message.parts if part.WhichOneof("content") == "text"]
    return A2AMessage(
        text="\n".join(texts),
        parts=[json_format.MessageToDict(part) for part in message.parts],
        message_id=message.message_id,
        context_id=message.context_id or None,
        task_id=task_number(message.task_id) if message.task_id else None,
    )


def _text_message(message_id: str, role: pb.Role, text: str, task: A2AConversation) -> pb.Message:
    return pb.Message(
        message_id=message_id,
        context_id=task.task.context_id,
        task_id=str(task.task.task_id),
        role=role,
        parts=[pb.Part(text=text)],
    )


def _parts(given: Any, text: str | None) -> list[pb.Part]:
    """A note's parts: those the asker sent, else its text."""
    parts = []
    for part in given if isinstance(given, list) else []:
        try:
            parts.append(json_format.ParseDict(part, pb.Part()))
        except json_format.ParseError:
            continue
    return parts or [pb.Part(text=text or "")]


def history(shown: A2AConversation) -> list[pb.Message]:
    """The conversation: the message that asked the task, then its latest notes."""
    task = shown.task
    a2a = task.payload.get("a2a", {})
    first = pb.Message(
        message_id=task.message_id,
        context_id=task.context_id,
        task_id=str(task.task_id),
        role=pb.ROLE_USER,
        parts=_parts(a2a.get("parts") if isinstance(a2a, dict) else None, task.title),
    )
    messages = [first]
    for note in shown.turns:
        if note.kind == ASKED:
            message_id = str(note.data.get("message_id") or f"relay-note-{note.event_id}")
            messages.append(
                pb.Message(
                    message_id=message_id,
                    context_id=task.context_id,
                    task_id=str(task.task_id),
                    role=pb.ROLE_USER,
                    parts=_parts(note.data.get("parts"), note.message),
                )
            )
        else:
            messages.append(_question(shown, note))
    return messages


def _question(shown: A2AConversation, note: m.TaskEvent) -> pb.Message:
    message = _text_message(f"relay-note-{note.event_id}", pb.ROLE_AGENT, note.message or "", shown)
    if note.data:
        data = struct_pb2.Value()
        data.struct_value.update(note.data)
        message.parts.append(pb.Part(data=data))
    return message


def _waiting(shown: A2AConversation, approval: m.Approval) -> pb.Message:
    """The task waits on the operator's approval: which one, in words and as data."""
    text = f"Waiting for the operator's approval {approval.approval_id}: {approval.title}"
    message = _text_message(f"relay-approval-{approval.approval_id}", pb.ROLE_AGENT, text, shown)
    data = struct_pb2.Value()
    data.struct_value.update({"approval_id": approval.approval_id, "title": approval.title})
    message.parts.append(pb.Part(data=data))
    return message


def status(shown: A2AConversation) -> pb.TaskStatus:
    task = shown.task
    found = pb.TaskStatus(state=STATES[task.status])
    found.timestamp.FromDatetime(task.updated_at)
    question, waiting = shown.question, shown.waiting
    if question is not None:
        found.state = pb.TASK_STATE_INPUT_REQUIRED
        found.message.CopyFrom(_question(shown, question))
    elif waiting is not None:
        found.state = pb.TASK_STATE_INPUT_REQUIRED
        found.message.CopyFrom(_waiting(shown, waiting))
    elif task.status in ("failed", "cancelled") and task.error:
        message_id = f"relay-task-{task.task_id}-{task.status}"
        found.message.CopyFrom(_text_message(message_id, pb.ROLE_AGENT, task.error, shown))
    return found


def artifacts(shown: A2AConversation) -> list[pb.Artifact]:
    """A completed task's result, as its one artifact."""
    task = shown.task
    if task.status != "completed" or task.result is None:
        return []
    data = struct_pb2.Value()
    data.struct_value.update(task.result)
    return [
        pb.Artifact(
            artifact_id=f"relay-task-{task.task_id}-result",
            name="result",
            parts=[pb.Part(data=data)],
        )
    ]


def a2a_task(
    shown: A2AConversation, history_length: int | None = None, with_artifacts: bool = True
) -> pb.Task:
    """The task as A2A shows it, with at most ``history_length`` messages of its history
    (None: all that were read) and its artifacts unless left out."""
    task = shown.task
    relay = {
        "task_id": task.task_id,
        "status": task.status,
        "assignee": task.assignee,
        "claimed_by": task.claimed_by,
        "created_by": task.created_by,
    }
    found = pb.Task(id=str(task.task_id), context_id=task.context_id, status=status(shown))
    found.metadata.update({"relay": relay})
    if with_artifacts:
        found.artifacts.extend(artifacts(shown))
    if history_length is None or history_length > 0:
        messages = history(shown)
        if history_length is not None:
            messages = messages[-history_length:]
        found.history.extend(messages)
    return found


def status_update(shown: A2AConversation) -> pb.StreamResponse:
    """A change of the task's status, as a stream tells it."""
    update = pb.TaskStatusUpdateEvent(
        task_id=str(shown.task.task_id), context_id=shown.task.context_id, status=status(shown)
    )
    return pb.StreamResponse(status_update=update)


def artifact_update(shown: A2AConversation) -> pb.StreamResponse | None:
    """A completed task's result, as a stream tells it (None: no result)."""
    found = artifacts(shown)
    if not found:
        return None
    update = pb.TaskArtifactUpdateEvent(
        task_id=str(shown.task.task_id),
        context_id=shown.task.context_id,
        artifact=found[0],
        last_chunk=True,
    )
    return pb.StreamResponse(artifact_update=update)


def as_json(message: Any) -> dict[str, Any]:
    """A protocol message as its JSON (the proto's JSON names, as the binding sends them)."""
    found: dict[str, Any] = json_format.MessageToDict(message)
    return found


def changed_since(request: pb.ListTasksRequest) -> datetime | None:
    if not request.HasField("status_timestamp_after"):
        return None
    changed: datetime = request.status_timestamp_after.ToDatetime(tzinfo=UTC)
    return changed


def agent_card(agent: m.Agent, base: str) -> pb.AgentCard:
    """The card of an agent reachable over A2A, its endpoint under ``base`` (Relay's origin)."""
    assert agent.a2a is not None
    name = agent.name or agent.agent_id
    card = _card(
        name,
        agent.a2a.description or f"{name}, an agent on Relay",
        f"{base}/a2a/agents/{agent.agent_id}",
        base,
    )
    if not agent.a2a.skills:  # a card lists one at least (the specification requires it)
        card.skills.append(
            pb.AgentSkill(
                id=agent.agent_id, name=name, description=card.description, tags=["relay-agent"]
            )
        )
    for skill in agent.a2a.skills:
        card.skills.append(
            pb.AgentSkill(
                id=skill.id,
                name=skill.name,
                description=skill.description,
                tags=skill.tags or [skill.id],
                examples=skill.examples,
            )
        )
    return card


def relay_card(agents: list[m.Agent], base: str) -> pb.AgentCard:
    """Relay's own card: its directory, a skill for each agent reachable over A2A, and where
    its card is (the ``urn:relay:a2a:directory`` extension's ``agents``)."""
    card = _card(
        "Relay",
        "A coordination service for software agents and their operator. Relay routes no "
        "messages itself: each agent listed here is an A2A server of its own, at its card.",
        f"{base}/a2a/agents",
        base,
    )
    listed = []
    # A card lists one skill at least: Relay's own is finding the agents it lists.
    card.skills.append(
        pb.AgentSkill(
            id="relay-directory",
            name="Directory",
            description="The agents reachable over A2A on this Relay, and where their cards are.",
            tags=["directory"],
        )
    )
    for agent in agents:
        assert agent.a2a is not None
        name = agent.name or agent.agent_id
        url = f"{base}/a2a/agents/{agent.agent_id}/.well-known/agent-card.json"
        listed.append({"agent_id": agent.agent_id, "name": name, "card": url})
        card.skills.append(
            pb.AgentSkill(
                id=agent.agent_id,
                name=name,
                description=f"{agent.a2a.description or name}. Its card: {url}",
                tags=["relay-agent"],
            )
        )
    directory = pb.AgentExtension(
        uri=DIRECTORY_EXTENSION, description="Where each agent's card is."
    )
    directory.params.update({"agents": listed})
    card.capabilities.extensions.append(directory)
    return card


DIRECTORY_EXTENSION = "urn:relay:a2a:directory"


def _card(name: str, description: str, url: str, base: str) -> pb.AgentCard:
    bearer = pb.HTTPAuthSecurityScheme(
        scheme="Bearer", description="A Relay agent's token, or the operator's."
    )
    return pb.AgentCard(
        name=name,
        description=description,
        supported_interfaces=[
            pb.AgentInterface(url=url, protocol_binding=BINDING, protocol_version=VERSION)
        ],
        provider=pb.AgentProvider(organization="Relay", url=base),
        version=relay_api.__version__,
        documentation_url=f"{base}/docs",
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True),
        security_schemes={"bearer": pb.SecurityScheme(http_auth_security_scheme=bearer)},
        security_requirements=[pb.SecurityRequirement(schemes={"bearer": pb.StringList()})],
        default_input_modes=MEDIA_TYPES,
        default_output_modes=MEDIA_TYPES,
    )


def push_config(task_id: str, config: A2APushConfig) -> pb.TaskPushNotificationConfig:
    """A push config as its caller sees it again: its token and credentials are not shown."""
    shown = pb.TaskPushNotificationConfig(id=config.config_id, task_id=task_id, url=config.url)
    if config.scheme:
        shown.authentication.scheme = config.scheme
    return shown
