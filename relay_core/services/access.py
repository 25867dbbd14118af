"""Authentication: turn a bearer token and an optional ``X-Agent-ID`` into a ``Caller``."""

from __future__ import annotations

import hmac

from relay_core.auth import AGENT_TOKEN_PREFIX, Caller, hash_secret
from relay_core.errors import AuthenticationError, PermissionDenied
from relay_core.ports import UnitOfWork, eq
from relay_core.services.base import Service


class AccessService(Service):
    """Resolves credentials; with auth off, ``X-Agent-ID`` is trusted as given."""

    async def authenticate(self, token: str | None, agent_header: str | None) -> Caller:
        """The caller these credentials name; AuthenticationError or PermissionDenied if not."""
        config = self.ctx.config
        if not config.auth_enabled:
            return Caller("agent", agent_header) if agent_header else Caller("operator")
        if not token:
            if agent_header:
                raise AuthenticationError("X-Agent-ID must come with the agent's bearer token")
            raise AuthenticationError("this operation needs a bearer token")
        presented = hash_secret(token)
        if config.operator_token_hash and hmac.compare_digest(
            presented, config.operator_token_hash
        ):
            return Caller("operator", agent_header)
        if not token.startswith(AGENT_TOKEN_PREFIX):
            raise AuthenticationError("the bearer token is not a Relay token")

        async def work(uow: UnitOfWork) -> str | None:
            agents = await uow.agents.find(eq("token_hash", presented), limit=1)
            return agents[0].agent_id if agents else None

        agent_id = await self.read(work)
        if agent_id is None:
            raise AuthenticationError("the bearer token is unknown or was rotated")
        if agent_header is not None and agent_header != agent_id:
            raise PermissionDenied(
                f"this token belongs to agent '{agent_id}', not '{agent_header}'"
            )
        return Caller("agent", agent_id)
