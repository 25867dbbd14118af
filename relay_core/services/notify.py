"""Notify: push text to the operator's platform and route the operator's replies back.

The notification row is committed before the platform is called and updated after, so a platform
failure leaves a ``failed`` row with its error instead of losing the text.
"""

from __future__ import annotations

from relay_core import models as m
from relay_core import paging
from relay_core.auth import Caller
from relay_core.errors import BridgeError, Conflict, NotFound, PermissionDenied, StaleWrite
from relay_core.idempotency import Once
from relay_core.ports import Cond, UnitOfWork, eq, in_
from relay_core.services.base import Service
from relay_core.services.messages import announce_direct_message


async def _replied_notification(
    uow: UnitOfWork, bridge: str, platform_message_id: str
) -> m.Notification | None:
    matches = await uow.notifications.find(
        eq("bridge", bridge), eq("platform_message_id", platform_message_id), limit=1
    )
    return matches[0] if matches else None


class NotifyService(Service):
    """Notifications to the operator and their replies."""

    async def send(
        self, caller: Caller, body: m.NotifyText, once: Once | None = None
    ) -> m.Notification:
        """Send ``text`` to the operator. When the platform fails, the notification is kept as
        failed and ``BridgeError`` is raised."""
        agent_id = caller.acting_as(body.agent_id)
        bridge = self.ctx.bridge

        async def store(uow: UnitOfWork) -> m.Notification:
            notification = m.Notification(
                agent_id=None if agent_id == m.OPERATOR else agent_id,
                text=body.text,
                bridge=bridge.name,
                created_at=self.now(),
            )
            return await uow.notifications.insert(notification)

        notification = await self.write(store, once=once, final=False)
        try:
            platform_id = await bridge.send(body.text, reference=str(notification.notification_id))
        except BridgeError as exc:
            await self._settle(
                notification.notification_id, {"status": "failed", "error": exc.detail}, once
            )
            raise
        return await self._settle(
            notification.notification_id,
            {"status": "sent", "platform_message_id": platform_id, "sent_at": self.now()},
            once,
        )

    async def retry(self, caller: Caller, notification_id: int) -> m.Notification:
        """Send a failed notification again (its own agent or the operator); a sent one answers
        as it is."""

        async def load(uow: UnitOfWork) -> m.Notification:
            found = await uow.notifications.get(notification_id)
            if found is None:
                raise NotFound(f"notification {notification_id} does not exist")
            if not caller.is_operator and found.agent_id != caller.agent_id:
                raise PermissionDenied(f"notification {notification_id} belongs to another agent")
            return found

        notification = await self.read(load)
        if notification.status == "sent":
            return notification
        try:
            platform_id = await self.ctx.bridge.send(
                notification.text, reference=str(notification.notification_id)
            )
        except BridgeError as exc:
            await self._settle(notification_id, {"status": "failed", "error": exc.detail})
            raise
        return await self._settle(
            notification_id,
            {
                "status": "sent",
                "error": None,
                "bridge": self.ctx.bridge.name,
                "platform_message_id": platform_id,
                "sent_at": self.now(),
            },
        )

    async def _settle(
        self, notification_id: int, values: dict[str, object], once: Once | None = None
    ) -> m.Notification:
        async def work(uow: UnitOfWork) -> m.Notification:
            settled = await uow.notifications.update(notification_id, values)
            if settled is None:
                raise NotFound(f"notification {notification_id} does not exist")
            return settled

        return await self.write(work, once=once)

    async def reply(
        self, caller: Caller, body: m.NotifyReply, once: Once | None = None
    ) -> m.Message:
        """Deliver the operator's reply to the agent that sent the matching notification."""
        caller.require_operator()
        return await self.receive_reply(
            self.ctx.bridge.name, body.platform_message_id, body.text, once
        )

    async def receive_reply(
        self, bridge: str, platform_message_id: str, text: str, once: Once | None = None
    ) -> m.Message:
        """Match a platform reply by the replied-to message id and put it in the agent's inbox."""

        async def work(uow: UnitOfWork) -> m.Message:
            notification = await _replied_notification(uow, bridge, platform_message_id)
            if notification is None:
                raise NotFound(f"no notification has platform message id '{platform_message_id}'")
            return await self._deliver(uow, notification, text)

        return await self.write(work, once=once)

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
            values = {"last_update_id": update_id, "updated_at": now}
            if offset is None:
                await uow.bridge_offsets.insert(m.BridgeOffset(bridge=bridge, **values))
            elif (
                await uow.bridge_offsets.update(
                    bridge, values, expect={"last_update_id": offset.last_update_id}
                )
                is None
            ):
                raise StaleWrite("another instance applied updates meanwhile")
            return delivered

        return await self.write(work)

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
        message = m.Message(
            from_agent=m.OPERATOR,
            to=notification.agent_id,
            text=text,
            reply_to_notification=notification.notification_id,
            status="pending",
            created_at=self.now(),
        )
        message = await uow.messages.insert(message)
        await announce_direct_message(uow, message)
        return message

    async def list(
        self, caller: Caller, limit: int = paging.DEFAULT_LIMIT, cursor: str | None = None
    ) -> m.NotificationsResponse:
        """Notifications, newest first, with how many replies each got: all of them for the
        operator, its own for an agent; a page at a time."""
        conds: list[Cond] = [] if caller.is_operator else [eq("agent_id", caller.agent_id)]

        async def work(uow: UnitOfWork) -> m.NotificationsResponse:
            newest, next_cursor = await paging.page(
                uow.notifications,
                *conds,
                key=("notification_id", int),
                descending=True,
                limit=limit,
                cursor=cursor,
            )
            replies = await uow.messages.count_by(
                "reply_to_notification",
                in_("reply_to_notification", [n.notification_id for n in newest]),
            )
            counted = [
                n.model_copy(update={"replies": replies.get(n.notification_id, 0)}) for n in newest
            ]
            return m.NotificationsResponse(notifications=counted, next_cursor=next_cursor)

        return await self.read(work)
