"""``client.enroll``: a new agent asks to join and polls with its claim (no token needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import EnrollmentCreated, EnrollmentState


class Enroll(SyncResource):
    """Enrollment (sync)."""

    def request(
        self,
        agent_id: str,
        *,
        name: str | None = None,
        kind: str | None = None,
        capabilities: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> EnrollmentCreated:
        """Ask to join; keep the returned ``claim``, it is shown once."""
        body = compact(
            agent_id=agent_id,
            name=name,
            kind=kind,
            capabilities=list(capabilities) if capabilities is not None else None,
            metadata=metadata,
            reason=reason,
        )
        return self._client.call(ops.ENROLL_REQUEST, json=body)

    def status(self, enroll_id: int, claim: str) -> EnrollmentState:
        """The enrollment's state; the first poll after approval carries the token."""
        return self._client.call(
            ops.ENROLL_STATUS, {"enroll_id": enroll_id}, params={"claim": claim}
        )


class AsyncEnroll(AsyncResource):
    """Enrollment (async)."""

    async def request(
        self,
        agent_id: str,
        *,
        name: str | None = None,
        kind: str | None = None,
        capabilities: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> EnrollmentCreated:
        """Ask to join; keep the returned ``claim``, it is shown once."""
        body = compact(
            agent_id=agent_id,
            name=name,
            kind=kind,
            capabilities=list(capabilities) if capabilities is not None else None,
            metadata=metadata,
            reason=reason,
        )
        return await self._client.call(ops.ENROLL_REQUEST, json=body)

    async def status(self, enroll_id: int, claim: str) -> EnrollmentState:
        """The enrollment's state; the first poll after approval carries the token."""
        return await self._client.call(
            ops.ENROLL_STATUS, {"enroll_id": enroll_id}, params={"claim": claim}
        )
