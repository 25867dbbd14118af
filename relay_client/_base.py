"""What the sync and async clients share: configuration, retry policy, response decoding."""

from __future__ import annotations

import random
import uuid
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from relay_api.headers import parse_retry_after
from relay_api.operations import Operation
from relay_client import errors
from relay_client.config import ClientConfig
from relay_client.tracing import trace_headers

if TYPE_CHECKING:
    from relay_client._flow import Send

M = TypeVar("M", bound=BaseModel)

MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 60.0

# Safe to repeat: the request never reached the server.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


# What a request's retry policy is sent after each attempt, and what it yields or returns.
Outcome = httpx.Response | httpx.TransportError
Retries = Generator[float, Outcome, httpx.Response]


def retries(config: ClientConfig, method: str, idempotent: bool) -> Retries:
    """One request's retry policy, written once for both clients as a flow (as httpx writes
    its auth flows): it yields the seconds to wait before each attempt (0 before the first),
    is sent the attempt's response or transport error, and returns the response to decode, or
    raises the error that ends the tries."""
    wait = 0.0
    for attempt in range(config.max_retries + 1):
        last = attempt == config.max_retries
        outcome = yield wait
        if isinstance(outcome, httpx.TransportError):
            if last or not retryable_error(outcome, method, idempotent):
                raise transport_error(outcome, config.url) from outcome
            wait = backoff(attempt, None)
        elif last or not retryable_response(outcome):
            return outcome
        else:
            wait = backoff(attempt, retry_after_of(outcome))
    raise AssertionError("unreachable: the last attempt returns or raises")


def prepared(
    http: httpx.Client | httpx.AsyncClient, config: ClientConfig, request: Send[Any]
) -> tuple[Retries, httpx.Request]:
    """The retry policy of ``request`` and the HTTP request its attempts send."""
    op = request.op
    sending = http.build_request(
        op.method,
        path_of(op, request.path),
        json=request.json,
        params=request.params,
        headers=idempotency_headers(op.idempotent) | trace_headers(),
        timeout=request.timeout if request.timeout is not None else config.timeout,
    )
    return retries(config, op.method, op.idempotent), sending


def resumed(policy: Retries, outcome: Outcome) -> float | httpx.Response:
    """What ``policy`` says after ``outcome``: seconds to wait before another attempt, or
    the response to decode."""
    try:
        return policy.send(outcome)
    except StopIteration as done:
        answer: httpx.Response = done.value
        return answer


def retryable_response(response: httpx.Response) -> bool:
    """429 and 5xx are worth another try; a 409 never is."""
    return response.status_code == 429 or response.status_code >= 500


def retryable_error(exc: httpx.TransportError, method: str, idempotent: bool = False) -> bool:
    """A request that never left is always safe to repeat; a lost answer only for a GET or a
    create carrying an idempotency key."""
    return isinstance(exc, _NOT_SENT) or method == "GET" or idempotent


def idempotency_headers(idempotent: bool) -> dict[str, str]:
    """A fresh ``Idempotency-Key`` for one logical create (kept across its retries)."""
    return {"Idempotency-Key": f"rly-{uuid.uuid4().hex}"} if idempotent else {}


def backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): the server's ``Retry-After``
    when it gave one, else exponential with jitter so that clients do not retry in step."""
    if retry_after is not None:
        return min(retry_after, MAX_RETRY_AFTER)
    return min(MAX_BACKOFF, 0.5 * 2.0**attempt) * random.uniform(0.5, 1.0)


def retry_after_of(response: httpx.Response) -> float | None:
    """The response's ``Retry-After`` in seconds, if any."""
    return parse_retry_after(response.headers.get("Retry-After"))


def transport_error(exc: httpx.TransportError, url: str) -> errors.ConnectionError:
    """The client's error for a failed transport."""
    if isinstance(exc, httpx.TimeoutException):
        return errors.TimeoutError(f"no answer from {url} in time ({exc.__class__.__name__})")
    return errors.ConnectionError(f"cannot reach {url}: {exc}")


def decode(response: httpx.Response, cast: type[M]) -> M:
    """The response as ``cast``, or the error it stands for."""
    if response.is_error:
        raise errors.error_for(response)
    return cast.model_validate_json(response.content)


def long_poll_timeout(wait: float | None, timeout: float) -> float | None:
    """A request timeout that outlasts the server's long-poll ``wait``."""
    return None if not wait else max(timeout, wait + 10.0)


def wire(**fields: Any) -> dict[str, Any]:
    """Request fields without the ones left unset, as JSON has them (a model as its fields, a
    datetime in ISO 8601, a tuple as a list)."""
    given = {name: value for name, value in fields.items() if value is not None}
    if all(type(value) in _PLAIN for value in given.values()):
        return given
    return dict(to_jsonable_python(given))


_PLAIN = frozenset({str, int, float, bool})


def segment(value: str | int) -> str:
    """A path segment, escaped."""
    return quote(str(value), safe=":@")


def path_of(op: Operation[Any], values: dict[str, str | int] | None) -> str:
    """The operation's path with its parameters filled in, escaped."""
    return op.path.format(**{name: segment(value) for name, value in (values or {}).items()})
