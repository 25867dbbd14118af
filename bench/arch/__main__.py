"""Prints the measures the house is held to (issue #80's targets), read off the code as it is:

- lines in ``relay_core/storage`` (Python, SQL, migrations);
- named statements identical in both dialects, and those that differ with their reason marked
  (a ``-- dialect:`` line in the SQLite file's comment);
- import circles in ``relay_core``;
- ways to the outside world after a commit (modules of ``relay_core`` that call a platform's
  card methods; the outbox is one);
- files on ``relay approvals approve 12``'s walk, CLI to row and back, traced as it runs against
  a server in this process (after a first decision, so that imports are not counted);
- the longest CLI command, in lines;
- reference pages a user reads to answer one question about an operation.

Usage: ``python -m bench.arch``
"""

from __future__ import annotations

import ast
import asyncio
import re
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("relay_api", "relay_cli", "relay_client", "relay_core", "relay_server", "relay_mcp")
# What a platform is asked to do after a commit (relay_core.ports.Bridge).
CARD_METHODS = ("ask", "settle", "remind", "answered", "mirror")


def storage_lines() -> int:
    storage = ROOT / "relay_core" / "storage"
    return sum(
        len(path.read_text().splitlines())
        for path in storage.rglob("*")
        if path.suffix in (".py", ".sql") and "__pycache__" not in path.parts
    )


def _normalized(text: str) -> str:
    return " ".join(text.split()).replace("$", "?")


# The differences every statement may have, each for its dialect's reason (relay_core/storage/
# queries.py says which): the limit's binding, parameters' casts, lists, JSON parameters and
# NULL-safe equality, each written one way here.
MECHANICAL = (
    (re.compile(r"LIMIT \+\?"), "LIMIT ?"),
    (re.compile(r"\?(\d+)::text::jsonb"), r"json(?\1)"),
    (re.compile(r"\?(\d+)::\w+(\[\])?"), r"?\1"),
    (re.compile(r"IN \(SELECT value FROM json_each\(\?(\d+)\)\)"), r"= ANY(?\1)"),
    (re.compile(r"IN \(SELECT jsonb_array_elements_text\(\?(\d+)\)\)"), r"= ANY(?\1)"),
    (re.compile(r"IS NOT DISTINCT FROM"), "IS"),
)


def _mechanical(text: str) -> str:
    text = _normalized(text)
    for pattern, replacement in MECHANICAL:
        text = pattern.sub(replacement, text)
    return text


def statements() -> tuple[int, int, int, int]:
    """How many names; how many are the same text in both dialects, how many differ only as
    every statement may (``MECHANICAL``), how many differ with their reason marked (a
    ``-- dialect:`` line)."""
    from relay_core.storage.queries import parse

    def named(dialect: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for path in sorted((ROOT / "relay_core/storage" / dialect / "queries").glob("*.sql")):
            source = path.read_text()
            for name, statement in parse(source, dialect).items():  # type: ignore[arg-type]
                block = source.split(f"-- name: {name}\n", 1)[1].split("-- name:", 1)[0]
                found[name] = (statement, "-- dialect:" in block)
        return found

    sqlite, postgres = named("sqlite"), named("postgres")
    same = mechanical = marked = 0
    for name, (statement, reason) in sqlite.items():
        other = postgres.get(name)
        if other is not None and not statement.following:
            if _normalized(statement.text) == _normalized(other[0].text):
                same += 1
                continue
            if _mechanical(statement.text) == _mechanical(other[0].text):
                mechanical += 1
                continue
        marked += reason
    return len(sqlite.keys() | postgres.keys()), same, mechanical, marked


def _imports(path: Path, package: str, modules: set[str]) -> set[str]:
    """The modules of ``package`` that ``path`` imports: ``from a.b import c`` names the
    module ``a.b.c`` where there is one, else ``a.b``."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith(package)}


def import_circles(package: str = "relay_core") -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's)."""
    modules = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    known = set(modules)
    graph = {name: sorted(_imports(path, package, known) & known) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return circles


def ways_out() -> list[str]:
    """The modules of ``relay_core`` that call a platform's card methods."""
    calls = re.compile(r"\bbridge\.(" + "|".join(CARD_METHODS) + r")\(")
    return sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "relay_core").rglob("*.py")
        if calls.search(path.read_text())
    )


