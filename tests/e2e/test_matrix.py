"""The Matrix bridge against a real homeserver: Synapse (PyPI ``matrix-synapse``), installed
once into a venv under the temp dir, started by the tests from a generated config (SQLite,
loopback, registration by shared secret), with a bot, an operator and a stranger registered.
The operator side is driven with httpx as a Matrix client would: replies, reactions, and
reading the bot's edits."""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from relay_client import RelayClient
from tests.live import free_port, live_server, relay_command

SYNAPSE = "matrix-synapse==1.163.2"
SERVER_NAME = "localhost"


def synapse_python() -> Path:
    """The Python of a venv holding Synapse, made on first use and kept under the temp dir."""
    home = Path(tempfile.gettempdir()) / f"relay-synapse-{SYNAPSE.split('==')[1]}"
    python = home / "bin" / "python"
    if not (home / ".installed").exists():
        try:
            subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=120)
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", SYNAPSE],
                check=True,
                timeout=600,
                capture_output=True,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"matrix-synapse could not be installed ({exc}); the Matrix tests need it")
        (home / ".installed").touch()
    return python


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


@pytest.fixture(scope="module")
def homeserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homeserver]:
    python = synapse_python()
    root = tmp_path_factory.mktemp("synapse")
    port = free_port()
    config, secret = configure(root, python, port)
    log = (root / "synapse.out").open("wb")
    process = subprocess.Popen(
        [str(python), "-m", "synapse.app.homeserver", "--config-path", str(config)],
        cwd=root, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/_matrix/client/versions", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "synapse did not start"
            time.sleep(0.2)
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


def relay_env(server: Homeserver, room_id: str | None = None) -> dict[str, str]:
    return {
        "RELAY_MATRIX_HOMESERVER": server.url,
        "RELAY_MATRIX_USER_ID": server.bot.user_id,
        "RELAY_MATRIX_ACCESS_TOKEN": server.bot.token,
        "RELAY_MATRIX_ROOM_ID": room_id or server.room_id,
        "RELAY_MATRIX_OPERATORS": server.operator.user_id,
    }


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


def eventually(check: Any, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_replies_reactions_and_edits_through_a_real_homeserver(
    homeserver: Homeserver, tmp_path: Path
) -> None:
    with live_server(tmp_path, **relay_env(homeserver)) as server:
        with RelayClient(server.url, token=server.operator_token) as op:
            token = op.agents.register("alice").token
        with RelayClient(server.url, token=token, agent_id="alice") as alice:
            note = alice.notify.send("disk almost full on db-1")
            assert note.bridge == "matrix" and note.platform_message_id is not None
            room_id, _, _ = note.platform_message_id.rpartition(":$")
            assert room_id == homeserver.room_id  # split at the last ":$"
            asked = event_of(note.platform_message_id)

            reply(homeserver, homeserver.stranger, asked, "not mine to answer", "disk almost full")
            reply(homeserver, homeserver.operator, asked, "clearing /tmp", "disk almost full")
            texts = eventually(lambda: [m.text for m in alice.agents.inbox(wait=1).messages])
            assert texts == ["clearing /tmp"]  # the stranger's reply was not taken
            edits = eventually(lambda: edits_of(homeserver, asked))
            assert edits and edits[-1].endswith("Answered: clearing /tmp")

            first = alice.interventions.request_approval(
                "inc-1", title="Restart db-1", reason="pool full", proposed_action="restart"
            )
            shown = eventually(lambda: alice.interventions.approval("inc-1"))
            assert shown.approval_id == first.approval_id
            with RelayClient(server.url, token=server.operator_token) as op:
                platform_id = op.approvals.show(first.approval_id).platform_message_id
                assert platform_id is not None
                approved = event_of(platform_id)
                send(
                    homeserver,
                    homeserver.operator,
                    {
                        "m.relates_to": {
                            "rel_type": "m.annotation",
                            "event_id": approved,
                            "key": "✅",
                        }
                    },
                )
                decided = eventually(
                    lambda: op.approvals.show(first.approval_id).status == "approved"
                )
                assert decided
                assert op.approvals.show(first.approval_id).decided_by == (
                    f"matrix:{homeserver.operator.user_id}"
                )
                assert any(
                    "APPROVED" in text
                    for text in eventually(lambda: edits_of(homeserver, approved))
                )

                second = alice.interventions.request_approval(
                    "inc-2", title="Rotate keys", reason="old", proposed_action="rotate"
                )
                rejected_id = op.approvals.show(second.approval_id).platform_message_id
                assert rejected_id is not None
                reply(
                    homeserver,
                    homeserver.operator,
                    event_of(rejected_id),
                    "reject not now",
                    "Approval",
                )
                assert eventually(
                    lambda: op.approvals.show(second.approval_id).status == "rejected"
                )
                assert op.approvals.show(second.approval_id).note == "not now"

    # A restart resumes after the stored next_batch: nothing is delivered twice.
    with live_server(tmp_path, **relay_env(homeserver)) as again:
        with RelayClient(again.url, token=token, agent_id="alice") as alice:
            time.sleep(2)  # a sync round
            assert [m.text for m in alice.agents.inbox().messages] == ["clearing /tmp"]


def test_an_encrypted_room_is_refused_at_start(homeserver: Homeserver, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= relay_env(homeserver, homeserver.encrypted_room_id)
    env |= {"RELAY_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [*relay_command(), "serve", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "end-to-end encrypted" in done.stderr and "Traceback" not in done.stderr
    assert homeserver.bot.token not in done.stderr


def test_spaces_sync_makes_matrix_spaces_once_and_mirrors_posts(
    homeserver: Homeserver, tmp_path: Path
) -> None:
    env = relay_env(homeserver) | {"RELAY_MATRIX_MIRROR_ROOMS": "true"}
    with live_server(tmp_path, **env) as server:
        with RelayClient(server.url, token=server.operator_token) as op:
            token = op.agents.register("bob").token
            space = op.spaces.create("Ops", space_id="ops")
            op.spaces.add_room(space.space_id, "Incidents", room_id="incidents")
            first = op.spaces.sync()
            [matrix] = [r for r in first.bridges or [] if r.bridge == "matrix"]
            assert matrix.created == ["incidents"] and matrix.failed == []
            again = op.spaces.sync()
            [matrix] = [r for r in again.bridges or [] if r.bridge == "matrix"]
            assert matrix.found == ["incidents"] and matrix.created == []
        with homeserver.client(homeserver.operator) as client:
            aliases = {
                name: client.get(f"directory/room/{quote(f'#relay-{name}:{SERVER_NAME}')}").json()
                for name in ("space-ops", "room-incidents")
            }
            space_id, room_id = (aliases[n]["room_id"] for n in ("space-ops", "room-incidents"))
            client.post(f"rooms/{quote(room_id)}/join", json={}).raise_for_status()
        with homeserver.client(homeserver.bot) as client:  # the space lists the room as its child
            path = f"rooms/{quote(space_id)}/state/m.space.child/{quote(room_id)}"
            assert client.get(path).json() == {"via": [SERVER_NAME]}
        with RelayClient(server.url, token=token, agent_id="bob") as bob:
            bob.rooms.join("incidents")
            bob.messages.send("db-1 is back", room_id="incidents")

        def mirrored() -> list[str]:
            with homeserver.client(homeserver.operator) as client:
                page = client.get(f"rooms/{quote(room_id)}/messages", params={"dir": "b"}).json()
            return [
                e["content"].get("body", "")
                for e in page.get("chunk", [])
                if e["type"] == "m.room.message"
            ]

        assert "bob: db-1 is back" in eventually(mirrored)
