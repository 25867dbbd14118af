"""``relay_cli.entry``: a hook command line as ``relay connect`` writes it is read without the
CLI; every other line, and one it does not know, goes to the whole CLI (which parses it and
says what is wrong)."""

from __future__ import annotations

import pytest

from relay_cli.entry import hook_call


def test_a_written_hook_line_is_read_as_the_cli_would() -> None:
    read = hook_call(["--url", "http://h:1", "--agent=builder", "hook", "codex", "--timeout=300"])
    assert read is not None
    connection = read.pop("conn")
    assert (connection.url, connection.token, connection.agent) == ("http://h:1", None, "builder")
    assert read == {"source": "codex", "timeout": 300}
    read = hook_call(["hook", "claude-code", "--reserve-on-edit", "--timeout", "55"])
    assert read is not None and read["timeout"] == 55 and read["reserve_on_edit"] is True
    read = hook_call(["--token", "rly_x", "hook", "claude-code"])
    assert read is not None and read["timeout"] == 55 and read["conn"].token == "rly_x"


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["whoami"],
        ["hook"],
        ["hook", "cursor"],
        ["hook", "claude-code", "--help"],
        ["hook", "claude-code", "--timeout"],
        ["hook", "claude-code", "--timeout", "0"],
        ["hook", "claude-code", "--timeout", "3601"],
        ["hook", "claude-code", "--timeout", "-5"],
        ["hook", "claude-code", "extra"],
        ["--agent", "a", "--agent", "b", "hook", "codex"],
        ["--url"],
        ["--verbose", "hook", "codex"],
    ],
)
def test_any_other_line_goes_to_the_whole_cli(args: list[str]) -> None:
    assert hook_call(args) is None
