"""Outbound webhooks: the operator's endpoints, and every event of the feed delivered to those
that subscribe to it, at least once, to the Standard Webhooks 1.0 specification.

Delivery is in two steps, both in the store, so nothing is lost when a process dies. ``fan_out``
reads the feed past its own cursor (a ``bridge_offsets`` row, as a platform's updates are
followed) and, in the transaction that moves the cursor, adds a pending delivery per event and
subscribed endpoint, with the body every attempt will send and a ``webhook-id`` of its own.
``due`` hands the sender (``relay_server.sender``) what is due, secrets opened, and
``attempted`` records how an attempt went: done, failed for good, or due again on the schedule.
A delivery is pending until an attempt is recorded, so a process killed mid-attempt sends it
again, with the same ``webhook-id``: receivers deduplicate by it.
"""

from __future__ import annotations

import builtins
import functools
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from relay_api import models as m
from relay_api.errors import Conflict, InvalidInput, NotFound
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging, records, trace_context
from relay_core import webhooks as hooks
from relay_core.auth import Caller
from relay_core.config import CoreConfig
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services.base import SWEEP_BATCH, Service
from relay_core.services.outbox import Outcome, after_attempt
from relay_core.topics import OUTBOX

# The feed's cursor that fan_out moves, as platforms keep theirs.
CURSOR = "webhooks"
# Events one fan_out transaction reads (its inserts hold the writer meanwhile).
FAN_OUT_BATCH = 200
FINISHED = ("succeeded", "failed")  # a delivery's states that take no more attempts


@dataclass(frozen=True)
class Attempt:
    """A delivery due now, with what sending it needs: where, what, and the secrets to sign
    with (the current one first; during a rotation, the old one too)."""

    delivery_id: int
    webhook_id: int
    url: str
    message_id: str
    body: str
    secrets: tuple[str, ...]
    attempts: int  # made before this one
    # An A2A push-notification config's: it is sent the task as it is then, not ``body``.
    push: A2APush | None = None
    traceparent: str | None = None  # the trace its event happened in, which it is sent in


@dataclass(frozen=True)
class A2APush:
    """What an A2A push notification is about (a task asked of an agent), and the headers
    its config asked for (its credentials, its token), opened for this attempt only."""

    task_id: int
    agent_id: str
    headers: dict[str, str]


class Due(NamedTuple):
    """The attempts due now, and how many enabled endpoints they were looked for at."""

    attempts: list[Attempt]
    endpoints: int


async def require_deliverable(config: CoreConfig, url: str, where: str = "body") -> None:
    """Refuse a URL the sender would not deliver to (a private address, unless the server
    allows them), naming it as the ``url`` field of ``where``."""
    if config.webhooks_allow_private:
        return
    refusal = await hooks.address_refusal(url)
    if refusal is not None:
        raise InvalidInput("url", refusal, where)


async def add_endpoint(uow: UnitOfWork, endpoint: m.Webhook) -> m.Webhook:
    """Store a new endpoint, which gets the events that happen from now on, and wake the
    sender; the endpoint with its id."""
    from_now = endpoint.model_copy(update={"after_event_id": await _head(uow)})
    added = await uow.webhooks.insert(from_now)
    uow.publish(OUTBOX)
    return added