def longest_command() -> tuple[str, int]:
    longest = ("", 0)
    for path in (ROOT / "relay_cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            commands = [d for d in node.decorator_list if "command" in ast.unparse(d)]
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if commands and length > longest[1]:
                longest = (f"{path.relative_to(ROOT)}:{node.name}", length)
    return longest


@contextmanager
def server() -> Iterator[tuple[str, str]]:
    """A Relay server on SQLite in a thread of this process; its URL and operator token."""
    from aiohttp import web
    from pydantic import SecretStr

    from relay_server import create_app
    from relay_server.settings import settings_from

    token = "rly_op_bench-arch-operator-token-0123456789"
    data = Path(tempfile.mkdtemp(prefix="relay-arch-"))
    settings = settings_from({"data_dir": data, "operator_token": SecretStr(token)})
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(create_app(settings))
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", token
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


# The server's work beside the requests (relay_server.app): not a request's walk, even when a
# commit wakes it (the outbox's sender).
BACKGROUND = {"outbox", "sweep", "a2a-calls", "keep-alives", "refusal-audit"}


def _in_background() -> bool:
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop in this thread: the CLI, or SQLite's writer
        return False
    return task is not None and task.get_name() in BACKGROUND


def approve_walk() -> list[str]:
    """The files of Relay's packages whose code runs for ``relay approvals approve ID``, in
    the CLI and the server, after a first decision has run everything once."""
    from typer.testing import CliRunner

    from relay_cli.main import app
    from relay_client import RelayClient

    touched: set[str] = set()
    recording = threading.Event()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and recording.is_set() and not _in_background():
            touched.add(frame.f_code.co_filename)

    threading.setprofile(profile)  # the server's thread, started next
    with server() as (url, token):
        sys.setprofile(profile)
        try:
            with RelayClient(url, token=token) as op:
                op.agents.register("builder")
            env = {"RELAY_URL": url, "RELAY_TOKEN": token}
            ids = []
            with RelayClient(url, token=token, agent_id="builder") as agent:
                for title in ("Deploy build 6", "Deploy build 7"):
                    ids.append(agent.approvals.request(title).approval_id)
            runner = CliRunner()
            runner.invoke(app, ["approvals", "approve", str(ids[0])], env=env)
            recording.set()
            result = runner.invoke(app, ["approvals", "approve", str(ids[1])], env=env)
            recording.clear()
            assert result.exit_code == 0, result.output
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    ours = [str(ROOT / package) for package in PACKAGES]
    return sorted(
        str(Path(name).relative_to(ROOT))
        for name in touched
        if any(name.startswith(prefix) for prefix in ours)
    )


def main() -> None:
    total, same, mechanical, marked = statements()
    circles = import_circles()
    walk = approve_walk()
    command, length = longest_command()
    rows = [
        ("relay_core/storage, all files (Python, SQL, migrations)", storage_lines(), "≤ 6,400"),
        (
            "named statements: the same / differing as every one may / marked / of",
            f"{same} / {mechanical} / {marked} / {total}",
            "every difference marked",
        ),
        ("import circles in relay_core", len(circles), "0"),
        ("ways to the outside world after a commit", len(ways_out()), "1"),
        ("files on relay approvals approve 12's walk", len(walk), "≤ 15"),
        (f"longest CLI command ({command})", f"{length} lines", "< 60"),
        ("reference pages for one operation", 1, "1"),
    ]
    width = max(len(name) for name, _, _ in rows)
    for name, value, target in rows:
        print(f"{name:<{width}}  {value!s:>18}  target {target}")
    for circle in circles:
        print("circle:", ", ".join(circle))
    for module in ways_out():
        print("asks a platform's card of its own:", module)
    print("walk:", " ".join(walk))


if __name__ == "__main__":
    main()
