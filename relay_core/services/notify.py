"""Notify: push text to the operator's platform and route the operator's replies back.

The notification row is committed before the platform is called and updated after, so a platform
failure leaves a ``failed`` row with its error instead of losing the text.
"""

from __future__ import annotations

from relay_core import models as m
from relay_core.auth import Caller
from relay_core.errors import BridgeError, Conflict, NotFound
from relay_core.ports import Cond, UnitOfWork, eq
from relay_core.services.base import Service
from relay_core.services.messages import announce_direct_message


class NotifyService(Service):
    """Notifications to the operator and their replies."""

    async def send(self, caller: Caller, body: m.NotifyText) -> m.Notification:
        """Send ``text`` to the operator; 502 (``BridgeError``) when the platform fails."""
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

        notification = await self.write(store, final=False)
        try:
            platform_id = await bridge.send(body.text, reference=str(notification.notification_id))
        except BridgeError as exc:
            await self._settle(
                notification.notification_id, {"status": "failed", "error": exc.detail}
            )
            raise
        return await self._settle(
            notification.notification_id,
            {"status": "sent", "platform_message_id": platform_id, "sent_at": self.now()},
        )

    async def _settle(self, notification_id: int, values: dict[str, object]) -> m.Notification:
        async def work(uow: UnitOfWork) -> m.Notification:
            settled = await uow.notifications.update(notification_id, values)
            if settled is None:
                raise NotFound(f"notification {notification_id} does not exist")
            return settled

        return await self.write(work)

    async def reply(self, caller: Caller, body: m.NotifyReply) -> m.Message:
        """Deliver the operator's reply to the agent that sent the matching notification."""
        caller.require_operator()
        return await self.receive_reply(self.ctx.bridge.name, body.platform_message_id, body.text)

    async def receive_reply(self, bridge: str, platform_message_id: str, text: str) -> m.Message:
        """Match a platform reply by the replied-to message id and put it in the agent's inbox."""

        async def work(uow: UnitOfWork) -> m.Message:
            matches = await uow.notifications.find(
                eq("bridge", bridge), eq("platform_message_id", platform_message_id)
            )
            if not matches:
                raise NotFound(f"no notification has platform message id '{platform_message_id}'")
            notification = matches[0]
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

        return await self.write(work)

    async def list(self, caller: Caller, limit: int = 100) -> m.NotificationsResponse:
        """The newest notifications (with how many replies each got): all of them for the
        operator, its own for an agent."""
        conds: list[Cond] = [] if caller.is_operator else [eq("agent_id", caller.agent_id)]

        async def work(uow: UnitOfWork) -> m.NotificationsResponse:
            newest = await uow.notifications.find(
                *conds, order_by="notification_id", descending=True, limit=limit
            )
            counted = [
                n.model_copy(
                    update={
                        "replies": await uow.messages.count(
                            eq("reply_to_notification", n.notification_id)
                        )
                    }
                )
                for n in newest
            ]
            return m.NotificationsResponse(notifications=counted)

        return await self.read(work)
