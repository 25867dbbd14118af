"""docs/reference/configuration.md, from the settings model: names, flags, defaults, meanings."""

from __future__ import annotations

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from relay_server.settings import Option, options

# A part of the settings, as the page heads it; the top-level fields come first, as "Serving".
TITLES = {
    "": "Serving",
    "http": "Requests and connections",
    "limits": "Rate limits",
    "domain": "Agents, tasks, approvals and webhooks",
    "sqlite": "SQLite",
    "postgres": "PostgreSQL",
    "telegram": "Telegram",
    "slack": "Slack",
    "matrix": "Matrix",
    "email": "Email",
}

INTRODUCTION = """\
# Configuration

Every setting is an environment variable and, except a secret, a flag of `relay serve` (and of
`python -m relay_server`): `RELAY_RATE_LIMIT=0` is `--rate-limit 0`. A flag wins over its
variable. A list is comma-separated (`RELAY_TRUSTED_PROXIES=10.0.0.0/8,192.168.0.0/16`).
`relay serve --help` prints the same, and the server refuses to start with a line naming the
setting when a value is wrong.

This page is made from the settings model (`relay_server/settings.py`) by `python -m docgen`;
a test fails when it is stale.
"""


def default(field: FieldInfo) -> str:
    """The default as a reader wants it: a factory's own words when it depends on the machine."""
    if field.default_factory is not None:
        made = field.default_factory()  # type: ignore[call-arg]
        if made in ([], "", None):
            return "none"
        doc = " ".join((field.default_factory.__doc__ or "").split("\n\n")[0].split())
        return doc.rstrip(".").replace("``", "`") if doc else f"`{made}`"
    if field.default in (None, "", PydanticUndefined):
        return "none"
    value = field.default
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def row(option: Option) -> str:
    flag = "(a secret: no flag)" if option.secret else f"`{option.flag}`"
    meaning = (option.field.description or "").replace("|", "\\|")
    return f"| `{option.env}` | {flag} | {default(option.field)} | {meaning} |"


def render() -> str:
    sections: dict[str, list[Option]] = {}
    for option in options():
        part = option.path[0] if len(option.path) == 2 else ""
        sections.setdefault(part, []).append(option)
    lines = [INTRODUCTION]
    for part, found in sections.items():
        lines += [f"## {TITLES[part]}", ""]
        lines += ["| variable | flag | default | meaning |", "|---|---|---|---|"]
        lines += [row(option) for option in found]
        lines.append("")
    return "\n".join(lines)
