"""The agent helpers' logic written once for both clients, as httpx writes its auth flows.

A flow is a generator that yields steps and is sent what each gave: call a method of a client
(``call("tasks.claim", 7)``), open or close a client, sleep, run a handler of the agent's author,
or hand an item out to the caller's loop. ``run``/``iterate`` perform the steps with a
``RelayClient``, ``arun``/``aiterate`` with an ``AsyncRelayClient``; an exception a step raises
is thrown into the flow where it yielded the step, so a flow catches a ``ConflictError`` as the
code it replaces did.
"""

from __future__ import annotations

import asyncio
import inspect
import operator
import time
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from relay_client._client import AsyncRelayClient, RelayClient

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """Call ``method`` (``tasks.claim``) of the runner's client, or of ``on``."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    on: Any = None


def call(method: str, *args: Any, on: Any = None, **kwargs: Any) -> Call:
    """The step that calls ``method`` with these arguments."""
    return Call(method, args, kwargs, on)


@dataclass(frozen=True)
class Open:
    """A new client of the runner's kind (sync or async), with these options."""

    options: dict[str, Any]


@dataclass(frozen=True)
class Close:
    """Close a client the flow opened and will not return."""

    client: Any


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Handle:
    """Run a handler of the agent's author; under the async runner, await what it returns if
    that is awaitable (a handler may be sync or async)."""

    handler: Callable[..., Any]
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Out:
    """Hand ``value`` to the loop iterating the flow; it resumes when the loop asks for more."""

    value: Any


Step = Call | Open | Close | Sleep | Handle | Out
Flow = Generator[Step, Any, T]


class _Resumption(Generic[T]):
    """Where a flow stands between its steps: what the last step gave (or raised, to be thrown
    into the flow where it yielded the step), and what the flow returned once it ends."""

    def __init__(self, flow: Flow[T]) -> None:
        self.flow = flow
        self.sent: Any = None
        self.error: Exception | None = None
        self.returned: list[T] = []

    def next(self) -> Step | None:
        """The flow's next step, or None once it has returned."""
        sent, error, self.sent, self.error = self.sent, self.error, None, None
        try:
            return self.flow.throw(error) if error is not None else self.flow.send(sent)
        except StopIteration as done:
            self.returned.append(done.value)
            return None


def iterate(flow: Flow[T], client: RelayClient) -> Generator[Any, None, T]:
    """Perform ``flow``'s steps with ``client``: what it hands out is yielded, what it returns
    is returned."""
    at = _Resumption(flow)
    while (step := at.next()) is not None:
        if isinstance(step, Out):
            yield step.value
        else:
            at.sent, at.error = _performed(step, client)
    return at.returned[0]


def run(flow: Flow[T], client: RelayClient) -> T:
    """Perform ``flow`` to its end with ``client`` and return what it returns."""
    steps = iterate(flow, client)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def _performed(step: Step, client: RelayClient) -> tuple[Any, Exception | None]:
    """What ``step`` gave, or the exception it raised (thrown into the flow, which decides)."""
    try:
        return _perform(step, client), None
    except Exception as exc:
        return None, exc


def _perform(step: Step, client: RelayClient) -> Any:
    match step:
        case Call():
            return operator.attrgetter(step.method)(step.on or client)(*step.args, **step.kwargs)
        case Open():
            return RelayClient(**step.options)
        case Close():
            step.client.close()
        case Sleep():
            time.sleep(step.seconds)
        case Handle():
            return step.handler(*step.args)
    return None


async def aiterate(
    flow: Flow[Any], client: AsyncRelayClient, returned: list[Any] | None = None
) -> AsyncIterator[Any]:
    """``iterate`` with an async client: what ``flow`` hands out, as an async iterator (and
    what it returns appended to ``returned``)."""
    at = _Resumption(flow)
    while (step := at.next()) is not None:
        if isinstance(step, Out):
            yield step.value
        else:
            at.sent, at.error = await _aperformed(step, client)
    if returned is not None:
        returned.extend(at.returned)


async def arun(flow: Flow[T], client: AsyncRelayClient) -> T:
    """``run`` with an async client."""
    returned: list[T] = []
    async for _ in aiterate(flow, client, returned):
        raise AssertionError("a flow run for its result hands nothing out")
    return returned[0]


async def _aperformed(step: Step, client: AsyncRelayClient) -> tuple[Any, Exception | None]:
    """What ``step`` gave, or the exception it raised (thrown into the flow, which decides)."""
    try:
        return await _aperform(step, client), None
    except Exception as exc:
        return None, exc


async def _aperform(step: Step, client: AsyncRelayClient) -> Any:
    match step:
        case Call():
            target = operator.attrgetter(step.method)(step.on or client)
            return await target(*step.args, **step.kwargs)
        case Open():
            return AsyncRelayClient(**step.options)
        case Close():
            await step.client.close()
        case Sleep():
            await asyncio.sleep(step.seconds)
        case Handle():
            result = step.handler(*step.args)
            return await result if inspect.isawaitable(result) else result
    return None
