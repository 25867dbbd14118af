"""Tool schemas as ``tools/list`` shows them: what a model needs, without what only the code
reads. Every host pays for these bytes in its context (docs/mcp.md says how many)."""

from __future__ import annotations

from typing import Any


def lean(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema as a model needs it: without the titles pydantic makes of names ("Reply
    To"), and an optional argument as its value's type alone (``anyOf`` with ``null`` and a
    ``default`` of ``null`` say only "may be left out", which not being required says)."""
    kept = _untitled(schema)
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
    """An output schema ``lean``, without what only the code reads (the models' docstrings, the
    fields' defaults: an answer leaves out what is null; its ``$defs`` alike), and admitting a
    failure's ``{code, detail}`` too: clients check an error's structured content against the
    schema as well (the MCP Inspector does), so the answer's own fields are not required (and
    other properties are allowed, as JSON Schema allows them unless told otherwise: naming
    ``code`` and ``detail`` in every tool's schema would cost each host 1 KB of its context)."""
    kept = _inlined(_lean_model(schema))
    kept.pop("required", None)
    # Every answer to an agent carries it: the server's instructions say so once.
    kept["properties"].pop("waiting", None)
    return kept


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each of its ``$defs`` written where it is referred to (an answer's list
    refers to its line's once: the name and the reference are bytes that say nothing)."""
    definitions = schema.pop("$defs", {})
    prefix = "#/$defs/"

    def resolved(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"$ref"} and value["$ref"].startswith(prefix):
                return resolved(definitions[value["$ref"].removeprefix(prefix)])
            return {key: resolved(each) for key, each in value.items()}
        if isinstance(value, list):
            return [resolved(each) for each in value]
        return value

    return dict(resolved(schema))


def _lean_model(schema: dict[str, Any]) -> dict[str, Any]:
    kept = lean(schema)
    kept.pop("description", None)
    for each in kept.get("properties", {}).values():
        each.pop("default", None)
    if "$defs" in kept:
        kept["$defs"] = {name: _lean_model(each) for name, each in kept["$defs"].items()}
    return kept


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
