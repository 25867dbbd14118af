"""The stores of named statements, one a resource, as a unit of work holds them."""

from relay_core.storage.bridge_offsets import BridgeOffsetsStore
from relay_core.storage.stream_tickets import StreamTicketsStore
from relay_core.storage.tasks import TasksStore

Store = TasksStore | BridgeOffsetsStore | StreamTicketsStore

__all__ = ["BridgeOffsetsStore", "Store", "StreamTicketsStore", "TasksStore"]
