"""The OpenAPI 3.1.0 document, generated from the route table and the pydantic models."""

from __future__ import annotations

import inspect
import operator
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from relay_core import __version__, idempotency
from relay_core import models as m
from relay_core.services import Services
from relay_server.routes import ROUTES, Route

REF = "#/components/schemas/{model}"

ERRORS = {
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

_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again",
        "schema": {"type": "integer", "minimum": 1},
    }
}

_HEADERS: list[dict[str, Any]] = [
    {
        "name": "X-Agent-ID",
        "in": "header",
        "required": False,
        "schema": {"type": "string", "pattern": m.ID_PATTERN},
        "description": "The calling agent; must match an agent token's agent",
    },
    {
        "name": "Authorization",
        "in": "header",
        "required": False,
        "schema": {"type": "string"},
        "description": "Bearer <token>: the operator token or an agent token",
    },
]


_IDEMPOTENCY_HEADER: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": {
        "type": "string",
        "minLength": idempotency.MIN_KEY_LENGTH,
        "maxLength": idempotency.MAX_KEY_LENGTH,
        "pattern": "^[!-~]+$",
    },
    "description": "Retry-safe creation: the same key and body answer the first answer again",
}


def _schemas(routes: tuple[Route, ...]) -> tuple[dict[Any, Any], dict[str, Any]]:
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for route in routes:
        if route.body is not None:
            wanted.append((route.body, "validation"))
        wanted.append((route.response, "serialization"))
    wanted += [(m.HTTPValidationError, "validation"), (m.ErrorResponse, "serialization")]
    refs, top = models_json_schema(list(dict.fromkeys(wanted)), ref_template=REF)
    return refs, top.get("$defs", {})


def _parameters(model: type[BaseModel] | None, where: str) -> list[dict[str, Any]]:
    if model is None:
        return []
    schema = model.model_json_schema(ref_template=REF)
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": where, "required": where == "path" or name in required, "schema": prop}
        for name, prop in schema["properties"].items()
    ]


def _summary(route: Route, services: Services) -> str:
    method = operator.attrgetter(route.operation)(services)
    return (inspect.getdoc(method) or route.operation).split("\n")[0]


def _operation(route: Route, refs: dict[Any, Any], services: Services) -> dict[str, Any]:
    def content(ref: dict[str, Any]) -> dict[str, Any]:
        return {"application/json": {"schema": ref}}

    success = content(refs[(route.response, "serialization")])
    if route.stream:
        frame = {
            "type": "object",
            "description": "One Server-Sent Event: its id is the cursor to resume from",
            "properties": {
                "id": {"type": "string"},
                "event": {"type": "string"},
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": refs[(route.response, "serialization")],
                },
            },
            "required": ["data"],
        }
        success = {"text/event-stream": {"schema": frame}}
    responses: dict[str, Any] = {str(route.status): {"description": "Success", "content": success}}
    error_ref = refs[(m.ErrorResponse, "serialization")]
    invalid_ref = refs[(m.HTTPValidationError, "validation")]
    for status in route.statuses:
        described: dict[str, Any] = {
            "description": ERRORS[status],
            "content": content(invalid_ref if status == 422 else error_ref),
        }
        if status in (429, 503):
            described["headers"] = _RETRY_AFTER
        responses[str(status)] = described
    parameters = _parameters(route.path_params, "path") + _parameters(route.query, "query")
    if route.access == "token":
        parameters += _HEADERS
    if route.idempotent:
        parameters.append(_IDEMPOTENCY_HEADER)
    operation: dict[str, Any] = {
        "operationId": route.operation,
        "summary": _summary(route, services),
        "tags": [route.tag],
        "responses": responses,
    }
    if parameters:
        operation["parameters"] = parameters
    if route.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": content(refs[(route.body, "validation")]),
        }
    if route.access == "token":
        operation["security"] = [{"bearer": []}]
    else:
        operation["security"] = []
    return operation


def build_openapi(services: Services, routes: tuple[Route, ...] = ROUTES) -> dict[str, Any]:
    """The whole document; summaries are the first lines of the service methods' docstrings."""
    refs, schemas = _schemas(routes)
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, refs, services)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Relay",
            "version": __version__,
            "description": "Coordination service for software agents and one human operator.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
