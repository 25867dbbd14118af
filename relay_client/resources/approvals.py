"""``client.approvals``: the operator's queue."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from relay_client._base import compact, long_poll_timeout
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import Approval, ApprovalsResponse


class Approvals(SyncResource):
    """Approvals (sync)."""

    def request(
        self,
        title: str,
        *,
        detail: str | None = None,
        payload: dict[str, Any] | None = None,
        expires_in: int | None = None,
    ) -> Approval:
        """Ask the operator to approve something (as this client's agent); a policy may decide
        it at once. ``expires_in`` seconds unanswered, it expires."""
        body = compact(title=title, detail=detail, payload=payload, expires_in=expires_in)
        return self._client.call(ops.APPROVALS_REQUEST, json=body)

    def show(self, approval_id: int, *, wait: float | None = None) -> Approval:
        """One approval; ``wait`` long-polls up to that many seconds (at most 60) for its
        decision."""
        timeout = long_poll_timeout(wait, self._client.config.timeout)
        return self._client.call(
            ops.APPROVALS_SHOW,
            {"approval_id": approval_id},
            params=compact(wait=wait),
            timeout=timeout,
        )

    def approve(
        self, approval_id: int, *, note: str | None = None, decided_by: str | None = None
    ) -> Approval:
        """Approve (operator only); approving twice is fine, a decided one is ``ConflictError``."""
        body = compact(note=note, decided_by=decided_by)
        return self._client.call(ops.APPROVALS_APPROVE, {"approval_id": approval_id}, json=body)

    def reject(
        self, approval_id: int, *, note: str | None = None, decided_by: str | None = None
    ) -> Approval:
        """Reject (operator only); rejecting twice is fine, a decided one is ``ConflictError``."""
        body = compact(note=note, decided_by=decided_by)
        return self._client.call(ops.APPROVALS_REJECT, {"approval_id": approval_id}, json=body)

    def list(
        self, *, status: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> ApprovalsResponse:
        """One page of approvals, newest first, optionally of one status."""
        params = compact(status=status, limit=limit, cursor=cursor)
        return self._client.call(ops.APPROVALS_LIST, params=params)

    def iterate(self, *, status: str | None = None, limit: int | None = None) -> Iterator[Approval]:
        """Every approval, newest first, optionally of one status."""
        for page in self._pages(ops.APPROVALS_LIST, compact(status=status, limit=limit)):
            yield from page.approvals


class AsyncApprovals(AsyncResource):
    """Approvals (async)."""

    async def request(
        self,
        title: str,
        *,
        detail: str | None = None,
        payload: dict[str, Any] | None = None,
        expires_in: int | None = None,
    ) -> Approval:
        """Ask the operator to approve something (as this client's agent); a policy may decide
        it at once. ``expires_in`` seconds unanswered, it expires."""
        body = compact(title=title, detail=detail, payload=payload, expires_in=expires_in)
        return await self._client.call(ops.APPROVALS_REQUEST, json=body)

    async def show(self, approval_id: int, *, wait: float | None = None) -> Approval:
        """One approval; ``wait`` long-polls up to that many seconds (at most 60) for its
        decision."""
        timeout = long_poll_timeout(wait, self._client.config.timeout)
        return await self._client.call(
            ops.APPROVALS_SHOW,
            {"approval_id": approval_id},
            params=compact(wait=wait),
            timeout=timeout,
        )

    async def approve(
        self, approval_id: int, *, note: str | None = None, decided_by: str | None = None
    ) -> Approval:
        """Approve (operator only); approving twice is fine, a decided one is ``ConflictError``."""
        body = compact(note=note, decided_by=decided_by)
        return await self._client.call(
            ops.APPROVALS_APPROVE, {"approval_id": approval_id}, json=body
        )

    async def reject(
        self, approval_id: int, *, note: str | None = None, decided_by: str | None = None
    ) -> Approval:
        """Reject (operator only); rejecting twice is fine, a decided one is ``ConflictError``."""
        body = compact(note=note, decided_by=decided_by)
        return await self._client.call(
            ops.APPROVALS_REJECT, {"approval_id": approval_id}, json=body
        )

    async def list(
        self, *, status: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> ApprovalsResponse:
        """One page of approvals, newest first, optionally of one status."""
        params = compact(status=status, limit=limit, cursor=cursor)
        return await self._client.call(ops.APPROVALS_LIST, params=params)

    async def iterate(
        self, *, status: str | None = None, limit: int | None = None
    ) -> AsyncIterator[Approval]:
        """Every approval, newest first, optionally of one status."""
        async for page in self._pages(ops.APPROVALS_LIST, compact(status=status, limit=limit)):
            for item in page.approvals:
                yield item
