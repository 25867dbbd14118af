"""Who is calling, and the tokens that say so.

Tokens carry a readable prefix (``rly_agent_``, ``rly_op_``) so a leaked one is easy to spot, and
192 random bits from ``secrets``. Only their SHA-256 is stored: a token is already high-entropy,
so a slow password hash would buy nothing but latency on every request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Literal

from relay_api.errors import InvalidInput, PermissionDenied
from relay_api.models import OPERATOR


def new_token(prefix: str) -> str:
    """A fresh secret with a readable prefix."""
    return prefix + secrets.token_urlsafe(24)


def hash_secret(secret: str) -> str:
    """The stored form of a token or claim."""
    return hashlib.sha256(secret.encode()).hexdigest()


def same_secret(presented: str, stored_hash: str) -> bool:
    """Compare a presented secret with a stored hash in constant time."""
    return hmac.compare_digest(hash_secret(presented), stored_hash)


@dataclass(frozen=True)
class Caller:
    """The authenticated caller: the operator (possibly acting as an agent) or one agent."""

    kind: Literal["operator", "agent"]
    agent_id: str | None = None
    # The hash of the agent token that authenticated the caller, so a request that outlives a
    # rotation (a long-poll, a stream) can tell that its token no longer holds.
    token_hash: str | None = field(default=None, repr=False, compare=False)

    @property
    def is_operator(self) -> bool:
        """True for the human operator's token."""
        return self.kind == "operator"

    @property
    def name(self) -> str:
        """The identity recorded as author: the agent, or ``operator``."""
        return self.agent_id or OPERATOR

    def require_operator(self) -> None:
        """Refuse anyone but the operator."""
        if not self.is_operator:
            raise PermissionDenied("only the operator may do this")

    def require_self(self, agent_id: str) -> None:
        """Refuse an agent acting for another agent; the operator may act for anyone."""
        if not self.is_operator and self.agent_id != agent_id:
            raise PermissionDenied(f"agent '{self.agent_id}' may not act as agent '{agent_id}'")

    def the_agent(self, named: str | None) -> str:
        """The agent an optional ``agent_id`` field names, an agent's own id when it is
        omitted; the operator, who is no agent, must name one."""
        if named is None:
            if self.agent_id is None:
                raise InvalidInput("agent_id", "agent_id is required when the operator acts")
            return self.agent_id
        self.require_self(named)
        return named

    def acting_as(self, named: str | None) -> str:
        """The agent an optional ``agent_id`` field names, defaulting to the caller itself."""
        if named is None:
            return self.name
        self.require_self(named)
        return named


OPERATOR_CALLER = Caller("operator")


TICKET_PREFIX = "rly_ticket_"
TICKET_SECONDS = 60
