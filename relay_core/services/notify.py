"""Notify: push text to the operator's platforms and route the operator's replies back.

The notification row is committed before the platforms are called and updated after, so a
failure leaves a ``failed`` row with its error instead of losing the text. Every platform gets
it at once, within the request (its answer names what each did); it is sent when any of them
delivered it, and each one's delivery is kept. The first reply, from whichever platform, is
then shown on every platform's message, through the outbox.
"""

from __future__ import annotations

from collections.abc import Sequence

from relay_api import models as m
from relay_api.errors import BridgeError, Conflict, NotFound, PermissionDenied
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging, records, trace_context
from relay_core.auth import Caller
from relay_core.ports import Bridge, StaleWrite, UnitOfWork
from relay_core.services import outbox
from relay_core.services.base import Service
from relay_core.services.deliveries import (
    deliver,
    failure,
    keep,
    posts_of,
    subject_of,
)
from relay_core.services.messages import add_direct_message


async def _replied_notification(
    uow: UnitOfWork, bridge: str, platform_message_id: str
) -> m.Notification | None:
    notification_id = await subject_of(uow, "notification", bridge, platform_message_id)
    if notification_id is not None:
        return await uow.notifications.get(notification_id)
    # Sent before posts were kept: the notification names its one platform message itself.
    return await uow.notifications.on_platform(bridge, platform_message_id)


async def _replies(uow: UnitOfWork, notification_id: int) -> int:
    replies = await uow.messages.count_replies([notification_id])
    return replies.get(notification_id, 0)


