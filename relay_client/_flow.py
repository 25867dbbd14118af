"""The agent helpers' logic written once for both clients, as httpx writes its auth flows.

A flow is a generator that yields steps and is sent what each gave: send an operation's request
(``Send(ops.TASKS_CLAIM, ...)``), call a method of a client (``call("tasks.claim", 7)``), open or
close a client, sleep, run a handler of the agent's author, perform a step in the trace of the
work it handles, or hand an item out to the caller's loop. ``run``/``iterate`` perform the steps
with a ``RelayClient``, ``arun``/``aiterate`` with an ``AsyncRelayClient``; an exception a step
raises is thrown into the flow where it yielded the step, so a flow catches a ``ConflictError``
as the code it replaces did.

A method of the SDK is written once, for both clients: ``@flow_method`` on a function that
answers its ``Send`` (or a flow) makes it, on an object driven by a ``RelayClient``, a method
that performs it, and on one driven by an ``AsyncRelayClient``, a coroutine method that
awaits it; ``@flow_iterator`` does the same for a flow that hands items out (an iterator, or an
async iterator). Type checkers see each signature with the client's return type.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import operator
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from pydantic import BaseModel

from relay_api.operations import Operation
from relay_client.tracing import in_trace

if TYPE_CHECKING:
    from relay_client._client import AsyncRelayClient, RelayClient

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
A = ParamSpec("A")
C = TypeVar("C", "RelayClient", "AsyncRelayClient")


@dataclass(frozen=True, slots=True)
class Send(Generic[M]):
    """Send the operation's request (its path filled from ``path``) and answer its response."""

    op: Operation[M]
    path: dict[str, str | int] | None = None
    json: Any = None
    params: dict[str, Any] | None = None
    timeout: float | None = None


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
class InTrace:
    """Perform ``step`` in the trace ``traceparent`` names (a message's or a task's: the work
    it was made in), so that its requests, and a traced program's own spans, join that trace."""

    traceparent: str | None
    step: Send[Any] | Call | Handle


@dataclass(frozen=True)
class Out(Generic[T]):
    """Hand ``value`` to the loop iterating the flow; it resumes when the loop asks for more."""

    value: T


Act = Send[Any] | Call | Open | Close | Sleep | Handle | InTrace
Step = Act | Out[Any]
Flow = Generator[Step, Any, T]
Items = Generator[Act | Out[T], Any, None]  # a flow that hands out items of type T
Work = Flow[T] | Send[Any]  # what a method answers: a flow, or one request


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


def run(work: Work[T], client: RelayClient) -> T:
    """Perform ``work`` to its end with ``client`` and return what it returns."""
    if isinstance(work, Send):
        return _perform(work, client)  # type: ignore[no-any-return]
    steps = iterate(work, client)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def _performed(step: Act, client: RelayClient) -> tuple[Any, Exception | None]:
    """What ``step`` gave, or the exception it raised (thrown into the flow, which decides)."""
    try:
        return _perform(step, client), None
    except Exception as exc:
        return None, exc


def _perform(step: Act, client: RelayClient) -> Any:
    match step:
        case Send():
            return client.send(step)
        case Call():
            return operator.attrgetter(step.method)(step.on or client)(*step.args, **step.kwargs)
        case Open():
            return type(client)(**step.options)
        case Close():
            step.client.close()
        case Sleep():
            time.sleep(step.seconds)
        case Handle():
            return step.handler(*step.args)
        case InTrace():
            with in_trace(step.traceparent):
                return _perform(step.step, client)
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


async def arun(work: Work[T], client: AsyncRelayClient) -> T:
    """``run`` with an async client."""
    if isinstance(work, Send):
        return await _aperform(work, client)  # type: ignore[no-any-return]
    returned: list[T] = []
    async for _ in aiterate(work, client, returned):
        raise AssertionError("a flow run for its result hands nothing out")
    return returned[0]


async def _aperformed(step: Act, client: AsyncRelayClient) -> tuple[Any, Exception | None]:
    """What ``step`` gave, or the exception it raised (thrown into the flow, which decides)."""
    try:
        return await _aperform(step, client), None
    except Exception as exc:
        return None, exc


async def _aperform(step: Act, client: AsyncRelayClient) -> Any:
    match step:
        case Send():
            return await client.send(step)
        case Call():
            target = operator.attrgetter(step.method)(step.on or client)
            return await target(*step.args, **step.kwargs)
        case Open():
            return type(client)(**step.options)
        case Close():
            await step.client.close()
        case Sleep():
            await asyncio.sleep(step.seconds)
        case Handle():
            result = step.handler(*step.args)
            return await result if inspect.isawaitable(result) else result
        case InTrace():
            with in_trace(step.traceparent):
                return await _aperform(step.step, client)
    return None


# ---------------------------------------------------------------- methods written once


class Driven(Generic[C]):
    """An object that works through one client (a resource, an agent, the client itself): the
    methods written once below take their kind, sync or async, from it."""

    _client: C


