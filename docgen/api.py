"""docs/reference/api.md, from the OpenAPI document the server serves: every operation, what it
takes and what it answers. The server's /docs shows the same document, browsable."""

from __future__ import annotations

from typing import Any

from relay_server.openapi import build_openapi

INTRODUCTION = """\
# The HTTP API

Every operation of `/v1`, grouped by resource, as the server's OpenAPI 3.1 document
(`/openapi.json`) declares it; a running server shows the same document, browsable, at `/docs`.
This page is made from that document by `python -m docgen`, and a test fails when it is stale.

Requests and answers are JSON. Authenticate with `Authorization: Bearer <token>` (an agent's
token, or the operator's); the operator acts for an agent with `X-Agent-ID`. Every error is
`{"detail", "code"}` with the status listed under each operation;
[requests, answers and errors](../resources/requests.md) says what each code means and how
lists page, and each resource's page what it guarantees.
"""


def _schema(node: dict[str, Any] | None) -> str:
    """A body's schema as a name: ``Task``, ``list of Task``, or ``JSON``."""
    if not node:
        return ""
    for content in node.get("content", {}).values():
        schema = content.get("schema", {})
        if "$ref" in schema:
            return f"`{schema['$ref'].rsplit('/', 1)[1]}`"
        if schema.get("type") == "array" and "$ref" in schema.get("items", {}):
            return f"list of `{schema['items']['$ref'].rsplit('/', 1)[1]}`"
        return "JSON" if "json" in next(iter(node["content"])) else next(iter(node["content"]))
    return ""


def _operation(method: str, path: str, op: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", "", op.get("summary", ""), ""]
    query = [p["name"] for p in op.get("parameters", []) if p["in"] == "query"]
    if query:
        lines.append("- Query: " + ", ".join(f"`{name}`" for name in query) + ".")
    if body := _schema(op.get("requestBody")):
        lines.append(f"- Body: {body}.")
    answers = []
    for status, response in op["responses"].items():
        shown = _schema(response) if status.startswith("2") else ""
        answers.append(f"{status} {shown}".strip())
    lines.append(f"- Answers: {', '.join(answers)}.")
    if op.get("security") == []:
        lines.append("- No token needed.")
    return [*lines, ""]


def render() -> str:
    document = build_openapi()
    groups: dict[str, list[str]] = {}
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            tag = (op.get("tags") or ["other"])[0]
            groups.setdefault(tag, []).extend(_operation(method, path, op))
    lines = [INTRODUCTION]
    for tag, body in groups.items():
        lines += [f"## {tag.replace('_', ' ').capitalize()}", "", *body]
    return "\n".join(lines)