class WebhooksService(Service):
    """The operator's endpoints, and their deliveries."""

    @functools.cached_property
    def _schedule(self) -> tuple[float, ...]:
        return hooks.retry_schedule(self.ctx.config.webhook_retry_schedule)

    async def create(self, caller: Caller, body: m.WebhookCreate) -> m.Webhook:
        """A new endpoint; it gets the events that happen from now on. The answer holds its
        signing secret, shown this once."""
        await require_deliverable(self.ctx.config, body.url)
        secret = hooks.new_secret()
        sealed = self.ctx.seal.seal(secret)

        async def work(uow: UnitOfWork) -> m.Webhook:
            now = self.now()
            endpoint = await add_endpoint(
                uow,
                m.Webhook(
                    url=body.url,
                    events=body.events,
                    description=body.description,
                    sealed_secret=sealed,
                    created_at=now,
                    updated_at=now,
                ),
            )
            return endpoint.model_copy(update={"secret": secret})

        return await self.write_answer(work)

    async def list(
        self, caller: Caller, limit: int = DEFAULT_LIMIT, cursor: str | None = None
    ) -> m.WebhooksResponse:
        """Endpoints, oldest first; a page at a time."""

        async def work(uow: UnitOfWork) -> m.WebhooksResponse:
            found, next_cursor = paging.cut(
                await uow.webhooks.page(paging.key_after(cursor, int), limit + 1),
                limit,
                lambda webhook: [webhook.webhook_id],
            )
            return m.WebhooksResponse(webhooks=found, next_cursor=next_cursor)

        return await self.read(work)

    async def show(self, caller: Caller, webhook_id: int) -> m.Webhook:
        """An endpoint (never its secret)."""

        async def work(uow: UnitOfWork) -> m.Webhook:
            return await _endpoint(uow, webhook_id)

        return await self.read(work)

    async def replace(self, caller: Caller, webhook_id: int, body: m.WebhookCreate) -> m.Webhook:
        """Replace an endpoint's URL, events and description; its secret stays."""
        await require_deliverable(self.ctx.config, body.url)

        async def work(uow: UnitOfWork) -> m.Webhook | None:
            return await uow.webhooks.replace(webhook_id, body, self.now())

        return await self._change(webhook_id, work)

    async def disable(self, caller: Caller, webhook_id: int) -> m.Webhook:
        """Stop delivering to the endpoint; what is pending waits until it is enabled."""

        async def work(uow: UnitOfWork) -> m.Webhook | None:
            return await uow.webhooks.disable(webhook_id, "disabled", self.now())

        return await self._change(webhook_id, work)

    async def enable(self, caller: Caller, webhook_id: int) -> m.Webhook:
        """Deliver to the endpoint again: what was pending, and the events from now on."""

        async def work(uow: UnitOfWork) -> m.Webhook:
            current = await _endpoint(uow, webhook_id)
            if current.enabled:
                return current
            after_event_id = max(current.after_event_id, await _head(uow))
            updated = await uow.webhooks.enable(webhook_id, after_event_id, self.now())
            if updated is None:
                raise StaleWrite("enabled meanwhile")
            uow.publish(OUTBOX)
            return updated

        return await self.write(work)

    async def rotate_secret(self, caller: Caller, webhook_id: int) -> m.Webhook:
        """A new signing secret, shown this once; for a while (24 hours unless configured)
        every delivery is signed with the old one too."""
        secret = hooks.new_secret()
        overlap = timedelta(seconds=self.ctx.config.webhook_secret_overlap_seconds)

        async def work(uow: UnitOfWork) -> m.Webhook:
            current = await _endpoint(uow, webhook_id)
            now = self.now()
            updated = await uow.webhooks.rotate_secret(
                current, self.ctx.seal.seal(secret), now + overlap, now
            )
            if updated is None:
                raise StaleWrite("rotated meanwhile")
            return updated.model_copy(update={"secret": secret})

        return await self.write(work)

    async def _change(
        self, webhook_id: int, change: Callable[[UnitOfWork], Awaitable[m.Webhook | None]]
    ) -> m.Webhook:
        """The endpoint as ``change`` left it (NotFound if it found none); the sender told."""

        async def work(uow: UnitOfWork) -> m.Webhook:
            updated = await change(uow)
            if updated is None:
                raise _missing(webhook_id)
            uow.publish(OUTBOX)
            return updated

        return await self.write(work)

    async def test(self, caller: Caller, webhook_id: int) -> m.WebhookDelivery:
        """Send the endpoint a ``webhook.test`` event now; the answer is its delivery."""

        async def work(uow: UnitOfWork) -> m.WebhookDelivery:
            await _endpoint(uow, webhook_id)
            now = self.now()
            data = {"webhook_id": webhook_id}
            delivery = await uow.webhook_deliveries.insert(
                m.WebhookDelivery(
                    webhook_id=webhook_id,
                    event_type=hooks.TEST_EVENT,
                    message_id=f"msg_{webhook_id}_test_{secrets.token_hex(8)}",
                    body=hooks.body(hooks.TEST_EVENT, now, data),
                    next_attempt_at=now,
                    created_at=now,
                    traceparent=trace_context.current(),
                )
            )
            uow.publish(OUTBOX)
            return delivery

        return await self.write(work)

    async def deliveries(
        self,
        caller: Caller,
        webhook_id: int,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
        status: m.WebhookDeliveryStatus | None = None,
    ) -> m.WebhookDeliveriesResponse:
        """An endpoint's deliveries, newest first; a page at a time."""
        before = paging.key_after(cursor, int)

        async def work(uow: UnitOfWork) -> m.WebhookDeliveriesResponse:
            await _endpoint(uow, webhook_id)
            found, next_cursor = paging.cut(
                await uow.webhook_deliveries.page(webhook_id, status, before, limit + 1),
                limit,
                lambda delivery: [delivery.delivery_id],
            )
            return m.WebhookDeliveriesResponse(deliveries=found, next_cursor=next_cursor)

        return await self.read(work)

    async def retry(self, caller: Caller, webhook_id: int, delivery_id: int) -> m.WebhookDelivery:
        """Send a failed delivery again, as new (its attempts start over, its webhook-id
        stays)."""

        async def work(uow: UnitOfWork) -> m.WebhookDelivery:
            found = await uow.webhook_deliveries.get(delivery_id)
            if found is None or found.webhook_id != webhook_id:
                raise NotFound(f"webhook {webhook_id} has no delivery {delivery_id}")
            if found.status != "failed":
                raise Conflict(f"delivery {delivery_id} is {found.status}: only a failed one")
            retried = await uow.webhook_deliveries.retry(delivery_id, self.now())
            if retried is None:
                raise StaleWrite("retried meanwhile")
            uow.publish(OUTBOX)
            return retried

        return await self.write(work)

    # ------------------------------------------------------------- the sender's side

    async def fan_out(self) -> bool:
        """Add a pending delivery for each of the next ``FAN_OUT_BATCH`` events past the cursor
        and each enabled endpoint subscribed to it, moving the cursor in the same transaction;
        whether any endpoint is enabled (the sender follows the feed only then). Nothing is
        written while there is nothing to deliver: without endpoints, the feed is not followed
        (an endpoint starts from its creation)."""

        async def waiting(uow: UnitOfWork) -> tuple[bool, bool]:
            _, endpoints, events = await _pending_events(uow, limit=1)
            return bool(events), bool(endpoints)

        events_waiting, following = await self.read(waiting)
        if not events_waiting:
            return following

        async def work(uow: UnitOfWork) -> bool:
            now = self.now()
            offset, endpoints, events = await _pending_events(uow)
            for event in events:
                await _add_deliveries(uow, event, endpoints, now)
            if events:
                await _move(uow, offset, events[-1].event_id, now)
                uow.publish(OUTBOX)
            return bool(endpoints)

        return await self.write(work)

    async def sweep(self, limit: int = SWEEP_BATCH) -> int:
        """Delete up to ``limit`` finished deliveries (succeeded or failed) older than
        ``webhook_keep_days``; how many. Pending ones are never deleted."""
        days = self.ctx.config.webhook_keep_days
        if days <= 0:
            return 0
        cutoff = self.now() - timedelta(days=days)

        async def old(uow: UnitOfWork) -> builtins.list[int]:
            found: builtins.list[int] = []
            for status in FINISHED:
                if len(found) == limit:
                    break
                found += await uow.outbox.finished_before(status, cutoff, limit - len(found))
            return found

        if not (ids := await self.read(old)):
            return 0

        async def work(uow: UnitOfWork) -> int:
            return await uow.outbox.delete_finished(ids)

        return await self.write(work)

    async def due(
        self, limit: int, skip: frozenset[int] = frozenset(), full: frozenset[int] = frozenset()
    ) -> Due:
        """Pending deliveries due now to enabled endpoints, oldest first (an endpoint's in feed
        order), but those in ``skip`` (in flight) and those to the endpoints in ``full`` (with
        as many in flight as one may have: their backlog must not hide the others')."""

        async def work(uow: UnitOfWork) -> Due:
            now = self.now()
            left_out, taking = set(full), 0
            for known in await uow.webhooks.every():
                if known.enabled and known.webhook_id not in full:
                    taking += 1
                else:
                    left_out.add(known.webhook_id)
            if not taking:
                return Due([], 0)
            # By when they fall due, then by id: what fan_out added at once, in feed order. Not
            # "webhook_id IN" the endpoints taking some: the planner would read by endpoint.
            found = await uow.webhook_deliveries.due(now, sorted(left_out), limit + len(skip))
            wanted = [d for d in found if d.delivery_id not in skip]
            # Their endpoints, read after the deliveries: as new as they are (a rotation, a
            # change, a disabling); each one's secrets opened once.
            ids = sorted({delivery.webhook_id for delivery in wanted})
            sending = {
                endpoint.webhook_id: (
                    endpoint.url,
                    self._secrets(endpoint, now),
                    self._push(endpoint),
                )
                for endpoint in await uow.webhooks.by_id(ids)
                if endpoint.enabled
            }
            attempts: builtins.list[Attempt] = []
            for delivery in wanted:
                if delivery.webhook_id in sending:
                    url, secrets, push = sending[delivery.webhook_id]
                    attempts.append(
                        Attempt(
                            delivery.delivery_id,
                            delivery.webhook_id,
                            url,
                            delivery.message_id,
                            delivery.body,
                            secrets,
                            delivery.attempts,
                            push,
                            delivery.traceparent,
                        )
                    )
            return Due(attempts[:limit], taking)

        return await self.read(work)

    def _push(self, endpoint: m.Webhook) -> A2APush | None:
        """An A2A push-notification config's task, agent and headers (its sealed token and
        credentials opened); None for any other endpoint."""
        push = endpoint.a2a_push
        if endpoint.task_id is None or push is None:
            return None
        headers = {}
        token = push.token and self.ctx.seal.open(push.token)
        if token:
            headers["X-A2A-Notification-Token"] = token
        credentials = push.credentials and self.ctx.seal.open(push.credentials)
        if credentials:
            headers["Authorization"] = f"{push.scheme or 'Bearer'} {credentials}"
        return A2APush(endpoint.task_id, push.agent_id, headers)

    def _secrets(self, endpoint: m.Webhook, now: datetime) -> tuple[str, ...]:
        """The secrets deliveries to ``endpoint`` are signed with now: its own, and during a
        rotation's window the one before (those that open)."""
        sealed = [endpoint.sealed_secret]
        until = endpoint.previous_until
        if endpoint.sealed_previous is not None and until is not None and now < until:
            sealed.append(endpoint.sealed_previous)
        return tuple(s for s in (self.ctx.seal.open(each) for each in sealed) if s is not None)

    async def attempted(self, outcomes: Sequence[tuple[Attempt, Outcome]]) -> None:
        """Record how attempts went, in one transaction: succeeded; failed for good (the
        schedule spent, or the endpoint gone: ``410`` disables it); or due again after the
        schedule's next delay."""
        schedule = self._schedule

        async def work(uow: UnitOfWork) -> None:
            now = self.now()
            for attempt, outcome in outcomes:
                # As it was handed out: not retried or settled meanwhile.
                kept = await uow.outbox.record_attempt(
                    attempt.delivery_id,
                    attempt.attempts,
                    **after_attempt(attempt.attempts + 1, outcome, schedule, now),
                )
                if kept and outcome.status_code == 410:
                    reason = "the endpoint answered 410 Gone"
                    await uow.webhooks.disable(attempt.webhook_id, reason, now)

        await self.write(work)


