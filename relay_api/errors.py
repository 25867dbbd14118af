"""The domain error tree. Each error carries a stable machine ``code``; HTTP lives elsewhere.

RelayError                 internal
├── AuthenticationError    unauthenticated
├── PermissionDenied       forbidden
├── NotFound               not_found
├── Conflict               conflict
├── BridgeError            bridge_error
├── StorageUnavailable     storage_unavailable
└── InvalidInput           invalid (a value the schema admits but the domain does not read)
"""

from __future__ import annotations

from typing import Any


class RelayError(Exception):
    """Base of every error Relay raises on purpose."""

    code = "internal"
    retry_after: float | None = None  # seconds after which trying again makes sense
    more: dict[str, Any] | None = None  # fields the error's body carries beside these two

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class AuthenticationError(RelayError):
    """Credentials are required and are missing, malformed or unknown."""

    code = "unauthenticated"


class PermissionDenied(RelayError):
    """The caller is known but may not do this."""

    code = "forbidden"


class NotFound(RelayError):
    """The named resource does not exist (or may not be probed)."""

    code = "not_found"


class Conflict(RelayError):
    """The resource is in a state that forbids the operation."""

    code = "conflict"


class BridgeError(RelayError):
    """The operator's messaging platform failed."""

    code = "bridge_error"


class StorageUnavailable(RelayError):
    """The database cannot be read or written now (disk full, unreachable, locked); nothing
    was changed, and the same request may succeed once it recovers."""

    code = "storage_unavailable"

    def __init__(
        self, detail: str, retry_after: float = 1.0, *, for_the_log: str | None = None
    ) -> None:
        super().__init__(detail)
        self.retry_after = retry_after
        self.for_the_log = for_the_log  # what only the log may say: a file's path, a host

    @property
    def logged(self) -> str:
        """The detail as the log says it, with what the client's answer leaves out."""
        return f"{self.detail} ({self.for_the_log})" if self.for_the_log else self.detail


class InvalidInput(RelayError):
    """A value that passed validation does not make sense here (a forged cursor); the server
    answers it like any other invalid input, naming the parameter."""

    code = "invalid"

    def __init__(self, field: str, detail: str, where: str = "query") -> None:
        super().__init__(detail)
        self.field = field
        self.where = where  # "query" or "body": what holds the field


class Contested(Conflict):
    """Paths another agent holds: ``more`` names each reservation in the way."""

    def __init__(self, detail: str, conflicts: list[dict[str, Any]]) -> None:
        super().__init__(detail)
        self.more = {"conflicts": conflicts}