class _Written(ABC, Generic[A, T]):
    """What both decorators share: the function a method was written as, how it is shown
    (named, documented and signed as that function less its first parameter, answering what
    the client's kind answers: ``Send[m.Task]`` is ``m.Task``; a flow's items
    ``Iterator[m.Task]`` or ``AsyncIterator[m.Task]``), and its binding, made once an owner."""

    def __init__(self, written: Callable[..., Any], answers: tuple[str, str]) -> None:
        self._written = written
        self._name = written.__name__
        self.__doc__ = written.__doc__
        signature = inspect.signature(written)
        answer = str(signature.return_annotation).partition("[")[2].removesuffix("]")
        shown = signature.replace(parameters=list(signature.parameters.values())[1:])
        self._signatures = tuple(shown.replace(return_annotation=a.format(answer)) for a in answers)

    def __set_name__(self, kind: type, name: str) -> None:
        self._name = name

    def _bind(self, owner: Driven[Any] | None) -> Any:
        if owner is None:
            return self
        asynchronous = owner._client.asynchronous
        method = self._awaiting(owner) if asynchronous else self._blocking(owner)
        functools.update_wrapper(method, self._written)
        method.__signature__ = self._signatures[asynchronous]  # type: ignore[attr-defined]
        vars(owner)[self._name] = method  # found there from now on: bound once an owner
        return method

    @abstractmethod
    def _blocking(self, owner: Driven[Any]) -> Callable[..., Any]:
        """The method on an object driven by a ``RelayClient``."""

    @abstractmethod
    def _awaiting(self, owner: Driven[Any]) -> Callable[..., Any]:
        """The method on an object driven by an ``AsyncRelayClient``."""


class flow_method(_Written[A, T]):  # noqa: N801 (a decorator, named as one)
    """A method written once as ``work``, a function answering a flow or one ``Send``: on an
    object driven by a ``RelayClient`` it performs it, on one driven by an
    ``AsyncRelayClient`` it is a coroutine method awaiting it."""

    @overload
    def __init__(self: flow_method[A, M], work: Callable[Concatenate[Any, A], Send[M]]) -> None: ...
    @overload
    def __init__(self, work: Callable[Concatenate[Any, A], Flow[T]]) -> None: ...

    def __init__(self, work: Callable[Concatenate[Any, A], Work[Any]]) -> None:
        super().__init__(work, ("{}", "{}"))

    @overload
    def __get__(self, owner: None, kind: type) -> Self: ...
    @overload
    def __get__(self, owner: Driven[RelayClient], kind: type) -> Callable[A, T]: ...
    @overload
    def __get__(
        self, owner: Driven[AsyncRelayClient], kind: type
    ) -> Callable[A, Coroutine[Any, Any, T]]: ...

    def __get__(self, owner: Driven[Any] | None, kind: type) -> Any:
        return self._bind(owner)

    def _blocking(self, owner: Driven[Any]) -> Callable[..., Any]:
        work, client = self._written, owner._client

        def performed(*args: Any, **kwargs: Any) -> Any:
            return run(work(owner, *args, **kwargs), client)

        return performed

    def _awaiting(self, owner: Driven[Any]) -> Callable[..., Any]:
        work, client = self._written, owner._client

        async def awaited(*args: Any, **kwargs: Any) -> Any:
            return await arun(work(owner, *args, **kwargs), client)

        return awaited


class flow_iterator(_Written[A, T]):  # noqa: N801 (a decorator, named as one)
    """An iterator written once as ``flow``, which hands its items out: on an object driven by
    a ``RelayClient`` an iterator, on one driven by an ``AsyncRelayClient`` an async one."""

    def __init__(self, flow: Callable[Concatenate[Any, A], Items[T]]) -> None:
        super().__init__(flow, ("Iterator[{}]", "AsyncIterator[{}]"))

    @overload
    def __get__(self, owner: None, kind: type) -> Self: ...
    @overload
    def __get__(self, owner: Driven[RelayClient], kind: type) -> Callable[A, Iterator[T]]: ...
    @overload
    def __get__(
        self, owner: Driven[AsyncRelayClient], kind: type
    ) -> Callable[A, AsyncIterator[T]]: ...

    def __get__(self, owner: Driven[Any] | None, kind: type) -> Any:
        return self._bind(owner)

    def _blocking(self, owner: Driven[Any]) -> Callable[..., Any]:
        flow, client = self._written, owner._client

        def each(*args: Any, **kwargs: Any) -> Any:
            yield from iterate(flow(owner, *args, **kwargs), client)

        return each

    def _awaiting(self, owner: Driven[Any]) -> Callable[..., Any]:
        flow, client = self._written, owner._client

        async def each(*args: Any, **kwargs: Any) -> Any:
            async for item in aiterate(flow(owner, *args, **kwargs), client):
                yield item

        return each
