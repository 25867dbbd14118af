"""docs/reference/cli.md, from the ``relay`` command's own help: every command, its arguments
and options, as ``--help`` prints them."""

from __future__ import annotations

from typing import Any

import typer.main

from relay_cli.main import app

INTRODUCTION = """\
# The `relay` command

Every command as its `--help` says it, a page for each group; these pages are made from the
commands themselves by `python -m docgen`, and a test fails when one is stale.

On the server's machine the CLI needs no flags: it finds the operator token the server wrote.
Elsewhere it reads `--url` and `--token`, then `RELAY_URL` and `RELAY_TOKEN`, then
`~/.config/relay/config.toml`; `relay --agent NAME` acts as an agent with the operator's token.
Every command takes `--json` to print bare JSON for scripts. Exit status: 0 done, 1 the server
refused, 2 usage, 3 cannot connect.
"""


def commands(group: Any, context: Any) -> list[tuple[Any, Any]]:
    """Every leaf command under ``group``, with the context that names its path."""
    if not hasattr(group, "list_commands"):
        return [(group, context)]
    found = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if not command.hidden:
            found += commands(command, type(context)(command, info_name=name, parent=context))
    return found


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def section(command: Any, context: Any) -> list[str]:
    usage = " ".join(command.collect_usage_pieces(context))
    lines = [f"## {context.command_path}", "", "```", f"{context.command_path} {usage}", "```", ""]
    lines += [(command.help or "").strip(), ""]
    lines += options(command)
    return lines


def options(command: Any) -> list[str]:
    """The table of a command's arguments and options (``--json``, which all take, left out)."""
    params = [p for p in command.params if not p.hidden and "--json" not in p.opts]
    lines = []
    if params:
        lines += ["| argument or option | meaning |", "|---|---|"]
        for param in params:
            names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
            required = " (required)" if param.required else ""
            lines.append(f"| {names} | {cell(getattr(param, 'help', None) or '')}{required} |")
        lines.append("")
    return lines


def render() -> dict[str, str]:
    """The pages by their names under docs/reference/cli/: index.md holds the commands of no
    group and links to a page a group."""
    root = typer.main.get_command(app)
    context = root.context_class(root, info_name="relay")
    pages: dict[str, list[str]] = {"index.md": [INTRODUCTION, "## relay", ""]}
    pages["index.md"] += ["Options of every command, given before it.", ""] + options(root)
    groups: list[str] = []
    for command, where in commands(root, context):
        group = where.parent.info_name if where.parent is not context else ""
        if group and group not in groups:
            groups.append(group)
            pages[f"{group}.md"] = [f"# relay {group}", ""]
        pages[f"{group}.md" if group else "index.md"] += section(command, where)
    pages["index.md"] += ["## Groups", ""]
    pages["index.md"] += [f"- [relay {group}]({group}.md)" for group in groups] + [""]
    return {name: "\n".join(lines) for name, lines in pages.items()}
