"""Interventions, actions and operator notifications over HTTP."""

from __future__ import annotations

from typing import Any

from relay_api import models as m
from relay_api.errors import BridgeError
from relay_core.ports import BridgeCapabilities
from tests.server.conftest import Api

REQUEST = {
    "title": "Restart db-1",
    "reason": "connections exhausted",
    "proposed_action": "systemctl restart postgresql",
    "risk": "high",
}


async def test_intervention_diagnostic_approval_remediation(api: Api) -> None:
    await api.agent("medic")
    path = "/v1/interventions/inc-42"
    await api.get(f"{path}/diagnostic", as_="medic", expect=404)
    diag = await api.post(
        f"{path}/diagnostic",
        {"summary": "pool full", "content": {"active": 100}, "severity": "high"},
        as_="medic",
        expect=201,
    )
    assert diag["agent_id"] == "medic" and diag["content"] == {"active": 100}
    newer = await api.post(
        f"{path}/diagnostic",
        {"summary": "still full", "content": "log text"},
        as_="medic",
        expect=201,
    )
    assert (await api.get(f"{path}/diagnostic", as_="medic")) == newer
    await api.get(f"{path}/approval", as_="medic", expect=404)

    early = await api.post(
        f"{path}/action",
        {"action": "restart", "status": "succeeded", "evidence_before": "a", "evidence_after": "b"},
        as_="medic",
        expect=409,
    )
    assert early["code"] == "conflict"

    requested = await api.post(f"{path}/request-approval", REQUEST, as_="medic", expect=201)
    approval_id = requested["approval_id"]
    assert requested["intervention"]["status"] == "awaiting_approval"
    assert requested["approval"]["kind"] == "intervention"
    assert requested["approval"]["requested_by"] == "medic"
    await api.post(f"{path}/request-approval", REQUEST, as_="medic", expect=409)
    assert (await api.get(f"{path}/approval", as_="medic"))["status"] == "pending"

    await api.post(f"/v1/approvals/{approval_id}/approve", {"note": "go"})
    assert (await api.get(f"{path}/approval", as_="medic"))["status"] == "approved"

    for scheme in ("javascript:alert(1)", " JavaScript:alert(1)", "java\tscript:x", "data:,x"):
        body = {"action": "a", "status": "succeeded", "evidence_before": {}, "evidence_after": {}}
        await api.post(f"{path}/action", body | {"link": scheme}, as_="medic", expect=422)
    action = await api.post(
        f"{path}/action",
        {
            "action": "systemctl restart postgresql",
            "status": "succeeded",
            "evidence_before": {"connections": 100},
            "evidence_after": {"connections": 12},
            "link": "https://grafana.example/d/db",
        },
        as_="medic",
        expect=201,
    )
    assert action["evidence_before"] == {"connections": 100}
    assert action["evidence_after"] == {"connections": 12}

    listed = await api.get("/v1/interventions", as_="medic")
    [entry] = listed["interventions"]
    assert entry["intervention_id"] == "inc-42" and entry["status"] == "remediated"
    assert entry["approval_status"] == "approved"
    assert entry["latest_diagnostic"] == newer
    assert entry["last_action"] == action


async def test_rejected_intervention_cannot_be_remediated(api: Api) -> None:
    await api.agent("medic")
    path = "/v1/interventions/inc-7"
    requested = await api.post(f"{path}/request-approval", REQUEST, as_="medic", expect=201)
    await api.post(f"/v1/approvals/{requested['approval_id']}/reject", {})
    body = {"action": "x", "status": "failed", "evidence_before": "", "evidence_after": ""}
    await api.post(f"{path}/action", body, as_="medic", expect=409)
    again = await api.post(f"{path}/request-approval", REQUEST, as_="medic", expect=201)
    assert again["approval_id"] != requested["approval_id"]


