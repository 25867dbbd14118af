"""The ports the services depend on: storage (a store per resource in a unit of work) and the
operator bridge.

A unit of work holds one store per resource (``relay_core/storage/<resource>.py``), whose
methods each run one named statement of ``storage/{sqlite,postgres}/queries/<resource>.sql``.
The hot lists read their rows as one JSON array: a page answered as stored costs no model per
row (``relay_core.json_records.JsonRecords``, which reads as models when Python reads it). A
guarded write (a claim, a decision) says in its statement's WHERE what it expects, which is
what makes it exactly-once on either database.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from relay_api import models as m
from relay_core.hub import Hub
from relay_core.search_query import Query
from relay_core.storage.stores import Stores
from relay_core.topics import feed_topics


class StaleWrite(Exception):
    """A guarded write lost a race; the unit of work should be retried from the start.

    Storage adapters raise it; services retry and never let it escape as such.
    """


@dataclass(frozen=True)
class SearchSpec:
    """A search as the index runs it: the query, the kinds, whose reading (``reader``: an agent,
    who finds what the API lets it read; None for the operator, who reads everything), the
    filters, and where the previous page ended (``after``: a hit's score, time and key)."""

    query: Query
    kinds: tuple[str, ...]
    reader: str | None
    agent_id: str | None = None
    room_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    after: tuple[float, datetime, int] | None = None
    limit: int = 20


class SearchRow(NamedTuple):
    """A hit as the index answers it; ``key`` orders hits of one score and time."""

    key: int
    kind: str
    id: int
    title: str | None
    snippet: str
    score: float
    created_at: datetime
    from_agent: str | None
    room_id: str | None


class SearchIndex(Protocol):
    """What agents and the operator wrote, kept searchable as it is written (in the same
    transaction) by the store: messages and room posts (subject, text), tasks (title,
    description, payload's strings, result's strings, its events' messages), approvals
    (title, detail), actions (action, target, outcome, params' strings)."""

    async def search(self, spec: SearchSpec) -> list[SearchRow]:
        """The hits of ``spec``, best first (then newer, then by key): at most ``limit``."""
        ...


class UnitOfWork(Stores, ABC):
    """One transaction over every table, its stores made on first use (``Stores``); it rolls
    back unless ``commit`` is called. Each storage adapter's unit is one."""

    @property
    @abstractmethod
    def search_index(self) -> SearchIndex:
        """The search index, read in this unit's transaction."""

    @abstractmethod
    def publish(self, topic: str) -> None:
        """Wake waiters on ``topic`` once this unit of work commits (in every process)."""

    async def announce(self, event: m.Event) -> None:
        """Add ``event`` to the feed (held back as ``Table.add`` may be), and wake the feed's
        readers once this commits."""
        await self.events.add(event)
        for topic in feed_topics(event.audience):
            self.publish(topic)

    @abstractmethod
    async def flush(self) -> None:
        """Store now what ``add`` and ``announce`` held back, so that the records added have
        their keys."""

    @abstractmethod
    async def commit(self, *, durable: bool = True) -> None:
        """Make every change of this unit of work durable, then publish its topics.

        ``durable=False``: return without waiting for the changes to reach the disk. Later
        write units see them at once, reads once they are committed (SQLite: with the next
        group commit, which is already under way); a crash before then (SQLite: of the
        process; PostgreSQL: of its server) loses them. For changes that are only advice."""


class StatementObserver(Protocol):
    """What watches each named statement as it runs (the server's traces: a span each)."""

    def running(self, name: str, text: str) -> AbstractContextManager[object]:
        """Entered around the statement ``name`` (its SQL ``text``) while it runs."""
        ...


@dataclass
class Observed:
    """A storage's statement observer, if any, shared by every runner made over it: one set
    later reaches them all."""

    observer: StatementObserver | None = None


class Storage(Protocol):
    """Opens units of work. ``write=True`` takes the write lock up front where one exists."""

    name: str
    hub: Hub
    # Whether a hint can be lost (another instance killed between a commit and its NOTIFY):
    # a long-poll then reads again every REPOLL_SECONDS, a stream now and then
    # (lost_hint_pause); else each reads only when woken.
    hints_missable: bool

    def unit_of_work(
        self, *, write: bool, following: bool = False
    ) -> AbstractAsyncContextManager[UnitOfWork]:
        """A new transaction; leaving it without ``commit`` rolls it back. ``following``: a
        read of a stream that follows the feed, which may wait for its turn so that requests
        are not queued behind thousands of streams coming back at once."""
        ...

    def exclusive(self, name: str) -> AbstractAsyncContextManager[bool]:
        """Hold the named lock among every process on this storage while inside, if it was free
        (True) — for work exactly one instance must do, such as polling a platform."""
        ...

    def observe_statements(self, observer: StatementObserver) -> None:
        """Have ``observer`` watch each named statement run from now on."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True)
class BridgeCapabilities:
    """What an operator platform can do beyond sending text."""

    topics: bool
    replies: bool
    cards: bool = True  # whether it shows approvals and answers of its own (not the local one)


class Bridge(Protocol):
    """The operator's messaging platform."""

    name: str

    @property
    def capabilities(self) -> BridgeCapabilities:
        """What the platform can do beyond text."""
        ...

    async def send(self, text: str, *, reference: str) -> str:
        """Deliver ``text``; return the platform's message id. Raises ``BridgeError``."""
        ...

    async def ensure_topic(self, room: m.Room, space: m.Space | None) -> str:
        """Create (or find) the room's thread on the platform (in its space's, where the
        platform has spaces); its id. Raises ``BridgeError``."""
        ...

    async def start(self) -> None:
        """Learn what the platform offers (called once, before use)."""
        ...

    async def mirror(self, platform_thread_id: str, text: str) -> None:
        """Post text in a room's thread on the platform. Raises ``BridgeError``."""
        ...

    async def ask(self, approval: m.Approval) -> str | None:
        """Put an approval before the operator with a way to decide it; the platform message id
        (None where the platform has no such thing). Raises ``BridgeError``."""
        ...

    async def settle(self, platform_message_id: str, approval: m.Approval) -> None:
        """Show on the platform how an approval was decided. Raises ``BridgeError``."""
        ...

    async def remind(self, platform_message_id: str, approval: m.Approval) -> None:
        """Remind the operator of an approval still unanswered: a new message that pings,
        quoting its card (the message ``platform_message_id``). Raises ``BridgeError``."""
        ...

    async def answered(self, platform_message_id: str, text: str, answer: str) -> None:
        """Show on the platform that the notification ``text`` was answered with ``answer``
        (on whichever platform). Raises ``BridgeError``."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True)
class RemoteCard:
    """What Relay reads of an external A2A agent's card: its name and the endpoint of its
    JSON-RPC binding of A2A 1.0."""

    name: str
    endpoint: str


class RemoteFailed(Exception):
    """An external A2A agent could not be reached, refused, or answered what A2A does not
    allow; the message says which, in words."""


class RemoteAgents(Protocol):
    """External A2A agents, reached over A2A 1.0's JSON-RPC binding. Messages and tasks are
    A2A's JSON (``messageId``, ``parts``…); each call raises ``RemoteFailed``."""

    async def card(self, url: str) -> RemoteCard:
        """The card at ``url`` (a URL ending in .json), or under it at
        /.well-known/agent-card.json."""
        ...

    async def send(
        self, endpoint: str, message: dict[str, Any], bearer: str | None
    ) -> dict[str, Any]:
        """SendMessage, answered at once (``returnImmediately``): ``{"task": …}`` or
        ``{"message": …}``."""
        ...

    async def task(self, endpoint: str, task_id: str, bearer: str | None) -> dict[str, Any]:
        """GetTask: the task as the agent has it now."""
        ...