class NotifyService(Service):
    """Notifications to the operator and their replies."""

    async def send(self, caller: Caller, body: m.NotifyText) -> m.Notification:
        """Send ``text`` to the operator on every platform. When none delivered it, the
        notification is kept as failed and ``BridgeError`` is raised."""
        agent_id = caller.acting_as(body.agent_id)

        async def store(uow: UnitOfWork) -> m.Notification:
            notification = m.Notification(
                agent_id=None if agent_id == m.OPERATOR else agent_id,
                text=body.text,
                bridge=self.ctx.bridge.name,
                created_at=self.now(),
                traceparent=trace_context.current(),
            )
            return await uow.notifications.insert(notification)

        notification = await self.write(store)
        return await self._send(notification, self.ctx.bridges)

    async def retry(self, caller: Caller, notification_id: int) -> m.Notification:
        """Send a failed notification again (its own agent or the operator), to the platforms
        that did not deliver it; a sent one answers as it is."""

        async def load(uow: UnitOfWork) -> tuple[m.Notification, set[str]]:
            found = await uow.notifications.get(notification_id)
            if found is None:
                raise NotFound(f"notification {notification_id} does not exist")
            if not caller.is_operator and found.agent_id != caller.agent_id:
                raise PermissionDenied(f"notification {notification_id} belongs to another agent")
            posts = await posts_of(uow, "notification", notification_id)
            shown = found.model_copy(update={"deliveries": [_delivery(p) for p in posts]})
            return shown, {p.bridge for p in posts if p.status == "sent"}

        notification, delivered = await self.read(load)
        if notification.status == "sent":
            return notification
        missing = tuple(b for b in self.ctx.bridges if b.name not in delivered)
        return await self._send(notification, missing)

    async def _send(
        self, notification: m.Notification, bridges: Sequence[Bridge]
    ) -> m.Notification:
        """Deliver to ``bridges`` and keep what each did; sent when any delivered."""
        reference = str(notification.notification_id)
        deliveries = await deliver(
            self.ctx, bridges, lambda bridge: bridge.send(notification.text, reference=reference)
        )
        sent = [d for d in deliveries if d.status == "sent"]
        sent_at = self.now()

        async def work(uow: UnitOfWork) -> m.Notification:
            await keep(uow, "notification", notification.notification_id, deliveries)
            if sent:
                settled = await uow.notifications.mark_sent(
                    notification.notification_id, sent[0], sent_at
                )
            else:
                settled = await uow.notifications.mark_failed(
                    notification.notification_id, failure(deliveries)
                )
            if settled is None:
                raise NotFound(f"notification {notification.notification_id} does not exist")
            posts = await posts_of(uow, "notification", notification.notification_id)
            return settled.model_copy(update={"deliveries": [_delivery(p) for p in posts]})

        settled = await self.write_answer(work)
        if not sent:
            raise BridgeError(failure(deliveries))
        return settled

    async def reply(self, caller: Caller, body: m.NotifyReply) -> m.Message:
        """Deliver the operator's reply to the agent that sent the matching notification."""
        return await self.receive_reply(self.ctx.bridge.name, body.platform_message_id, body.text)

    async def receive_reply(self, bridge: str, platform_message_id: str, text: str) -> m.Message:
        """Match a platform reply by the replied-to message id and put it in the agent's inbox;
        the first reply is then shown on every platform's message."""

        async def work(uow: UnitOfWork) -> m.Message:
            notification = await _replied_notification(uow, bridge, platform_message_id)
            if notification is None:
                raise NotFound(f"no notification has platform message id '{platform_message_id}'")
            if await _replies(uow, notification.notification_id) == 0:
                await self._show_answer(uow, notification, text)
            return await self._deliver(uow, notification, text)

        return await self.write_answer(work)  # the answer kept for ``once`` is a Message

    async def receive_update(
        self, bridge: str, update_id: int, replied_to: str | None, text: str
    ) -> m.Message | None:
        """Apply one platform update exactly once: a reply to a notification reaches its agent;
        any other text is kept in the action log for the operator; an empty text is skipped.
        The update's id is stored in the same transaction, so a restart neither loses nor
        repeats it."""

        async def work(uow: UnitOfWork) -> m.Message | None:
            now = self.now()
            offset = await uow.bridge_offsets.get(bridge)
            if offset is not None and update_id <= offset.last_update_id:
                return None
            delivered = None
            notification = (
                await _replied_notification(uow, bridge, replied_to) if replied_to else None
            )
            if not text:
                pass  # not for Relay (another chat, a sticker…): only the offset moves
            elif notification is not None and notification.agent_id is not None:
                if await _replies(uow, notification.notification_id) == 0:
                    await self._show_answer(uow, notification, text)
                delivered = await self._deliver(uow, notification, text)
            else:
                await uow.actions.insert(
                    m.Action(
                        agent_id=m.OPERATOR,
                        action="bridge.unmatched_reply",
                        target=f"{bridge} {replied_to or '(not a reply)'}",
                        outcome=text[:65536],
                        params={"update_id": update_id},
                        created_at=now,
                    )
                )
            if offset is None:
                moved = await uow.bridge_offsets.start(bridge, update_id, now)
            else:
                moved = await uow.bridge_offsets.move(offset, update_id, now)
            if not moved:
                raise StaleWrite("another instance applied updates meanwhile")
            return delivered

        return await self.write(work)

    async def sync_cursor(self, bridge: str) -> str | None:
        """Where the platform's updates resume (a token it gave), if it was stored."""

        async def work(uow: UnitOfWork) -> str | None:
            offset = await uow.bridge_offsets.get(bridge)
            return offset.cursor if offset else None

        return await self.read(work)

    async def keep_sync_cursor(self, bridge: str, cursor: str) -> None:
        """Store where the platform's updates resume, once the ones before it are applied."""

        async def work(uow: UnitOfWork) -> None:
            await uow.bridge_offsets.keep_cursor(bridge, cursor, self.now())

        await self.write(work)

    async def _show_answer(
        self, uow: UnitOfWork, notification: m.Notification, answer: str
    ) -> None:
        """Show the first reply on every platform's message of the notification, once this
        unit commits (through the outbox)."""
        showing = outbox.showing(self.ctx.bridges)
        jobs = await outbox.on_posts(
            uow, "answered", "notification", notification.notification_id, answer, showing
        )
        await outbox.add_jobs(uow, jobs, self.now())

    async def last_update_id(self, bridge: str) -> int:
        """The id of the last platform update applied (0 before any)."""

        async def work(uow: UnitOfWork) -> int:
            offset = await uow.bridge_offsets.get(bridge)
            return offset.last_update_id if offset else 0

        return await self.read(work)

    async def _deliver(self, uow: UnitOfWork, notification: m.Notification, text: str) -> m.Message:
        if notification.agent_id is None:
            raise Conflict(
                f"notification {notification.notification_id} came from the operator; "
                "there is no agent to deliver a reply to"
            )
        # Every answer to one notification, from whichever platform, is one conversation.
        first = await uow.messages.first_reply_to_notification(notification.notification_id)
        message = m.Message(
            from_agent=m.OPERATOR,
            to=notification.agent_id,
            text=text,
            reply_to_notification=notification.notification_id,
            thread_id=first.thread_id if first else None,
            status="pending",
            created_at=self.now(),
            traceparent=notification.traceparent,  # the agent goes on in the trace it asked in
        )
        await add_direct_message(uow, message)
        return message

    async def list(
        self, caller: Caller, limit: int = DEFAULT_LIMIT, cursor: str | None = None
    ) -> m.NotificationsResponse:
        """Notifications, newest first, with how many replies each got: all of them for the
        operator, its own for an agent; a page at a time."""
        agent_id = None if caller.is_operator else caller.agent_id
        before = paging.key_after(cursor, int)

        async def work(uow: UnitOfWork) -> m.NotificationsResponse:
            newest, next_cursor = paging.cut(
                await uow.notifications.page(agent_id, before, limit + 1),
                limit,
                lambda notification: [notification.notification_id],
            )
            ids = [n.notification_id for n in newest]
            replies = await uow.messages.count_replies(ids)
            posts = await uow.posts.of_subjects("notification", ids)
            counted = [
                n.model_copy(
                    update={
                        "replies": replies.get(n.notification_id, 0),
                        "deliveries": [
                            _delivery(p) for p in posts if p.subject_id == n.notification_id
                        ],
                    }
                )
                for n in newest
            ]
            return m.NotificationsResponse(notifications=counted, next_cursor=next_cursor)

        return await self.read(work)


def _delivery(post: records.Post) -> m.Delivery:
    return m.Delivery.model_validate(post.model_dump(include=set(m.Delivery.model_fields)))
