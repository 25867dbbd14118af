"""Tool schemas as ``tools/list`` shows them: what a model needs, without what only the code
reads. Every host pays for these bytes in its context (docs/mcp.md says how many)."""

from __future__ import annotations

from typing import Any


def lean(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema as a model needs it: without the titles pydantic makes of names ("Reply
    To"), an optional argument as its value's type alone (``anyOf`` with ``null`` and a
    ``default`` of ``null`` say only "may be left out", which not being required says), and an
    argument's model written in its place (a ``$defs`` name and its ``$ref`` say nothing)."""
    kept = _inlined(_untitled(schema))
    required = set(kept.get("required", ()))
    for name, each in kept.get("properties", {}).items():
        if name in required or each.get("default", 0) is not None:
            continue
        kinds = [k for k in each.get("anyOf", ()) if k != {"type": "null"}]
        if len(kinds) == 1:
            del each["anyOf"]
            each.update(kinds[0])
        elif kinds:
            each["anyOf"] = kinds
        del each["default"]
    return kept


def lean_answer(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema as hosts check an answer against it: each field and its JSON type, no
    deeper (a list's lines are the tool's description's to name, and their schemas would cost
    every host a third of the listing: the budget is the MCP issue's), and admitting a failure's
    ``{code, detail}`` too: clients check an error's structured content against the schema as
    well (the MCP Inspector does), so the answer's own fields are not required (and other
    properties are allowed, as JSON Schema allows them unless told otherwise)."""
    kept = lean(schema)
    # Any answer may carry them: the server's instructions say so once, for every tool.
    kept["properties"].pop("waiting", None)
    kept["properties"].pop("next", None)
    return {
        "type": "object",
        "properties": {
            name: {"type": _json_type(each)} for name, each in kept["properties"].items()
        },
    }


def _json_type(schema: dict[str, Any]) -> str:
    """The JSON type of a field's values: a model's (a ``$ref``) is an object."""
    return str(schema.get("type", "object"))


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each of its ``$defs`` written where it is referred to, without the
    model's docstring (the argument's description says what it is for)."""
    definitions = schema.pop("$defs", {})
    prefix = "#/$defs/"

    def resolved(value: Any) -> Any:
        if isinstance(value, dict):
            reference = value.get("$ref", "")
            if reference.startswith(prefix):
                model = dict(definitions[reference.removeprefix(prefix)])
                model.pop("description", None)
                rest = {key: each for key, each in value.items() if key != "$ref"}
                return resolved(model | rest)
            return {key: resolved(each) for key, each in value.items()}
        if isinstance(value, list):
            return [resolved(each) for each in value]
        return value

    return dict(resolved(schema))


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``title`` keywords (an argument named ``title`` stays)."""
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if (key == "title" and isinstance(value, str)) or (
            key == "additionalProperties" and value is True  # what JSON Schema assumes
        ):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            kept[key] = {name: _untitled(each) for name, each in value.items()}
        elif isinstance(value, dict):
            kept[key] = _untitled(value)
        elif isinstance(value, list):
            kept[key] = [_untitled(v) if isinstance(v, dict) else v for v in value]
        else:
            kept[key] = value
    return kept
