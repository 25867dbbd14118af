"""Authentication: turn a bearer token and an optional ``X-Agent-ID`` into a ``Caller``.

Every request authenticates, so the agent a token hash belongs to is remembered. A change of
any token publishes ``CREDENTIALS`` on commit, which forgets them all in this process at once
and, through the storage's hints, in other instances as soon as the hint arrives; an entry is
never trusted for longer than ``CACHE_SECONDS`` in case a hint was lost. Unknown tokens are
never remembered.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from relay_api.errors import AuthenticationError, PermissionDenied
from relay_api.models import AGENT_TOKEN_PREFIX
from relay_core import records
from relay_core.auth import TICKET_PREFIX, Caller, hash_secret
from relay_core.ports import UnitOfWork
from relay_core.services.base import Context, Service, lost_hint_pause

T = TypeVar("T")

CREDENTIALS = "credentials"
CACHE_SECONDS = 5.0
CACHE_ENTRIES = 10_000


class AccessService(Service):
    """Resolves credentials; with auth off, ``X-Agent-ID`` is trusted as given."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._known: dict[str, tuple[str, float]] = {}  # token hash → (agent id, cached at)
        self._generation = 0  # moves on every forgetting
        ctx.storage.hub.watch(CREDENTIALS, self._forget)

    def _forget(self) -> None:
        self._known.clear()
        self._generation += 1

    def is_operator_token(self, token: str, presented: str | None = None) -> bool:
        """Whether ``token`` (hashed: ``presented``) is the operator's."""
        config = self.ctx.config
        return bool(config.operator_token_hash) and hmac.compare_digest(
            presented or hash_secret(token), config.operator_token_hash
        )

    async def authenticate(
        self,
        token: str | None,
        agent_header: str | None,
        before_lookup: Callable[[], None] | None = None,
        *,
        following: bool = False,
    ) -> Caller:
        """The caller these credentials name; AuthenticationError or PermissionDenied if not.
        ``before_lookup`` runs when, and only when, the token must be looked up in the store
        (an agent token not used in the last few seconds): where a flood of guesses costs.
        ``following``: for a stream, looked up in a stream's turn (``Storage.unit_of_work``)."""
        config = self.ctx.config
        if not config.auth_enabled:
            return Caller("agent", agent_header) if agent_header else Caller("operator")
        if not token:
            if agent_header:
                raise AuthenticationError("X-Agent-ID must come with the agent's bearer token")
            raise AuthenticationError("this operation needs a bearer token")
        presented = hash_secret(token)
        if self.is_operator_token(token, presented):
            return Caller("operator", agent_header)
        if not token.startswith(AGENT_TOKEN_PREFIX):
            raise AuthenticationError("the bearer token is unknown (not one Relay issued: a typo?)")

        agent_id = await self._agent_of(presented, before_lookup, following=following)
        if agent_id is None:
            raise AuthenticationError("the bearer token is unknown or was rotated")
        if agent_header is not None and agent_header != agent_id:
            raise PermissionDenied(
                f"this token belongs to agent '{agent_id}', not '{agent_header}'"
            )
        return Caller("agent", agent_id, presented)

    async def redeem(self, ticket: str) -> Caller:
        """The caller a stream ticket was issued to, if it is one, unexpired, and (an agent's)
        its token still holds."""
        config = self.ctx.config
        if not config.auth_enabled:
            return Caller("operator")

        async def work(uow: UnitOfWork) -> records.StreamTicket | None:
            return await uow.stream_tickets.get(hash_secret(ticket))

        issued = await self.read(work, following=True) if ticket.startswith(TICKET_PREFIX) else None
        if issued is None or issued.expires_at < self.ctx.clock():
            raise AuthenticationError(
                "the stream ticket is not valid or has expired; get another from "
                "POST /v1/events/ticket"
            )
        caller = Caller(issued.kind, issued.agent_id, issued.token_hash)
        if caller.token_hash is not None and (
            await self._agent_of(caller.token_hash, following=True) != caller.agent_id
        ):
            raise AuthenticationError("the token this ticket was issued for was rotated")
        return caller

    async def revoked(self, token_hash: str, agent_id: str | None) -> None:
        """Return once ``token_hash`` no longer names ``agent_id`` (the token was rotated, on
        this instance or another).

        A token change publishes ``CREDENTIALS`` (other instances hear it through the storage's
        hints) and the token is checked again at once; where a hint can be lost, it is also
        checked now and then (``lost_hint_pause``; an idle stream on SQLite checks nothing), in
        a stream's turn (``Storage.unit_of_work``'s ``following``)."""
        hub = self.ctx.storage.hub
        missable = self.ctx.storage.hints_missable
        while True:
            with hub.subscribe(CREDENTIALS) as subscription:
                if await self._agent_of(token_hash, following=True) != agent_id:
                    return
                await subscription.wait(lost_hint_pause() if missable else None)
            if hub.closed:  # shutting down: the request ends on its own; stop re-checking
                await asyncio.Event().wait()

    async def until_revoked(self, caller: Caller, work: Awaitable[T]) -> T:
        """``work``'s result, unless the agent token the caller authenticated with is revoked
        first: then ``work`` is cancelled and this raises AuthenticationError. For requests
        that wait (long-polls, streams), so a rotated token stops reading at once."""
        if caller.token_hash is None:  # the operator's token is not rotated at run time
            return await work
        task = asyncio.ensure_future(work)
        watch = asyncio.ensure_future(self.revoked(caller.token_hash, caller.agent_id))
        try:
            await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for future in (task, watch):
                future.cancel()  # no effect on the one that finished
            await asyncio.gather(task, watch, return_exceptions=True)
        if not task.cancelled():
            return task.result()
        watch.result()  # what broke the check, if anything did
        raise AuthenticationError("the bearer token was rotated while this request waited")

    async def _agent_of(
        self,
        token_hash: str,
        before_lookup: Callable[[], None] | None = None,
        *,
        following: bool = False,
    ) -> str | None:
        """The agent holding the token with this hash, if any."""
        known = self._known.get(token_hash)
        if known is not None and time.monotonic() - known[1] < CACHE_SECONDS:
            return known[0]
        if before_lookup is not None:
            before_lookup()

        async def work(uow: UnitOfWork) -> str | None:
            return await uow.agents.by_token(token_hash)

        generation = self._generation
        agent_id = await self.read(work, following=following)
        # A token change committed while the read was under way may have been read before it.
        if agent_id is not None and generation == self._generation:
            if len(self._known) >= CACHE_ENTRIES:
                self._known.clear()
            self._known[token_hash] = (agent_id, time.monotonic())
        return agent_id
