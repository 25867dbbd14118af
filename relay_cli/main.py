"""``relay``'s whole app, every command in it (what ``relay --help`` lists, and what the tests
and the generated CLI reference walk); the command itself loads only the one it runs
(``relay_cli.root.run``)."""

from __future__ import annotations

from relay_cli.root import build

app = build()
