"""Relay's A2A types (relay_server/a2a/a2a_pb2.py, protoc's output from the specification's
proto) are the official SDK's: the same messages, fields, numbers, enums and services."""

from __future__ import annotations

from a2a.types import a2a_pb2 as official
from google.protobuf import descriptor_pb2, json_format

from relay_server.a2a import a2a_pb2 as ours


def _shape(serialized: bytes, package: str) -> descriptor_pb2.FileDescriptorProto:
    """The file's types alone: no name, package or language options, and no json_name (which
    the SDK's generator writes out and protoc leaves to its default)."""
    found = descriptor_pb2.FileDescriptorProto.FromString(serialized)
    found.ClearField("name")
    found.ClearField("package")
    found.ClearField("options")
    messages = list(found.message_type)
    while messages:
        message = messages.pop()
        messages.extend(message.nested_type)
        for field in message.field:
            field.ClearField("json_name")
            field.type_name = field.type_name.replace(f".{package}.", ".a2a.")
    for service in found.service:
        for method in service.method:
            method.input_type = method.input_type.replace(f".{package}.", ".a2a.")
            method.output_type = method.output_type.replace(f".{package}.", ".a2a.")
    return found


def test_relays_a2a_types_are_the_official_sdks() -> None:
    theirs = _shape(official.DESCRIPTOR.serialized_pb, "lf.a2a.v1")
    mine = _shape(ours.DESCRIPTOR.serialized_pb, "relay.a2a.v1")
    assert [m.name for m in mine.message_type] == [m.name for m in theirs.message_type]
    assert len(mine.message_type) > 40
    for mine_message, their_message in zip(mine.message_type, theirs.message_type, strict=True):
        assert mine_message == their_message, mine_message.name
    assert list(mine.enum_type) == list(theirs.enum_type)
    assert list(mine.service) == list(theirs.service)
    assert list(mine.dependency) == list(theirs.dependency)


def test_both_copies_live_in_one_process() -> None:
    """The tests drive Relay with the SDK's client in the same process: the two copies of the
    types must not collide in protobuf's default pool."""
    assert ours.Task.DESCRIPTOR.full_name == "relay.a2a.v1.Task"
    assert official.Task.DESCRIPTOR.full_name == "lf.a2a.v1.Task"
    sent = official.Message(message_id="m1", role=official.ROLE_USER)
    sent.parts.add(text="hello").metadata.update({"k": [1, "two"]})
    as_json = json_format.MessageToDict(sent)
    assert json_format.MessageToDict(json_format.ParseDict(as_json, ours.Message())) == as_json
