"""A real Matrix homeserver for the tests: Synapse (PyPI ``matrix-synapse``), installed once into
a venv under the temp dir, started from a generated config (SQLite, loopback, registration by
shared secret), with a bot, an operator and a stranger registered and a room for the operator.
The operator side is driven with httpx as a Matrix client would."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.live import free_port, wait_until_answering

SYNAPSE = "matrix-synapse==1.163.2"
SERVER_NAME = "localhost"


def install() -> Path:
    """The Python of a venv holding Synapse, made once and kept under the temp dir. CI makes it
    before the suite runs (``python -m tests.synapse`` in ``.ci/run``), so that no test waits
    for the install; a run without it makes it on first use."""
    home = Path(tempfile.gettempdir()) / f"relay-synapse-{SYNAPSE.split('==')[1]}"
    python = home / "bin" / "python"
    if not (home / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=120)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", SYNAPSE],
            check=True,
            timeout=600,
            capture_output=True,
        )
        (home / ".installed").touch()
    return python


def synapse_python() -> Path:
    """``install``'s Python, or the test skipped saying why."""
    try:
        return install()
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"matrix-synapse could not be installed ({exc}); the Matrix tests need it")


@dataclass
class User:
    user_id: str
    token: str


@dataclass
class Homeserver:
    url: str
    bot: User
    operator: User
    stranger: User
    room_id: str
    encrypted_room_id: str

    def client(self, user: User) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/_matrix/client/v3/",
            headers={"Authorization": f"Bearer {user.token}"},
            timeout=30,
        )


def register(url: str, secret: str, name: str) -> User:
    """A user registered with the shared secret, as ``register_new_matrix_user`` does."""
    nonce = httpx.get(f"{url}/_synapse/admin/v1/register").json()["nonce"]
    password = uuid.uuid4().hex
    mac = hmac.new(secret.encode(), digestmod=hashlib.sha1)
    for part in (nonce, name, password, "notadmin"):
        mac.update(part.encode())
        if part != "notadmin":
            mac.update(b"\x00")
    body = {"nonce": nonce, "username": name, "password": password, "mac": mac.hexdigest()}
    made = httpx.post(f"{url}/_synapse/admin/v1/register", json=body).json()
    return User(made["user_id"], made["access_token"])


def configure(root: Path, python: Path, port: int) -> tuple[Path, str]:
    config = root / "homeserver.yaml"
    subprocess.run(
        [
            str(python), "-m", "synapse.app.homeserver", "--server-name", SERVER_NAME,
            "--config-path", str(config), "--data-directory", str(root),
            "--generate-config", "--report-stats=no",
        ],
        check=True, capture_output=True, timeout=60, cwd=root,
    )  # fmt: skip
    text = config.read_text().replace("port: 8008", f"port: {port}").replace("    - ::1\n", "")
    text = text.replace(
        'trusted_key_servers:\n  - server_name: "matrix.org"', "trusted_key_servers: []"
    )
    unlimited = "{per_second: 1000, burst_count: 1000}"
    text += (
        f"\nrc_message: {unlimited}\nrc_registration: {unlimited}\n"
        f"rc_joins: {{local: {unlimited}}}\nrc_login:\n  address: {unlimited}\n"
        f"  account: {unlimited}\n  failed_attempts: {unlimited}\n"
        "suppress_key_server_warning: true\n"
    )
    config.write_text(text)
    secret = next(
        line.split(":", 1)[1].strip().strip('"')
        for line in text.splitlines()
        if line.startswith("registration_shared_secret:")
    )
    return config, secret


@contextmanager
def running_homeserver(root: Path) -> Iterator[Homeserver]:
    """Synapse in ``root``, with its users and rooms, until the block ends."""
    python = synapse_python()
    port = free_port()
    config, secret = configure(root, python, port)
    log = (root / "synapse.out").open("wb")
    process = subprocess.Popen(
        [str(python), "-m", "synapse.app.homeserver", "--config-path", str(config)],
        cwd=root, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(f"{url}/_matrix/client/versions", process, root / "synapse.out", 60)
        bot, operator, stranger = (register(url, secret, n) for n in ("relay", "ops", "eve"))
        server = Homeserver(url, bot, operator, stranger, "", "")
        with server.client(bot) as client:
            invite = [operator.user_id, stranger.user_id]
            server.room_id = client.post("createRoom", json={"invite": invite}).json()["room_id"]
            sealed = {
                "type": "m.room.encryption",
                "state_key": "",
                "content": {"algorithm": "m.megolm.v1.aes-sha2"},
            }
            made = client.post("createRoom", json={"initial_state": [sealed]}).json()
            server.encrypted_room_id = made["room_id"]
        for user in (operator, stranger):
            with server.client(user) as client:
                client.post(f"rooms/{quote(server.room_id)}/join", json={}).raise_for_status()
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def event_of(platform_message_id: str) -> str:
    return "$" + platform_message_id.rpartition(":$")[2]


def send(server: Homeserver, user: User, content: dict[str, Any]) -> str:
    kind = (
        "m.reaction"
        if "m.relates_to" in content and "key" in content["m.relates_to"]
        else "m.room.message"
    )
    with server.client(user) as client:
        path = f"rooms/{quote(server.room_id)}/send/{kind}/{uuid.uuid4().hex}"
        answer = client.put(path, json=content)
        answer.raise_for_status()
        return str(answer.json()["event_id"])


def reply(server: Homeserver, user: User, to_event: str, text: str, quoted: str) -> str:
    """A reply as Element sends one: the quoted fallback first, then the text."""
    body = f"> <{server.bot.user_id}> {quoted}\n\n{text}"
    return send(
        server,
        user,
        {
            "msgtype": "m.text",
            "body": body,
            "m.relates_to": {"m.in_reply_to": {"event_id": to_event}},
        },
    )


def edits_of(server: Homeserver, event_id: str) -> list[str]:
    """The new texts of the bot's edits (m.replace) of an event, as the operator reads them."""
    with server.client(server.operator) as client:
        room, event = quote(server.room_id), quote(event_id)
        path = f"{server.url}/_matrix/client/v1/rooms/{room}/relations/{event}/m.replace"
        chunk = client.get(path).json().get("chunk", [])
    return [e["content"]["m.new_content"]["body"] for e in chunk]


def bot_replies_to(server: Homeserver, event_id: str) -> list[dict[str, Any]]:
    """The bot's latest messages in reply to an event (each its id and content), newest
    first."""
    with server.client(server.operator) as client:
        path = f"rooms/{quote(server.room_id)}/messages"
        events = client.get(path, params={"dir": "b", "limit": 100}).json().get("chunk", [])
    return [
        e
        for e in events
        if e.get("sender") == server.bot.user_id
        and e["content"].get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
        == event_id
    ]


def eventually(check: Any, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


if __name__ == "__main__":
    print(f"Synapse ready: {install()}")
