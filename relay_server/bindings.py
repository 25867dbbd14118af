"""Which service method serves each operation of the contract (``relay_api.operations``), one
line each, so that a reader (and an IDE) goes from a row to the code that serves it.

A service method is called with the caller first (for operations that need a token), then the
path and query fields and ``body`` as keyword arguments; a create sent with a retry key is
served within ``relay_core.idempotency.answering``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from relay_api import operations as ops
from relay_core.services import Services

Serve = Callable[..., Any]


def bind(services: Services) -> dict[str, Serve]:
    """Each operation's id, with the method of ``services`` that serves it."""
    return {
        ops.HEALTH.id: services.system.health,
        ops.STATUS.id: services.system.status,
        ops.AGENTS_REGISTER.id: services.agents.register,
        ops.AGENTS_ME.id: services.agents.me,
        ops.AGENTS_HEARTBEAT.id: services.agents.heartbeat,
        ops.AGENTS_LIST.id: services.agents.list,
        ops.AGENTS_INBOX.id: services.agents.inbox,
        ops.AGENTS_A2A.id: services.agents.set_a2a,
        ops.MESSAGES_SEND.id: services.messages.send,
        ops.MESSAGES_ACK.id: services.messages.ack,
        ops.MESSAGES_THREAD.id: services.messages.thread,
        ops.MESSAGES_SHOW.id: services.messages.show,
        ops.SEARCH.id: services.search.search,
        ops.NOTIFY_SEND.id: services.notify.send,
        ops.NOTIFY_REPLY.id: services.notify.reply,
        ops.NOTIFY_LIST.id: services.notify.list,
        ops.NOTIFY_RETRY.id: services.notify.retry,
        ops.ROOMS_LIST.id: services.rooms.list,
        ops.ROOMS_JOIN.id: services.rooms.join,
        ops.ROOMS_MESSAGES.id: services.rooms.messages,
        ops.SPACES_LIST.id: services.spaces.list,
        ops.SPACES_CREATE.id: services.spaces.create,
        ops.SPACES_ADD_ROOM.id: services.spaces.add_room,
        ops.SPACES_SYNC.id: services.spaces.sync,
        ops.SPACES_ARCHIVE.id: services.spaces.archive,
        ops.TASKS_CREATE.id: services.tasks.create,
        ops.TASKS_LIST.id: services.tasks.list,
        ops.TASKS_GET.id: services.tasks.get,
        ops.TASKS_EVENTS.id: services.tasks.events,
        ops.TASKS_CLAIM.id: services.tasks.claim,
        ops.TASKS_EVENT.id: services.tasks.event,
        ops.TASKS_COMPLETE.id: services.tasks.complete,
        ops.TASKS_FAIL.id: services.tasks.fail,
        ops.TASKS_CANCEL.id: services.tasks.cancel,
        ops.ACTIONS_RECORD.id: services.actions.record,
        ops.ACTIONS_LIST.id: services.actions.list,
        ops.ENROLL_REQUEST.id: services.enroll.request,
        ops.ENROLL_STATUS.id: services.enroll.status,
        ops.APPROVALS_LIST.id: services.approvals.list,
        ops.APPROVALS_REQUEST.id: services.approvals.request,
        ops.APPROVALS_SHOW.id: services.approvals.show,
        ops.APPROVALS_APPROVE.id: services.approvals.approve,
        ops.APPROVALS_REJECT.id: services.approvals.reject,
        ops.APPROVALS_ANSWER.id: services.approvals.answer,
        ops.APPROVALS_WITHDRAW.id: services.approvals.withdraw,
        ops.POLICIES_CREATE.id: services.policies.create,
        ops.POLICIES_LIST.id: services.policies.list,
        ops.POLICIES_SIMULATE.id: services.policies.simulate,
        ops.POLICIES_SHOW.id: services.policies.show,
        ops.POLICIES_REPLACE.id: services.policies.replace,
        ops.POLICIES_DISABLE.id: services.policies.disable,
        ops.POLICIES_ENABLE.id: services.policies.enable,
        ops.RESERVATIONS_CREATE.id: services.reservations.create,
        ops.RESERVATIONS_LIST.id: services.reservations.list,
        ops.RESERVATIONS_SHOW.id: services.reservations.show,
        ops.RESERVATIONS_RENEW.id: services.reservations.renew,
        ops.RESERVATIONS_RELEASE.id: services.reservations.release,
        ops.A2A_SEND.id: services.a2a_calls.send,
        ops.A2A_LIST.id: services.a2a_calls.list,
        ops.A2A_SHOW.id: services.a2a_calls.show,
        ops.WEBHOOKS_CREATE.id: services.webhooks.create,
        ops.WEBHOOKS_LIST.id: services.webhooks.list,
        ops.WEBHOOKS_SHOW.id: services.webhooks.show,
        ops.WEBHOOKS_REPLACE.id: services.webhooks.replace,
        ops.WEBHOOKS_DISABLE.id: services.webhooks.disable,
        ops.WEBHOOKS_ENABLE.id: services.webhooks.enable,
        ops.WEBHOOKS_ROTATE_SECRET.id: services.webhooks.rotate_secret,
        ops.WEBHOOKS_TEST.id: services.webhooks.test,
        ops.WEBHOOKS_DELIVERIES.id: services.webhooks.deliveries,
        ops.WEBHOOKS_RETRY.id: services.webhooks.retry,
        ops.INTERVENTIONS_REQUEST_APPROVAL.id: services.interventions.request_approval,
        ops.INTERVENTIONS_APPROVAL.id: services.interventions.approval,
        ops.INTERVENTIONS_DIAGNOSTIC.id: services.interventions.diagnostic,
        ops.INTERVENTIONS_SHOW_DIAGNOSTIC.id: services.interventions.show_diagnostic,
        ops.INTERVENTIONS_LIST.id: services.interventions.list,
        ops.INTERVENTIONS_ACTION.id: services.interventions.action,
        ops.INTERVENTIONS_ADD_PARTICIPANT.id: services.interventions.add_participant,
        ops.EVENTS_LIST.id: services.events.list,
        ops.EVENTS_TICKET.id: services.events.ticket,
        ops.EVENTS_STREAM.id: services.events.stream,
    }
