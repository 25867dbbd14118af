"""The OpenAPI 3.1.0 document, generated from the operation table and the pydantic models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from relay_core import __version__, idempotency
from relay_core import models as m
from relay_core.operations import OPERATIONS, Operation
from relay_server.http_errors import DESCRIPTIONS, HTTPValidationError, statuses

REF = "#/components/schemas/{model}"

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


def _schemas(operations: tuple[Operation[Any], ...]) -> tuple[dict[Any, Any], dict[str, Any]]:
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for op in operations:
        if op.body is not None:
            wanted.append((op.body, "validation"))
        wanted.append((op.response, "serialization"))
    wanted += [(HTTPValidationError, "validation"), (m.ErrorResponse, "serialization")]
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


def _operation(op: Operation[Any], refs: dict[Any, Any]) -> dict[str, Any]:
    def content(ref: dict[str, Any]) -> dict[str, Any]:
        return {"application/json": {"schema": ref}}

    success = content(refs[(op.response, "serialization")])
    if op.stream:
        frame = {
            "type": "object",
            "description": "One Server-Sent Event: its id is the cursor to resume from",
            "properties": {
                "id": {"type": "string"},
                "event": {"type": "string"},
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": refs[(op.response, "serialization")],
                },
            },
            "required": ["data"],
        }
        success = {"text/event-stream": {"schema": frame}}
    responses: dict[str, Any] = {str(op.status): {"description": "Success", "content": success}}
    error_ref = refs[(m.ErrorResponse, "serialization")]
    invalid_ref = refs[(HTTPValidationError, "validation")]
    for status in statuses(op):
        described: dict[str, Any] = {
            "description": DESCRIPTIONS[status],
            "content": content(invalid_ref if status == 422 else error_ref),
        }
        if status in (429, 503):
            described["headers"] = _RETRY_AFTER
        responses[str(status)] = described
    parameters = _parameters(op.path_params, "path") + _parameters(op.query, "query")
    if op.access == "token":
        parameters += _HEADERS
    if op.creates:
        parameters.append(_IDEMPOTENCY_HEADER)
    operation: dict[str, Any] = {
        "operationId": op.id,
        "summary": op.summary,
        "tags": [op.tag],
        "responses": responses,
    }
    if parameters:
        operation["parameters"] = parameters
    if op.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": content(refs[(op.body, "validation")]),
        }
    if op.access == "token":
        operation["security"] = [{"bearer": []}]
    else:
        operation["security"] = []
    return operation


def build_openapi(operations: tuple[Operation[Any], ...] = OPERATIONS) -> dict[str, Any]:
    """The whole document; summaries are the first lines of the service methods' docstrings."""
    refs, schemas = _schemas(operations)
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, refs)
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
