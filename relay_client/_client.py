"""``RelayClient`` and ``AsyncRelayClient``: twins written side by side, resource by resource."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from relay_api import operations as ops
from relay_api.models import Health, Status
from relay_api.operations import Operation
from relay_client._base import (
    ClientConfig,
    Outcome,
    decode,
    idempotency_headers,
    path_of,
    resumed,
    retries,
)
from relay_client.resources._generated import (
    Actions,
    Agents,
    Approvals,
    AsyncActions,
    AsyncAgents,
    AsyncApprovals,
    AsyncEnroll,
    AsyncInterventions,
    AsyncMessages,
    AsyncNotify,
    AsyncPolicies,
    AsyncRooms,
    AsyncSpaces,
    AsyncTasks,
    Enroll,
    Interventions,
    Messages,
    Notify,
    Policies,
    Rooms,
    Spaces,
    Tasks,
)
from relay_client.resources.events import AsyncEvents, Events

M = TypeVar("M", bound=BaseModel)


class RelayClient:
    """Synchronous client: ``with RelayClient() as relay: relay.approvals.approve(12)``."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        agent_id: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        transport: httpx.BaseTransport | None = None,
        anonymous: bool = False,
    ) -> None:
        self.config = ClientConfig.resolve(url, token, agent_id, timeout, max_retries, anonymous)
        self._sleep: Callable[[float], None] = time.sleep
        self._http = httpx.Client(
            base_url=self.config.url,
            headers=self.config.headers(),
            timeout=self.config.timeout,
            transport=transport,
        )
        self.agents = Agents(self)
        self.messages = Messages(self)
        self.notify = Notify(self)
        self.rooms = Rooms(self)
        self.spaces = Spaces(self)
        self.tasks = Tasks(self)
        self.actions = Actions(self)
        self.enroll = Enroll(self)
        self.approvals = Approvals(self)
        self.policies = Policies(self)
        self.interventions = Interventions(self)
        self.events = Events(self)

    def call(
        self,
        op: Operation[M],
        path: dict[str, str | int] | None = None,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> M:
        """Send the operation's request: its path filled from ``path``, retry-safe as the operation
        is (a create carries an ``Idempotency-Key``), its answer decoded as its response model."""
        return self.request(
            op.method,
            path_of(op, path),
            op.response,
            json=json,
            params=params,
            timeout=timeout,
            idempotent=op.creates,
        )

    def request(
        self,
        method: str,
        path: str,
        cast: type[M],
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        idempotent: bool = False,
    ) -> M:
        """Send one request, retrying what is safe to retry, and decode the answer. A creating
        request (``idempotent``) carries one ``Idempotency-Key`` through all its attempts, so
        even a lost answer can be retried without creating twice."""
        policy = retries(self.config, method, idempotent)
        sending = self._http.build_request(
            method,
            path,
            json=json,
            params=params,
            headers=idempotency_headers(idempotent),
            timeout=timeout if timeout is not None else self.config.timeout,
        )
        step: float | httpx.Response = next(policy)
        while not isinstance(step, httpx.Response):
            if step:
                self._sleep(step)
            step = resumed(policy, self._attempt(sending))
        return decode(step, cast)

    def _attempt(self, request: httpx.Request) -> Outcome:
        """One try: its response, or the transport's error (for the retry policy)."""
        try:
            return self._http.send(request)
        except httpx.TransportError as exc:
            return exc

    def health(self) -> Health:
        """Alive, and which version."""
        return self.call(ops.HEALTH)

    def status(self) -> Status:
        """Version, uptime, backends and counts."""
        return self.call(ops.STATUS)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> RelayClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncRelayClient:
    """Asynchronous client: ``async with AsyncRelayClient() as relay: await relay.tasks.list()``."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        agent_id: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        anonymous: bool = False,
    ) -> None:
        self.config = ClientConfig.resolve(url, token, agent_id, timeout, max_retries, anonymous)
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self._http = httpx.AsyncClient(
            base_url=self.config.url,
            headers=self.config.headers(),
            timeout=self.config.timeout,
            transport=transport,
        )
        self.agents = AsyncAgents(self)
        self.messages = AsyncMessages(self)
        self.notify = AsyncNotify(self)
        self.rooms = AsyncRooms(self)
        self.spaces = AsyncSpaces(self)
        self.tasks = AsyncTasks(self)
        self.actions = AsyncActions(self)
        self.enroll = AsyncEnroll(self)
        self.approvals = AsyncApprovals(self)
        self.policies = AsyncPolicies(self)
        self.interventions = AsyncInterventions(self)
        self.events = AsyncEvents(self)

    async def call(
        self,
        op: Operation[M],
        path: dict[str, str | int] | None = None,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> M:
        """Send the operation's request: its path filled from ``path``, retry-safe as the operation
        is (a create carries an ``Idempotency-Key``), its answer decoded as its response model."""
        return await self.request(
            op.method,
            path_of(op, path),
            op.response,
            json=json,
            params=params,
            timeout=timeout,
            idempotent=op.creates,
        )

    async def request(
        self,
        method: str,
        path: str,
        cast: type[M],
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        idempotent: bool = False,
    ) -> M:
        """Send one request, retrying what is safe to retry, and decode the answer. A creating
        request (``idempotent``) carries one ``Idempotency-Key`` through all its attempts, so
        even a lost answer can be retried without creating twice."""
        policy = retries(self.config, method, idempotent)
        sending = self._http.build_request(
            method,
            path,
            json=json,
            params=params,
            headers=idempotency_headers(idempotent),
            timeout=timeout if timeout is not None else self.config.timeout,
        )
        step: float | httpx.Response = next(policy)
        while not isinstance(step, httpx.Response):
            if step:
                await self._sleep(step)
            step = resumed(policy, await self._attempt(sending))
        return decode(step, cast)

    async def _attempt(self, request: httpx.Request) -> Outcome:
        """One try: its response, or the transport's error (for the retry policy)."""
        try:
            return await self._http.send(request)
        except httpx.TransportError as exc:
            return exc

    async def health(self) -> Health:
        """Alive, and which version."""
        return await self.call(ops.HEALTH)

    async def status(self) -> Status:
        """Version, uptime, backends and counts."""
        return await self.call(ops.STATUS)

    async def close(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRelayClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
