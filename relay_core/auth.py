"""Who is calling, and the tokens that say so.

Tokens carry a readable prefix (``rly_agent_``, ``rly_op_``) so a leaked one is easy to spot, and
192 random bits from ``secrets``. Only their SHA-256 is stored: a token is already high-entropy,
so a slow password hash would buy nothing but latency on every request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Literal, cast

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


def _ticket_mac(key_source: str, body: str) -> str:
    key = hashlib.sha256(b"relay stream ticket\0" + key_source.encode()).digest()
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


def issue_ticket(caller: Caller, key_source: str, expires: int) -> str:
    """A stream ticket for ``caller`` until ``expires`` (Unix time), signed with a key derived
    from ``key_source`` (the operator token's hash, which every instance holds and no store
    does): any instance can check it, and nothing is stored."""
    claims = f"{caller.kind}|{caller.agent_id or ''}|{caller.token_hash or ''}|{expires}"
    body = base64.urlsafe_b64encode(claims.encode()).rstrip(b"=").decode()
    return f"{TICKET_PREFIX}{body}.{_ticket_mac(key_source, body)}"


def read_ticket(ticket: str, key_source: str, now: float) -> Caller | None:
    """The caller a ticket was issued to, if it is genuine and not expired."""
    if not ticket.startswith(TICKET_PREFIX):
        return None
    body, _, mac = ticket.removeprefix(TICKET_PREFIX).partition(".")
    if not hmac.compare_digest(mac.encode(), _ticket_mac(key_source, body).encode()):
        return None
    try:
        claims = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
        kind, agent_id, token_hash, expires = claims.split("|")
        if kind not in ("operator", "agent") or int(expires) < now:
            return None
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return Caller(cast(Literal["operator", "agent"], kind), agent_id or None, token_hash or None)
