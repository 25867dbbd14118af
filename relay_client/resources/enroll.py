"""``client.enroll``: a new agent asks to join and polls with its claim (no token needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource, segment
from relay_core.models import EnrollmentCreated, EnrollmentState


class Enroll(SyncResource):
    """Enrollment (sync)."""

    def request(
        self,
        agent_id: str,
        *,
        name: str | None = None,
        capabilities: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> EnrollmentCreated:
        """Ask to join; keep the returned ``claim``, it is shown once."""
        body = compact(
            agent_id=agent_id,
            name=name,
            capabilities=list(capabilities) if capabilities is not None else None,
            metadata=metadata,
            reason=reason,
        )
        return self._client.request(
            "POST", "/v1/enroll", EnrollmentCreated, json=body, idempotent=True
        )

    def status(self, enroll_id: int, claim: str) -> EnrollmentState:
        """The enrollment's state; the first poll after approval carries the token."""
        path = f"/v1/enroll/{segment(enroll_id)}"
        return self._client.request("GET", path, EnrollmentState, params={"claim": claim})


class AsyncEnroll(AsyncResource):
    """Enrollment (async)."""

    async def request(
        self,
        agent_id: str,
        *,
        name: str | None = None,
        capabilities: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> EnrollmentCreated:
        """Ask to join; keep the returned ``claim``, it is shown once."""
        body = compact(
            agent_id=agent_id,
            name=name,
            capabilities=list(capabilities) if capabilities is not None else None,
            metadata=metadata,
            reason=reason,
        )
        return await self._client.request(
            "POST", "/v1/enroll", EnrollmentCreated, json=body, idempotent=True
        )

    async def status(self, enroll_id: int, claim: str) -> EnrollmentState:
        """The enrollment's state; the first poll after approval carries the token."""
        path = f"/v1/enroll/{segment(enroll_id)}"
        return await self._client.request("GET", path, EnrollmentState, params={"claim": claim})