async def _head(uow: UnitOfWork) -> int:
    """The feed's newest event id (0 when it is empty)."""
    return await uow.events.newest_id()


async def _endpoint(uow: UnitOfWork, webhook_id: int) -> m.Webhook:
    found = await uow.webhooks.get(webhook_id)
    if found is None:
        raise _missing(webhook_id)
    return found


def _missing(webhook_id: int) -> NotFound:
    return NotFound(f"webhook {webhook_id} does not exist")


async def _pending_events(
    uow: UnitOfWork, limit: int = FAN_OUT_BATCH
) -> tuple[records.BridgeOffset | None, list[m.Webhook], list[m.Event]]:
    """The cursor, the enabled endpoints, and the events past the cursor that one of them may
    take (none before the oldest endpoint was created)."""
    offset = await uow.bridge_offsets.get(CURSOR)
    endpoints = await uow.webhooks.enabled()
    if not endpoints:
        return offset, endpoints, []
    after = min(endpoint.after_event_id for endpoint in endpoints)
    if offset is not None:
        after = max(after, offset.last_update_id)
    events = await uow.events.after(after, limit)
    return offset, endpoints, events


async def _add_deliveries(
    uow: UnitOfWork, event: m.Event, endpoints: list[m.Webhook], now: datetime
) -> None:
    """A pending delivery of ``event`` to each endpoint subscribed to it since before it."""
    body: str | None = None
    for endpoint in endpoints:
        if endpoint.after_event_id >= event.event_id:
            continue
        if not hooks.subscribed(endpoint.events, event.kind):
            continue
        if endpoint.task_id is not None and event.subject_id != str(endpoint.task_id):
            continue  # an A2A push config takes its task's events only
        body = body or hooks.event_body(event)
        await uow.webhook_deliveries.add(
            m.WebhookDelivery(
                webhook_id=endpoint.webhook_id,
                event_id=event.event_id,
                event_type=event.kind,
                message_id=f"msg_{endpoint.webhook_id}_{event.event_id}",
                body=body,
                next_attempt_at=now,
                created_at=now,
                traceparent=event.traceparent,
            )
        )


async def _move(
    uow: UnitOfWork, offset: records.BridgeOffset | None, to: int, now: datetime
) -> None:
    """Move fan_out's cursor to ``to``, guarded: another instance that moved it first makes
    this unit start again."""
    if offset is None:
        moved = await uow.bridge_offsets.start(CURSOR, to, now)
    else:
        moved = await uow.bridge_offsets.move(offset, to, now)
    if not moved:
        raise StaleWrite("the webhook cursor moved")
