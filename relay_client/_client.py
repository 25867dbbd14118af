"""``RelayClient`` and ``AsyncRelayClient``: the resources and their methods are written once
(``_Resources``); each client adds how it sends a request, blocking or awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Generic, TypedDict, TypeVar, Unpack

import httpx
from pydantic import BaseModel

from relay_client._base import Outcome, decode, prepared, resumed
from relay_client._flow import C, Send
from relay_client.config import ClientConfig
from relay_client.resources._generated import (
    A2A,
    Actions,
    Agents,
    Enroll,
    Interventions,
    Messages,
    Notify,
    Policies,
    Reservations,
    Rooms,
    Root,
    Spaces,
    Tasks,
    Webhooks,
)
from relay_client.resources.approvals import Approvals
from relay_client.resources.events import Events

M = TypeVar("M", bound=BaseModel)
Transport = TypeVar("Transport")


class ClientOptions(TypedDict, Generic[Transport], total=False):
    """Who the client is and how patient: each option left out is read from ``RELAY_TOKEN``,
    ``RELAY_AGENT_ID``, the config file or the defaults (``ClientConfig.resolve``). An
    ``anonymous`` client (one that enrolls) sends no token and no agent id. ``transport`` is
    httpx's, of the client's kind (tests hand a mock's)."""

    token: str | None
    agent_id: str | None
    timeout: float | None
    max_retries: int | None
    anonymous: bool
    transport: Transport | None


class _Resources(Root[C]):
    """What both clients offer, each method of the client's kind (sync or async): their own
    (``health``, ``status``, ``search``) and their resources'."""

    def __init__(self, client: C, url: str | None, options: ClientOptions[Any]) -> None:
        self.config = ClientConfig.resolve(
            url,
            token=options.get("token"),
            agent_id=options.get("agent_id"),
            timeout=options.get("timeout"),
            max_retries=options.get("max_retries"),
            anonymous=options.get("anonymous", False),
        )
        Root.__init__(self, client)  # not super(): mypy checks it once per client kind
        self.agents: Agents[C] = Agents(client)
        self.messages: Messages[C] = Messages(client)
        self.notify: Notify[C] = Notify(client)
        self.rooms: Rooms[C] = Rooms(client)
        self.spaces: Spaces[C] = Spaces(client)
        self.tasks: Tasks[C] = Tasks(client)
        self.actions: Actions[C] = Actions(client)
        self.enroll: Enroll[C] = Enroll(client)
        self.approvals: Approvals[C] = Approvals(client)
        self.policies: Policies[C] = Policies(client)
        self.interventions: Interventions[C] = Interventions(client)
        self.events: Events[C] = Events(client)
        self.webhooks: Webhooks[C] = Webhooks(client)
        self.reservations: Reservations[C] = Reservations(client)
        self.a2a: A2A[C] = A2A(client)


class RelayClient(_Resources["RelayClient"]):
    """Synchronous client: ``with RelayClient() as relay: relay.approvals.approve(12)``."""

    asynchronous: ClassVar[bool] = False
    _sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(
        self, url: str | None = None, **options: Unpack[ClientOptions[httpx.BaseTransport]]
    ) -> None:
        super().__init__(self, url, options)
        self._http = httpx.Client(transport=options.get("transport"), **self.config.http_options())

    def send(self, request: Send[M]) -> M:
        """Send the operation's request, retry-safe as the operation is (a create carries one
        ``Idempotency-Key`` through all its attempts, so even a lost answer can be retried
        without creating twice), and decode its answer as its response model."""
        policy, sending = prepared(self._http, self.config, request)
        step: float | httpx.Response = next(policy)
        while not isinstance(step, httpx.Response):
            if step:
                self._sleep(step)
            step = resumed(policy, self._attempt(sending))
        return decode(step, request.op.response)

    def _attempt(self, request: httpx.Request) -> Outcome:
        """One try: its response, or the transport's error (for the retry policy)."""
        try:
            return self._http.send(request)
        except httpx.TransportError as exc:
            return exc

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> RelayClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncRelayClient(_Resources["AsyncRelayClient"]):
    """Asynchronous client: ``async with AsyncRelayClient() as relay: await relay.tasks.list()``."""

    asynchronous: ClassVar[bool] = True
    _sleep: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    def __init__(
        self, url: str | None = None, **options: Unpack[ClientOptions[httpx.AsyncBaseTransport]]
    ) -> None:
        super().__init__(self, url, options)
        self._http = httpx.AsyncClient(
            transport=options.get("transport"), **self.config.http_options()
        )

    async def send(self, request: Send[M]) -> M:
        """``RelayClient.send``, awaited."""
        policy, sending = prepared(self._http, self.config, request)
        step: float | httpx.Response = next(policy)
        while not isinstance(step, httpx.Response):
            if step:
                await self._sleep(step)
            step = resumed(policy, await self._attempt(sending))
        return decode(step, request.op.response)

    async def _attempt(self, request: httpx.Request) -> Outcome:
        """One try: its response, or the transport's error (for the retry policy)."""
        try:
            return await self._http.send(request)
        except httpx.TransportError as exc:
            return exc

    async def close(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRelayClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
