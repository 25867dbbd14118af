"""What the domain is told: the part of a process's settings that the services read.

``DomainSettings`` is one part of the server's settings (``relay_server.settings``), where each
field is also an environment variable (``RELAY_PRESENCE_TTL``) and a flag (``--presence-ttl``).
``CoreConfig`` adds what the server derives at start: whether tokens are checked, and the
operator token's hash.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

POSTGRES_POOL_SIZE = 20  # connections per process (RELAY_POSTGRES_POOL_SIZE)


class DomainSettings(BaseModel):
    """Timings and caps of the domain's rules."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    presence_ttl: float = Field(
        default=60.0, gt=0, description="seconds after its last heartbeat an agent counts online"
    )
    task_lease_seconds: int = Field(
        default=300, ge=1, le=86400, description="a claim's lease when the claim names none"
    )
    enrollment_ttl_seconds: int = Field(
        default=86400, ge=60, description="how long an enrollment waits for a decision"
    )
    idempotency_ttl_seconds: float = Field(
        default=86400.0, ge=1, description="how long a create's retry key is remembered"
    )
    max_wait_seconds: float = Field(
        default=60.0, ge=0, le=60, description="cap on long-poll waits (behind a proxy's timeout)"
    )
    sweep_seconds: float = Field(
        default=1.0,
        ge=0,
        description="how often lapsed task leases are reaped and due enrollments expired in the "
        "background; 0: only when an operation finds them",
    )


class CoreConfig(DomainSettings):
    """The domain's settings, and what the server derived from its own at start."""

    mirror_bridges: frozenset[str] = frozenset()  # the platforms that copy room posts
    auth_enabled: bool = True
    operator_token_hash: str = ""
