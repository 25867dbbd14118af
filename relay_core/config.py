"""What the domain is told: the part of a process's settings that the services read.

``DomainSettings`` is one part of the server's settings (``relay_server.settings``), where each
field is also an environment variable (``RELAY_PRESENCE_TTL``) and a flag (``--presence-ttl``).
``CoreConfig`` adds what the server derives at start: whether tokens are checked, and the
operator token's hash.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field, SecretBytes

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

    reservations_per_agent: int = Field(
        default=100,
        ge=1,
        le=100_000,
        description="active reservations one agent may hold in a workspace",
    )
    reservation_patterns_per_agent: int = Field(
        default=1000,
        ge=1,
        le=1_000_000,
        description="patterns one agent's active reservations of a workspace may hold together",
    )
    reservations_per_workspace: int = Field(
        default=1000, ge=1, le=100_000, description="active reservations of one workspace"
    )
    reservation_patterns_per_workspace: int = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="patterns the active reservations of one workspace may hold together",
    )

    remind_after: int | None = Field(
        default=None,
        ge=1,
        le=604_800,
        description="seconds a pending approval waits before the operator is reminded once on "
        "every platform; none: no reminder (an approval or a policy may set its own)",
    )
    escalate_after: int | None = Field(
        default=None,
        ge=1,
        le=604_800,
        description="seconds a pending approval waits on a step of the escalation before the "
        "next step is offered it; none: it is not escalated (unless it or a policy says)",
    )
    escalation: str = Field(
        default="",
        pattern=r"^([a-z]+(,[a-z]+){0,9})?$",
        description="the platforms an unanswered approval goes to in turn, comma-separated "
        "(telegram,email): the first asks at once, each next one after escalate_after; "
        "platforms not named ask at once",
    )

    @property
    def escalation_steps(self) -> tuple[str, ...]:
        """The platforms of the escalation, in turn (none: no escalation)."""
        return tuple(self.escalation.split(",")) if self.escalation else ()

    webhook_retry_schedule: str = Field(
        default="5,300,1800,7200,18000,36000,36000",
        pattern=r"^([0-9]{1,6}(\.[0-9]+)?(,[0-9]{1,6}(\.[0-9]+)?){0,19})?$",
        description="seconds before each retry of a failed webhook delivery or platform job "
        "(a card, its edit, a reminder), comma-separated (the first attempt is made at once; "
        "empty: no retry)",
    )
    webhook_timeout_seconds: float = Field(
        default=15.0, gt=0, le=300, description="how long a webhook endpoint has to answer"
    )
    webhook_secret_overlap_seconds: float = Field(
        default=86400.0,
        ge=0,
        description="how long after a rotation deliveries are signed with the old secret too",
    )
    webhook_keep_days: float = Field(
        default=30.0,
        ge=0,
        le=36500,
        description="how long a finished webhook delivery (succeeded or failed) stays listed; "
        "0: for ever",
    )
    webhooks_allow_private: bool = Field(
        default=False,
        description="let webhook endpoints be on loopback, private or link-local addresses "
        "(a receiver on this host or network)",
    )
    a2a_allow_private: bool = Field(
        default=False,
        description="let agents' A2A calls (POST /v1/a2a/send) reach loopback, private or "
        "link-local addresses (an A2A agent on this host or network)",
    )


class CoreConfig(DomainSettings):
    """The domain's settings, and what the server derived from its own at start."""

    mirror_bridges: frozenset[str] = frozenset()  # the platforms that copy room posts
    auth_enabled: bool = True
    operator_token_hash: str = ""
    # What webhook secrets are sealed under (from the operator token; a test's own otherwise).
    server_secret: SecretBytes = Field(default_factory=lambda: SecretBytes(os.urandom(32)))
