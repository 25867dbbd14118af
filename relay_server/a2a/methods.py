"""The JSON-RPC methods of an agent reachable over A2A, each on Relay's A2A service."""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pydantic
from aiohttp import web

from relay_api.errors import Conflict, InvalidInput, NotFound
from relay_core import paging
from relay_core.auth import Caller
from relay_core.services import Services
from relay_core.services.a2a import A2AConversation, A2APushConfig
from relay_core.services.tasks import FINISHED
from relay_core.storage.a2a_tasks import A2ATaskFilter
from relay_server.a2a import a2a_pb2 as pb
from relay_server.a2a import protocol as p
from relay_server.a2a.errors import A2AError
from relay_server.app_keys import KEEPALIVES
from relay_server.connections import while_connected
from relay_server.sse import stream_events


class Call:
    """One JSON-RPC request of a caller to an agent."""

    def __init__(
        self,
        request: web.Request,
        services: Services,
        caller: Caller,
        agent_id: str,
        request_id: str | int,
    ) -> None:
        self.request = request
        self.services = services
        self.a2a = services.a2a
        self.caller = caller
        self.agent_id = agent_id
        self.request_id = request_id

    async def run(self, method: str, params: Any) -> web.StreamResponse:
        answered: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "SendMessage": self.send_message,
            "GetTask": self.get_task,
            "ListTasks": self.list_tasks,
            "CancelTask": self.cancel_task,
            "CreateTaskPushNotificationConfig": self.create_push_config,
            "GetTaskPushNotificationConfig": self.get_push_config,
            "ListTaskPushNotificationConfigs": self.list_push_configs,
            "DeleteTaskPushNotificationConfig": self.delete_push_config,
        }
        streamed: dict[str, Callable[[Any], Awaitable[AsyncIterator[pb.StreamResponse]]]] = {
            "SendStreamingMessage": self.send_streaming_message,
            "SubscribeToTask": self.subscribe_to_task,
        }
        if method in answered:
            result = await answered[method](params)
            return web.json_response(self._answer(result))
        if method in streamed:
            return await self._stream(streamed[method], params)
        if method == "GetExtendedAgentCard":
            raise p.unsupported("this agent has no extended card")
        raise p.method_not_found(method)

    def _answer(self, result: Any) -> dict[str, Any]:
        return {"jsonrpc": p.JSONRPC_VERSION, "id": self.request_id, "result": result}

    async def _stream(
        self,
        method: Callable[[Any], Awaitable[AsyncIterator[pb.StreamResponse]]],
        params: Any,
    ) -> web.StreamResponse:
        """The method's answers as Server-Sent Events; an error before the first one is the
        stream's one frame, as the binding says."""

        async def answers() -> AsyncIterator[dict[str, Any]]:
            try:
                async for found in await method(params):
                    yield self._answer(p.as_json(found))
            except A2AError as error:
                yield p.error_body(error, self.request_id)

        watch = functools.partial(self.services.access.until_revoked, self.caller)
        return await stream_events(
            self.request, answers(), watch, self.request.app[KEEPALIVES], _frame
        )

    async def _conversation(self, task_id: str) -> A2AConversation:
        try:
            return await self.a2a.conversation(self.caller, self.agent_id, p.task_number(task_id))
        except NotFound:
            raise p.task_not_found(task_id) from None

    async def _sent(self, params: Any) -> tuple[pb.SendMessageRequest, A2AConversation]:
        request = p.parse(params, pb.SendMessageRequest)
        message = p.asked(request.message)
        push = None
        if request.configuration.HasField("task_push_notification_config"):
            push = _push_config(request.configuration.task_push_notification_config)
        try:
            shown = await self.a2a.send(self.caller, self.agent_id, message, push)
        except NotFound:
            raise p.task_not_found(request.message.task_id) from None
        except InvalidInput as exc:
            raise p.invalid_params(f"url: {exc.detail}") from None
        except Conflict as exc:
            raise p.unsupported(exc.detail) from None
        except pydantic.ValidationError as exc:
            raise p.invalid_params(_first_error(exc)) from None
        return request, shown

    async def send_message(self, params: Any) -> dict[str, Any]:
        request, shown = await self._sent(params)
        if not request.configuration.return_immediately and not shown.settled:
            waited = self.a2a.settled(self.caller, self.agent_id, shown.task.task_id)
            shown = await while_connected(
                self.request, self.services.access.until_revoked(self.caller, waited)
            )
        history_length = _history_length(request.configuration)
        return {"task": p.as_json(p.a2a_task(shown, history_length))}

    async def send_streaming_message(self, params: Any) -> AsyncIterator[pb.StreamResponse]:
        _, shown = await self._sent(params)
        return self._follow(shown)

    async def subscribe_to_task(self, params: Any) -> AsyncIterator[pb.StreamResponse]:
        request = p.parse(params, pb.SubscribeToTaskRequest)
        shown = await self._conversation(request.id)
        if shown.task.status in FINISHED:
            raise p.unsupported(f"task {request.id} is {shown.task.status}")
        return self._follow(shown)

    async def _follow(self, shown: A2AConversation) -> AsyncIterator[pb.StreamResponse]:
        """The task as it is, then each change of its status, until it is finished."""
        yield pb.StreamResponse(task=p.a2a_task(shown))
        last = _state(shown)
        if shown.task.status in FINISHED:
            return
        async for changed in self.a2a.changes(self.caller, self.agent_id, shown.task.task_id):
            if _state(changed) == last:
                continue
            last = _state(changed)
            artifact = p.artifact_update(changed)
            if artifact is not None:
                yield artifact
            yield p.status_update(changed)

    async def get_task(self, params: Any) -> dict[str, Any]:
        request = p.parse(params, pb.GetTaskRequest)
        shown = await self._conversation(request.id)
        return p.as_json(p.a2a_task(shown, _history_length(request)))

    async def list_tasks(self, params: Any) -> dict[str, Any]:
        request = p.parse(params, pb.ListTasksRequest)
        size = request.page_size if request.HasField("page_size") else p.DEFAULT_PAGE_SIZE
        if not 1 <= size <= p.MAX_PAGE_SIZE:
            raise p.invalid_params(f"pageSize must be from 1 to {p.MAX_PAGE_SIZE}")
        statuses, asking = None, None
        if request.status != pb.TASK_STATE_UNSPECIFIED:
            if request.status not in p.SHOWN_AS:
                return {"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}
            statuses, asking = p.SHOWN_AS[request.status]
        before = None
        if request.page_token:
            try:
                before = paging.decode(request.page_token, (datetime, int))
            except InvalidInput:
                raise p.invalid_params("pageToken is not one this list gave") from None
        among = A2ATaskFilter(
            self.agent_id,
            context_id=request.context_id or None,
            statuses=statuses,
            asking=asking,
            changed_since=p.changed_since(request),
        )
        found, total = await self.a2a.tasks(self.caller, among, before, size + 1)
        page = found[:size]
        history_length = _history_length(request, listed=True)
        with_artifacts = request.include_artifacts
        tasks = [p.as_json(p.a2a_task(shown, history_length, with_artifacts)) for shown in page]
        next_token = ""
        if len(found) > size:
            last = page[-1].task
            next_token = paging.encode([last.updated_at, last.task_id])
        return {
            "tasks": tasks,
            "nextPageToken": next_token,
            "pageSize": len(page),
            "totalSize": total,
        }

    async def cancel_task(self, params: Any) -> dict[str, Any]:
        request = p.parse(params, pb.CancelTaskRequest)
        task_id = p.task_number(request.id)
        try:
            shown = await self.a2a.cancel(self.caller, self.agent_id, task_id)
        except NotFound:
            raise p.task_not_found(request.id) from None
        except Conflict as exc:
            raise p.not_cancelable(exc.detail) from None
        return p.as_json(p.a2a_task(shown))

    async def create_push_config(self, params: Any) -> dict[str, Any]:
        given = p.parse(params, pb.TaskPushNotificationConfig)
        task_id, config = p.task_number(given.task_id), _push_config(given)
        try:
            await self.a2a.push_to(self.caller, self.agent_id, task_id, config)
        except NotFound:
            raise p.task_not_found(given.task_id) from None
        except InvalidInput as exc:
            raise p.invalid_params(f"url: {exc.detail}") from None
        except Conflict as exc:
            raise p.invalid_params(exc.detail) from None
        made = pb.TaskPushNotificationConfig()
        made.CopyFrom(given)
        made.id = config.config_id
        return p.as_json(made)

    async def _configs(self, task_id: str) -> list[A2APushConfig]:
        try:
            return await self.a2a.pushes(self.caller, self.agent_id, p.task_number(task_id))
        except NotFound:
            raise p.task_not_found(task_id) from None

    async def get_push_config(self, params: Any) -> dict[str, Any]:
        request = p.parse(params, pb.GetTaskPushNotificationConfigRequest)
        for config in await self._configs(request.task_id):
            if config.config_id == request.id:
                return p.as_json(p.push_config(request.task_id, config))
        raise p.task_not_found(f"{request.task_id} (push config {request.id})")

    async def list_push_configs(self, params: Any) -> dict[str, Any]:
        request = p.parse(params, pb.ListTaskPushNotificationConfigsRequest)
        configs = [
            p.as_json(p.push_config(request.task_id, config))
            for config in await self._configs(request.task_id)
        ]
        return {"configs": configs, "nextPageToken": ""}  # a task has ten at most: one page

    async def delete_push_config(self, params: Any) -> dict[str, Any]:
        request = p.parse(params, pb.DeleteTaskPushNotificationConfigRequest)
        task_id = p.task_number(request.task_id)
        try:
            await self.a2a.stop_pushing(self.caller, self.agent_id, task_id, request.id)
        except NotFound:
            raise p.task_not_found(f"{request.task_id} (push config {request.id})") from None
        return {}


def _push_config(given: pb.TaskPushNotificationConfig) -> A2APushConfig:
    """A push config as the caller gave it (an id made if it gave none)."""
    if urlsplit(given.url).scheme not in ("http", "https"):
        raise p.invalid_params("url must be an http or https URL")
    return A2APushConfig(
        config_id=given.id or str(uuid.uuid4()),
        url=given.url,
        token=given.token or None,
        scheme=given.authentication.scheme or None,
        credentials=given.authentication.credentials or None,
    )


def _state(shown: A2AConversation) -> tuple[str, int | None, int | None]:
    question, waiting = shown.question, shown.waiting
    return (
        shown.task.status,
        None if question is None else question.event_id,
        None if waiting is None else waiting.approval_id,
    )


def _history_length(
    asked: pb.SendMessageConfiguration | pb.GetTaskRequest | pb.ListTasksRequest,
    listed: bool = False,
) -> int | None:
    """How many messages of a task's history to show: as asked, else all that were read (a
    listing: none)."""
    if asked.HasField("history_length"):
        return asked.history_length
    return 0 if listed else None


def _first_error(exc: pydantic.ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"


def _frame(answer: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(answer, separators=(',', ':'))}\n\n".encode()