async def test_intervention_validation_and_listing(api: Api) -> None:
    await api.agent("medic")
    await api.agent("other")
    await api.post(
        "/v1/interventions/inc-1/request-approval",
        {**REQUEST, "risk": "extreme"},
        as_="medic",
        expect=422,
    )
    await api.post(
        "/v1/interventions/inc-1/diagnostic",
        {"summary": "s", "content": "c", "agent_id": "other"},
        as_="medic",
        expect=403,
    )
    await api.post("/v1/interventions/nope/action", {"action": "x"}, as_="medic", expect=422)
    body = {"action": "x", "status": "succeeded", "evidence_before": "", "evidence_after": ""}
    await api.post("/v1/interventions/nope/action", body, as_="medic", expect=404)
    for n in range(3):
        await api.post(
            f"/v1/interventions/inc-{n}/diagnostic",
            {"summary": "s", "content": "c"},
            as_="medic",
            expect=201,
        )
        api.clock.advance(1)
    newest = await api.get("/v1/interventions", as_="medic", limit=2)
    assert [i["intervention_id"] for i in newest["interventions"]] == ["inc-2", "inc-1"]
    assert newest["interventions"][0]["last_action"] is None
    await api.get("/v1/interventions", as_="medic", limit=0, expect=422)


async def test_actions_are_recorded_for_the_caller(api: Api) -> None:
    await api.agent("alice")
    recorded = await api.post(
        "/v1/actions",
        {"action": "deploy", "target": "web-1", "params": {"v": 3}, "outcome": "ok"},
        as_="alice",
        expect=201,
    )
    assert recorded["agent_id"] == "alice" and recorded["params"] == {"v": 3}
    await api.post("/v1/actions", {"action": "x", "agent_id": "bob"}, as_="alice", expect=403)
    await api.post("/v1/actions", {"action": "x", "task_id": 999999}, as_="alice", expect=404)
    await api.post("/v1/actions", {"action": "x", "when": "now"}, as_="alice", expect=422)
    listed = await api.get("/v1/actions", agent_id="alice")
    # Newest first: the refused attempt to act as bob is audited too.
    assert [a["action"] for a in listed["actions"]] == ["auth.refused", "deploy"]


async def test_notify_and_reply_loop_on_the_local_bridge(api: Api) -> None:
    await api.agent("alice")
    sent = await api.post("/v1/notify", {"text": "need a hand"}, as_="alice", expect=201)
    assert sent["status"] == "sent" and sent["bridge"] == "local"
    assert sent["platform_message_id"] and sent["agent_id"] == "alice"
    await api.post("/v1/notify", {"text": "x" * 4097}, as_="alice", expect=422)
    await api.post("/v1/notify", {"text": ""}, as_="alice", expect=422)

    reply = await api.post(
        "/v1/notify/replies",
        {"platform_message_id": sent["platform_message_id"], "text": "on my way"},
        expect=201,
    )
    assert reply["from_agent"] == "operator" and reply["to"] == "alice"
    assert reply["reply_to_notification"] == sent["notification_id"]
    inbox = await api.get("/v1/agents/alice/inbox", as_="alice")
    assert [m["text"] for m in inbox["messages"]] == ["on my way"]

    await api.post("/v1/notify/replies", {"platform_message_id": "nope", "text": "x"}, expect=404)
    await api.post(
        "/v1/notify/replies",
        {"platform_message_id": sent["platform_message_id"], "text": "x"},
        as_="alice",
        expect=403,
    )
    mine = await api.get("/v1/notifications", as_="alice")
    assert [n["notification_id"] for n in mine["notifications"]] == [sent["notification_id"]]
    assert mine["notifications"][0]["replies"] == 1


class BrokenBridge:
    """A platform that is down."""

    name = "broken"
    capabilities = BridgeCapabilities(topics=True, replies=True)

    async def send(self, text: str, *, reference: str) -> str:
        raise BridgeError("the platform answered 503")

    async def ensure_topic(self, room: m.Room, space: m.Space | None) -> str:
        raise BridgeError("the platform answered 503")

    async def start(self) -> None:
        return None

    async def mirror(self, platform_thread_id: str, text: str) -> None:
        raise BridgeError("the platform answered 503")

    async def ask(self, approval: m.Approval) -> str | None:
        raise BridgeError("the platform answered 503")

    async def settle(self, platform_message_id: str, approval: m.Approval) -> None:
        raise BridgeError("the platform answered 503")

    async def remind(self, platform_message_id: str, approval: m.Approval) -> None:
        raise BridgeError("the platform answered 503")

    async def answered(self, platform_message_id: str, text: str, answer: str) -> None:
        raise BridgeError("the platform answered 503")

    async def close(self) -> None:
        return None


