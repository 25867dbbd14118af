"""Errors raised by the client.

RelayError
├── APIStatusError              the server answered with an error status
│   ├── BadRequestError             400
│   ├── AuthenticationError         401
│   ├── PermissionDeniedError       403
│   ├── NotFoundError               404
│   ├── RequestTimeoutError         408: the body stopped coming
│   ├── ConflictError               409
│   ├── PayloadTooLargeError        413
│   ├── UnprocessableEntityError    422 (alias ValidationError), with the parsed ``errors``
│   ├── RateLimitError              429, with ``retry_after``
│   └── ServerError                 5xx
│       ├── BridgeError                 502: the operator's platform failed
│       └── ServiceUnavailableError     503: storage down or server full, with ``retry_after``
├── ConnectionError             the server could not be reached (also a builtin ConnectionError)
│   └── TimeoutError                no answer in time (also a builtin TimeoutError)
└── Fatal                       an agent's program cannot go on: uncaught, one line and exit 1
    ├── IdentityError               the agent's token was refused, or its id is taken
    └── EnrollmentError             an enrollment was rejected or expired while waiting
"""

from __future__ import annotations

import builtins
import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from relay_api import errors as domain
from relay_api.headers import parse_retry_after

if TYPE_CHECKING:
    from relay_api.models import Contested


class RelayError(Exception):
    """Base of every error the client raises."""


class APIStatusError(RelayError):
    """The server answered with an error status."""

    status_code: int = 0
    default_code = "http_error"

    def __init__(self, response: httpx.Response, body: Any) -> None:
        self.response = response
        self.status_code = response.status_code
        self.body = body
        self.request_id: str | None = response.headers.get("X-Request-ID")
        detail = body.get("detail") if isinstance(body, dict) else None
        self.code: str = (body.get("code") if isinstance(body, dict) else None) or self.default_code
        self.detail: Any = (
            detail if detail is not None else (response.text or response.reason_phrase)
        )
        super().__init__(f"{self.status_code} {self.code}: {self.message}")

    @property
    def message(self) -> str:
        """The server's detail as one readable line."""
        return str(self.detail)


class BadRequestError(APIStatusError):
    """400."""


class AuthenticationError(APIStatusError):
    """401: credentials missing, malformed or unknown."""


class PermissionDeniedError(APIStatusError):
    """403: the caller may not do this."""


class NotFoundError(APIStatusError):
    """404: no such resource."""


class ConflictError(APIStatusError):
    """409: the resource's state forbids this."""

    @property
    def conflicts(self) -> list[Contested]:
        """A refused reservation's: the reservations in its way (none for another conflict)."""
        from relay_api.models import Contested  # the contract's models, only when asked

        said = self.body.get("conflicts", []) if isinstance(self.body, dict) else []
        return [Contested.model_validate(each) for each in said]


class PayloadTooLargeError(APIStatusError):
    """413: the body is over the server's limit."""


class UnprocessableEntityError(APIStatusError):
    """422: validation failed; ``errors`` is the FastAPI-shaped ``detail`` list."""

    default_code = "validation_error"

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The ``detail`` list: ``loc``, ``msg`` and ``type`` of each failure."""
        return self.detail if isinstance(self.detail, list) else []

    @property
    def message(self) -> str:
        parts = [
            f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg', '')}" for e in self.errors
        ]
        return "; ".join(parts) or str(self.detail)


ValidationError = UnprocessableEntityError


class RequestTimeoutError(APIStatusError):
    """408: the server stopped waiting for the request's body."""


class RateLimitError(APIStatusError):
    """429: over the rate limit; ``retry_after`` seconds, when the server said."""

    def __init__(self, response: httpx.Response, body: Any) -> None:
        super().__init__(response, body)
        self.retry_after = parse_retry_after(response.headers.get("Retry-After"))


class ServerError(APIStatusError):
    """5xx: the server failed."""


class BridgeError(ServerError):
    """502: the operator's messaging platform failed; the notification was kept as failed."""


class ServiceUnavailableError(ServerError):
    """503: the server's database cannot serve now, or it is at its connection limit; nothing
    was changed, and ``retry_after`` seconds later the same request may succeed."""

    def __init__(self, response: httpx.Response, body: Any) -> None:
        super().__init__(response, body)
        self.retry_after = parse_retry_after(response.headers.get("Retry-After"))


class ConnectionError(RelayError, builtins.ConnectionError):  # noqa: A001
    """The server could not be reached."""


class TimeoutError(ConnectionError, builtins.TimeoutError):  # noqa: A001
    """The server did not answer in time."""


class Fatal(RelayError):
    """Base of the errors after which an agent's program cannot go on. Left uncaught, it ends
    the program with its message as one line on stderr and exit status 1, no traceback: made,
    it sets ``sys.excepthook`` to say it so (any other exception goes to the hook there was)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        _say_when_uncaught()


def _say_when_uncaught() -> None:
    previous = sys.excepthook
    if getattr(previous, "relay_fatal", False):
        return

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        if isinstance(value, Fatal):
            print(value, file=sys.stderr, flush=True)
        else:
            previous(kind, value, tb)

    hook.relay_fatal = True  # type: ignore[attr-defined]
    sys.excepthook = hook


class IdentityError(Fatal):
    """The agent's identity cannot be had or kept: its token was refused (at start or while it
    ran), or its id is registered and no token of it is kept here. The message says what to do."""


class EnrollmentError(Fatal):
    """An enrollment ended without approval (rejected or expired)."""

    def __init__(self, status: str, enroll_id: int) -> None:
        super().__init__(f"enrollment {enroll_id} was {status}")
        self.status = status
        self.enroll_id = enroll_id


# The body's ``code`` names the error; the status decides only for bodies without one (a 422, or
# an answer from a proxy in front of the server).
_BY_CODE: dict[str, type[APIStatusError]] = {
    domain.AuthenticationError.code: AuthenticationError,
    domain.PermissionDenied.code: PermissionDeniedError,
    domain.NotFound.code: NotFoundError,
    domain.Conflict.code: ConflictError,
    domain.BridgeError.code: BridgeError,
    domain.StorageUnavailable.code: ServiceUnavailableError,
    domain.RelayError.code: ServerError,
    # the transport's own: an unreadable request, a body over the limit or too slow, a rate
    # limit, a full server
    "bad_request": BadRequestError,
    "payload_too_large": PayloadTooLargeError,
    "request_timeout": RequestTimeoutError,
    "rate_limited": RateLimitError,
    "unavailable": ServiceUnavailableError,
}

_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: RequestTimeoutError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: UnprocessableEntityError,
    429: RateLimitError,
    502: BridgeError,
    503: ServiceUnavailableError,
}


def error_for(response: httpx.Response) -> APIStatusError:
    """The exception for an error response."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    code = body.get("code") if isinstance(body, dict) else None
    cls = _BY_CODE.get(code) if isinstance(code, str) else None
    cls = cls or _BY_STATUS.get(response.status_code)
    if cls is None:
        cls = ServerError if response.status_code >= 500 else APIStatusError
    return cls(response, body)
