"""The Matrix bridge against a real homeserver (``tests/synapse.py``: Synapse installed and
started by the tests): replies, reactions, the bot's edits read back, a restart, an encrypted
room refused, and spaces."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

from relay_client import RelayClient
from tests.live import free_port, live_server, relay_command
from tests.synapse import (
    SERVER_NAME,
    Homeserver,
    bot_replies_to,
    edits_of,
    event_of,
    eventually,
    reply,
    send,
)


def relay_env(server: Homeserver, room_id: str | None = None) -> dict[str, str]:
    return {
        "RELAY_MATRIX_HOMESERVER": server.url,
        "RELAY_MATRIX_USER_ID": server.bot.user_id,
        "RELAY_MATRIX_ACCESS_TOKEN": server.bot.token,
        "RELAY_MATRIX_ROOM_ID": room_id or server.room_id,
        "RELAY_MATRIX_OPERATORS": server.operator.user_id,
    }


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
                # Shown through the outbox, moments after the request.
                platform_id = eventually(
                    lambda: op.approvals.show(first.approval_id).platform_message_id
                )
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
                rejected_id = eventually(
                    lambda: op.approvals.show(second.approval_id).platform_message_id
                )
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


def react(server: Homeserver, event_id: str, key: str = "✅") -> None:
    annotation = {"rel_type": "m.annotation", "event_id": event_id, "key": key}
    send(server, server.operator, {"m.relates_to": annotation})


def test_the_operator_edits_a_command_and_approves_it_with_a_reaction_on_the_echo(
    homeserver: Homeserver, tmp_path: Path
) -> None:
    """``edit <command>`` in reply to a request's card: the bot echoes what would run, and a ✅
    on the echo (the bot's own message, read back from the homeserver) approves it changed."""
    with live_server(tmp_path, **relay_env(homeserver)) as server:
        with RelayClient(server.url, token=server.operator_token) as op:
            token = op.agents.register("builder").token
            with RelayClient(server.url, token=token, agent_id="builder") as builder:

                def ask(source: str, command: str) -> tuple[int, str]:
                    tool_input = {"command": command}
                    payload = {"source": source, "tool_name": "Bash", "tool_input": tool_input}
                    asked = builder.approvals.request(f"Bash: {command}", payload=payload)
                    shown = eventually(
                        lambda: op.approvals.show(asked.approval_id).platform_message_id
                    )
                    return asked.approval_id, event_of(shown)

                approval_id, card = ask("claude-code", "npm test")
                edit = reply(homeserver, homeserver.operator, card, "edit npm test -- -i", "Bash")
                echo = eventually(lambda: bot_replies_to(homeserver, edit))[0]
                body = echo["content"]["body"]
                assert body.startswith(f"Approve #{approval_id} changed? It runs:\nnpm test -- -i")

                # A message that only looks like the echo is not the bot's: no decision.
                forged_id = send(homeserver, homeserver.operator, echo["content"])
                react(homeserver, forged_id)
                time.sleep(2)  # a sync round
                assert op.approvals.show(approval_id).status == "pending"

                react(homeserver, echo["event_id"])
                assert eventually(lambda: op.approvals.show(approval_id).status == "approved")
                approved = op.approvals.show(approval_id)
                assert approved.approved_payload is not None
                assert approved.approved_payload["tool_input"] == {"command": "npm test -- -i"}
                assert approved.decided_by == f"matrix:{homeserver.operator.user_id}"
                assert any(
                    "changed: it runs npm test -- -i" in text
                    for text in eventually(lambda: edits_of(homeserver, card))
                )

                # Codex's hook cannot run a changed command: the bot says so, nothing changes.
                codex_id, codex_card = ask("codex", "make")
                refused = reply(homeserver, homeserver.operator, codex_card, "edit make -j4", "B")
                why = eventually(lambda: bot_replies_to(homeserver, refused))[0]["content"]["body"]
                assert why == (
                    f"Approval #{codex_id} can only be approved as asked: "
                    "Codex's hook cannot run a changed command (it refuses updatedInput)."
                )
                assert op.approvals.show(codex_id).status == "pending"


def test_always_remembers_a_policy_and_undo_disables_it(
    homeserver: Homeserver, tmp_path: Path
) -> None:
    with live_server(tmp_path, **relay_env(homeserver)) as server:
        with RelayClient(server.url, token=server.operator_token) as op:
            token = op.agents.register("tester").token
            with RelayClient(server.url, token=token, agent_id="tester") as tester:
                payload = {"tool_name": "Bash", "tool_input": {"command": "make check"}}
                asked = tester.approvals.request("Bash: make check", payload=payload)
                shown = eventually(lambda: op.approvals.show(asked.approval_id).platform_message_id)
                card = event_of(shown)
                always = reply(homeserver, homeserver.operator, card, "always fine by me", "Bash")
                said = eventually(lambda: bot_replies_to(homeserver, always))[0]["content"]["body"]
                decided = op.approvals.show(asked.approval_id)
                policy_id = decided.remembered_policy_id
                assert decided.status == "approved" and decided.note == "fine by me"
                assert said.startswith(
                    f"approved #{asked.approval_id}, remembered as policy #{policy_id}: Always"
                    " allow tester to run exactly `make check`"
                ), said
                assert any(
                    f"remembered as policy #{policy_id}: fine by me\nReply 'undo'" in text
                    for text in eventually(lambda: edits_of(homeserver, card))
                )
                again = tester.approvals.request("Bash: make check", payload=payload)
                assert again.status == "approved"

                undo = reply(homeserver, homeserver.operator, card, "undo", "Bash")
                said = eventually(lambda: bot_replies_to(homeserver, undo))[0]["content"]["body"]
                assert said.startswith(f"Policy #{policy_id} disabled")
                assert op.policies.show(policy_id).enabled is False
                later = tester.approvals.request("Bash: make check", payload=payload)
                assert later.status == "pending"


def test_a_question_is_answered_by_a_numbered_reply(homeserver: Homeserver, tmp_path: Path) -> None:
    with live_server(tmp_path, **relay_env(homeserver)) as server:
        with RelayClient(server.url, token=server.operator_token) as op:
            token = op.agents.register("asker").token
            with RelayClient(server.url, token=token, agent_id="asker") as asker:
                asked = asker.approvals.ask(
                    "Which database?", ["Postgres", "SQLite"], remind_after=1
                )
                shown = eventually(lambda: op.approvals.show(asked.approval_id).platform_message_id)
                card = event_of(shown)
                # Unanswered a second: the sweep reminds, once, in reply to the card.
                [reminder] = eventually(lambda: bot_replies_to(homeserver, card))
                assert reminder["content"]["body"].startswith(
                    f"Reminder: approval #{asked.approval_id} from asker still waits for you"
                )
                unclear = reply(homeserver, homeserver.operator, card, "the fast one", "Which")
                said = eventually(lambda: bot_replies_to(homeserver, unclear))[0]["content"]
                assert said["body"] == "Reply with its number; 'reject [note]' declines."
                reply(homeserver, homeserver.operator, card, "2", "Which database?")
                assert eventually(lambda: op.approvals.show(asked.approval_id).status == "answered")
                answered = asker.approvals.show(asked.approval_id)
                assert answered.answer == ["SQLite"]
                assert answered.decided_by == f"matrix:{homeserver.operator.user_id}"
                assert any(
                    "ANSWERED by matrix:" in text and text.endswith(": SQLite")
                    for text in eventually(lambda: edits_of(homeserver, card))
                )


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


def test_an_event_of_an_unexpected_shape_is_skipped_and_the_bridge_goes_on(
    homeserver: Homeserver, tmp_path: Path
) -> None:
    """Without RELAY_MATRIX_OPERATORS anyone in the room is read: one message whose
    ``m.relates_to`` is a string once stopped the follower for good."""
    env = relay_env(homeserver) | {"RELAY_MATRIX_OPERATORS": ""}
    with live_server(tmp_path, **env) as server:
        with RelayClient(server.url, token=server.operator_token) as op:
            token = op.agents.register("bob").token
        with RelayClient(server.url, token=token, agent_id="bob") as bob:
            note = bob.notify.send("which branch?")
            assert note.platform_message_id is not None
            odd = {"msgtype": "m.text", "body": "odd", "m.relates_to": "not-an-object"}
            send(homeserver, homeserver.stranger, odd)
            reply(homeserver, homeserver.operator, event_of(note.platform_message_id), "main", "?")
            texts = eventually(lambda: [m.text for m in bob.agents.inbox(wait=1).messages])
            assert texts == ["main"]
        server.process.terminate()
        server.process.wait(timeout=15)
    assert "Traceback" not in server.log.read_text()
