"""The OpenAPI 3.1.0 document, generated from the operation table and the pydantic models.

Shaped for the client generators people point at it (openapi-python-client, openapi-typescript):
every enum is named once in the components, so that generators make one class for it; an
optional field has no ``default: null``, which some read as "always present"; the event stream
is text, not a JSON object.
"""

from __future__ import annotations

import functools
import json
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

from relay_api import __version__
from relay_api import models as m
from relay_api.operations import OPERATIONS, Operation
from relay_core import idempotency
from relay_server.http_errors import DESCRIPTIONS, HTTPValidationError, statuses

REF = "#/components/schemas/{model}"

# Schemas named otherwise than their class: FastAPI's name for a 422's item, which SPEC.md keeps.
SCHEMA_NAMES = {"ValidationFailure": "ValidationError"}


class _Named(GenerateJsonSchema):
    def normalize_name(self, name: str) -> str:
        return super().normalize_name(SCHEMA_NAMES.get(name, name))


_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again",
        "schema": {"type": "integer", "minimum": 1},
    }
}

# Authorization is the bearer security scheme's (OpenAPI ignores it as a parameter).
_HEADERS: list[dict[str, Any]] = [
    {
        "name": "X-Agent-ID",
        "in": "header",
        "required": False,
        "schema": {"type": "string", "pattern": m.ID_PATTERN},
        "description": "The calling agent; must match an agent token's agent",
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


_LAST_EVENT_ID: dict[str, Any] = {
    "name": "Last-Event-ID",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "pattern": "^[0-9]{1,19}$"},
    "description": "The id of the last event received; the stream resumes after it (wins over"
    " `after`)",
}


def _named_enums() -> dict[tuple[Any, ...], str]:
    """The enums ``relay_api.models`` names (``TaskStatus = Literal[...]``), by their values;
    the first name of a set of values wins (``EnrollmentStatus`` is ``ApprovalStatus``)."""
    named: dict[tuple[Any, ...], str] = {}
    for name, value in vars(m).items():
        if typing.get_origin(value) is typing.Literal:
            named.setdefault(typing.get_args(value), name)
    return named


_ENUMS = _named_enums()


def _tidy(node: Any, used: set[str]) -> Any:
    """``node`` with each enum the models name replaced by a reference to it (noted in ``used``)
    and without ``default: null``."""
    if isinstance(node, list):
        return [_tidy(item, used) for item in node]
    if not isinstance(node, dict):
        return node
    name = _ENUMS.get(tuple(node.get("enum", ())))
    if name is not None:
        used.add(name)
        kept = {key: node[key] for key in ("description", "default") if key in node}
        return {"$ref": REF.format(model=name), **kept}
    return {
        key: _tidy(value, used)
        for key, value in node.items()
        if not (key == "default" and value is None)
    }


def _enum_schemas(used: set[str]) -> dict[str, Any]:
    by_name = {name: values for values, name in _ENUMS.items()}
    return {
        name: {"type": "string", "enum": list(by_name[name]), "title": name}
        for name in sorted(used)
    }


def _summary_and_description(op: Operation[Any]) -> dict[str, str]:
    """The first sentence of what the row says it does as the summary; all of it as the
    description when it says more."""
    text = (op.doc or op.id).replace("``", "`")
    end = text.find(". ")
    summary = text if end < 0 else text[: end + 1]
    return {"summary": summary} | ({"description": text} if text != summary else {})


def _schemas(operations: tuple[Operation[Any], ...]) -> tuple[dict[Any, Any], dict[str, Any]]:
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for op in operations:
        if op.body is not None:
            wanted.append((op.body, "validation"))
        wanted.append((op.response, "serialization"))
        if op.conflict is not None:
            wanted.append((op.conflict, "serialization"))
    wanted += [(HTTPValidationError, "validation"), (m.ErrorResponse, "serialization")]
    refs, top = models_json_schema(
        list(dict.fromkeys(wanted)), ref_template=REF, schema_generator=_Named
    )
    schemas: dict[str, Any] = top.get("$defs", {})
    for op in operations:
        if op.body is not None:
            _defaults_described(schemas[op.body.__name__])
    return refs, schemas


def _defaults_described(body: dict[str, Any]) -> None:
    """A request body's defaults said in words: generators (openapi-typescript) read a
    ``default`` as "always present" and would make the client send every such field."""
    for field in body.get("properties", {}).values():
        if field.get("default") is not None:
            default = json.dumps(field.pop("default"))
            said = f"Omitted: {default}."
            field["description"] = (
                f"{field['description']} {said}" if "description" in field else said
            )


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
        stream = {
            "type": "string",
            "description": "Server-Sent Events: each `data:` line is one JSON "
            f"`{op.response.__name__}`, its `id:` the cursor to resume from; a comment line now"
            " and then keeps the connection alive",
        }
        success = {"text/event-stream": {"schema": stream}}
    responses: dict[str, Any] = {str(op.status): {"description": "Success", "content": success}}
    error_ref = refs[(m.ErrorResponse, "serialization")]
    invalid_ref = refs[(HTTPValidationError, "validation")]
    for status in statuses(op):
        body = invalid_ref if status == 422 else error_ref
        if status == 409 and op.conflict is not None:
            body = refs[(op.conflict, "serialization")]
        described: dict[str, Any] = {"description": DESCRIPTIONS[status], "content": content(body)}
        if status in (429, 503):
            described["headers"] = _RETRY_AFTER
        responses[str(status)] = described
    parameters = _parameters(op.path_params, "path") + _parameters(op.query, "query")
    if op.access == "token":
        parameters += _HEADERS
    if op.idempotent:
        parameters.append(_IDEMPOTENCY_HEADER)
    if op.stream:
        parameters.append(_LAST_EVENT_ID)
    operation: dict[str, Any] = {
        "operationId": op.id,
        **_summary_and_description(op),
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
        if op.operator_only:
            operation["x-operator-only"] = True  # an agent's token is refused (403)
    else:
        operation["security"] = []
    return operation


def build_openapi(operations: tuple[Operation[Any], ...] = OPERATIONS) -> dict[str, Any]:
    """The whole document; summaries are the first sentences of the service methods'
    docstrings."""
    refs, schemas = _schemas(operations)
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, refs)
    enums: set[str] = set()
    paths, schemas = _tidy(paths, enums), _tidy(schemas, enums)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Relay",
            "version": __version__,
            "description": "Coordination service for software agents and one human operator.",
        },
        # Relative: the API is where this document was served from.
        "servers": [{"url": "/", "description": "The server that serves this document"}],
        "paths": paths,
        "components": {
            "schemas": schemas | _enum_schemas(enums),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The operator token or an agent token",
                }
            },
        },
    }


@functools.cache
def served_document() -> bytes:
    """The document as ``/openapi.json`` serves it, built once a process: the contract does not
    change while it runs, and pydantic takes long to build it (docs/performance.md)."""
    return json.dumps(build_openapi()).encode()