async def test_bridge_failure_is_502_and_the_notification_is_kept(make_api: Any) -> None:
    api: Api = await make_api(bridge=BrokenBridge())
    await api.agent("alice")
    failed = await api.post("/v1/notify", {"text": "help"}, as_="alice", expect=502)
    assert failed == {"detail": "the platform answered 503", "code": "bridge_error"}
    [kept] = (await api.get("/v1/notifications"))["notifications"]
    assert kept["status"] == "failed" and kept["text"] == "help"
    assert kept["error"] == "the platform answered 503"

    await api.post("/v1/spaces", {"space_id": "s", "name": "S"}, expect=201)
    await api.post("/v1/spaces/s/rooms", {"room_id": "r", "name": "R"}, expect=201)
    report = await api.post("/v1/spaces/sync")
    assert report["failed"] == [{"room_id": "r", "error": "the platform answered 503"}]


async def test_an_intervention_is_changed_by_its_creator_and_the_participants_only(
    api: Api,
) -> None:
    for agent in ("alice", "bob", "carol"):
        await api.agent(agent)
    upload = {"summary": "pool full", "content": {"active": 100}}
    await api.post("/v1/interventions/inc-1/diagnostic", upload, as_="alice", expect=201)
    asked = {"title": "Restart db", "reason": "pool", "proposed_action": "restart"}
    refused = await api.post(
        "/v1/interventions/inc-1/request-approval", asked, as_="bob", expect=403
    )
    assert refused["code"] == "forbidden" and "participant" in refused["detail"]
    await api.post("/v1/interventions/inc-1/diagnostic", upload, as_="bob", expect=403)
    mine = await api.post(
        "/v1/interventions/inc-1/request-approval", asked, as_="alice", expect=201
    )
    await api.post(f"/v1/approvals/{mine['approval_id']}/approve", {})
    done = {
        "action": "restart",
        "status": "succeeded",
        "evidence_before": "a",
        "evidence_after": "b",
    }
    await api.post("/v1/interventions/inc-1/action", done, as_="bob", expect=403)

    # Only the operator adds participants; an unknown agent or intervention is 404.
    await api.post(
        "/v1/interventions/inc-1/participants", {"agent_id": "bob"}, as_="bob", expect=403
    )
    await api.post("/v1/interventions/inc-1/participants", {"agent_id": "nobody"}, expect=404)
    await api.post("/v1/interventions/inc-9/participants", {"agent_id": "bob"}, expect=404)
    added = await api.post("/v1/interventions/inc-1/participants", {"agent_id": "bob"})
    assert added["participants"] == ["bob"] and added["created_by"] == "alice"
    again = await api.post("/v1/interventions/inc-1/participants", {"agent_id": "bob"})
    assert again["participants"] == ["bob"]  # adding twice keeps one
    recorded = await api.post("/v1/interventions/inc-1/action", done, as_="bob", expect=201)
    assert recorded["agent_id"] == "bob"
    await api.post("/v1/interventions/inc-1/diagnostic", upload, as_="carol", expect=403)
    # Anyone reads it.
    listed = await api.get("/v1/interventions", as_="carol")
    assert listed["interventions"][0]["participants"] == ["bob"]


async def test_an_agent_reads_its_own_actions_and_the_operator_all(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    await api.post("/v1/actions", {"action": "deploy"}, as_="alice", expect=201)
    await api.post("/v1/actions", {"action": "rollback"}, as_="bob", expect=201)
    await api.get("/v1/agents", token="rly_agent_forged", expect=401)  # an auth.refused record
    mine = await api.get("/v1/actions", as_="alice")
    assert [(a["agent_id"], a["action"]) for a in mine["actions"]] == [("alice", "deploy")]
    await api.get("/v1/actions", as_="alice", agent_id="bob", expect=403)
    everything = {a["action"] for a in (await api.get("/v1/actions"))["actions"]}
    assert {"deploy", "rollback", "auth.refused"} <= everything
