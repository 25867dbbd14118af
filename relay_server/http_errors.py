"""Errors as HTTP sees them: the status of each domain error, the errors only a transport has
(a body over the limit, a rate limit), the 422 body, and every status an operation can answer.

A domain error's status is found by walking its class's MRO, so a new subclass inherits the
status of its parent without touching this file.
"""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from relay_api import errors
from relay_api.operations import Operation


class PayloadTooLarge(errors.RelayError):
    """The request body is over the configured limit."""

    code = "payload_too_large"


class RateLimited(errors.RelayError):
    """The caller is over its rate limit."""

    code = "rate_limited"

    def __init__(self, detail: str, retry_after: float) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


STATUS: dict[type[errors.RelayError], int] = {
    errors.AuthenticationError: 401,
    errors.PermissionDenied: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    PayloadTooLarge: 413,
    RateLimited: 429,
    errors.BridgeError: 502,
    errors.StorageUnavailable: 503,
    errors.RelayError: 500,
}

DESCRIPTIONS = {
    400: "The request could not be read: a malformed line or header, or one over 8190 bytes",
    401: "Credentials are missing, malformed or unknown",
    403: "The caller may not do this",
    404: "Not found",
    408: "The request body stopped coming; the connection is closed",
    409: "The resource's state forbids this",
    413: "The body is over the limit",
    422: "Validation Error",
    429: "Over a rate limit; retry after Retry-After seconds",
    502: "The operator's messaging platform failed; the notification is kept as failed",
    503: "The database cannot serve now, or the server is at its connection limit; retry after"
    " Retry-After seconds",
}


def status_of(error: type[errors.RelayError]) -> int:
    """The HTTP status of a domain error: that of its nearest ancestor in ``STATUS``."""
    for cls in error.__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def waits(op: Operation[Any]) -> bool:
    """Whether the operation may hold its request open: a stream, or a long-poll (``wait``),
    each one of the caller's ``max_waits_per_caller``."""
    return op.stream or (op.query is not None and "wait" in op.query.model_fields)


def statuses(op: Operation[Any]) -> tuple[int, ...]:
    """Every error status the operation can answer, in order: those of its domain errors, and
    those of the transport (an unreadable request, a rate limit, a body, malformed parameters or
    headers, the server's connection ceiling)."""
    found = {status_of(error) for error in op.raises} | {400, 503}
    if op.rate_limit != "none" or waits(op):
        found.add(429)
    if op.body is not None:
        found |= {408, 413, 422}
    if op.path_params is not None or op.query is not None or op.access == "token":
        found.add(422)  # a malformed parameter or header
    return tuple(sorted(found))


class ValidationFailure(BaseModel):
    """One validation failure, shaped as FastAPI shapes it; its schema is ``ValidationError``,
    the name SPEC.md gives it (see ``openapi.SCHEMA_NAMES``)."""

    model_config = ConfigDict(title="ValidationError")

    loc: list[str | int] = Field(title="Location")
    msg: str = Field(title="Message")
    type: str = Field(title="Error Type")
    input: Any = Field(default=None, title="Input")
    ctx: dict[str, Any] | None = Field(default=None, title="Context")


class HTTPValidationError(BaseModel):
    """The body of a 422 answer: FastAPI's, with the ``code`` every other error body has."""

    detail: list[ValidationFailure] = Field(default_factory=list, title="Detail")
    code: Literal["validation_error"] = Field(default="validation_error", title="Code")


def invalid(failures: list[dict[str, Any]]) -> web.Response:
    """A 422 answer listing ``failures`` (``ValidationFailure`` shaped)."""
    return web.json_response({"detail": failures, "code": "validation_error"}, status=422)
