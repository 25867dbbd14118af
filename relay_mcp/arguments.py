"""Tool arguments with the API's own limits: a model learns them from the schema, not by failing.

``like(model, field, description)`` gives an argument's ``Field``: its one-line description and
the limits the contract puts on that field of a request (``relay_api``): its pattern, lengths and
bounds, read from the field's JSON schema, so that the tool's input schema states them and the
SDK checks them before the call, as the server would.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from relay_api import models as m
from relay_api import params as p

# A JSON schema's keyword, and the Field argument that sets it.
_LIMITS = {
    "pattern": "pattern",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minimum": "ge",
    "maximum": "le",
    "minItems": "min_length",
    "maxItems": "max_length",
}


def like(model: type[BaseModel], name: str, description: str) -> Any:
    """An argument described by ``description`` and held to the limits of ``model``'s field
    ``name``."""
    limits = {_LIMITS[key]: value for key, value in limits_of(model, name).items()}
    return Field(description=description, **limits)


def limits_of(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The limits in the JSON schema of ``model``'s field ``name`` (of its value, when the
    field is nullable)."""
    schema = model.model_json_schema()["properties"][name]
    kinds = [k for k in schema.get("anyOf", [schema]) if k.get("type") != "null"]
    return {key: value for key, value in kinds[0].items() if key in _LIMITS}


def agent(description: str) -> Any:
    """An agent's id."""
    return like(m.MessageCreate, "to", description)


def integer_id(description: str) -> Any:
    """A numeric id (a message's, a task's, an approval's, a notification's)."""
    return like(m.MessageCreate, "reply_to", description)


def resource_id(description: str) -> Any:
    """A room's or an intervention's id."""
    return like(m.MessageCreate, "room_id", description)


def cursor() -> Any:
    """The cursor of a list's next page."""
    return like(p.PageQuery, "cursor", "the last next_cursor")
