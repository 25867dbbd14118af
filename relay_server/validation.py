"""Turn request parts into models, and failures into FastAPI-shaped 422 details.

``loc`` starts with where the value came from (``path``, ``query``, ``header``, ``body``) and
continues with pydantic's own location, exactly as FastAPI reports it.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

import pydantic
from aiohttp import web

from relay_core import idempotency
from relay_server.app_keys import SETTINGS
from relay_server.http_errors import PayloadTooLarge

M = TypeVar("M", bound=pydantic.BaseModel)


class RequestInvalid(Exception):
    """A request failed validation; ``errors`` is the 422 ``detail`` list."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("request validation failed")
        self.errors = errors


def _details(
    exc: pydantic.ValidationError, source: str, *, echo_input: bool
) -> list[dict[str, Any]]:
    # NaN and Infinity in an echoed input stay their names, as text: the answer is strict JSON.
    errors: list[dict[str, Any]] = json.loads(exc.json(include_url=False), parse_constant=str)
    for error in errors:
        error["loc"] = [source, *error["loc"]]
        if not echo_input:
            error.pop("input", None)
    return errors


def parse_params(model: type[M], values: Mapping[str, str], source: str) -> M:
    """Validate path or query values into ``model``."""
    try:
        # The model's validator itself: model_validate adds a call and its options' checks.
        return model.__pydantic_validator__.validate_python(dict(values))  # type: ignore[no-any-return]
    except pydantic.ValidationError as exc:
        raise RequestInvalid(_details(exc, source, echo_input=True)) from None


async def read_body(request: web.Request) -> bytes:
    """The raw body, refused past the configured size (declared or streamed), and given up on
    (408, connection closed) when it has not all come within the body timeout: a deadline for
    the whole body, so a client trickling a byte at a time cannot hold its connection."""
    settings = request.app[SETTINGS]
    limit = settings.http.max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(limit)
    if request.content.is_eof():
        # The whole body has arrived (a small body comes with its headers): nothing to wait for,
        # and a timer armed for nothing was a tenth of a POST's time.
        whole = request.content.read_nowait()
        if len(whole) > limit:
            raise _too_large(limit)
        return whole
    body = bytearray()
    seconds = settings.http.body_timeout_seconds
    try:
        async with asyncio.timeout(seconds):
            while chunk := await request.content.readany():
                body += chunk
                if len(body) > limit:
                    raise _too_large(limit)
    except TimeoutError:
        raise web.HTTPRequestTimeout(
            reason=f"the body did not all come within {seconds:g} s"
        ) from None
    return bytes(body)


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"the request body is over the limit of {limit} bytes")


async def parse_body(request: web.Request, model: type[M]) -> M:
    """Validate the JSON body into ``model``; invalid JSON is a 422 like any other."""
    raw = await read_body(request)
    if not raw.strip():
        raise RequestInvalid([{"type": "missing", "loc": ["body"], "msg": "Field required"}])
    try:
        return model.__pydantic_validator__.validate_json(raw)  # type: ignore[no-any-return]
    except pydantic.ValidationError as exc:
        invalid = [error for error in exc.errors() if error["type"] == "json_invalid"]
        if invalid:
            reason = invalid[0]["msg"].removeprefix("Invalid JSON: ")
            raise RequestInvalid([_json_error(raw, reason)]) from None
        raise RequestInvalid(_details(exc, "body", echo_input=True)) from None


def _json_error(raw: bytes, reason: str) -> dict[str, Any]:
    """FastAPI's json_invalid detail: the position json.loads reports, else pydantic's reason
    (nesting too deep, or an integer too long for json.loads to read)."""
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        return _json_invalid(exc.pos, exc.msg)
    except UnicodeDecodeError as exc:
        return _json_invalid(exc.start, "the body is not UTF-8")
    except (ValueError, RecursionError):
        pass
    return _json_invalid(0, reason)


def _json_invalid(position: int, reason: str) -> dict[str, Any]:
    return {
        "type": "json_invalid",
        "loc": ["body", position],
        "msg": "JSON decode error",
        "input": {},
        "ctx": {"error": reason},
    }


_IDEMPOTENCY_KEY = re.compile(
    rf"^[!-~]{{{idempotency.MIN_KEY_LENGTH},{idempotency.MAX_KEY_LENGTH}}}$"
)


def idempotency_key(request: web.Request) -> str | None:
    """The request's ``Idempotency-Key``, if it sent a valid one."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not _IDEMPOTENCY_KEY.match(key):
        raise header_error(
            "idempotency-key",
            f"Idempotency-Key must be {idempotency.MIN_KEY_LENGTH}-{idempotency.MAX_KEY_LENGTH}"
            " visible ASCII characters (a random value, such as a UUID)",
        )
    return key


def header_error(name: str, msg: str) -> RequestInvalid:
    # The header's value is never echoed: it may be a credential.
    return RequestInvalid([{"type": "value_error", "loc": ["header", name], "msg": msg}])
