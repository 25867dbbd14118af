"""The commit guard in a real repository made by the test, with real ``git commit``s and the
hook ``relay guard install`` wrote, against a live server."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from relay_cli.commands.guard import CHAINED
from tests.live import LiveServer, free_port, live_server, relay_command

WORKSPACE = "github.com/acme/shop"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-guard")) as running:
        yield running


def git_env(home: Path) -> dict[str, str]:
    """git with a home of its own (no user's configuration) and a committer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RELAY_", "GIT_"))}
    return env | {
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
    }


class Repo:
    """A repository, and its commands run as an agent of ``server``."""

    def __init__(self, root: Path, server: LiveServer, token: str) -> None:
        self.root = root
        root.mkdir(parents=True)
        self.env = git_env(root.parent) | {"RELAY_URL": server.url, "RELAY_TOKEN": token}
        self.git("init", "-q")
        self.git("remote", "add", "origin", f"git@github.com:{WORKSPACE.split('/', 1)[1]}.git")

    def run(
        self, *command: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=self.root, env=env or self.env, capture_output=True, text=True, timeout=60
        )

    def git(self, *args: str, **more: str) -> subprocess.CompletedProcess[str]:
        return self.run("git", *args, env=self.env | more)

    def relay(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(*relay_command(), *args)

    def commit(self, path: str, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"{file.read_text() if file.exists() else ''}change\n")
        self.git("add", path)
        done = self.git("commit", "-q", "-m", f"change {path}", *flags, **env)
        if done.returncode != 0:
            self.git("reset", "-q")  # unstaged again, for the next case
        return done


def register(server: LiveServer, agent: str) -> str:
    headers = {"Authorization": f"Bearer {server.operator_token}"}
    registered = httpx.post(
        f"{server.url}/v1/agents/register", json={"agent_id": agent}, headers=headers
    )
    return str(registered.json()["token"])


def reserve(server: LiveServer, token: str, *paths: str, reason: str = "auth refactor") -> None:
    body = {"workspace": WORKSPACE, "paths": list(paths), "reason": reason}
    answer = httpx.post(
        f"{server.url}/v1/reservations", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 201, answer.text


def test_a_reserved_path_is_refused_at_the_commit_and_a_free_one_goes_through(
    server: LiveServer, tmp_path: Path
) -> None:
    alice, bob = register(server, "guard-alice"), register(server, "guard-bob")
    reserve(server, bob, "src/api/**")
    repo = Repo(tmp_path / "shop", server, alice)
    installed = repo.relay("guard", "install")
    assert installed.returncode == 0 and "pre-commit" in installed.stdout, installed.stderr
    refused = repo.commit("src/api/app.py")
    assert refused.returncode != 0
    assert "src/api/app.py: reserved by guard-bob for auth refactor until" in refused.stderr
    assert "--no-verify" in refused.stderr
    assert repo.commit("docs/readme.md").returncode == 0  # a free path
    assert repo.commit("src/api/app.py", "--no-verify").returncode == 0  # the escape
    # The holder itself commits its own paths.
    own = Repo(tmp_path / "bobs", server, bob)
    assert own.relay("guard", "install").returncode == 0
    assert own.commit("src/api/app.py").returncode == 0
    # Relay out of reach: a warning and the commit, unless strict.
    down = f"http://127.0.0.1:{free_port()}"
    let_through = repo.commit("src/api/app.py", RELAY_URL=down)
    assert let_through.returncode == 0, let_through.stderr
    assert "relay guard: Relay is out of reach" in let_through.stderr
    strict = repo.commit("src/api/app.py", RELAY_URL=down, RELAY_GUARD="strict")
    assert strict.returncode != 0 and "commit refused (RELAY_GUARD=strict)" in strict.stderr
    checked = repo.relay("guard", "check", "src/api/x.py", "README.md")
    assert checked.returncode == 1 and "src/api/x.py: reserved by guard-bob" in checked.stderr
    assert "README.md" not in checked.stderr


def test_a_hook_already_there_is_kept_only_when_told_and_run_after(
    server: LiveServer, tmp_path: Path
) -> None:
    carol, dave = register(server, "guard-carol"), register(server, "guard-dave")
    reserve(server, dave, "lib/**", reason="upgrade")
    repo = Repo(tmp_path / "lib", server, carol)
    repo.git("config", "core.hooksPath", ".githooks")  # where git looks, and so install
    hooks = repo.root / ".githooks"
    hooks.mkdir()
    theirs = hooks / "pre-commit"
    theirs.write_text(f"#!/bin/sh\necho ran >> '{tmp_path / 'ran'}'\n")
    theirs.chmod(0o755)
    refused = repo.relay("guard", "install")
    assert refused.returncode == 2 and "--chain" in refused.stderr
    assert theirs.read_text().startswith("#!/bin/sh\necho ran")  # untouched
    assert repo.relay("guard", "install", "--chain").returncode == 0
    assert (hooks / CHAINED).exists()
    assert repo.relay("guard", "install", "--chain").returncode == 0  # again: the same hook
    assert repo.commit("src/free.py").returncode == 0
    assert (tmp_path / "ran").read_text() == "ran\n"  # the kept hook ran after the check
    blocked = repo.commit("lib/util.py")
    assert blocked.returncode != 0 and "reserved by guard-dave for upgrade" in blocked.stderr
    assert (tmp_path / "ran").read_text() == "ran\n"  # not reached
